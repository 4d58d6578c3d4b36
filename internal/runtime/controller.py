"""Controllers: a queue of Requests, a pool of worker threads, and a reconciler (controller-runtime's `controller`).

Semantics (docs/compatibility.md, controller-runtime and client-go):
- sources start first and must sync within `cache_sync_timeout`; then `max_concurrent_reconciles` workers;
- a key is never reconciled by two workers at once (the queue guarantees it);
- an exception → requeue with the rate limiter's backoff (the Result is ignored), logged as an error with its
  traceback — except a `ConflictError` (the object changed since it was read), an info line without one: it is
  retried from a fresh read, not a failure; a kind the API server does not serve (`NoKindMatchError`, a 404
  naming no object, a 403 on a create while its CRD is terminating) is a warning without traceback, at most one a
  `KIND_GONE_LOG_INTERVAL` per controller with how many were left out — a deleted CRD must not flood the log
  while its objects' requests are retried; every exception counts in the error metrics; `TerminalError` →
  counted, not retried; `Result.requeue_after` → forget the backoff and requeue after that delay; otherwise forget;
- a failing reconcile never kills its worker; programming errors (AttributeError, KeyError, TypeError, …) are
  also counted as `controller_runtime_reconcile_panics_total`, the closest Python has to a Go panic;
- `reconcile_timeout` is a cooperative deadline: `ctx.deadline`, and every client call inside honours it;
- a failed or requeued request keeps the priority it was dequeued with, unless the Result sets one;
- any `workqueue.WorkQueue` fits; one without priorities (`RateLimitingQueue`) ignores them;
- on stop the queue is shut down and the workers finish what they hold (bounded by the stop timeout);
- workers run in the context `start` was called in: when the manager cancels it (leadership lost), client
  calls of in-flight reconciles raise `CanceledError` (`ctx.cancelled()` tells), so nothing more is written.

Concurrency model: OS threads and synchronous reconcilers, like client-go — one thread per informer, a pool of
workers per controller; handlers only enqueue.
"""

from __future__ import annotations

import contextvars
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import metrics
from .apierrors import ConflictError, DeadlineExceededError, ForbiddenError, NotFoundError, said_in_full
from .clock import Clock, RealClock
from .log import Logger, get_logger
from .priorityqueue import PriorityQueue
from .ratelimiter import RateLimiter
from .reconcile import Context, Reconciler, Request, Result, TerminalError
from .rest import deadline
from .restmapper import NoKindMatchError
from .source import Source
from .workqueue import WorkQueue

DEFAULT_CACHE_SYNC_TIMEOUT = 120.0
_PROGRAMMING_ERRORS = (
    AttributeError, KeyError, IndexError, TypeError, NameError, ZeroDivisionError, AssertionError, RecursionError,
)  # fmt: skip
_RESULTS = ("success", "error", "requeue", "requeue_after")
CRD_TERMINATING = "custom resource definition is terminating"
KIND_GONE_LOG_INTERVAL = 30.0
"""Seconds between two warnings of a controller about a kind the API server does not serve."""


def kind_not_served(error: Exception) -> bool:
    """Whether `error` says the kind itself is not served (its CRD deleted), not that one object is missing: a
    `NoKindMatchError`, the 403 the API server answers a create while the kind's CRD is terminating, or a 404
    whose Status names no object (its answer on an unknown path)."""
    if isinstance(error, NoKindMatchError):
        return True
    if isinstance(error, ForbiddenError) and CRD_TERMINATING in str(getattr(error, "message", "")):
        return True
    details = getattr(error, "details", None) or {}
    return isinstance(error, NotFoundError) and not details.get("name")


@dataclass(frozen=True)
class ControllerOptions:
    """controller-runtime's `controller.Options`: what `Builder.with_options` sets on a controller."""

    max_concurrent_reconciles: int = 1
    rate_limiter: RateLimiter[Request] | None = None
    queue: WorkQueue[Request] | None = None
    reconcile_timeout: float | None = None
    cache_sync_timeout: float = DEFAULT_CACHE_SYNC_TIMEOUT
    need_leader_election: bool = True


class CacheSyncTimeoutError(TimeoutError):
    """A source did not sync within the controller's cache_sync_timeout."""


