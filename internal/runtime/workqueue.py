"""Workqueues for controllers, with client-go's semantics (`util/workqueue`): dedup, one worker per key, delays.

`Queue` keeps three structures: the FIFO of keys to hand out, `dirty` (keys that need processing) and
`processing` (keys a worker holds). A key is never handed to two workers at once: a key added while it is being
processed is only marked dirty and goes back into the FIFO when its worker calls `done`. `get` blocks and
returns `(None, True)` only once the queue is shutting down *and* empty, so workers drain what was queued.

`DelayingQueue` adds `add_after` (a waiting heap served by one background thread; re-adding a waiting item keeps
the earlier ready time) and `RateLimitingQueue` adds `add_rate_limited`/`forget`/`num_requeues` on top of a
`RateLimiter`. controller-runtime's priority queue, which presents the same consumer API, is in
`priorityqueue.py`; `WorkQueue` is the one protocol handlers and controllers program against. Adds take a
`priority` everywhere: the plain queues accept and ignore it (every item is handed out at priority 0), so any
queue fits any controller.

Named queues record the seven `workqueue_*` metrics of `metrics.py` (labels `name` = `controller` = the queue's
name); unnamed queues record none. To keep them off the hot path a queue counts in plain numbers under its own
lock and Prometheus reads those numbers when it scrapes (see `_Series`).
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Hashable, Sized
from heapq import heappop, heappush
from typing import Generic, Protocol, TypeVar

from ballast.runtime.clock import Clock, RealClock
from ballast.runtime.metrics import WORKQUEUE_BUCKETS, WORKQUEUE_COLLECTOR
from ballast.runtime.ratelimiter import RateLimiter, default_controller_rate_limiter

T = TypeVar("T", bound=Hashable)

# client-go's delaying queue re-checks its heap at least this often, whatever it was told (`maxWait`).
MAX_WAIT_SECONDS = 10.0
# controller-runtime reports at most this many distinct priorities on workqueue_depth, then one catch-all label.
PRIORITY_LABEL_LIMIT = 25
EXCEEDED_CARDINALITY_LABEL = "exceeded_cardinality_limit"


class WorkQueue(Protocol[T]):
    """What handlers and controllers need from a queue; `Queue`, `DelayingQueue`, `RateLimitingQueue` and
    `PriorityQueue` all provide it (the plain ones ignore `priority`)."""

    def add(self, item: T, *, priority: int = 0) -> None:
        """Queue `item` unless it is already queued; ignored while shutting down."""
        ...

    def add_after(self, item: T, delay: float, *, priority: int = 0) -> None:
        """Queue `item` once `delay` seconds have passed (immediately if `delay` <= 0)."""
        ...

    def add_rate_limited(self, item: T, *, priority: int = 0) -> None:
        """Queue `item` after the delay its rate limiter gives (one more failure for the item)."""
        ...

    def get_with_priority(self, timeout: float | None = None) -> tuple[T | None, int, bool]:
        """`get`, and the priority the item was queued at (0 on queues without priorities)."""
        ...

    def get(self, timeout: float | None = None) -> tuple[T | None, bool]:
        """Block for the next item: `(item, False)`; `(None, True)` shut down and drained; `(None, False)` timeout."""
        ...

    def done(self, item: T) -> None:
        """Tell the queue the worker has finished with `item` (it goes back in if it was re-added meanwhile)."""
        ...

    def forget(self, item: T) -> None:
        """Clear `item`'s rate-limiter history (after a successful reconcile)."""
        ...

    def num_requeues(self, item: T) -> int:
        """How many rate-limited retries of `item` are being tracked."""
        ...

    def __len__(self) -> int:
        """Number of items ready to be handed out."""
        ...

    def shutdown(self) -> None:
        """Stop accepting adds and wake every blocked `get`; queued items are still handed out."""
        ...

    def shutdown_with_drain(self) -> None:
        """`shutdown`, then block until no item is being processed (workers must call `done`)."""
        ...

    @property
    def shutting_down(self) -> bool:
        """Whether `shutdown` or `shutdown_with_drain` has been called."""
        ...


