"""Held cycles: oldest first, bounded by bytes (difference 67)."""

from __future__ import annotations

import pytest

from ballast.internal.collection import HeldCycle, PendingCycles, held_bytes
from ballast.internal.history import Cycle, Sample, SeriesKey

KEY = SeriesKey("0123456789abcdef", "app", "cpu")


def held(n: int, samples: int = 10) -> HeldCycle:
    return HeldCycle(Cycle(f"src/{n}", n * 1000, [Sample(KEY, n)] * samples), "src")


def test_cycles_come_back_oldest_first() -> None:
    pending = PendingCycles(10**6)
    for n in (1, 2, 3):
        assert pending.hold(held(n)) == []
    assert (pending.cycles, pending.bytes) == (3, 3 * held_bytes(held(1).cycle))
    order = []
    while (oldest := pending.oldest()) is not None:
        order.append(pending.written().cycle.cycle_id)
        assert order[-1] == oldest.cycle.cycle_id
    assert order == ["src/1", "src/2", "src/3"]
    assert (pending.cycles, pending.bytes) == (0, 0)


def test_the_bound_drops_the_oldest_and_says_which() -> None:
    size = held_bytes(held(1).cycle)
    pending = PendingCycles(2 * size)
    pending.hold(held(1))
    pending.hold(held(2))
    dropped = pending.hold(held(3))
    assert [d.cycle.cycle_id for d in dropped] == ["src/1"]
    assert "src/1" not in pending
    assert "src/3" in pending
    assert pending.bytes == 2 * size


def test_a_cycle_larger_than_the_bound_is_dropped_itself() -> None:
    pending = PendingCycles(100)
    assert [d.cycle.cycle_id for d in pending.hold(held(1, samples=1000))] == ["src/1"]
    assert pending.cycles == 0


def test_clear_returns_everything_held() -> None:
    pending = PendingCycles()
    pending.hold(held(1))
    pending.hold(held(2))
    assert [d.cycle.cycle_id for d in pending.clear()] == ["src/1", "src/2"]
    assert (pending.cycles, pending.bytes) == (0, 0)


def test_a_negative_bound_is_refused() -> None:
    with pytest.raises(ValueError, match="--history-buffer-bytes -1"):
        PendingCycles(-1)
