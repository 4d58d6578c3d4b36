"""A partitioned leader on the real API server, through a TCP proxy that black-holes its connection: it steps
down before a standby can lead (both electors), and once it has, nothing its leader-only controllers do reaches
the API server (the audit log, one user agent per replica and role)."""

from __future__ import annotations

import datetime
import threading
import time
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from ballast.runtime import (
    Builder,
    Context,
    LeaderElectionConfig,
    LeaseLeaderElector,
    Manager,
    ProcessLeaderElector,
    Request,
    RESTConfig,
    Result,
    new_client,
)
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.blackhole import BlackHoleProxy, address_of, through
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.manager import ManagerError
from ballast.runtime.rest import Transport

# A margin between step-down (retry + renew deadline = 4 s after the last renewal) and lease expiry (6 s).
pytestmark = pytest.mark.alone  # step-down bounds in seconds: a busy neighbour would stretch them
TIMINGS = {"lease_duration": 6.0, "renew_deadline": 3.0, "retry_period": 1.0}
# A request that had passed its cancellation check just before the step-down may still arrive after it.
IN_FLIGHT = 0.1


def elector_for(kind: str, configuration: Any, name: str, namespace: str, user_agent: str) -> Any:
    config = LeaderElectionConfig(
        name=name,
        namespace=namespace,
        identity=user_agent,
        lease_duration=TIMINGS["lease_duration"],
        renew_deadline=TIMINGS["renew_deadline"],
        retry_period=TIMINGS["retry_period"],
    )
    rest = RESTConfig(configuration, user_agent=user_agent)
    if kind == "process":
        return ProcessLeaderElector(rest, config)
    return LeaseLeaderElector(new_client(rest), config)


class Replica:
    """An elector followed on a thread; callbacks timed."""

    def __init__(self, elector: Any) -> None:
        self.elector = elector
        self.stop = threading.Event()
        self.started_at: list[float] = []
        self.stopped_at: list[float] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.elector.run(
            self.stop,
            lambda: self.started_at.append(time.monotonic()),
            lambda: self.stopped_at.append(time.monotonic()),
        )

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(20)


class OverlapSampler:
    """Samples every 2 ms whether both replicas report leading at once."""

    def __init__(self, replicas: list[Replica]) -> None:
        self.replicas = replicas
        self.overlaps = 0
        self.samples = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        while not self._done.is_set():
            self.samples += 1
            if all(r.elector.is_leader() for r in self.replicas):
                self.overlaps += 1
            time.sleep(0.002)

    def finish(self) -> None:
        self._done.set()
        self._thread.join(5)


@pytest.fixture
def proxies(rest_config: RESTConfig) -> Iterator[list[BlackHoleProxy]]:
    target = address_of(rest_config.configuration)
    pair = [BlackHoleProxy(target), BlackHoleProxy(target)]
    yield pair
    for proxy in pair:
        proxy.close()


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_a_black_holed_leader_steps_down_before_the_standby_leads(
    rest_config: RESTConfig, envtest_namespace: str, proxies: list[BlackHoleProxy], kind: str
) -> None:
    replicas = [
        Replica(elector_for(kind, through(proxy, rest_config.configuration), "partition", envtest_namespace, f"r{i}"))
        for i, proxy in enumerate(proxies)
    ]
    sampler = OverlapSampler(replicas)
    try:
        poll_until(lambda: any(r.started_at for r in replicas), timeout=20, what="a leader")
        (leader,) = [r for r in replicas if r.started_at]
        standby = replicas[1 - replicas.index(leader)]
        proxies[replicas.index(leader)].cut()
        poll_until(lambda: standby.started_at, timeout=30, what="the standby to take over")
        last_renewal = leader.elector.leading_until - (TIMINGS["retry_period"] + TIMINGS["renew_deadline"])
    finally:
        sampler.finish()
        for replica in replicas:
            replica.finish()
    assert leader.stopped_at, "the partitioned leader never stepped down"
    assert sampler.overlaps == 0, f"both replicas reported leading in {sampler.overlaps} of {sampler.samples} samples"
    assert leader.stopped_at[0] < standby.started_at[0]
    stepped_down = leader.stopped_at[0] - last_renewal
    assert stepped_down <= TIMINGS["retry_period"] + TIMINGS["renew_deadline"] + 0.3
    # The standby waited out the lease from when it last saw a change: the margin is lease − (retry + renew).
    assert standby.started_at[0] - leader.stopped_at[0] > 1.0