# ---------------------------------------------------------------------------------------------------------------
# Metrics


_BOUNDS = (*WORKQUEUE_BUCKETS, math.inf)


class _Histogram:
    """Bucket counts and sum of one queue's durations; a value lands in the first bucket whose bound is >= it."""

    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts = [0] * len(_BOUNDS)
        self.total = 0.0

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(_BOUNDS, seconds)] += 1
        self.total += seconds

    def merge(self, other: _Histogram) -> None:
        for index, count in enumerate(other.counts):
            self.counts[index] += count
        self.total += other.total


class _Totals:
    """The monotonic values of a queue: counters and histograms, which must not go down when a queue goes away."""

    __slots__ = ("adds", "queue_duration", "retries", "work_duration")

    def __init__(self) -> None:
        self.adds = 0
        self.retries = 0
        self.queue_duration = _Histogram()
        self.work_duration = _Histogram()

    def merge(self, other: _Totals) -> None:
        self.adds += other.adds
        self.retries += other.retries
        self.queue_duration.merge(other.queue_duration)
        self.work_duration.merge(other.work_duration)


class _QueueMetrics(_Totals):
    """One named queue's metric state, written by the queue under its own lock and read by `_Series` at scrape time.

    For the plain queue the depth is the size of its `dirty` set (client-go's depth counts exactly the dirty
    keys); the priority queue counts ready items per priority in `depth_by_priority`.
    """

    __slots__ = ("added_at", "clock", "depth_by_priority", "dirty", "lock", "series", "started_at")

    def __init__(self, series: _Series, lock: threading.Lock, clock: Clock, dirty: Sized | None) -> None:
        super().__init__()
        self.series = series
        self.lock = lock
        self.clock = clock
        self.dirty = dirty
        self.depth_by_priority: dict[int, int] = {}
        # Per item: when it was added (for queue_duration) and when a worker took it (work_duration, unfinished).
        self.added_at: dict[Hashable, float] = {}
        self.started_at: dict[Hashable, float] = {}

    def count_ready(self, priority: int, delta: int) -> None:
        """Priority queue: `delta` more (or fewer) ready items at `priority`."""
        depth = self.depth_by_priority
        if priority in depth:
            depth[priority] += delta
        else:
            self.series.observe_priority(priority)
            depth[priority] = delta

    def depth(self, label: str) -> int:
        """This queue's depth on the `priority` label `label` (call with `lock` held)."""
        if not label:
            return len(self.dirty) if self.dirty is not None else 0
        label_of = self.series.priority_label
        return sum(count for priority, count in self.depth_by_priority.items() if label_of(priority) == label)


