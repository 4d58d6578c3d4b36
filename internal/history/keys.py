"""The Redis/Valkey key schema, shared with the Go operator (docs/compatibility.md).

- `ballast:metrics:<measurementHash>:<container>:<resource>`: LIST of decimal integers, oldest first.
- `…:first_seen`: STRING, epoch milliseconds of the series' first sample (of the retention window).
- `…:ts`: LIST of epoch seconds, one per value, aligned at the newest end (ours only; the Go operator writes
  none, so values older than the list's start have no time and are dated at `first_seen`).
- `ballast:cycle:<cycle id>`: STRING with a TTL, the marker that makes a cycle idempotent (outside the
  `ballast:metrics:` space, so a profile purge never drops it).
- `ballast:unowned`: HASH, measurement hash → epoch ms since when its history has had no profile (ours only:
  the history sweep's memory, docs/design.md, difference 53).
"""

from __future__ import annotations

from .series import SeriesKey, check_measurement_hash

PREFIX = "ballast:metrics:"
FIRST_SEEN_SUFFIX = ":first_seen"
TIMES_SUFFIX = ":ts"
CYCLE_PREFIX = "ballast:cycle:"
UNOWNED_KEY = "ballast:unowned"


def values_key(key: SeriesKey) -> str:
    """The LIST of a series' values: `ballast:metrics:<hash>:<container>:<resource>`."""
    return f"{PREFIX}{key.measurement_hash}:{key.container}:{key.resource}"


def first_seen_key(key: SeriesKey) -> str:
    """The STRING holding a series' first_seen (epoch ms)."""
    return values_key(key) + FIRST_SEEN_SUFFIX


def times_key(key: SeriesKey) -> str:
    """The LIST of a series' sample times (epoch s), parallel to its values."""
    return values_key(key) + TIMES_SUFFIX


def profile_pattern(measurement_hash: str) -> str:
    """The SCAN pattern of every key of a profile's history; raises `ValueError` for a malformed hash."""
    check_measurement_hash(measurement_hash)
    return f"{PREFIX}{measurement_hash}:*"


def cycle_key(cycle_id: str) -> str:
    """The idempotency marker of a cycle."""
    return CYCLE_PREFIX + cycle_id


def is_values_key(name: str) -> bool:
    """Whether a `ballast:metrics:` key is a series' value list, not its `:first_seen` or `:ts` companion.

    Decided by the number of parts (containers and resources hold no `:`), so a resource named `ts` is no trap.
    """
    return name.startswith(PREFIX) and name.count(":") == PREFIX.count(":") + 2


def measurement_hash_of(name: str) -> str:
    """The measurement hash of a `ballast:metrics:<hash>:…` key."""
    return name[len(PREFIX) :].split(":", 1)[0]
