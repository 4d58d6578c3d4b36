"""Per-source exponential backoff: after a failed poll a source is left alone for 1 s, doubling up to 5 min.

The Go operator keeps this per profile identity (docs/compatibility.md); we poll per MetricsSource, so there is
one backoff per source (docs/design.md, difference 19). A success resets it.
"""

from __future__ import annotations

import threading

from ballast.runtime import Clock

from .base import BackingOffError, FetchError, FetchResult, FetchTarget, Source

INITIAL_BACKOFF = 1.0
MAX_BACKOFF = 300.0


class Backoff:
    """Failure backoff on a clock's monotonic time; thread-safe."""

    def __init__(self, clock: Clock, *, initial: float = INITIAL_BACKOFF, maximum: float = MAX_BACKOFF) -> None:
        if initial <= 0 or maximum < initial:
            raise ValueError(f"backoff needs 0 < initial ({initial}) ≤ maximum ({maximum})")
        self._clock = clock
        self._initial = initial
        self._maximum = maximum
        self._lock = threading.Lock()
        self._delay = 0.0
        self._until = 0.0

    def remaining(self) -> float:
        """Seconds until the next attempt is allowed (0 when it is)."""
        with self._lock:
            return max(0.0, self._until - self._clock.monotonic()) if self._delay else 0.0

    def failure(self) -> float:
        """Record a failure; returns the delay now in force (1 s, 2 s, 4 s … 300 s)."""
        with self._lock:
            self._delay = min(self._maximum, self._delay * 2) if self._delay else self._initial
            self._until = self._clock.monotonic() + self._delay
            return self._delay

    def success(self) -> None:
        """Record a success: the next failure starts again at the initial delay."""
        with self._lock:
            self._delay = 0.0
            self._until = 0.0


class PolledSource:
    """A source behind its backoff: while backing off, `fetch` raises `BackingOffError` without calling it."""

    def __init__(self, name: str, kind: str, source: Source, clock: Clock) -> None:
        self.name = name
        self.kind = kind
        """The MetricsSource `spec.type` this instance serves (a type change builds a new one)."""
        self.source = source
        self.backoff = Backoff(clock)

    def fetch(self, target: FetchTarget) -> FetchResult:
        """One poll. Raises `BackingOffError` during backoff, `FetchError` (and starts backing off) on failure."""
        remaining = self.backoff.remaining()
        if remaining > 0:
            raise BackingOffError(self.name, remaining)
        try:
            result = self.source.fetch(target)
        except FetchError:
            self.backoff.failure()
            raise
        self.backoff.success()
        return result
