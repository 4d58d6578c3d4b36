"""The consumer contract of both queues, then what is specific to client-go's plain/delaying/rate-limiting queue."""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable

import pytest

from ballast.runtime import FakeClock
from ballast.runtime.priorityqueue import PriorityQueue
from ballast.runtime.ratelimiter import ItemExponentialFailureRateLimiter
from ballast.runtime.workqueue import DelayingQueue, Queue, RateLimitingQueue, WorkQueue
from tests.unit.internal.runtime.workqueue.support import QueueFactory, drain


def start(target: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


# --- the contract both queues keep ------------------------------------------------------------------------------


def test_both_queues_satisfy_the_protocol_a_controller_programs_against() -> None:
    queues: list[WorkQueue[str]] = [RateLimitingQueue(), PriorityQueue()]  # mypy checks the structural match
    for queue in queues:
        queue.add("a")
        assert queue.get(timeout=0) == ("a", False)
        queue.done("a")
        queue.forget("a")
        queue.shutdown()
        assert queue.shutting_down


@pytest.mark.parametrize(
    ("adds", "handed_out"),
    [
        (["a"], ["a"]),
        (["a", "a", "a"], ["a"]),
        (["a", "b", "a", "c", "b"], ["a", "b", "c"]),
        (["c", "b", "a"], ["c", "b", "a"]),
    ],
)
def test_adds_are_deduplicated_and_handed_out_first_in_first_out(
    make_queue: QueueFactory, adds: list[str], handed_out: list[str]
) -> None:
    queue = make_queue()
    for item in adds:
        queue.add(item)
    assert len(queue) == len(handed_out)
    assert drain(queue) == handed_out


def test_a_key_being_processed_is_not_handed_to_a_second_worker(make_queue: QueueFactory) -> None:
    queue = make_queue()
    queue.add("a")
    assert queue.get(timeout=0) == ("a", False)
    queue.add("a")
    queue.add("b")
    # The second worker gets b, not the a the first worker still holds.
    assert queue.get(timeout=0) == ("b", False)
    assert queue.get(timeout=0) == (None, False)
    queue.done("a")
    assert queue.get(timeout=0) == ("a", False)


def test_done_without_a_re_add_leaves_nothing_behind(make_queue: QueueFactory) -> None:
    queue = make_queue()
    queue.add("a")
    item, _ = queue.get(timeout=0)
    assert item == "a"
    queue.done("a")
    assert len(queue) == 0
    assert queue.get(timeout=0) == (None, False)


@pytest.mark.parametrize("stray", ["a", "never-added"])
def test_a_stray_done_neither_duplicates_nor_loses_an_item(make_queue: QueueFactory, stray: str) -> None:
    queue = make_queue()
    queue.add("a")
    queue.done(stray)
    queue.done(stray)
    assert drain(queue) == ["a"]
    assert drain(queue) == []


def test_a_re_add_while_processing_is_deduplicated_too(make_queue: QueueFactory) -> None:
    queue = make_queue()
    queue.add("a")
    queue.get(timeout=0)
    queue.add("a")
    queue.add("a")
    queue.done("a")
    assert drain(queue) == ["a"]


def test_get_blocks_until_an_item_arrives(make_queue: QueueFactory) -> None:
    queue = make_queue()
    got: list[tuple[str | None, bool]] = []
    worker = start(lambda: got.append(queue.get()))
    queue.add("a")
    worker.join(timeout=5)
    assert got == [("a", False)]


def test_get_times_out_on_the_queue_clock(make_queue: QueueFactory, clock: FakeClock) -> None:
    queue = make_queue()
    got: list[tuple[str | None, bool]] = []
    worker = start(lambda: got.append(queue.get(timeout=5.0)))
    advanced = 0.0
    while worker.is_alive():
        clock.advance(0.5)
        advanced += 0.5
        worker.join(timeout=0.005)
    assert got == [(None, False)]
    assert advanced >= 5.0  # (more if the worker started late: the timeout counts from its call)


def test_shutdown_lets_workers_drain_then_reports_shutdown(make_queue: QueueFactory) -> None:
    queue = make_queue()
    queue.add("a")
    queue.add("b")
    queue.shutdown()
    queue.add("c")  # ignored once shutting down
    assert queue.shutting_down
    assert drain(queue) == ["a", "b"]
    assert queue.get() == (None, True)
    assert queue.get(timeout=0) == (None, True)


def test_shutdown_wakes_a_blocked_worker(make_queue: QueueFactory) -> None:
    queue = make_queue()
    got: list[tuple[str | None, bool]] = []
    worker = start(lambda: got.append(queue.get()))
    queue.shutdown()
    worker.join(timeout=5)
    assert got == [(None, True)]


def test_done_after_shutdown_still_hands_out_a_re_added_item(make_queue: QueueFactory) -> None:
    queue = make_queue()
    queue.add("a")
    queue.get(timeout=0)
    queue.add("a")
    queue.shutdown()
    queue.done("a")
    assert queue.get(timeout=0) == ("a", False)
    queue.done("a")
    assert queue.get(timeout=0) == (None, True)


def test_shutdown_with_drain_blocks_until_processing_is_done(make_queue: QueueFactory) -> None:
    queue = make_queue()
    queue.add("a")
    queue.add("b")
    queue.get(timeout=0)
    queue.get(timeout=0)
    drainer = start(queue.shutdown_with_drain)
    while not queue.shutting_down:
        drainer.join(timeout=0.001)
    queue.done("a")
    drainer.join(timeout=0.01)
    assert drainer.is_alive()
    queue.done("b")
    drainer.join(timeout=5)
    assert not drainer.is_alive()


def test_shutdown_with_drain_returns_at_once_when_nothing_is_processing(make_queue: QueueFactory) -> None:
    queue = make_queue()
    queue.add("a")
    queue.shutdown_with_drain()
    assert queue.shutting_down
    assert drain(queue) == ["a"]


def test_shutdown_aborts_a_drain_that_is_still_waiting(make_queue: QueueFactory) -> None:
    queue = make_queue()
    queue.add("a")
    queue.get(timeout=0)
    drainer = start(queue.shutdown_with_drain)
    while not queue.shutting_down:
        drainer.join(timeout=0.001)
    queue.shutdown()
    drainer.join(timeout=5)
    assert not drainer.is_alive()


@pytest.mark.parametrize("delay", [0.0, -1.0])
def test_add_after_without_a_positive_delay_adds_now(make_queue: QueueFactory, delay: float) -> None:
    queue = make_queue()
    queue.add_after("a", delay)
    assert len(queue) == 1
    assert drain(queue) == ["a"]


def test_add_after_hands_the_item_out_once_the_delay_has_passed(make_queue: QueueFactory, clock: FakeClock) -> None:
    queue = make_queue()
    queue.add_after("a", 2.0)
    assert len(queue) == 0
    clock.advance(1.999)
    assert queue.get(timeout=0) == (None, False)
    clock.advance(0.001)
    assert queue.get(timeout=0) == ("a", False)


def test_the_waiting_thread_wakes_a_blocked_worker(make_queue: QueueFactory, clock: FakeClock) -> None:
    queue = make_queue()
    got: list[tuple[str | None, bool]] = []
    worker = start(lambda: got.append(queue.get()))
    queue.add_after("a", 5.0)
    clock.advance(5.0)
    worker.join(timeout=5)
    assert got == [("a", False)]


@pytest.mark.parametrize(
    ("delays", "ready_after"),
    [
        ([10.0, 2.0], 2.0),  # a shorter delay moves the item forward
        ([2.0, 10.0], 2.0),  # a longer one does not push it back
        ([5.0, 5.0, 1.0, 3.0], 1.0),
    ],
)
def test_re_adding_a_waiting_item_keeps_the_earlier_ready_time(
    make_queue: QueueFactory, clock: FakeClock, delays: list[float], ready_after: float
) -> None:
    queue = make_queue()
    for delay in delays:
        queue.add_after("a", delay)
    clock.advance(ready_after - 0.5)
    assert len(queue) == 0
    clock.advance(0.5)
    assert drain(queue) == ["a"]
    clock.advance(max(delays))
    assert drain(queue) == []  # handed out once, not once per add_after


def test_waiting_items_become_ready_in_ready_time_order(make_queue: QueueFactory, clock: FakeClock) -> None:
    queue = make_queue()
    for item, delay in [("c", 3.0), ("a", 1.0), ("b", 2.0)]:
        queue.add_after(item, delay)
    clock.advance(3.0)
    assert drain(queue) == ["a", "b", "c"]


def test_shutdown_drops_items_still_waiting(make_queue: QueueFactory, clock: FakeClock) -> None:
    queue = make_queue()
    queue.add_after("a", 1.0)
    queue.shutdown()
    queue.add_after("b", 0.0)
    clock.advance(2.0)
    assert queue.get() == (None, True)


def test_shutdown_stops_the_waiting_thread(make_queue: QueueFactory) -> None:
    queue = make_queue(name="queue-with-a-waiting-thread")
    queue.add_after("a", 1.0)
    (thread,) = [t for t in threading.enumerate() if t.name == "workqueue-queue-with-a-waiting-thread-waiting"]
    queue.shutdown()
    assert not thread.is_alive()


def test_add_rate_limited_waits_as_long_as_the_limiter_says(make_queue: QueueFactory, clock: FakeClock) -> None:
    queue = make_queue(ItemExponentialFailureRateLimiter(1.0, 60.0))
    queue.add_rate_limited("a")
    assert queue.num_requeues("a") == 1
    clock.advance(0.5)
    assert drain(queue) == []
    clock.advance(0.5)
    assert drain(queue) == ["a"]
    queue.add_rate_limited("a")  # second failure: 2 s
    clock.advance(1.5)
    assert drain(queue) == []
    clock.advance(0.5)
    assert drain(queue) == ["a"]
    queue.forget("a")
    assert queue.num_requeues("a") == 0


# --- the plain queue --------------------------------------------------------------------------------------------


def test_the_plain_queue_does_not_count_an_item_held_back_for_its_worker() -> None:
    queue: Queue[str] = Queue()
    queue.add("a")
    queue.get(timeout=0)
    queue.add("a")
    assert len(queue) == 0
    queue.done("a")
    assert len(queue) == 1


def test_an_immediate_add_does_not_cancel_a_pending_add_after(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(clock=clock)
    try:
        queue.add_after("a", 1.0)
        queue.add("a")
        assert drain(queue) == ["a"]
        clock.advance(1.0)
        assert drain(queue) == ["a"]
    finally:
        queue.shutdown()


def test_the_rate_limiting_queue_defaults_to_the_controller_limiter(
    make_rate_limiting_queue: Callable[..., RateLimitingQueue[str]], clock: FakeClock
) -> None:
    queue = make_rate_limiting_queue()
    for index in range(100):
        queue.add_rate_limited(f"item-{index}")
    clock.advance(0.005)
    assert len(queue) == 100
    queue.add_rate_limited("late")  # the 10 qps bucket is empty: 100 ms, not 5 ms
    clock.advance(0.05)
    assert len(queue) == 100
    clock.advance(0.05)
    assert len(queue) == 101


def test_a_garbage_collected_queue_ends_its_waiting_thread(clock: FakeClock) -> None:
    queue: DelayingQueue[str] = DelayingQueue(name="collected-queue", clock=clock)
    queue.add_after("a", 100.0)
    (thread,) = [t for t in threading.enumerate() if t.name == "workqueue-collected-queue-waiting"]
    del queue
    gc.collect()
    thread.join(timeout=5)
    assert not thread.is_alive()
