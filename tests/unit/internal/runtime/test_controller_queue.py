"""The controller's queue: a queue passed in is the one used (plain or prioritised), and a failed or requeued
request keeps the priority it was dequeued with unless the Result sets one (controller-runtime's rule)."""

from __future__ import annotations

import threading
import uuid

import pytest

from ballast.runtime import Builder, Context, Controller, FakeAPI, FakeClock, Manager, Request, Result
from ballast.runtime.priorityqueue import LOW_PRIORITY, PriorityQueue
from ballast.runtime.reconcile import FuncReconciler
from ballast.runtime.workqueue import RateLimitingQueue
from tests.unit.internal.runtime.support import Calls, eventually

REQUEST = Request("shop", "web")


class RecordingQueue(PriorityQueue[Request]):
    """A priority queue that records the priority of every add (handlers', retries', requeues')."""

    def __init__(self) -> None:
        super().__init__()
        self.adds: list[tuple[Request, int, str]] = []

    def add(self, item: Request, *, priority: int = 0, after: float = 0.0, rate_limited: bool = False) -> None:
        how = "rate_limited" if rate_limited else "after" if after > 0 else "now"
        self.adds.append((item, priority, how))
        super().add(item, priority=priority, after=after, rate_limited=rate_limited)


def _running(controller: Controller) -> threading.Event:
    stop = threading.Event()
    threading.Thread(target=controller.start, args=(stop,), daemon=True).start()
    return stop


def test_a_plain_rate_limiting_queue_is_used_and_requeue_after_works() -> None:
    given: RateLimitingQueue[Request] = RateLimitingQueue()
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        count = calls.record(request)  # only REQUEST is requeued: every other count stays put once reached
        return Result(requeue_after=0.01) if request == REQUEST and count < 3 else None

    controller = Controller(f"plain-{uuid.uuid4().hex[:8]}", FuncReconciler(reconcile), queue=given)
    stop = _running(controller)
    try:
        given.add(REQUEST)  # the very queue passed in feeds the workers: an empty queue was not ignored
        eventually(lambda: calls.count(REQUEST) == 3, "two requeue_after rounds through the plain queue")
        controller.queue.add(Request("shop", "db"), priority=7)  # handlers' priority is accepted, then dropped
        eventually(lambda: calls.count(Request("shop", "db")) == 1, "a handler's add")
    finally:
        stop.set()
    assert len(given) == 0


def test_an_empty_priority_queue_passed_in_is_the_queue() -> None:
    given: PriorityQueue[Request] = PriorityQueue()
    assert len(given) == 0  # falsy: `queue or default` would have replaced it
    controller = Controller("given", FuncReconciler(lambda ctx, request: None), queue=given)
    assert controller.queue is given


def test_builder_with_options_queue_reaches_the_controller(api: FakeAPI, clock: FakeClock) -> None:
    manager = Manager(client=api.client(), clock=clock)
    given: RateLimitingQueue[Request] = RateLimitingQueue(clock=clock)
    controller = (
        Builder(manager).for_("v1/ConfigMap").named(f"b-{uuid.uuid4().hex[:8]}").with_options(queue=given)
    ).build(lambda ctx, request: None)
    controller.queue.add(REQUEST, priority=3)
    assert len(given) == 1


@pytest.mark.parametrize(
    ("outcome", "expected_priority", "how"),
    [
        ("error", LOW_PRIORITY, "rate_limited"),
        ("requeue_after", LOW_PRIORITY, "after"),
        ("requeue", LOW_PRIORITY, "rate_limited"),
        ("requeue_after_with_priority", 5, "after"),
    ],
)
def test_a_retried_request_keeps_its_priority(outcome: str, expected_priority: int, how: str) -> None:
    queue = RecordingQueue()
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        if calls.record(request) > 1:
            return None
        if outcome == "error":
            raise RuntimeError("transient")
        if outcome == "requeue":
            return Result(requeue=True)
        return Result(requeue_after=0.01, priority=5 if outcome.endswith("priority") else None)

    controller = Controller(f"prio-{uuid.uuid4().hex[:8]}", FuncReconciler(reconcile), queue=queue)
    stop = _running(controller)
    try:
        queue.add(REQUEST, priority=LOW_PRIORITY)  # as an initial-list event is added
        eventually(lambda: calls.count(REQUEST) == 2, "the retry")
    finally:
        stop.set()
    assert queue.adds[0] == (REQUEST, LOW_PRIORITY, "now")
    assert queue.adds[1] == (REQUEST, expected_priority, how)
