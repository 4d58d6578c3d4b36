"""Fixtures for the workqueue tests: a fake clock and queues that are shut down after each test."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from ballast.runtime import FakeClock
from ballast.runtime.priorityqueue import PriorityQueue
from ballast.runtime.ratelimiter import RateLimiter
from ballast.runtime.workqueue import RateLimitingQueue
from tests.unit.internal.runtime.workqueue.support import AnyQueue, QueueFactory


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def _shut_down_after(made: list[AnyQueue]) -> None:
    for queue in made:
        queue.shutdown()


@pytest.fixture
def make_rate_limiting_queue(clock: FakeClock) -> Iterator[Callable[..., RateLimitingQueue[str]]]:
    made: list[AnyQueue] = []

    def make(rate_limiter: RateLimiter[str] | None = None, *, name: str | None = None) -> RateLimitingQueue[str]:
        queue: RateLimitingQueue[str] = RateLimitingQueue(rate_limiter, name=name, clock=clock)
        made.append(queue)
        return queue

    yield make
    _shut_down_after(made)


@pytest.fixture
def make_priority_queue(clock: FakeClock) -> Iterator[Callable[..., PriorityQueue[str]]]:
    made: list[AnyQueue] = []

    def make(rate_limiter: RateLimiter[str] | None = None, *, name: str | None = None) -> PriorityQueue[str]:
        queue: PriorityQueue[str] = PriorityQueue(rate_limiter, name=name, clock=clock)
        made.append(queue)
        return queue

    yield make
    _shut_down_after(made)


@pytest.fixture(params=["rate_limiting", "priority"])
def make_queue(request: pytest.FixtureRequest) -> QueueFactory:
    """Either queue: the consumer contract a controller relies on holds for both."""
    factory: QueueFactory = request.getfixturevalue(f"make_{request.param}_queue")
    return factory
