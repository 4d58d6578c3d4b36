"""controller-runtime's priority queue (`pkg/controller/priorityqueue`), the default queue for controllers.

Like the plain queue it de-duplicates and never hands one key to two workers at once, and it presents the same
consumer API (`WorkQueue`). On top of that every add carries a priority and an optional delay:

- higher priority first; within a priority, items added without delay in the order they were first added,
  then items whose delay has passed in the order of their ready time (controller-runtime's B-tree order);
- re-adding a queued item keeps the higher priority and the earlier ready time;
- `LOW_PRIORITY` (-100) is what controllers give to initial-list and resync events, so real changes overtake
  them.

Two heaps replace controller-runtime's B-trees: the ready heap, keyed by (-priority, ready time or -inf,
first-add counter), and the waiting heap, keyed by ready time and served by one background thread. Changing an
item's key pushes a new heap entry; the superseded one is skipped when it surfaces.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from heapq import heappop, heappush
from typing import Generic, TypeVar

from ballast.runtime.clock import Clock
from ballast.runtime.ratelimiter import RateLimiter, default_priority_queue_rate_limiter
from ballast.runtime.workqueue import _attach_metrics, _QueueBase

T = TypeVar("T", bound=Hashable)

LOW_PRIORITY = -100
"""controller-runtime's `handler.LowPriority`: for initial-list Create events and resync Updates."""

# Sorts an item added without delay before every item that waited (controller-runtime: ReadyAt nil first).
_NOT_DELAYED = -math.inf


class _Entry(Generic[T]):
    """One queued key: its priority, ready time and where it currently sits in the heaps."""

    __slots__ = ("counter", "item", "priority", "ready", "ready_at", "ready_key", "since", "waiting_key")

    def __init__(self, item: T, priority: int, ready_at: float | None, counter: int) -> None:
        self.item = item
        self.priority = priority
        self.ready_at = ready_at
        self.counter = counter
        # Ready (its delay, if any, has passed): counted by len() and workqueue_depth.
        self.ready = False
        # The ready-heap entry that is current for this key; None while waiting or held back because a worker
        # is processing the same key.
        self.ready_key: tuple[int, float, int, _Entry[T]] | None = None
        self.waiting_key: tuple[float, int, _Entry[T]] | None = None
        self.since = 0.0

    def __lt__(self, other: _Entry[T]) -> bool:
        # Heap keys never tie before reaching the entry; this only keeps a tie from raising TypeError.
        return False