class Counter:
    """A leader-only controller that keeps writing: reads a ConfigMap, works 200 ms, writes its count + 1; again
    50 ms later. A reconcile is in flight most of the time, so without cancellation one would write after the
    step-down."""

    def __init__(self, manager: Manager, namespace: str) -> None:
        self.client = manager.client
        self.namespace = namespace
        self.writes = 0

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        if request.name != "counter":
            return None
        current = self.client.get("v1/ConfigMap", "counter", self.namespace)
        count = int(current.get("data", {}).get("n", "0")) + 1
        time.sleep(0.2)
        self.client.patch(current, {"data": {"n": str(count)}})
        self.writes += 1
        return Result(requeue_after=0.05)


class TimedElector:
    """Wraps an elector to record the wall-clock time the manager was told leadership was lost."""

    def __init__(self, elector: Any) -> None:
        self.elector = elector
        self.stepped_down: datetime.datetime | None = None

    def run(self, stop: threading.Event, started: Any, stopped: Any) -> None:
        def on_stopped() -> None:
            self.stepped_down = datetime.datetime.now(datetime.UTC)
            stopped()

        self.elector.run(stop, started, on_stopped)


def _writes_by(audit_log: str, user_agent: str) -> list[datetime.datetime]:
    received = []
    for line in audit_log.splitlines():
        event = orjson.loads(line)
        if event.get("stage") != "RequestReceived" or event.get("userAgent") != user_agent:
            continue
        if event["verb"] in ("create", "update", "patch", "delete"):
            received.append(datetime.datetime.fromisoformat(event["requestReceivedTimestamp"].replace("Z", "+00:00")))
    return received


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_no_leader_only_write_reaches_the_api_server_after_the_step_down(envtest: Environment, kind: str) -> None:
    with Environment(assets=envtest.assets, network_mode=envtest.network_mode, audit_log=True) as env:
        configuration = env.client_configuration()
        admin = new_client(RESTConfig(configuration))
        admin.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "counter", "namespace": "default"}})
        with BlackHoleProxy(address_of(configuration)) as proxy:
            # Only the elector's connection goes through the proxy: the controller can still reach the server.
            elector = TimedElector(
                elector_for(kind, through(proxy, configuration), "audited", "default", "replica-a/election")
            )
            manager = Manager(
                client=APIServerClient(Transport(RESTConfig(configuration, user_agent="replica-a/controllers"))),
                leader_elector=elector,
            )
            counter = Counter(manager, "default")
            Builder(manager).for_("v1/ConfigMap").named("counter").complete(counter)
            failures: list[BaseException] = []
            thread = threading.Thread(target=lambda: _run(manager, failures), daemon=True)
            thread.start()
            poll_until(lambda: counter.writes >= 5, timeout=30, what="the controller writing as leader")
            proxy.cut()
            thread.join(30)
            assert not thread.is_alive(), "the manager did not exit after losing the lease"
            assert isinstance(failures[0], ManagerError)
            time.sleep(1.0)  # anything still queued or in flight would reach the audit log by now
        log = env.audit_log_path.read_text()
    assert elector.stepped_down is not None
    writes = _writes_by(log, "replica-a/controllers")
    late = [w for w in writes if w > elector.stepped_down + datetime.timedelta(seconds=IN_FLIGHT)]
    assert len([w for w in writes if w <= elector.stepped_down]) >= 5
    assert late == [], f"{len(late)} writes reached the API server after the step-down at {elector.stepped_down}"


def _run(manager: Manager, failures: list[BaseException]) -> None:
    try:
        manager.start()
    except BaseException as exc:
        failures.append(exc)
