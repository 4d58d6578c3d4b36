"""Reconciler contract: `Request`, `Result`, `Context`, `TerminalError` (controller-runtime's `reconcile`).

    class ConfigMapCounter:
        def reconcile(self, ctx: Context, request: Request) -> Result | None:
            ...                                  # read the cache, compute, write
            return Result(requeue_after=30)      # or None: done until the next event

Level-triggered: a Request names an object, never an event; the reconciler reads the current state. Raising
an exception means "failed, retry with backoff"; `TerminalError` means "failed, do not retry".
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from .clock import Clock
from .log import Logger
from .rest import cancelled


@dataclass(frozen=True, slots=True, order=True)
class Request:
    """The object to reconcile: its namespace ("" for cluster-scoped) and name."""

    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace else self.name


@dataclass(frozen=True, slots=True)
class Result:
    """What to do after a successful reconcile.

    `requeue_after` > 0: reconcile again after that many seconds (the failure backoff is reset).
    `requeue` (deprecated in controller-runtime, kept for ports): requeue with the rate limiter's backoff.
    `priority`: priority of that requeue in the priority queue.
    """

    requeue_after: float = 0.0
    requeue: bool = False
    priority: int | None = None


class TerminalError(Exception):
    """A failure that retrying cannot fix: it is logged and counted, and the request is not requeued."""


@dataclass
class Context:
    """Per-reconcile context (what Go passes as `ctx context.Context` plus `log.FromContext(ctx)`): who is
    reconciling what, a logger carrying that, and the cooperative deadline.

    The deadline is also honoured by every client call made inside the reconcile (see `rest.deadline`), and so
    is cancellation: once the manager cancels leader-only work (leadership lost), those calls raise
    `CanceledError`.

    Fields:
        controller: the controller's name (`Builder.named`, or the kind it is `for_`).
        request: the object being reconciled (the same `Request` the reconciler receives).
        reconcile_id: a unique id of this reconcile, logged as `reconcileID` (controller-runtime's).
        logger: a `log.Logger` carrying controller, namespace, name and reconcileID;
            `ctx.logger.with_values(key=value)` adds more (logr's `WithValues`). A plain `logging.Logger` or
            `LoggerAdapter` passed in (a test) is wrapped into one.
        clock: the controller's clock (a `FakeClock` in tests); `remaining()` reads it.
        deadline: the `clock.monotonic()` time the reconcile must finish by (`reconcile_timeout`), or None.
    """

    controller: str
    request: Request
    reconcile_id: str
    logger: Logger
    clock: Clock
    deadline: float | None = None

    def __post_init__(self) -> None:
        logger: object = self.logger
        if isinstance(logger, Logger):
            return
        if isinstance(logger, logging.LoggerAdapter):  # e.g. a test's LoggerAdapter: keep its key/values
            self.logger = Logger(logger.logger, logger.extra)
        elif isinstance(logger, logging.Logger):
            self.logger = Logger(logger)
        else:
            raise TypeError(f"Context.logger must be a log.Logger (or a logging.Logger), not {type(logger).__name__}")

    def remaining(self) -> float | None:
        """Seconds left before the deadline, or None without one."""
        return None if self.deadline is None else self.deadline - self.clock.monotonic()

    def expired(self) -> bool:
        remaining = self.remaining()
        return remaining is not None and remaining <= 0

    def cancelled(self) -> bool:
        """Whether this reconcile's work was cancelled (Go's `ctx.Err() == context.Canceled`); a long reconcile
        can check it between steps. Only meaningful on the worker thread running the reconcile."""
        return cancelled()


class Reconciler(Protocol):
    """Anything with `reconcile(ctx, request) -> Result | None`."""

    def reconcile(self, ctx: Context, request: Request) -> Result | None: ...


ReconcileFunc = Callable[[Context, Request], Result | None]


class FuncReconciler:
    """Adapts a plain function to the Reconciler protocol."""

    def __init__(self, func: ReconcileFunc) -> None:
        self._func = func

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        return self._func(ctx, request)


__all__ = [
    "Context",
    "FuncReconciler",
    "ReconcileFunc",
    "Reconciler",
    "Request",
    "Result",
    "TerminalError",
]