class _Series:
    """The workqueue_* series of one queue name, shared by every queue of that name (as client-go's provider is).

    Per-operation `inc()`/`observe()` on prometheus_client children costs ≈ 0.4–0.9 µs each (a lock per value) —
    more than the whole queue operation. So queues count in plain numbers, and this object makes the labelled
    `metrics.WORKQUEUE_COLLECTOR` reads those numbers when the registry collects.
    Values are exact at every scrape; `unfinished_work` and `longest_running` are computed then, so no thread
    refreshes them. A queue that is garbage-collected folds its totals into `_retired` so counters never drop.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        # Re-entrant: a queue's finalizer (retire) can run from the garbage collector inside a locked section.
        self._lock = threading.RLock()
        self._live: list[_QueueMetrics] = []
        self._retired = _Totals()
        self._priority_labels: dict[int, str] = {}
        self._depth_labels: set[str] = set()
        WORKQUEUE_COLLECTOR.register(self)

    def attach(self, owner: object, lock: threading.Lock, clock: Clock, dirty: Sized | None) -> _QueueMetrics:
        """New metric state for `owner` (a queue); it is retired when `owner` is garbage-collected."""
        metrics = _QueueMetrics(self, lock, clock, dirty)
        with self._lock:
            self._live.append(metrics)
            if dirty is not None:
                self._ensure_depth_label("")
        weakref.finalize(owner, self._retire, metrics)
        return metrics

    def priority_label(self, priority: int) -> str:
        """The `priority` label for `priority`: its number, or the catch-all once 25 priorities have been seen."""
        return self._priority_labels.get(priority, EXCEEDED_CARDINALITY_LABEL)

    def observe_priority(self, priority: int) -> None:
        """Register a priority the first time a queue of this name uses it, creating its depth series."""
        with self._lock:
            if priority not in self._priority_labels and len(self._priority_labels) < PRIORITY_LABEL_LIMIT:
                self._priority_labels[priority] = str(priority)
            self._ensure_depth_label(self.priority_label(priority))

    def _ensure_depth_label(self, label: str) -> None:
        self._depth_labels.add(label)

    def _retire(self, metrics: _QueueMetrics) -> None:
        with self._lock:
            self._retired.merge(metrics)
            self._live.remove(metrics)

    def _snapshot(self) -> tuple[_Totals, list[_QueueMetrics]]:
        with self._lock:
            retired = _Totals()
            retired.merge(self._retired)
            return retired, list(self._live)

    def totals(self) -> tuple[int, int, tuple[list[int], float], tuple[list[int], float]]:
        """For the collector: adds, retries and both duration histograms, over every queue of this name."""
        totals = self._totals()
        queue, work = totals.queue_duration, totals.work_duration
        return totals.adds, totals.retries, (queue.counts, queue.total), (work.counts, work.total)

    def depths(self) -> dict[str, int]:
        """For the collector: ready items per `priority` label seen so far."""
        with self._lock:
            labels = sorted(self._depth_labels)
        return {label: self._depth(label) for label in labels}

    def processing_ages(self) -> tuple[float, float]:
        return self._processing_ages()

    def _totals(self) -> _Totals:
        # A queue lock is never taken while holding self._lock: queues call observe_priority under theirs.
        totals, live = self._snapshot()
        for metrics in live:
            with metrics.lock:
                totals.merge(metrics)
        return totals

    def _depth(self, label: str) -> int:
        _, live = self._snapshot()
        total = 0
        for metrics in live:
            with metrics.lock:
                total += metrics.depth(label)
        return total

    def _processing_ages(self) -> tuple[float, float]:
        """(sum, max) of how long the items being processed have been held — client-go's 500 ms refresh, on demand."""
        _, live = self._snapshot()
        total = oldest = 0.0
        for metrics in live:
            with metrics.lock:
                now = metrics.clock.monotonic()
                for started in metrics.started_at.values():
                    age = now - started
                    total += age
                    oldest = max(oldest, age)
        return total, oldest


_SERIES: dict[str, _Series] = {}
_SERIES_LOCK = threading.Lock()


def _attach_metrics(
    name: str | None, owner: object, lock: threading.Lock, clock: Clock, dirty: Sized | None
) -> _QueueMetrics | None:
    """Metric state for a queue called `name` (None for an unnamed queue, which records nothing)."""
    if name is None:
        return None
    with _SERIES_LOCK:
        series = _SERIES.get(name)
        if series is None:
            series = _SERIES[name] = _Series(name)
    return series.attach(owner, lock, clock, dirty)


# ---------------------------------------------------------------------------------------------------------------
# The waiting thread


