"""The manager's lifecycle on the in-memory API server: start/stop order, failures, leader election, probes."""

from __future__ import annotations

import threading
import urllib.request
from collections.abc import Callable
from typing import Any

import pytest

from ballast.runtime import APIStatusError, FakeAPI, FakeClock, Manager, NotFoundError
from ballast.runtime.apierrors import DeadlineExceededError
from ballast.runtime.manager import ManagerError, needs_leader_election
from ballast.runtime.recorder import EventRecorder
from ballast.runtime.rest import UnreachableError
from tests.unit.internal.runtime.support import eventually, running


class Journal:
    """An ordered, thread-safe record of what runnables did."""

    def __init__(self) -> None:
        self.entries: list[str] = []
        self._lock = threading.Lock()

    def write(self, entry: str) -> None:
        with self._lock:
            self.entries.append(entry)

    def read(self) -> list[str]:
        with self._lock:
            return list(self.entries)


class Recording:
    """A runnable that journals its start (with whether the cache had synced) and its stop."""

    def __init__(
        self,
        name: str,
        journal: Journal,
        *,
        leader: bool | None = None,
        on_start: Callable[[], None] | None = None,
        on_stop: Callable[[], str] | None = None,
    ) -> None:
        self.name = name
        self.journal = journal
        self.leader = leader
        self.on_start = on_start
        self.on_stop = on_stop
        self.started = threading.Event()
        if leader is not None:
            self.need_leader_election = lambda: leader

    def start(self, stop: threading.Event) -> None:
        self.journal.write(f"start {self.name}")
        self.started.set()
        if self.on_start:
            self.on_start()
        stop.wait()
        detail = f" ({self.on_stop()})" if self.on_stop else ""
        self.journal.write(f"stop {self.name}{detail}")


class FakeElector:
    """Leader election the test drives: `elect` makes this replica leader, `lose` takes the lease away."""

    def __init__(self) -> None:
        self.elect = threading.Event()
        self.lose = threading.Event()
        self.stopped_leading = threading.Event()

    @staticmethod
    def _until(stop: threading.Event, event: threading.Event) -> bool:
        while not stop.is_set():
            if event.wait(0.005):
                return True
        return False

    def run(self, stop: threading.Event, on_started: Callable[[], None], on_stopped: Callable[[], None]) -> None:
        if self._until(stop, self.elect):
            on_started()
            self._until(stop, self.lose)
        self.stopped_leading.set()
        on_stopped()


@pytest.fixture
def journal() -> Journal:
    return Journal()


def _manager(api: FakeAPI, **options: Any) -> Manager:
    return Manager(client=api.client(), clock=FakeClock(), graceful_shutdown_timeout=5, **options)


def test_runnables_without_the_method_are_leader_only() -> None:
    assert needs_leader_election(object())
    assert needs_leader_election(Recording("x", Journal(), leader=True))
    assert not needs_leader_election(Recording("x", Journal(), leader=False))


def test_start_and_stop_order(api: FakeAPI, journal: Journal) -> None:
    manager = _manager(api)
    manager.cache.get_informer("v1/ConfigMap")

    def informers_stopped() -> str:
        return "informers stopped" if all(i.stopped for i in manager.cache.informers()) else "informers running"

    def cache_synced() -> None:
        journal.write(f"cache synced: {manager.cache.has_synced()}")

    webhook = Recording("webhook", journal, on_stop=informers_stopped)
    everywhere = Recording("everywhere", journal, leader=False, on_start=cache_synced, on_stop=informers_stopped)
    leader = Recording("leader", journal, on_start=cache_synced, on_stop=informers_stopped)
    manager.add_webhook_server(webhook)
    manager.add(leader)
    manager.add(everywhere)
    with running(manager):
        eventually(lambda: leader.started.is_set() and everywhere.started.is_set(), "every runnable to start")
        assert manager.elected.is_set()  # no election configured: leader at once
    entries = journal.read()
    assert entries[-3:] == [
        "stop everywhere (informers running)",  # runnables that need no leader stop first,
        "stop leader (informers running)",  # then leader-only ones, then the caches,
        "stop webhook (informers stopped)",  # then webhook servers
    ]
    # Runnables start only once the caches have synced (webhooks are launched before, on their own thread).
    assert sorted(entries[:-3]) == ["cache synced: True", "cache synced: True", "start everywhere", "start leader",
                                    "start webhook"]  # fmt: skip


def test_a_failing_runnable_stops_the_manager(api: FakeAPI, journal: Journal) -> None:
    def fail(stop: threading.Event) -> None:
        raise RuntimeError("metrics exporter crashed")

    manager = _manager(api)
    survivor = Recording("survivor", journal, leader=False)
    failing = Recording("failing", journal, leader=False)
    failing.start = fail  # type: ignore[method-assign]
    manager.add(survivor)
    manager.add(failing)
    with pytest.raises(ManagerError, match="manager stopped: metrics exporter crashed") as error:
        manager.start()
    assert isinstance(error.value.__cause__, RuntimeError)
    assert journal.read()[-1] == "stop survivor"
    with pytest.raises(RuntimeError, match="already started"):
        manager.start()


