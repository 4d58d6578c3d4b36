"""Shared helpers for the workqueue tests."""

from __future__ import annotations

from typing import Protocol, TypeAlias

from ballast.runtime.priorityqueue import PriorityQueue
from ballast.runtime.ratelimiter import RateLimiter
from ballast.runtime.workqueue import RateLimitingQueue

AnyQueue: TypeAlias = RateLimitingQueue[str] | PriorityQueue[str]


class QueueFactory(Protocol):
    def __call__(self, rate_limiter: RateLimiter[str] | None = None, *, name: str | None = None) -> AnyQueue: ...


class Consumer(Protocol):
    """The worker side of any queue in these tests."""

    def get(self, timeout: float | None = None) -> tuple[str | None, bool]: ...

    def done(self, item: str) -> None: ...


def drain(queue: Consumer) -> list[str]:
    """Everything ready right now, in hand-out order, each marked done."""
    items: list[str] = []
    while True:
        item, _ = queue.get(timeout=0)
        if item is None:
            return items
        items.append(item)
        queue.done(item)
