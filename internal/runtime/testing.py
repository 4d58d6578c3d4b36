"""Testing a controller: a Manager running in the background for the length of a test, and Gomega's
`Eventually`/`Consistently` as `eventually`/`consistently`.

Go's suite_test.go starts the manager in a goroutine and cancels its context in AfterSuite; here that is a
context manager. With the `envtest` pytest fixture (the ballast_envtest plugin) a test reads:

    from ballast.runtime import Manager
    from ballast.runtime.testing import eventually, running

    def test_the_counter_annotates_the_namespace(envtest):
        manager = Manager(envtest.rest_config())
        build(manager)                                   # your controller's setup
        with running(manager):
            envtest.rest.create(...)                     # the world changes...
            eventually(lambda: annotated(envtest), what="the annotation")   # ...and the controller catches up

A reconciler can also be called directly, as Go's tests call `Reconcile(ctx, req)`:
`reconcile(reconciler, Request("shop", "cache"), clock=FakeClock())` builds the `Context` a controller would
(`reconcile_context` gives it alone) and returns the `Result`.

One manager per test: scope its cache to the test's namespace (`Manager(..., cache_by_kind={Kind:
CacheScope(namespace=envtest_namespace)})`), or it reconciles what earlier tests left terminating in theirs.

For scheduled work, give the manager a `FakeClock` (`Manager(..., clock=FakeClock())`): `ctx.clock`,
`Result(requeue_after=...)` and the queue's delays then follow `clock.advance(seconds)`, while error backoff
stays in real time unless the clock is `FakeClock(freeze_backoff=True)`.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import TypeVar

from .clock import Clock, RealClock
from .envtest.wait import WaitTimeoutError, poll_until
from .log import Logger, get_logger
from .manager import Manager
from .reconcile import Context, Reconciler, Request, Result

T = TypeVar("T")

DEFAULT_TIMEOUT = 10.0
DEFAULT_INTERVAL = 0.05


def reconcile_context(
    request: Request,
    *,
    clock: Clock | None = None,
    controller: str = "test",
    logger: Logger | None = None,
    timeout: float | None = None,
) -> Context:
    """The `Context` a controller named `controller` would pass for `request`: its logger carries the
    controller, namespace, name and a reconcileID; `clock` (a `FakeClock` in tests; the real clock by default)
    is `ctx.clock`; `timeout` seconds set its deadline."""
    clock = clock or RealClock()
    reconcile_id = str(uuid.uuid4())
    base = logger or get_logger("ballast.runtime.testing").with_values(controller=controller)
    logged = base.with_values(namespace=request.namespace, name=request.name, reconcileID=reconcile_id)
    deadline = None if timeout is None else clock.monotonic() + timeout
    return Context(controller, request, reconcile_id, logged, clock, deadline)


def reconcile(
    reconciler: Reconciler,
    request: Request,
    *,
    clock: Clock | None = None,
    controller: str = "test",
    logger: Logger | None = None,
    timeout: float | None = None,
) -> Result:
    """Call `reconciler` once for `request`, as Go's tests call `Reconcile(ctx, req)`, and return its `Result`
    (`Result()` when it returned None). What it raises propagates. The reconciler's client is its own (a
    `FakeAPI().client()` or an envtest client)."""
    ctx = reconcile_context(request, clock=clock, controller=controller, logger=logger, timeout=timeout)
    return reconciler.reconcile(ctx, request) or Result()


@contextlib.contextmanager
def running(manager: Manager, *, stop_timeout: float = 30.0) -> Iterator[Manager]:
    """Run `manager.start()` on a thread for the block; then stop it, wait up to `stop_timeout` seconds for it to
    finish, and raise what `start()` raised (an informer that could not sync, a runnable that failed), so a
    broken manager fails the test instead of leaving it to time out. Raises RuntimeError when it does not stop."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            manager.start()
        except BaseException as exc:  # surfaced to the test below, whatever it was
            failure.append(exc)

    thread = threading.Thread(target=run, name="manager", daemon=True)
    thread.start()
    try:
        yield manager
    finally:
        manager.stop()
        thread.join(stop_timeout)
    if thread.is_alive():
        raise RuntimeError(f"the manager did not stop within {stop_timeout} s")
    if failure:
        raise failure[0]


def eventually(
    condition: Callable[[], T | None],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    interval: float = DEFAULT_INTERVAL,
    what: str = "the condition",
) -> T:
    """Gomega's `Eventually(...).Should(BeTrue())`: call `condition` every `interval` seconds until it returns
    something truthy, and return that. An exception counts as "not yet" (a NotFound before the controller has
    created the object); its text is kept. Raises WaitTimeoutError naming `what` and the last error after
    `timeout` seconds."""
    return poll_until(condition, timeout=timeout, what=what, interval=interval)


def consistently(
    condition: Callable[[], object],
    *,
    duration: float = 1.0,
    interval: float = DEFAULT_INTERVAL,
    what: str = "the condition",
) -> None:
    """Gomega's `Consistently(...).Should(BeTrue())`: `condition` must return something truthy at every call for
    `duration` seconds (called every `interval`, at least twice). An exception fails at once. Raises
    WaitTimeoutError naming `what`, the value and how long it had held."""
    started = time.monotonic()
    calls = 0
    while True:
        value = condition()
        calls += 1
        held = time.monotonic() - started
        if not value:
            raise WaitTimeoutError(f"{what} stopped holding after {held:.2f} s of {duration} s (got {value!r})")
        if held >= duration and calls >= 2:  # a single look proves nothing about "stays"
            return
        time.sleep(interval)


__all__ = [
    "DEFAULT_INTERVAL",
    "DEFAULT_TIMEOUT",
    "consistently",
    "eventually",
    "reconcile",
    "reconcile_context",
    "running",
]
