"""Invariants under random operation sequences: reference models, and several threads at once.

The models replay client-go's and controller-runtime's rules on plain Python structures and check every
hand-out, so any divergence in order, dedup, delays or the one-worker-per-key rule shows up as a failing step.
"""

from __future__ import annotations

import itertools
import math
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from ballast.runtime import FakeClock
from ballast.runtime.priorityqueue import LOW_PRIORITY, PriorityQueue
from ballast.runtime.ratelimiter import ItemExponentialFailureRateLimiter
from ballast.runtime.workqueue import RateLimitingQueue

KEYS = st.sampled_from(["a", "b", "c", "d", "e"])
DELAYS = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.5])
PRIORITIES = st.sampled_from([LOW_PRIORITY, 0, 0, 1, 5])
STEPS = st.sampled_from([0.25, 0.5, 1.0, 2.5])

MODEL_SETTINGS = settings(max_examples=60, stateful_step_count=40, deadline=None)


class PlainQueueModel(RuleBasedStateMachine):
    """client-go's queue semantics: FIFO of dirty keys, held back while processing, a waiting map by ready time."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock()
        self.queue: RateLimitingQueue[str] = RateLimitingQueue(
            ItemExponentialFailureRateLimiter(1.0, 8.0), clock=self.clock
        )
        self.limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(1.0, 8.0)
        self.now = 0.0
        self.fifo: list[str] = []
        self.dirty: set[str] = set()
        self.processing: set[str] = set()
        self.waiting: dict[str, tuple[float, int]] = {}
        self.sequence = itertools.count()

    def teardown(self) -> None:
        self.queue.shutdown()

    def _promote(self) -> None:
        due = sorted((ready_at, seq, key) for key, (ready_at, seq) in self.waiting.items() if ready_at <= self.now)
        for _, _, key in due:
            del self.waiting[key]
            self._add(key)

    def _add(self, key: str) -> None:
        if key in self.dirty:
            return
        self.dirty.add(key)
        if key not in self.processing:
            self.fifo.append(key)

    def _add_after(self, key: str, delay: float) -> None:
        self._promote()
        if delay <= 0:
            self._add(key)
            return
        ready_at = self.now + delay
        current = self.waiting.get(key)
        if current is None or ready_at < current[0]:
            self.waiting[key] = (ready_at, next(self.sequence))

    @rule(key=KEYS)
    def add(self, key: str) -> None:
        self.queue.add(key)
        self._promote()
        self._add(key)

    @rule(key=KEYS, delay=DELAYS)
    def add_after(self, key: str, delay: float) -> None:
        self.queue.add_after(key, delay)
        self._add_after(key, delay)

    @rule(key=KEYS)
    def add_rate_limited(self, key: str) -> None:
        self.queue.add_rate_limited(key)
        self._add_after(key, self.limiter.when(key))

    @rule(key=KEYS)
    def forget(self, key: str) -> None:
        self.queue.forget(key)
        self.limiter.forget(key)
        assert self.queue.num_requeues(key) == 0

    @rule()
    def get(self) -> None:
        item, shutdown = self.queue.get(timeout=0)
        self._promote()
        expected = self.fifo.pop(0) if self.fifo else None
        assert (item, shutdown) == (expected, False)
        if expected is not None:
            assert expected not in self.processing
            self.processing.add(expected)
            self.dirty.discard(expected)

    @precondition(lambda self: bool(self.processing))
    @rule(data=st.data())
    def done(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.processing)))
        self.queue.done(key)
        self._promote()
        self.processing.discard(key)
        if key in self.dirty:
            self.fifo.append(key)

    @rule(seconds=STEPS)
    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)
        self.now += seconds

    @invariant()
    def length_matches(self) -> None:
        self._promote()
        assert len(self.queue) == len(self.fifo)


@dataclass
class _ModelEntry:
    priority: int
    ready_at: float | None
    counter: int
    ready: bool

    def order(self) -> tuple[int, float, int]:
        return (-self.priority, -math.inf if self.ready_at is None else self.ready_at, self.counter)


class PriorityQueueModel(RuleBasedStateMachine):
    """controller-runtime's priority queue as a dict of entries, ordered by (priority, ready time, first add)."""

    def __init__(self) -> None:
        super().__init__()
        self.clock = FakeClock()
        self.queue: PriorityQueue[str] = PriorityQueue(ItemExponentialFailureRateLimiter(1.0, 8.0), clock=self.clock)
        self.limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(1.0, 8.0)
        self.now = 0.0
        self.entries: dict[str, _ModelEntry] = {}
        self.processing: set[str] = set()
        self.counter = itertools.count()

    def teardown(self) -> None:
        self.queue.shutdown()

    def _promote(self) -> None:
        for entry in self.entries.values():
            if not entry.ready and entry.ready_at is not None and entry.ready_at <= self.now:
                entry.ready = True

    @rule(key=KEYS, priority=PRIORITIES, after=DELAYS, rate_limited=st.booleans())
    def add(self, key: str, priority: int, after: float, rate_limited: bool) -> None:
        self.queue.add(key, priority=priority, after=after, rate_limited=rate_limited)
        self._promote()
        if rate_limited:
            limited = self.limiter.when(key)
            after = limited if after <= 0 or limited < after else after
        ready_at = self.now + after if after > 0 else None
        entry = self.entries.get(key)
        if entry is None:
            self.entries[key] = _ModelEntry(priority, ready_at, next(self.counter), ready_at is None)
            return
        entry.priority = max(entry.priority, priority)
        if entry.ready_at is not None and (ready_at is None or ready_at < entry.ready_at):
            entry.ready_at = ready_at
            entry.ready = entry.ready or ready_at is None

    @rule()
    def get(self) -> None:
        item, priority, shutdown = self.queue.get_with_priority(timeout=0)
        self._promote()
        candidates = [(e.order(), k) for k, e in self.entries.items() if e.ready and k not in self.processing]
        if not candidates:
            assert (item, priority, shutdown) == (None, 0, False)
            return
        _, expected = min(candidates)
        assert (item, priority, shutdown) == (expected, self.entries[expected].priority, False)
        del self.entries[expected]
        self.processing.add(expected)

    @precondition(lambda self: bool(self.processing))
    @rule(data=st.data())
    def done(self, data: st.DataObject) -> None:
        key = data.draw(st.sampled_from(sorted(self.processing)))
        self.queue.done(key)
        self.processing.discard(key)

    @rule(key=KEYS)
    def forget(self, key: str) -> None:
        self.queue.forget(key)
        self.limiter.forget(key)

    @rule(seconds=STEPS)
    def advance(self, seconds: float) -> None:
        self.clock.advance(seconds)
        self.now += seconds

    @invariant()
    def length_matches(self) -> None:
        self._promote()
        assert len(self.queue) == sum(entry.ready for entry in self.entries.values())