@pytest.mark.parametrize(
    ("failure", "traceback"),
    [
        (NotFoundError(404, "NotFound", 'namespaces "nope" not found', method="POST", path="/api/v1/x"), False),
        (UnreachableError("https://127.0.0.1:6443", "connection refused"), False),
        (DeadlineExceededError("the deadline passed"), False),
        (APIStatusError(422, "Invalid", "spec.replicas: Invalid value: -1"), True),  # the caller's malformed request
        (RuntimeError("a bug"), True),
    ],
)
def test_a_failing_runnable_is_logged_with_a_traceback_only_when_unexpected(
    api: FakeAPI, journal: Journal, caplog: pytest.LogCaptureFixture, failure: Exception, traceback: bool
) -> None:
    def fail(stop: threading.Event) -> None:
        raise failure

    manager = _manager(api)
    failing = Recording("failing", journal, leader=False)
    failing.start = fail  # type: ignore[method-assign]
    manager.add(failing)
    with pytest.raises(ManagerError):
        manager.start()
    [record] = [r for r in caplog.records if r.getMessage().startswith("runnable ")]
    assert record.getMessage() == f"runnable failing failed: {failure}"
    assert (record.exc_info is not None) is traceback


def test_caches_that_never_sync_stop_the_manager_before_any_runnable_starts(api: FakeAPI, journal: Journal) -> None:
    elector = FakeElector()
    elector.elect.set()
    manager = _manager(api, leader_elector=elector)
    manager.add(Recording("everywhere", journal, leader=False))
    manager.add(Recording("leader-only", journal, leader=True))
    manager.cache.wait_for_sync = lambda timeout=None: False  # type: ignore[method-assign]
    with pytest.raises(ManagerError, match="caches did not sync"):
        manager.start()
    assert journal.read() == []  # nothing was started only to be stopped at once
    assert not elector.stopped_leading.is_set()  # the election never began


def test_leader_only_runnables_wait_for_the_lease(api: FakeAPI, journal: Journal) -> None:
    elector = FakeElector()
    manager = _manager(api, leader_elector=elector)
    everywhere = Recording("everywhere", journal, leader=False)
    leader = Recording("leader", journal)
    manager.add(everywhere)
    manager.add(leader)
    with running(manager):
        eventually(everywhere.started.is_set, "the runnable that needs no leader")
        assert not leader.started.is_set()
        assert not manager.elected.is_set()
        elector.elect.set()
        eventually(leader.started.is_set, "the leader-only runnable after the election")
        assert manager.elected.is_set()
    assert elector.stopped_leading.is_set()  # a normal stop is not a failure
    assert set(journal.read()[-2:]) == {"stop everywhere", "stop leader"}


def test_a_lost_lease_stops_the_manager_with_an_error(api: FakeAPI, journal: Journal) -> None:
    elector = FakeElector()
    manager = _manager(api, leader_elector=elector)
    leader = Recording("leader", journal)
    manager.add(leader)
    failure: list[BaseException] = []

    def run() -> None:
        try:
            manager.start()
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    elector.elect.set()
    eventually(leader.started.is_set, "leadership")
    elector.lose.set()
    thread.join(10)
    assert not thread.is_alive()
    assert len(failure) == 1
    assert isinstance(failure[0], ManagerError)
    assert "leader election lost" in str(failure[0])
    # The manager does not wait on a lost lease (another replica may lead already), but the work is told to stop.
    eventually(lambda: journal.read()[-1] == "stop leader", "the leader-only runnable to stop")


def test_runnables_added_while_running(api: FakeAPI, journal: Journal) -> None:
    manager = _manager(api)
    with running(manager):
        eventually(manager.elected.is_set, "the manager to run")
        late = Recording("late", journal, leader=False)
        manager.add(late)
        eventually(late.started.is_set, "the late runnable to start")
        with pytest.raises(RuntimeError, match="leader-only runnables must be added before the manager starts"):
            manager.add(Recording("late-leader", journal))
    assert journal.read() == ["start late", "stop late"]


def test_probes_and_metrics_are_served(api: FakeAPI) -> None:
    manager = _manager(api, health_probe_bind_address="127.0.0.1:0", metrics_bind_address="127.0.0.1:0")
    manager.add_readyz_check("custom", lambda: True)
    manager.cache.get_informer("v1/ConfigMap")
    with running(manager):
        health_port = eventually(lambda: manager.health_port, "the health server")
        metrics_port = eventually(lambda: manager.metrics_port, "the metrics server")
        base = f"http://127.0.0.1:{health_port}"

        def get(url: str) -> str:
            with urllib.request.urlopen(url, timeout=5) as response:
                return str(response.read().decode())

        assert get(f"{base}/healthz") == "ok"
        ready = eventually(lambda: get(f"{base}/readyz?verbose"), "readiness")
        assert ready == "[+]cache-sync ok\n[+]custom ok\nreadyz check passed\n"
        exposition = get(f"http://127.0.0.1:{metrics_port}/metrics")
        assert "# TYPE rest_client_requests_total counter" in exposition
        assert "process_cpu_seconds_total" in exposition


def test_event_recorders_are_shared_per_component_and_flushed_by_the_manager(api: FakeAPI) -> None:
    manager = _manager(api)
    recorder = manager.get_event_recorder("profiles")
    assert isinstance(recorder, EventRecorder)
    assert manager.get_event_recorder("profiles") is recorder
    assert manager.get_event_recorder("other") is not recorder
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
    with running(manager):
        recorder.event(node, "Normal", "Started", "the manager runs")
    [event] = api.objects("v1/Event")  # written before the manager returned
    assert event["source"]["component"] == "profiles"