class _WaitingLoop:
    """One background thread per queue that moves waiting items to the ready queue when their time comes.

    It sleeps on a condition of the queue's own lock through the clock (so a FakeClock drives it) and calls
    `promote` — the queue's `_promote_due_locked`, which returns the next ready time — with the lock held. It holds
    the queue only weakly, so a forgotten queue is collected and its thread ends.
    """

    def __init__(self, lock: threading.Lock, clock: Clock, promote: Callable[[], float | None], name: str) -> None:
        self._changed = threading.Condition(lock)
        self._clock = clock
        self._promote = weakref.WeakMethod(promote)
        self._stopped = threading.Event()
        # The ready time the thread sleeps towards; None while it sleeps until told.
        self._wake_at: float | None = None
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()

    def schedule_locked(self, ready_at: float) -> None:
        """An item now waits until `ready_at`; wake the thread if that is earlier than it planned (lock held)."""
        if self._wake_at is None or ready_at < self._wake_at:
            self._wake_at = ready_at
            self._changed.notify()

    def stop_locked(self) -> None:
        """Make the thread exit (lock held); join `thread` after releasing the lock."""
        self._stopped.set()
        self._changed.notify()

    def stop(self) -> None:
        """Finalizer of the owning queue."""
        if threading.current_thread() is self.thread:
            # The queue died when _run dropped its reference, lock held: just tell the loop.
            self._stopped.set()
            return
        with self._changed:
            self.stop_locked()

    def _run(self) -> None:
        with self._changed:
            while not self._stopped.is_set():
                promote = self._promote()
                if promote is None:
                    return
                next_ready = promote()
                # Dropping the last reference to the queue runs its finalizer (stop) right here.
                del promote
                if self._stopped.is_set():
                    return
                self._wake_at = next_ready
                if next_ready is None:
                    self._clock.wait(self._changed, None)
                else:
                    delay = max(0.0, next_ready - self._clock.monotonic())
                    self._clock.wait(self._changed, min(delay, MAX_WAIT_SECONDS))


# ---------------------------------------------------------------------------------------------------------------
# Queues


class _QueueBase:
    """Lifecycle shared by the plain and the priority queue: lock, blocking, shutdown, drain, waiting thread."""

    def __init__(self, *, name: str | None, clock: Clock | None) -> None:
        self.name = name
        self._clock: Clock = clock or RealClock()
        # Three clock reads per add/get/done: skip RealClock's Python-level wrapper when it is the clock.
        self._now: Callable[[], float] = time.monotonic if type(self._clock) is RealClock else self._clock.monotonic
        self._lock = threading.Lock()
        self._ready_changed = threading.Condition(self._lock)
        self._drained = threading.Condition(self._lock)
        self._processing: set[Hashable] = set()
        # Threads blocked in get(); Condition.notify costs a lock probe, so it is only called when someone waits.
        self._getters = 0
        self._shutting_down = False
        self._draining = False
        self._waiting_loop: _WaitingLoop | None = None

    @property
    def shutting_down(self) -> bool:
        """Whether `shutdown` or `shutdown_with_drain` has been called."""
        return self._shutting_down

    def shutdown(self) -> None:
        """Stop accepting adds and wake every blocked `get`; items already queued are still handed out.

        Items waiting for their delay are dropped. Aborts a `shutdown_with_drain` that is still waiting.
        """
        with self._lock:
            self._draining = False
            self._stop_locked()
            self._drained.notify_all()
        self._join_waiting_loop()

    def shutdown_with_drain(self) -> None:
        """`shutdown`, then block until no item is being processed; workers must call `done` for this to return."""
        with self._lock:
            self._draining = True
            self._stop_locked()
            while self._processing and self._draining:
                self._drained.wait()
        self._join_waiting_loop()

    def _stop_locked(self) -> None:
        self._shutting_down = True
        self._drop_waiting_locked()
        if self._waiting_loop is not None:
            self._waiting_loop.stop_locked()
        self._ready_changed.notify_all()

    def _join_waiting_loop(self) -> None:
        loop = self._waiting_loop
        if loop is not None and loop.thread is not threading.current_thread():
            loop.thread.join()

    def _schedule_locked(self, ready_at: float) -> None:
        loop = self._waiting_loop
        if loop is None:
            loop = self._waiting_loop = _WaitingLoop(
                self._lock, self._clock, self._promote_due_locked, f"workqueue-{self.name or 'unnamed'}-waiting"
            )
            weakref.finalize(self, loop.stop)
        loop.schedule_locked(ready_at)

    def _wait_for_ready_locked(self, deadline: float | None) -> bool:
        """Block once until something may have changed; False once `deadline` (clock time) has passed."""
        if deadline is None:
            timeout = None
        else:
            timeout = deadline - self._now()
            if timeout <= 0:
                return False
        self._getters += 1
        try:
            self._clock.wait(self._ready_changed, timeout)
        finally:
            self._getters -= 1
        return True

    def _promote_due_locked(self) -> float | None:
        """Move items whose delay has passed to the ready queue; return the next ready time (None: none waiting)."""
        raise NotImplementedError

    def _drop_waiting_locked(self) -> None:
        """Forget the items still waiting for their delay (on shutdown)."""
        raise NotImplementedError


