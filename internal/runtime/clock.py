"""Clocks: every time-dependent piece of the runtime takes one, so tests and the simulator run on virtual time.

`RealClock` is the system clock. `FakeClock` only moves when `advance()`/`set()` is called; threads blocked in
`clock.wait(...)` or `clock.sleep(...)` wake when the fake time passes their deadline — the way client-go's
`clock.FakeClock` fires timers on `Step`.

`rfc3339` is the one form the runtime and its users write wall-clock times in (`metav1.Time`).
"""

from __future__ import annotations

import datetime
import threading
import time
from typing import Protocol

# A blocked waiter on a fake clock also re-checks this often in real time, so a missed notify cannot hang it.
_FAKE_POLL_SECONDS = 0.05


def rfc3339(moment: datetime.datetime) -> str:
    """`moment` as a `metav1.Time` is written: UTC, whole seconds, a trailing Z (`2026-01-02T03:04:05Z`).

    Sub-seconds are dropped, not rounded. A naive `moment` is taken as local time, as `astimezone` takes it.
    """
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class Clock(Protocol):
    """Time for the runtime: wall time for timestamps, monotonic time for durations, and blocking waits."""

    def now(self) -> datetime.datetime:
        """Current wall-clock time, timezone-aware UTC (for timestamps written to objects)."""
        ...

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin that never goes backwards (for durations and deadlines)."""
        ...

    def sleep(self, seconds: float) -> None:
        """Block the calling thread for `seconds` of this clock's time."""
        ...

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
        """Wait on `condition` (its lock held by the caller) until notified or `timeout` clock-seconds pass."""
        ...

    def wait_event(self, event: threading.Event, timeout: float | None) -> bool:
        """Wait until `event` is set or `timeout` clock-seconds pass; returns whether it is set."""
        ...


class RealClock:
    """The system clock."""

    def now(self) -> datetime.datetime:
        return datetime.datetime.now(datetime.UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
        condition.wait(timeout)

    def wait_event(self, event: threading.Event, timeout: float | None) -> bool:
        return event.wait(timeout)


class FakeClock:
    """A clock that moves only when told to; thread-safe.

    On a Manager or Controller it drives what the reconciler schedules — `ctx.clock`, `Result(requeue_after=…)`,
    the queue's delays — while a failed reconcile's backoff (5 ms, 10 ms, …) still passes in real time, so a
    test that advances time for a schedule does not also have to advance it past every retry.
    `freeze_backoff=True` puts the backoff on this clock too (a retry waits for `advance`), for tests of the
    backoff itself.
    """

    def __init__(self, start: datetime.datetime | None = None, *, freeze_backoff: bool = False) -> None:
        self.freezes_backoff = freeze_backoff
        self._wall = start or datetime.datetime(2026, 1, 1, tzinfo=datetime.UTC)
        self._mono = 0.0
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._waiters: set[threading.Condition] = set()

    def now(self) -> datetime.datetime:
        with self._lock:
            return self._wall

    def monotonic(self) -> float:
        with self._lock:
            return self._mono

    def advance(self, seconds: float) -> None:
        """Move time forward by `seconds` and wake every waiter so it can check its deadline."""
        if seconds < 0:
            raise ValueError(f"a clock cannot go backwards (advance by {seconds})")
        with self._lock:
            self._mono += seconds
            self._wall += datetime.timedelta(seconds=seconds)
            waiters = list(self._waiters)
            self._changed.notify_all()
        for condition in waiters:
            with condition:
                condition.notify_all()

    def sleep(self, seconds: float) -> None:
        with self._lock:
            deadline = self._mono + seconds
            while self._mono < deadline:
                self._changed.wait(_FAKE_POLL_SECONDS)

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
        """Wait until notified (by the caller's code or by `advance`) — one wake-up, like Condition.wait."""
        with self._lock:
            self._waiters.add(condition)
            deadline = None if timeout is None else self._mono + timeout
        try:
            if deadline is not None and self.monotonic() >= deadline:
                return
            condition.wait(_FAKE_POLL_SECONDS if timeout is not None else None)
        finally:
            with self._lock:
                self._waiters.discard(condition)

    def wait_event(self, event: threading.Event, timeout: float | None) -> bool:
        with self._lock:
            deadline = None if timeout is None else self._mono + timeout
            while not event.is_set():
                if deadline is not None and self._mono >= deadline:
                    break
                self._changed.wait(_FAKE_POLL_SECONDS)
        return event.is_set()


__all__ = [
    "Clock",
    "FakeClock",
    "RealClock",
    "rfc3339",
]
