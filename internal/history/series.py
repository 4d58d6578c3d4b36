"""Values that cross the store's API: series keys, samples, collection cycles and the series read back."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

DEFAULT_RESERVOIR_SIZE = 10_000
"""MetricsSource `spec.config.reservoirSize` default: the newest samples kept per series."""

_MEASUREMENT_HASH = re.compile(r"[0-9a-f]{16}")


def check_measurement_hash(measurement_hash: str) -> None:
    """Raise `ValueError` unless `measurement_hash` is 16 lowercase hex characters (`measurement_hash()` output).

    Checked everywhere a hash enters the store: it becomes part of key names and of the purge's SCAN pattern, where
    a `*` would match every profile's history.
    """
    if not _MEASUREMENT_HASH.fullmatch(measurement_hash):
        raise ValueError(f"measurement hash {measurement_hash!r}: must be 16 lowercase hex characters")


def _check_part(what: str, value: str) -> None:
    if not value or ":" in value or any(char.isspace() for char in value):
        raise ValueError(f"{what} {value!r}: must be non-empty, without ':' or whitespace (it is part of a key)")


@dataclass(frozen=True, slots=True)
class SeriesKey:
    """One history series: the samples of one resource of one container of one profile (all its pods).

    Raises `ValueError` for a malformed hash, or an empty container or resource, or one holding `:` or whitespace.
    """

    measurement_hash: str
    container: str
    resource: str

    def __post_init__(self) -> None:
        _check_key(self.measurement_hash, self.container, self.resource)


@functools.lru_cache(maxsize=65_536)
def _check_key(measurement_hash: str, container: str, resource: str) -> None:
    # Cached: every cycle builds the keys of the same series again (an error is never cached, so it raises again).
    check_measurement_hash(measurement_hash)
    _check_part("container", container)
    _check_part("resource", resource)


@dataclass(frozen=True, slots=True)
class Sample:
    """One usage value: millicores for `cpu`, bytes for every other resource (the Go operator's integers).

    Raises `ValueError` for a value that is not a non-negative `int`.
    """

    key: SeriesKey
    value: int

    def __post_init__(self) -> None:
        if type(self.value) is not int or self.value < 0:
            raise ValueError(f"sample value {self.value!r} for {self.key}: must be a non-negative int")


@dataclass(frozen=True, slots=True)
class Cycle:
    """Everything one poll of a MetricsSource writes: applied entirely, once, or not at all.

    - `cycle_id`: unique per poll (e.g. `<source>/<poll time ms>`); writing the same id again is a no-op, so a
      cycle whose outcome is unknown (a timeout) can simply be retried.
    - `at_ms`: the poll time (epoch milliseconds); every sample of the cycle is dated at it.
    - `samples`: in any order; samples of one series are appended in the order given.
    - `reservoir_size`: the newest samples kept per series (≥ 1).
    - `retention`: samples older than `at_ms - retention` are dropped and `first_seen` moves with the window;
      `None` keeps samples until the reservoir pushes them out (the Go operator's behaviour).

    Raises `ValueError` naming the field that is out of range.
    """

    cycle_id: str
    at_ms: int
    samples: Sequence[Sample] = field(default=())
    reservoir_size: int = DEFAULT_RESERVOIR_SIZE
    retention: timedelta | None = None

    def __post_init__(self) -> None:
        if not self.cycle_id or any(char.isspace() for char in self.cycle_id):
            raise ValueError(f"cycle id {self.cycle_id!r}: must be non-empty, without whitespace")
        if type(self.at_ms) is not int or self.at_ms < 0:
            raise ValueError(f"cycle {self.cycle_id}: at_ms {self.at_ms!r} must be a non-negative int (epoch ms)")
        if type(self.reservoir_size) is not int or self.reservoir_size < 1:
            raise ValueError(f"cycle {self.cycle_id}: reservoir_size {self.reservoir_size!r} must be an int ≥ 1")
        if self.retention is not None and self.retention < timedelta(milliseconds=1):
            raise ValueError(f"cycle {self.cycle_id}: retention {self.retention} must be at least 1 ms, or None")
        object.__setattr__(self, "samples", tuple(self.samples))

    @property
    def at_s(self) -> int:
        """The cycle time in epoch seconds, as sample times are stored."""
        return self.at_ms // 1000

    @property
    def cutoff_ms(self) -> int | None:
        """Epoch ms before which samples fall out of the retention window; `None` without retention."""
        if self.retention is None:
            return None
        return self.at_ms - self.retention // timedelta(milliseconds=1)

    def by_series(self) -> dict[SeriesKey, list[int]]:
        """The cycle's values grouped per series, series in first-appearance order, values in given order."""
        grouped: dict[SeriesKey, list[int]] = {}
        for sample in self.samples:
            grouped.setdefault(sample.key, []).append(sample.value)
        return grouped


@dataclass(frozen=True, slots=True)
class Series:
    """A series as stored: values oldest first (not sorted), `first_seen_ms`, and sample times when asked for.

    - `first_seen_ms`: epoch ms of the first sample of the current retention window (the first ever without
      retention); `None` when the series was never written. Readiness measures `now - first_seen_ms`.
    - `times_s`: epoch seconds, one per value, when read with `with_times=True` (else `None`); values written
      without a time (by the Go operator) are dated at `first_seen_ms`.
    - `grown_from`: when not `None`, the `values` of this series as the store last returned it, which `values`
      begins with element for element — a read cache that only appended says so, and a reader that keeps
      statistics of the last values (`RunningStats`) need not compare them again. Not part of equality.
    """

    key: SeriesKey
    values: tuple[int, ...]
    first_seen_ms: int | None
    times_s: tuple[int, ...] | None = None
    grown_from: tuple[int, ...] | None = field(default=None, compare=False, repr=False)
