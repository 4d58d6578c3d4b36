"""Losing leadership stops acting, not only reporting: in-flight reconciles of leader-only controllers are
cancelled (their client calls raise `CanceledError`) and the manager exits without the graceful wait; a graceful
stop still lets them finish."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable

import pytest

from ballast.runtime import Builder, Context, FakeAPI, Manager, Request, Result
from ballast.runtime.apierrors import CanceledError
from ballast.runtime.manager import ManagerError
from tests.unit.internal.runtime.support import configmap, eventually

GRACEFUL = 30.0


class ScriptedElector:
    """Leads at once and loses leadership when told: the manager's side of a lost lease."""

    def __init__(self) -> None:
        self.lose = threading.Event()

    def run(self, stop: threading.Event, started: Callable[[], None], stopped: Callable[[], None]) -> None:
        started()
        while not (stop.is_set() or self.lose.is_set()):
            stop.wait(0.01)
        stopped()


class BlockedWriter:
    """Reconciles by waiting for `proceed`, then writing a ConfigMap; records what the write met."""

    def __init__(self, manager: Manager) -> None:
        self.client = manager.client
        self.entered = threading.Event()
        self.proceed = threading.Event()
        self.finished = threading.Event()
        self.outcome: BaseException | None = None
        self.cancelled_seen: bool | None = None

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        if request.name != "trigger":
            return None
        self.entered.set()
        self.proceed.wait(20)
        self.cancelled_seen = ctx.cancelled()
        try:
            self.client.create(configmap("written-by-the-reconcile", "shop"))
        except BaseException as exc:
            self.outcome = exc
            raise
        finally:
            self.finished.set()
        return None


def _start(manager: Manager, failures: list[BaseException]) -> threading.Thread:
    def run() -> None:
        try:
            manager.start()
        except BaseException as exc:
            failures.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def elector() -> ScriptedElector:
    return ScriptedElector()


@pytest.fixture
def manager(api: FakeAPI, elector: ScriptedElector) -> Manager:
    return Manager(client=api.client(), leader_elector=elector, graceful_shutdown_timeout=GRACEFUL)


def _writer(manager: Manager) -> BlockedWriter:
    writer = BlockedWriter(manager)
    Builder(manager).for_("v1/ConfigMap").named(f"writer-{uuid.uuid4().hex[:8]}").complete(writer)
    return writer


def test_a_lost_lease_cancels_in_flight_writes_and_skips_the_graceful_wait(
    api: FakeAPI, manager: Manager, elector: ScriptedElector
) -> None:
    writer = _writer(manager)
    failures: list[BaseException] = []
    thread = _start(manager, failures)
    api.client().create(configmap("trigger", "shop"))
    eventually(writer.entered.is_set, "the reconcile to be in flight")
    lost_at = time.monotonic()
    elector.lose.set()
    thread.join(GRACEFUL)
    exited_after = time.monotonic() - lost_at
    assert not thread.is_alive()
    assert exited_after < GRACEFUL / 3, f"the manager waited {exited_after:.1f}s for leader-only work"
    assert isinstance(failures[0], ManagerError)
    assert "leader election lost" in str(failures[0])
    writer.proceed.set()  # the reconcile goes on after the loss and tries to write
    eventually(writer.finished.is_set, "the reconcile's write attempt")
    assert isinstance(writer.outcome, CanceledError)
    assert writer.cancelled_seen is True
    assert [o["metadata"]["name"] for o in api.objects("v1/ConfigMap")] == ["trigger"]


def test_a_graceful_stop_lets_in_flight_reconciles_finish(api: FakeAPI, manager: Manager) -> None:
    writer = _writer(manager)
    failures: list[BaseException] = []
    thread = _start(manager, failures)
    api.client().create(configmap("trigger", "shop"))
    eventually(writer.entered.is_set, "the reconcile to be in flight")
    manager.stop()
    writer.proceed.set()
    thread.join(GRACEFUL)
    assert not thread.is_alive()
    assert failures == []
    assert writer.outcome is None
    assert writer.cancelled_seen is False
    assert sorted(o["metadata"]["name"] for o in api.objects("v1/ConfigMap")) == [
        "trigger",
        "written-by-the-reconcile",
    ]