TestPlainQueueModel = PlainQueueModel.TestCase
TestPlainQueueModel.settings = MODEL_SETTINGS
TestPriorityQueueModel = PriorityQueueModel.TestCase
TestPriorityQueueModel.settings = MODEL_SETTINGS


# --- several threads at once ------------------------------------------------------------------------------------


@pytest.fixture
def frequent_thread_switches() -> Iterator[None]:
    # Threads running a few dozen operations would otherwise finish inside one 5 ms GIL slice, one after another.
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(previous)


OPERATION = st.tuples(st.sampled_from(["add", "add_after", "get", "done"]), KEYS, DELAYS, PRIORITIES)


@pytest.mark.usefixtures("frequent_thread_switches")
@pytest.mark.parametrize("kind", ["rate_limiting", "priority"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(programs=st.lists(st.lists(OPERATION, max_size=40), min_size=2, max_size=4))
def test_threads_never_share_a_key_and_never_lose_one(
    kind: str, programs: list[list[tuple[str, str, float, int]]]
) -> None:
    clock = FakeClock()
    queue: RateLimitingQueue[str] | PriorityQueue[str] = (
        RateLimitingQueue(clock=clock) if kind == "rate_limiting" else PriorityQueue(clock=clock)
    )
    order = itertools.count()  # next() is atomic: a global order of events across threads
    last_add: dict[str, int] = {}
    last_get: dict[str, int] = {}
    in_flight: set[str] = set()
    violations: list[str] = []
    guard = threading.Lock()

    def took(item: str) -> None:
        with guard:
            if item in in_flight:
                violations.append(f"{item} handed to a second worker")
            in_flight.add(item)
            last_get[item] = next(order)

    def finish(item: str) -> None:
        with guard:
            in_flight.discard(item)
        queue.done(item)

    def add(key: str, delay: float, priority: int) -> None:
        with guard:
            last_add[key] = next(order)  # before the call: a get that returns later must follow it
        if isinstance(queue, PriorityQueue):
            queue.add(key, priority=priority, after=delay)
        elif delay > 0:
            queue.add_after(key, delay)
        else:
            queue.add(key)

    def run(program: list[tuple[str, str, float, int]]) -> None:
        held: list[str] = []
        start.wait()
        for operation, key, delay, priority in program:
            if operation in ("add", "add_after"):
                add(key, delay if operation == "add_after" else 0.0, priority)
            elif operation == "get":
                item, _ = queue.get(timeout=0)
                if item is not None:
                    took(item)
                    held.append(item)
            elif held:
                finish(held.pop(0))
        for item in held:
            finish(item)

    start = threading.Barrier(len(programs))
    threads = [threading.Thread(target=run, args=(program,)) for program in programs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    clock.advance(10.0)  # past every delay used
    while True:
        item, _ = queue.get(timeout=0)
        if item is None:
            break
        took(item)
        finish(item)
    queue.shutdown()

    assert violations == []
    lost = sorted(key for key, added in last_add.items() if last_get.get(key, -1) < added)
    assert lost == []
