"""When each MetricsSource was last collected, and which sources are due together (docs/design.md, difference 19).

A source due at most `TOGETHER_WINDOW` of the shorter of the two intervals after the cycle of another source
running now is collected in that cycle: every profile then gets one status write per poll rather than one per
source. The source's own reconcile, coming a moment later, finds it taken with the other and only requeues for the
rest of its interval — so sources with the same `pollInterval` stay aligned from then on. (A source's own
reconcile is never skipped otherwise: a spec change or a kill switch resumption starts its cycle at once.)

A source never collected by this process, or whose spec changed since (a new generation), is never taken early:
it is collected by its own reconcile, at once.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

TOGETHER_WINDOW = 0.1
"""How early, as a fraction of the shorter of the two intervals, a source may be collected with another's cycle."""


class Polled(NamedTuple):
    """A MetricsSource as the schedule knows it: its name, the generation of its spec, its interval (seconds)."""

    name: str
    generation: int | None
    interval: float


@dataclass(frozen=True, slots=True)
class Collected:
    """A source's last collection: when (the clock's monotonic seconds), under which generation, at what interval,
    and whether another source's cycle took it."""

    at: float
    generation: int | None
    interval: float
    taken: bool

    @property
    def due(self) -> float:
        return self.at + self.interval


class PollSchedule:
    """Per source, its last collection (leader-local; a fresh leader starts empty). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._collected: dict[str, Collected] = {}

    def collected(self, running: Polled, taken: Iterable[Polled], at: float) -> None:
        """Record that the cycle of `running` at `at` collected it and the sources `taken` with it."""
        with self._lock:
            self._collected[running.name] = Collected(at, running.generation, running.interval, taken=False)
            for source in taken:
                self._collected[source.name] = Collected(at, source.generation, source.interval, taken=True)

    def remaining(self, source: Polled, now: float) -> float | None:
        """Seconds until `source` is due again when another source's cycle already collected it for this poll (its
        own reconcile then only requeues); None when it is due, unknown or its spec changed since."""
        with self._lock:
            last = self._collected.get(source.name)
        if last is None or not last.taken or last.generation != source.generation:
            return None
        left = last.due - now
        return left if left > _early(last.interval, last.interval) else None

    def due_with(self, running: Polled, candidates: Iterable[Polled], now: float) -> list[Polled]:
        """Of `candidates`, the sources the cycle of `running` collects now too (by name): known under the same
        generation, and due within the window."""
        together: list[Polled] = []
        with self._lock:
            for source in candidates:
                last = self._collected.get(source.name)
                if source.name == running.name or last is None or last.generation != source.generation:
                    continue
                if last.due - now <= _early(running.interval, last.interval):
                    together.append(source)
        return sorted(together)

    def forget(self, name: str) -> None:
        with self._lock:
            self._collected.pop(name, None)


def _early(first: float, second: float) -> float:
    return TOGETHER_WINDOW * min(first, second)
