"""Cycles the history store did not acknowledge, held in memory and written again, oldest first
(docs/design.md, difference 67).

A cycle whose write failed because no primary answered, or that fewer replicas than `--history-min-replicas`
acknowledged, may or may not be on the store. It is held here and written again before the next cycle: the
cycle's idempotency marker makes a repeat a no-op, so every sample ends up stored exactly once. The hold is
bounded by bytes (`--history-buffer-bytes`, oldest dropped first) and leader-local: a leader change or a restart
loses it — counted as dropped.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from ballast.internal.history import Cycle

SAMPLE_BYTES = 64
"""Estimated memory of one held sample (its reference, its int, its share of the key), for the bound."""
CYCLE_BYTES = 512
"""Estimated fixed memory of one held cycle."""
DEFAULT_BUFFER_BYTES = 64 * 1024 * 1024
"""`--history-buffer-bytes` default: about a million samples (25 cycles of 10,000 pods × 2 containers × 2)."""


def held_bytes(cycle: Cycle) -> int:
    """The estimated memory of holding `cycle`."""
    return CYCLE_BYTES + SAMPLE_BYTES * len(cycle.samples)


@dataclass(frozen=True, slots=True)
class HeldCycle:
    """A cycle to write again, with what to record once it is written.

    `observed`: per profile, samples per (container, resource), for the collector's memory; `counts`: the
    `ballast_samples_collected` increments (labels, amount) the first write would have made.
    """

    cycle: Cycle
    source: str
    observed: Mapping[str, Mapping[tuple[str, str], int]] = field(default_factory=dict)
    counts: tuple[tuple[Mapping[str, str], int], ...] = ()

    @property
    def size(self) -> int:
        return held_bytes(self.cycle)


class PendingCycles:
    """Held cycles, oldest first, at most `max_bytes` (estimated). Not thread-safe: the caller holds one lock
    around a flush and the write that follows it."""

    def __init__(self, max_bytes: int = DEFAULT_BUFFER_BYTES) -> None:
        if max_bytes < 0:
            raise ValueError(f"--history-buffer-bytes {max_bytes} must be 0 or more")
        self.max_bytes = max_bytes
        self._held: deque[HeldCycle] = deque()
        self._bytes = 0

    def hold(self, held: HeldCycle) -> list[HeldCycle]:
        """Hold `held` (after every cycle already held); returns the oldest cycles dropped to stay within the
        bound — `held` itself when it alone is larger than the bound."""
        self._held.append(held)
        self._bytes += held.size
        dropped: list[HeldCycle] = []
        while self._bytes > self.max_bytes and self._held:
            dropped.append(self._pop())
        return dropped

    def oldest(self) -> HeldCycle | None:
        """The cycle to write next, or `None`."""
        return self._held[0] if self._held else None

    def written(self) -> HeldCycle:
        """Forget the oldest cycle (written, or refused for good); returns it."""
        return self._pop()

    def clear(self) -> list[HeldCycle]:
        """Forget every held cycle (leadership lost); returns them, to be counted as dropped."""
        dropped = list(self._held)
        self._held.clear()
        self._bytes = 0
        return dropped

    def _pop(self) -> HeldCycle:
        held = self._held.popleft()
        self._bytes -= held.size
        return held

    @property
    def cycles(self) -> int:
        return len(self._held)

    @property
    def bytes(self) -> int:
        return self._bytes

    def __contains__(self, cycle_id: object) -> bool:
        return any(held.cycle.cycle_id == cycle_id for held in self._held)
