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


# The Cluster layout (docs/compatibility.md; docs/design.md, differences 68 and 76): a hash tag per bucket of
# profiles — the measurement hash's last two hex digits, so 256 buckets — puts a bucket's series, their `:ts` and
# `:first_seen` and the bucket's cycle markers in one slot, and a cycle is one script per bucket (≤ 256).
# - `ballast:metrics:{<bucket>}<hash>:<container>:<resource>` (+ `:ts`, `:first_seen`): as above, tagged.
# - `ballast:cycles:{<bucket>}`: LIST of the ids of the bucket's last `GROUP_MARKERS` cycles, newest first, with a
#   TTL: one key per bucket instead of one per cycle.

CYCLES_PREFIX = "ballast:cycles:"
GROUP_MARKERS = 64
"""Cycle ids remembered per bucket in Cluster mode: a retry of any of a bucket's last 64 cycles is a no-op."""
BUCKET_DIGITS = 2
"""Hex digits of the measurement hash that name its bucket: 16² = 256 buckets (hash tags, so at most 256 slots)."""


def bucket_of(measurement_hash: str) -> str:
    """The bucket of a profile in the Cluster layout: its measurement hash's last two hex digits (uniform, as the
    hash is); raises `ValueError` for a malformed hash."""
    check_measurement_hash(measurement_hash)
    return measurement_hash[-BUCKET_DIGITS:]


def tag(bucket: str) -> str:
    """The hash tag of a bucket's keys: `{<bucket>}`."""
    return "{" + bucket + "}"


def tagged_values_key(key: SeriesKey) -> str:
    """A series' value list in the Cluster layout: `ballast:metrics:{<bucket>}<hash>:<container>:<resource>`."""
    digest = key.measurement_hash
    return f"{PREFIX}{tag(bucket_of(digest))}{digest}:{key.container}:{key.resource}"


def group_marker_key(bucket: str) -> str:
    """The list of a bucket's last cycle ids in the Cluster layout: `ballast:cycles:{<bucket>}`."""
    return CYCLES_PREFIX + tag(bucket)


def tagged_profile_pattern(measurement_hash: str) -> str:
    """The SCAN pattern of every key of a profile's history in the Cluster layout (braces escaped for MATCH)."""
    bucket = bucket_of(measurement_hash)
    return f"{PREFIX}\\{{{bucket}\\}}{measurement_hash}:*"


def untagged(name: str) -> str:
    """A Cluster-layout key name without its hash tag (the single-instance name)."""
    if name.startswith(PREFIX + "{"):
        _, _, rest = name[len(PREFIX) + 1 :].partition("}")
        return PREFIX + rest
    return name