class Queue(_QueueBase, Generic[T]):
    """client-go's plain work queue: FIFO, de-duplicating, never hands one key to two workers at once.

    `name` turns on the workqueue_* metrics (labels `name` and `controller`, `priority=""` on the depth);
    `clock` is used for every time measurement (tests pass a FakeClock).
    """

    def __init__(self, *, name: str | None = None, clock: Clock | None = None) -> None:
        super().__init__(name=name, clock=clock)
        self._queue: deque[T] = deque()
        self._dirty: set[T] = set()
        # The delaying queue's heap of (ready_at, sequence, item); declared here so the hot paths below check it
        # with one truth test instead of a method call.
        self._waiting: list[tuple[float, int, T]] = []
        self._waiting_entry: dict[T, tuple[float, int, T]] = {}
        self._metrics = _attach_metrics(name, self, self._lock, self._clock, self._dirty)

    def add(self, item: T, *, priority: int = 0) -> None:
        """Mark `item` as needing processing; a no-op if it already is, or while shutting down.

        If a worker holds `item` right now it is not queued again until that worker calls `done`. `priority` is
        ignored: this queue is FIFO.
        """
        with self._lock:
            if self._waiting:
                self._promote_due_locked()
            self._add_locked(item)

    def _add_locked(self, item: T) -> None:
        if self._shutting_down or item in self._dirty:
            return
        self._dirty.add(item)
        metrics = self._metrics
        if metrics is not None:
            metrics.adds += 1
            metrics.added_at[item] = self._now()
        if item in self._processing:
            return
        self._queue.append(item)
        if self._getters:
            self._ready_changed.notify()

    def get(self, timeout: float | None = None) -> tuple[T | None, bool]:
        """Take the next item, blocking until there is one.

        Returns `(item, False)`; `(None, True)` once the queue is shutting down and empty (so workers drain what
        is queued first); `(None, False)` if `timeout` clock-seconds pass first. The caller must call
        `done(item)` when finished with it.
        """
        with self._lock:
            if self._waiting:
                self._promote_due_locked()
            queue = self._queue
            if not queue:
                deadline = None if timeout is None else self._now() + timeout
                while not queue:
                    if self._shutting_down:
                        return None, True
                    if not self._wait_for_ready_locked(deadline):
                        return None, False
                    if self._waiting:
                        self._promote_due_locked()
            item = queue.popleft()
            self._processing.add(item)
            self._dirty.remove(item)
            metrics = self._metrics
            if metrics is not None:
                now = self._now()
                added = metrics.added_at.pop(item, None)
                if added is not None:
                    metrics.queue_duration.observe(now - added)
                metrics.started_at[item] = now
            return item, False

    def get_with_priority(self, timeout: float | None = None) -> tuple[T | None, int, bool]:
        """`get`; every item of this queue has priority 0."""
        item, shutdown = self.get(timeout)
        return item, 0, shutdown

    def done(self, item: T) -> None:
        """Mark `item` as processed; if it was added again meanwhile it goes back into the queue now."""
        with self._lock:
            if self._waiting:
                self._promote_due_locked()
            metrics = self._metrics
            if metrics is not None:
                started = metrics.started_at.pop(item, None)
                if started is not None:
                    metrics.work_duration.observe(self._now() - started)
            processing = self._processing
            # Only a key that was being processed can have been held back (a stray done must not queue it twice).
            if item in processing:
                processing.remove(item)
                if item in self._dirty:
                    self._queue.append(item)
                    if self._getters:
                        self._ready_changed.notify()
            if self._draining and not processing:
                self._drained.notify_all()

    def __len__(self) -> int:
        """Number of items queued and not yet handed out (items held back while processing are not counted)."""
        with self._lock:
            if self._waiting:
                self._promote_due_locked()
            return len(self._queue)

    def _promote_due_locked(self) -> float | None:
        waiting = self._waiting
        if not waiting:
            return None
        now = self._now()
        current = self._waiting_entry
        while waiting and waiting[0][0] <= now:
            entry = heappop(waiting)
            item = entry[2]
            if current.get(item) is entry:
                del current[item]
                self._add_locked(item)
        return waiting[0][0] if waiting else None

    def _drop_waiting_locked(self) -> None:
        self._waiting.clear()
        self._waiting_entry.clear()


