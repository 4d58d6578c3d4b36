"""The history store seam: one Protocol, two real backends (Redis/Valkey and SQLite)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import timedelta
from types import TracebackType
from typing import Protocol, Self

from .series import Cycle, Series, SeriesKey

DEFAULT_CYCLE_TTL = timedelta(days=1)
"""How long a written cycle id is remembered: a retry within this time is recognised and not applied twice."""


class HistoryStore(Protocol):
    """Usage history per series. Every method raises `StoreUnavailableError` when the store cannot be reached in
    time and `StoreError` when it refuses; neither ever leaves part of a call written — in Cluster mode
    (`ClusterHistoryStore`), part of a profile's: there a cycle is all or nothing per profile, and the retry of a
    cycle that failed part-way writes only the profiles still missing (docs/compatibility.md)."""

    def write_cycle(self, cycle: Cycle) -> bool:
        """Apply a whole cycle atomically: append, trim to the reservoir and the retention window, move first_seen.

        Returns `True` when applied, `False` when a cycle with this id was already applied (nothing changes).
        Redis does this in one round trip.
        """
        ...

    def read_many(self, keys: Sequence[SeriesKey], *, with_times: bool = False) -> list[Series]:
        """Return the series of `keys`, in that order; a profile's series (up to 32) come from one snapshot.

        A series never written comes back empty with `first_seen_ms=None`. Raises `StoreError` when stored data
        cannot be parsed (never silently skipped).
        """
        ...

    def read(self, key: SeriesKey, *, with_times: bool = False) -> Series:
        """Return one series (see `read_many`)."""
        ...

    def purge(self, measurement_hash: str) -> int:
        """Delete every series of a profile's history; returns how many series there were."""
        ...

    def measurement_hashes(self) -> set[str]:
        """Every measurement hash that has a stored series (the profiles the store holds history for)."""
        ...

    def unowned_since(self, unowned: Collection[str], now_ms: int) -> dict[str, int]:
        """Remember since when each hash of `unowned` has had no profile (`now_ms` for one not remembered yet),
        forget every other hash, and return the remembered time of each hash of `unowned` (epoch ms).

        The history sweep's memory (`orphans.sweep`): kept in the store, so an operator restart or a new leader
        does not start the count again. A purge forgets its hash too.
        """
        ...

    def ping(self) -> None:
        """Return when the store answers; raise `StoreUnavailableError` otherwise (for health checks)."""
        ...

    def close(self) -> None:
        """Release connections; the store is unusable afterwards."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...