class PriorityQueue(_QueueBase, Generic[T]):
    """controller-runtime's priority queue: de-duplicating, prioritised, delaying and rate-limiting.

    The default rate limiter is per-item exponential only (5 ms … 1000 s), as in controller-runtime — no
    token bucket. `name` turns on the workqueue_* metrics, with the depth reported per priority (at most 25
    distinct priorities, then `exceeded_cardinality_limit`).
    """

    def __init__(
        self, rate_limiter: RateLimiter[T] | None = None, *, name: str | None = None, clock: Clock | None = None
    ) -> None:
        super().__init__(name=name, clock=clock)
        self.rate_limiter: RateLimiter[T] = (
            rate_limiter if rate_limiter is not None else default_priority_queue_rate_limiter()
        )
        # Queued keys (ready or waiting), including keys re-added while a worker processes them.
        self._items: dict[T, _Entry[T]] = {}
        self._ready: list[tuple[int, float, int, _Entry[T]]] = []
        self._waiting: list[tuple[float, int, _Entry[T]]] = []
        self._ready_count = 0
        self._counter = 0
        self._sequence = 0
        self._metrics = _attach_metrics(name, self, self._lock, self._clock, None)

    def add(self, item: T, *, priority: int = 0, after: float = 0.0, rate_limited: bool = False) -> None:
        """Queue `item` with `priority`, ready after `after` seconds (now if <= 0).

        `rate_limited` asks the rate limiter for a delay (one more failure); with `after` also set the shorter
        delay wins. An item already queued keeps the higher of the two priorities and the earlier ready time.
        Ignored while shutting down.
        """
        with self._lock:
            if self._shutting_down:
                return
            if rate_limited:
                limited = self.rate_limiter.when(item)
                if after <= 0 or limited < after:
                    after = limited
            if self._waiting:
                self._promote_due_locked()
            metrics = self._metrics
            ready_at: float | None = None
            if after > 0:
                ready_at = self._now() + after
                if metrics is not None:
                    metrics.retries += 1
            entry = self._items.get(item)
            if entry is not None:
                self._requeue_locked(entry, priority, ready_at)
                return
            entry = self._items[item] = _Entry(item, priority, ready_at, self._counter)
            self._counter += 1
            if ready_at is None:
                self._make_ready_locked(entry)
            else:
                self._wait_locked(entry, ready_at)

    def _requeue_locked(self, entry: _Entry[T], priority: int, ready_at: float | None) -> None:
        """An add of a key already queued: keep the higher priority and the earlier ready time."""
        if priority > entry.priority:
            metrics = self._metrics
            if entry.ready and metrics is not None:
                metrics.count_ready(entry.priority, -1)
                metrics.count_ready(priority, 1)
            entry.priority = priority
            if entry.ready_key is not None:
                self._push_ready_locked(entry)
        if entry.ready_at is not None and (ready_at is None or ready_at < entry.ready_at):
            entry.ready_at = ready_at
            if not entry.ready:
                if ready_at is None:
                    self._make_ready_locked(entry)
                else:
                    self._wait_locked(entry, ready_at)
            elif entry.ready_key is not None:
                # Ready after a delay and now re-added without one: it joins the not-delayed items.
                self._push_ready_locked(entry)

    def add_after(self, item: T, delay: float, *, priority: int = 0) -> None:
        """Queue `item` with `priority` once `delay` seconds have passed (see `add`)."""
        self.add(item, priority=priority, after=delay)

    def add_rate_limited(self, item: T, *, priority: int = 0) -> None:
        """Queue `item` with `priority` after the delay its rate limiter gives (see `add`)."""
        self.add(item, priority=priority, rate_limited=True)

    def get(self, timeout: float | None = None) -> tuple[T | None, bool]:
        """Take the highest-priority ready item; same contract as `Queue.get`."""
        with self._lock:
            entry, shutdown = self._take_locked(timeout)
            if entry is None:
                return None, shutdown
            return entry.item, False

    def get_with_priority(self, timeout: float | None = None) -> tuple[T | None, int, bool]:
        """`get` that also returns the item's priority, so a failed reconcile can be re-queued with it."""
        with self._lock:
            entry, shutdown = self._take_locked(timeout)
            if entry is None:
                return None, 0, shutdown
            return entry.item, entry.priority, False

    def _take_locked(self, timeout: float | None) -> tuple[_Entry[T] | None, bool]:
        """The next ready entry, now held by the caller; or (None, True) shut down and empty, (None, False) timeout."""
        if self._waiting:
            self._promote_due_locked()
        deadline: float | None = None
        entry = self._pop_ready_locked()
        while entry is None:
            if self._shutting_down:
                return None, True
            if deadline is None and timeout is not None:
                deadline = self._now() + timeout
            if not self._wait_for_ready_locked(deadline):
                return None, False
            if self._waiting:
                self._promote_due_locked()
            entry = self._pop_ready_locked()
        entry.ready_key = None
        item = entry.item
        del self._items[item]
        self._processing.add(item)
        self._ready_count -= 1
        metrics = self._metrics
        if metrics is not None:
            now = self._now()
            # The priority has been counted in (it is ready), so the per-priority depth has its key.
            metrics.depth_by_priority[entry.priority] -= 1
            metrics.queue_duration.observe(now - entry.since)
            metrics.started_at[item] = now
        return entry, False

    def _pop_ready_locked(self) -> _Entry[T] | None:
        ready = self._ready
        while ready:
            key = heappop(ready)
            if key[3].ready_key is key:  # else superseded by a later push for the same key
                return key[3]
        return None

    def done(self, item: T) -> None:
        """Mark `item` as processed; if it was added again meanwhile it becomes available now."""
        with self._lock:
            if self._waiting:
                self._promote_due_locked()
            metrics = self._metrics
            if metrics is not None:
                started = metrics.started_at.pop(item, None)
                if started is not None:
                    metrics.work_duration.observe(self._now() - started)
            processing = self._processing
            processing.discard(item)
            entry = self._items.get(item)
            if entry is not None and entry.ready and entry.ready_key is None:
                self._push_ready_locked(entry)
                if self._getters:
                    self._ready_changed.notify()
            if self._draining and not processing:
                self._drained.notify_all()

    def forget(self, item: T) -> None:
        """Clear `item`'s failure history in the rate limiter."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """How many failures of `item` the rate limiter is tracking."""
        return self.rate_limiter.num_requeues(item)

    def __len__(self) -> int:
        """Number of ready items, including ones re-added while a worker processes them (controller-runtime's Len)."""
        with self._lock:
            if self._waiting:
                self._promote_due_locked()
            return self._ready_count

    def _make_ready_locked(self, entry: _Entry[T]) -> None:
        entry.ready = True
        entry.waiting_key = None
        self._ready_count += 1
        metrics = self._metrics
        if metrics is not None:
            metrics.adds += 1
            metrics.count_ready(entry.priority, 1)
            entry.since = self._now()
        if entry.item not in self._processing:
            self._push_ready_locked(entry)
            if self._getters:
                self._ready_changed.notify()

    def _push_ready_locked(self, entry: _Entry[T]) -> None:
        ready_at = entry.ready_at
        key = (-entry.priority, _NOT_DELAYED if ready_at is None else ready_at, entry.counter, entry)
        entry.ready_key = key
        heappush(self._ready, key)

    def _wait_locked(self, entry: _Entry[T], ready_at: float) -> None:
        self._sequence += 1
        key = (ready_at, self._sequence, entry)
        entry.waiting_key = key
        heappush(self._waiting, key)
        self._schedule_locked(ready_at)

    def _promote_due_locked(self) -> float | None:
        waiting = self._waiting
        if not waiting:
            return None
        now = self._now()
        while waiting and waiting[0][0] <= now:
            key = heappop(waiting)
            entry = key[2]
            if entry.waiting_key is key:
                self._make_ready_locked(entry)
        return waiting[0][0] if waiting else None

    def _drop_waiting_locked(self) -> None:
        for _, _, entry in self._waiting:
            if entry.waiting_key is not None and self._items.get(entry.item) is entry:
                del self._items[entry.item]
            entry.waiting_key = None
        self._waiting.clear()


__all__ = [
    "LOW_PRIORITY",
    "PriorityQueue",
]