class Controller:
    """Runs `reconciler` for Requests from its sources. A manager Runnable (`start(stop)` blocks)."""

    def __init__(
        self,
        name: str,
        reconciler: Reconciler,
        *,
        max_concurrent_reconciles: int = 1,
        rate_limiter: RateLimiter[Request] | None = None,
        queue: WorkQueue[Request] | None = None,
        reconcile_timeout: float | None = None,
        cache_sync_timeout: float = DEFAULT_CACHE_SYNC_TIMEOUT,
        need_leader_election: bool = True,
        clock: Clock | None = None,
        logger: Logger | None = None,
    ) -> None:
        if max_concurrent_reconciles < 1:
            raise ValueError(f"controller {name}: max_concurrent_reconciles must be ≥ 1")
        self.name = name
        self.reconciler = reconciler
        self.max_concurrent_reconciles = max_concurrent_reconciles
        self.reconcile_timeout = reconcile_timeout
        self.cache_sync_timeout = cache_sync_timeout
        self._need_leader_election = need_leader_election
        self.clock = clock or RealClock()
        # `is None`, not `or`: an empty queue is falsy (it has __len__).
        self.queue: WorkQueue[Request] = (
            PriorityQueue(name=name, rate_limiter=rate_limiter, clock=self.clock) if queue is None else queue
        )
        # A FakeClock that leaves error backoff in real time (its default): retries wait on timers, not on it.
        self._real_time_backoff = not getattr(self.clock, "freezes_backoff", True)
        self._kind_gone_lock = threading.Lock()
        self._kind_gone_logged_at: float | None = None
        self._kind_gone_left_out = 0
        self.logger = logger or get_logger(f"ballast.runtime.controller.{name}", controller=name)
        self._sources: list[Source] = []
        self._workers: list[threading.Thread] = []
        self._started = False
        self._lock = threading.Lock()
        self._total = {result: metrics.RECONCILE_TOTAL.labels(name, result) for result in _RESULTS}
        self._errors = metrics.RECONCILE_ERRORS.labels(name)
        self._terminal = metrics.TERMINAL_RECONCILE_ERRORS.labels(name)
        self._panics = metrics.RECONCILE_PANICS.labels(name)
        self._timeouts = metrics.RECONCILE_TIMEOUTS.labels(name)
        self._time = metrics.RECONCILE_TIME.labels(name)
        self._active = metrics.ACTIVE_WORKERS.labels(name)
        metrics.MAX_CONCURRENT_RECONCILES.labels(name).set(max_concurrent_reconciles)

    def need_leader_election(self) -> bool:
        return self._need_leader_election

    def watch(self, source: Source) -> None:
        """Add an event source; sources added after start are started at once."""
        with self._lock:
            self._sources.append(source)
            if self._started:
                source.start(self.queue)

    # ----------------------------------------------------------------------------------------- running

    def start(self, stop: threading.Event) -> None:
        """Start sources, wait for their caches, run the workers until `stop` is set, then drain."""
        with self._lock:
            if self._started:
                raise RuntimeError(f"controller {self.name} was already started")
            self._started = True
            sources = list(self._sources)
        for source in sources:
            source.start(self.queue)
        for source in sources:
            if not source.wait_for_sync(self.cache_sync_timeout):
                self._shutdown(sources)
                raise CacheSyncTimeoutError(
                    f"controller {self.name}: {source!r} did not sync within {self.cache_sync_timeout:g}s"
                )
        self.logger.info("starting workers", extra={"workers": self.max_concurrent_reconciles})
        for index in range(self.max_concurrent_reconciles):
            # Each worker runs in a copy of this context, so the manager's cancellation reaches its client calls.
            worker = threading.Thread(
                target=contextvars.copy_context().run, args=(self._work,), name=f"{self.name}-worker-{index}",
                daemon=True,
            )  # fmt: skip
            worker.start()
            self._workers.append(worker)
        stop.wait()
        self.logger.info("shutting down workers")
        self._shutdown(sources)

    def _shutdown(self, sources: Sequence[Source]) -> None:
        for source in sources:
            source.stop()
        self.queue.shutdown()
        for worker in self._workers:
            worker.join()

    def _work(self) -> None:
        while True:
            item, priority, shutdown = self.queue.get_with_priority()
            if shutdown:
                return
            if item is None:
                continue
            try:
                self.reconcile_handler(item, priority)
            except Exception:  # a failure outside the reconciler (logging, metrics) must not end the worker
                self.logger.exception("failed to handle %s", item)
            finally:
                self.queue.done(item)

    def reconcile_handler(self, request: Request, priority: int = 0) -> None:
        """Reconcile one request dequeued at `priority` and route the outcome back into the queue (exposed for
        tests)."""
        self._active.inc()
        began = time.monotonic()
        reconcile_id = str(uuid.uuid4())
        logger = self.logger.with_values(namespace=request.namespace, name=request.name, reconcileID=reconcile_id)
        until = None if self.reconcile_timeout is None else self.clock.monotonic() + self.reconcile_timeout
        ctx = Context(self.name, request, reconcile_id, logger, self.clock, until)
        try:
            with deadline(self.reconcile_timeout):
                result = self.reconciler.reconcile(ctx, request) or Result()
        except TerminalError as exc:
            logger.error("reconciler error (terminal, not retried): %s", exc, exc_info=exc)
            self._terminal.inc()
            self._errors.inc()
            self._total["error"].inc()
            self.queue.forget(request)
        except Exception as exc:  # one bad object must never kill a worker
            self._on_error(request, priority, exc, ctx, logger)
        else:
            self._on_result(request, priority, result)
        finally:
            self._time.observe(time.monotonic() - began)
            self._active.dec()

    def _log_kind_gone(self, error: Exception, logger: Any) -> None:
        with self._kind_gone_lock:
            now = self.clock.monotonic()
            if self._kind_gone_logged_at is not None and now - self._kind_gone_logged_at < KIND_GONE_LOG_INTERVAL:
                self._kind_gone_left_out += 1
                return
            left_out, self._kind_gone_left_out, self._kind_gone_logged_at = self._kind_gone_left_out, 0, now
        logger.warning("kind not served (CRD deleted?), retrying with backoff: %s (%d such errors not logged in the "
                       "last %gs)", error, left_out, KIND_GONE_LOG_INTERVAL)  # fmt: skip

    def _on_error(self, request: Request, priority: int, error: Exception, ctx: Context, logger: Any) -> None:
        # Requeue before counting: whoever sees the metric can rely on the retry being scheduled.
        self._add_rate_limited(request, priority)
        if isinstance(error, DeadlineExceededError) and ctx.expired():
            self._timeouts.inc()
        if isinstance(error, _PROGRAMMING_ERRORS):
            self._panics.inc()
        if isinstance(error, ConflictError):
            # Optimistic concurrency at work (the object changed since it was read): retried from a fresh read.
            logger.info("conflict, retrying: %s", error)
        elif kind_not_served(error):
            self._log_kind_gone(error, logger)
        else:
            # A traceback is for the reconciler's own failures, a request the server found malformed too.
            logger.error("reconciler error: %s", error, exc_info=None if said_in_full(error) else error)
        self._errors.inc()
        self._total["error"].inc()

    def _add_rate_limited(self, request: Request, priority: int) -> None:
        limiter = getattr(self.queue, "rate_limiter", None)
        if not self._real_time_backoff or limiter is None:
            self.queue.add_rate_limited(request, priority=priority)
            return
        retry = threading.Timer(limiter.when(request), self.queue.add, (request,), {"priority": priority})
        retry.daemon = True  # a queue shut down meanwhile ignores the add
        retry.start()

    def _on_result(self, request: Request, dequeued_at: int, result: Result) -> None:
        priority = dequeued_at if result.priority is None else result.priority
        if result.requeue_after > 0:
            self.queue.forget(request)
            self.queue.add_after(request, result.requeue_after, priority=priority)
            self._total["requeue_after"].inc()
        elif result.requeue:
            self._add_rate_limited(request, priority)
            self._total["requeue"].inc()
        else:
            self.queue.forget(request)
            self._total["success"].inc()


__all__ = [
    "DEFAULT_CACHE_SYNC_TIMEOUT",
    "CacheSyncTimeoutError",
    "Controller",
    "ControllerOptions",
]