class DelayingQueue(Queue[T]):
    """client-go's delaying queue: a `Queue` with `add_after`."""

    def __init__(self, *, name: str | None = None, clock: Clock | None = None) -> None:
        super().__init__(name=name, clock=clock)
        self._sequence = 0

    def add_after(self, item: T, delay: float, *, priority: int = 0) -> None:
        """Add `item` once `delay` seconds (of the queue's clock) have passed; `delay` <= 0 adds it now.

        If `item` is already waiting, the earlier of the two ready times wins. Ignored while shutting down.
        Every call counts one workqueue_retries (client-go counts before the zero-delay shortcut).
        """
        with self._lock:
            if self._shutting_down:
                return
            metrics = self._metrics
            if metrics is not None:
                metrics.retries += 1
            if self._waiting:
                self._promote_due_locked()
            if delay <= 0:
                self._add_locked(item)
                return
            ready_at = self._now() + delay
            current = self._waiting_entry.get(item)
            if current is not None and current[0] <= ready_at:
                return
            # The superseded heap entry stays behind and is skipped when it surfaces.
            self._sequence += 1
            entry = (ready_at, self._sequence, item)
            self._waiting_entry[item] = entry
            heappush(self._waiting, entry)
            self._schedule_locked(ready_at)


class RateLimitingQueue(DelayingQueue[T]):
    """client-go's rate-limiting queue: retries are delayed by a `RateLimiter`.

    The default limiter is `default_controller_rate_limiter()` (per-item exponential 5 ms … 1000 s, and an
    overall 10 qps / burst 100 token bucket for retries), built on the queue's clock.
    """

    def __init__(
        self, rate_limiter: RateLimiter[T] | None = None, *, name: str | None = None, clock: Clock | None = None
    ) -> None:
        super().__init__(name=name, clock=clock)
        self.rate_limiter: RateLimiter[T] = (
            rate_limiter if rate_limiter is not None else default_controller_rate_limiter(clock=self._clock)
        )

    def add_rate_limited(self, item: T, *, priority: int = 0) -> None:
        """Add `item` after the delay the rate limiter gives it (counting one more failure)."""
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        """Clear `item`'s failure history in the rate limiter (the queue itself is not touched)."""
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        """How many failures of `item` the rate limiter is tracking."""
        return self.rate_limiter.num_requeues(item)


__all__ = [
    "EXCEEDED_CARDINALITY_LABEL",
    "MAX_WAIT_SECONDS",
    "PRIORITY_LABEL_LIMIT",
    "DelayingQueue",
    "Queue",
    "RateLimitingQueue",
    "WorkQueue",
]
