"""When each MetricsSource was last collected, and which sources are due together (docs/design.md, difference 19).

A source with the same `pollInterval` as the source whose cycle runs now, and due at most `TOGETHER_WINDOW` of
that interval after it, is collected in that cycle: every profile then gets one status write per poll rather than
one per source. The source's own reconcile, coming a moment later, finds it taken with the other and only requeues
for the rest of its interval — so the two stay aligned from then on. Sources of different intervals are never
collected together (each interval is honoured, difference 1).

A source never collected by this process, or whose object or spec changed since (a new uid or generation), is
never taken early: it is collected by its own reconcile, at once. A source's own reconcile only requeues when
another's cycle took it less than an interval ago.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

TOGETHER_WINDOW = 0.1
"""How early, as a fraction of its interval, a source may be collected with another source's cycle."""


class Polled(NamedTuple):
    """A MetricsSource as the schedule knows it: its name, the uid and generation of the object, its interval (s)."""

    name: str
    uid: str
    generation: int | None
    interval: float


@dataclass(frozen=True, slots=True)
class Collected:
    """A source's last collection: the source as it was, when (the clock's monotonic seconds), and whether
    another source's cycle took it."""

    source: Polled
    at: float
    taken: bool

    @property
    def due(self) -> float:
        return self.at + self.source.interval


class PollSchedule:
    """Per source, its last collection (leader-local; a fresh leader starts empty). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._collected: dict[str, Collected] = {}

    def collected(self, running: Polled, taken: Iterable[Polled], at: float) -> None:
        """Record that the cycle of `running` at `at` collected it and the sources `taken` with it."""
        with self._lock:
            self._collected[running.name] = Collected(running, at, taken=False)
            for source in taken:
                self._collected[source.name] = Collected(source, at, taken=True)

    def remaining(self, source: Polled, now: float) -> float | None:
        """Seconds until `source` is due again when another source's cycle already collected it for this poll (its
        own reconcile then only requeues); None when it is due, unknown or changed since."""
        with self._lock:
            last = self._collected.get(source.name)
        if last is None or not last.taken or last.source != source:
            return None
        left = last.due - now
        return left if left > TOGETHER_WINDOW * source.interval else None

    def due_with(self, running: Polled, candidates: Iterable[Polled], now: float) -> list[Polled]:
        """Of `candidates`, the sources the cycle of `running` collects now too (by name): of the same interval,
        known as they are, and due within the window."""
        together: list[Polled] = []
        with self._lock:
            for source in candidates:
                last = self._collected.get(source.name)
                if source.name == running.name or source.interval != running.interval:
                    continue
                if last is not None and last.source == source and last.due - now <= TOGETHER_WINDOW * source.interval:
                    together.append(source)
        return sorted(together)

    def forget(self, name: str) -> None:
        with self._lock:
            self._collected.pop(name, None)
