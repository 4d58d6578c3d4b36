"""controller-runtime's priority queue: ordering, re-add rules, delays and its default limiter."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ballast.runtime import FakeClock
from ballast.runtime.priorityqueue import LOW_PRIORITY, PriorityQueue
from ballast.runtime.ratelimiter import ItemExponentialFailureRateLimiter
from tests.unit.internal.runtime.workqueue.support import drain

MakePriorityQueue = Callable[..., PriorityQueue[str]]


def test_low_priority_is_controller_runtimes_value() -> None:
    assert LOW_PRIORITY == -100


@pytest.mark.parametrize(
    ("adds", "handed_out"),
    [
        ([("a", 0), ("b", 10), ("c", LOW_PRIORITY), ("d", 10)], ["b", "d", "a", "c"]),
        ([("a", LOW_PRIORITY), ("b", LOW_PRIORITY), ("c", 0)], ["c", "a", "b"]),
        ([("a", 1), ("b", 2), ("c", 3), ("d", 2)], ["c", "b", "d", "a"]),
        # Re-adds keep the higher priority; FIFO within a priority follows the first add.
        ([("a", 0), ("b", 0), ("a", 5)], ["a", "b"]),
        ([("a", 5), ("b", 3), ("a", 0)], ["a", "b"]),
        ([("a", 0), ("b", 0), ("c", 0), ("b", 0), ("a", 0)], ["a", "b", "c"]),
        ([("a", 0), ("b", 0), ("c", 1), ("a", 1)], ["a", "c", "b"]),
    ],
)
def test_higher_priority_first_and_first_in_first_out_within_a_priority(
    make_priority_queue: MakePriorityQueue, adds: list[tuple[str, int]], handed_out: list[str]
) -> None:
    queue = make_priority_queue()
    for item, priority in adds:
        queue.add(item, priority=priority)
    assert len(queue) == len(handed_out)
    assert drain(queue) == handed_out


def test_get_with_priority_returns_the_priority_the_item_was_queued_with(
    make_priority_queue: MakePriorityQueue,
) -> None:
    queue = make_priority_queue()
    queue.add("a", priority=LOW_PRIORITY)
    queue.add("a", priority=3)
    assert queue.get_with_priority(timeout=0) == ("a", 3, False)
    assert queue.get_with_priority(timeout=0) == (None, 0, False)
    queue.shutdown()
    assert queue.get_with_priority() == (None, 0, True)


def test_an_upgrade_while_processing_applies_when_the_item_comes_back(make_priority_queue: MakePriorityQueue) -> None:
    queue = make_priority_queue()
    queue.add("a")
    queue.get(timeout=0)
    queue.add("b", priority=1)
    queue.add("a")
    queue.add("a", priority=5)
    assert len(queue) == 2  # controller-runtime's Len counts the held-back a
    assert queue.get_with_priority(timeout=0) == ("b", 1, False)
    queue.done("a")
    assert queue.get_with_priority(timeout=0) == ("a", 5, False)


@pytest.mark.parametrize(
    ("afters", "ready_after"),
    [
        ([10.0, 2.0], 2.0),
        ([2.0, 20.0], 2.0),
        ([10.0, 0.0], 0.0),  # an add without delay makes it ready now
        ([0.0, 10.0], 0.0),  # and a later delayed add does not hold it back
    ],
)
def test_re_adds_keep_the_earliest_ready_time(
    make_priority_queue: MakePriorityQueue, clock: FakeClock, afters: list[float], ready_after: float
) -> None:
    queue = make_priority_queue()
    for after in afters:
        queue.add("a", after=after)
    if ready_after:
        clock.advance(ready_after - 0.5)
        assert drain(queue) == []
        clock.advance(0.5)
    assert drain(queue) == ["a"]
    clock.advance(30.0)
    assert drain(queue) == []


def test_a_delayed_priority_upgrade_keeps_both_the_priority_and_the_delay(
    make_priority_queue: MakePriorityQueue, clock: FakeClock
) -> None:
    queue = make_priority_queue()
    queue.add("a", after=1.0)
    queue.add("a", priority=7, after=5.0)
    queue.add("b", priority=3)
    assert drain(queue) == ["b"]
    queue.add("b", priority=3)
    clock.advance(1.0)
    assert queue.get_with_priority(timeout=0) == ("a", 7, False)


def test_items_ready_after_a_delay_queue_behind_undelayed_items_of_their_priority(
    make_priority_queue: MakePriorityQueue, clock: FakeClock
) -> None:
    # controller-runtime's B-tree order: priority, then never-delayed items (by first add), then items whose
    # delay has passed (by ready time).
    queue = make_priority_queue()
    queue.add("late", after=2.0)
    queue.add("early", after=1.0)
    queue.add("urgent", priority=1, after=1.0)
    clock.advance(2.0)
    queue.add("fresh")
    assert drain(queue) == ["urgent", "fresh", "early", "late"]


def test_an_undelayed_re_add_moves_a_waited_item_among_the_undelayed(
    make_priority_queue: MakePriorityQueue, clock: FakeClock
) -> None:
    queue = make_priority_queue()
    queue.add("waited", after=1.0)
    clock.advance(1.0)
    queue.add("fresh")
    queue.add("waited")
    assert drain(queue) == ["waited", "fresh"]  # first added, so first among the undelayed


@pytest.mark.parametrize(
    ("after", "ready_after"),
    [
        (0.0, 1.0),  # only the limiter: 1 s
        (0.25, 0.25),  # the shorter of the two wins
        (3.0, 1.0),
    ],
)
def test_rate_limited_with_a_delay_takes_the_shorter_one(
    make_priority_queue: MakePriorityQueue, clock: FakeClock, after: float, ready_after: float
) -> None:
    queue = make_priority_queue(ItemExponentialFailureRateLimiter(1.0, 60.0))
    queue.add("a", after=after, rate_limited=True)
    assert queue.num_requeues("a") == 1
    clock.advance(ready_after - 0.125)
    assert drain(queue) == []
    clock.advance(0.125)
    assert drain(queue) == ["a"]


def test_add_after_and_add_rate_limited_take_a_priority(
    make_priority_queue: MakePriorityQueue, clock: FakeClock
) -> None:
    queue = make_priority_queue(ItemExponentialFailureRateLimiter(1.0, 60.0))
    queue.add("plain")
    queue.add_after("delayed", 1.0, priority=2)
    queue.add_rate_limited("retried", priority=4)
    clock.advance(1.0)
    assert drain(queue) == ["retried", "delayed", "plain"]


def test_the_default_limiter_has_no_token_bucket(make_priority_queue: MakePriorityQueue, clock: FakeClock) -> None:
    queue = make_priority_queue()
    for index in range(150):
        queue.add_rate_limited(f"item-{index}")
    clock.advance(0.005)  # with the legacy bucket the last 50 would wait up to 5 s
    assert len(queue) == 150
    queue.add_rate_limited("item-0")
    queue.add("item-0")
    assert queue.num_requeues("item-0") == 2
