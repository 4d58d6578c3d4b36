"""The simulated cluster: OOM kills and throttling at 15 s resolution, lifecycle, resize and eviction, the record."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray

from ballast.internal.fleetsim.model import (
    BUCKET_SECONDS,
    STEP_SECONDS,
    App,
    Cluster,
    ContainerSpec,
    Fleet,
    FleetEvent,
    NodeSpec,
    PodState,
    Slot,
    Workload,
)
from ballast.internal.fleetsim.run import AsWritten, simulate
from ballast.internal.fleetsim.world import World

MI = 2**20


class LeakUsage:
    """cpu 0.5 cores; memory 100 Mi plus 10 Mi per step of container age (a leak); 1 Mi of ephemeral-storage."""

    def __init__(self, fleet: Fleet) -> None:
        self._slots = [
            Slot(w.key, replica, c.name)
            for w in fleet.workloads
            for replica in range(w.replicas)
            for c in w.app.containers
        ]

    @property
    def slots(self) -> Sequence[Slot]:
        return self._slots

    def at(self, step: int, age_steps: NDArray[np.int64]) -> NDArray[np.float64]:
        usage = np.zeros((len(self._slots), 3))
        usage[:, 0] = 0.5
        usage[:, 1] = 100 * MI + 10 * MI * age_steps
        usage[:, 2] = MI
        return usage


def fleet(
    *, cpu_limit: float | None = None, events: tuple[FleetEvent, ...] = (), deleted_s: int | None = None
) -> Fleet:
    limits = {"memory": 200 * MI} | ({"cpu": cpu_limit} if cpu_limit is not None else {})
    app = App(
        "web", {"app": "web"}, (ContainerSpec("main", {"cpu": 1.0, "memory": 150 * MI}, limits),), {"main": "leak"}
    )
    node = NodeSpec("node-1", {"cpu": 4.0, "memory": 1024 * MI, "ephemeral-storage": 10 * 2**30})
    return Fleet((Workload("team-a", app, 2, deleted_s=deleted_s),), (node,), 3600, events=events)


def test_memory_above_the_limit_is_an_oom_kill_that_restarts_the_container_and_reads_as_the_limit() -> None:
    world = World(f := fleet(), LeakUsage(f), AsWritten())
    killed_at = []
    for step in range(30):
        world.advance(step)
        if world.ooms_since(step * STEP_SECONDS):
            killed_at.append(step)
            assert world.observed()[:, 1].tolist() == [200 * MI, 200 * MI]
    # 100 Mi + 10 Mi × age passes 200 Mi at age 11; the restarted container starts over at age 0.
    assert killed_at == [11, 23]
    assert all(c.restarts == 2 for pod in world.pods.values() for c in pod.containers)
    trace = world.trace()
    assert len(trace.ooms) == 4
    assert trace.ooms[0].request == 150 * MI
    assert trace.ooms[0].limit == 200 * MI


def test_cpu_is_held_at_a_cpu_limit_and_throttling_is_counted_only_where_there_is_one() -> None:
    limited = simulate(f := fleet(cpu_limit=0.25), LeakUsage(f), AsWritten())
    unlimited = simulate(f := fleet(), LeakUsage(f), AsWritten())
    steps = 3600 // STEP_SECONDS
    assert limited.workloads["team-a/web"].throttled == 2 * steps
    assert limited.workloads["team-a/web"].limited == 2 * steps
    assert limited.workloads["team-a/web"].usage[0, 0] == pytest.approx(0.5)  # 2 pods × 0.25
    assert unlimited.workloads["team-a/web"].throttled == 0
    assert unlimited.workloads["team-a/web"].limited == 0
    assert unlimited.workloads["team-a/web"].usage[0, 0] == pytest.approx(1.0)


def test_the_record_holds_5_minute_means_of_requests_usage_and_pods() -> None:
    trace = simulate(f := fleet(), LeakUsage(f), AsWritten())
    web = trace.workloads["team-a/web"]
    assert web.reserved.shape == (3600 // BUCKET_SECONDS, 3)
    assert web.reserved[0].tolist() == [2.0, 300 * MI, 0.0]
    assert web.replicas.tolist() == [2.0] * 12
    # cpu 0.5 > request 1.0 never; memory above 150 Mi from age 6 to 11 of every 12-step life (6 of 12 steps).
    assert web.above_request[0] == 0
    assert web.above_request[1] == web.measured[1] // 2
    assert [c.kind for c in trace.changes] == ["admission", "admission"]


def test_a_rollout_replaces_every_pod_and_a_deleted_workload_runs_no_pod_until_its_redeploy() -> None:
    events = (FleetEvent(600, "rollout", "team-a/web"), FleetEvent(2400, "redeploy", "team-a/web"))
    trace = simulate(f := fleet(events=events, deleted_s=1200), LeakUsage(f), AsWritten())
    web = trace.workloads["team-a/web"]
    assert web.replicas.tolist() == [2.0] * 4 + [0.0] * 4 + [2.0] * 4
    admissions = [(c.at_s, c.pod) for c in trace.changes if c.kind == "admission"]
    assert [at for at, _ in admissions] == [0, 0, 600, 600, 2400, 2400]
    assert len({pod for _, pod in admissions}) == 6
    assert admissions[0][1].split("-")[1] != admissions[2][1].split("-")[1]  # a new pod-template-hash


class Resizer(AsWritten):
    """At 60 s: resize the first pod's memory in place and evict the second; its admission doubles cpu."""

    name = "resizer"

    def __init__(self, memory: float) -> None:
        self.memory = memory
        self.results: list[object] = []

    def admit(self, pod: PodState, cluster: Cluster) -> None:
        if cluster.now_s > 0:
            pod.containers[0].requests["cpu"] = 2.0

    def tick(self, cluster: Cluster) -> None:
        if cluster.now_s == 60:
            first, second = list(cluster.pods)
            self.results.append(cluster.resize(first, "main", {"memory": self.memory}, {"memory": 2 * self.memory}))
            self.results.append(cluster.evict(second))


def test_resize_applies_when_the_node_fits_and_is_infeasible_when_it_does_not() -> None:
    fits = Resizer(256 * MI)
    trace = simulate(f := fleet(), LeakUsage(f), fits)
    assert fits.results[0] is True
    assert [c.kind for c in trace.changes] == ["admission", "admission", "resize", "eviction"]
    assert trace.changes[2].requests == {"main": {"cpu": 1.0, "memory": 256 * MI}}
    assert trace.changes[3].requests == {"main": {"cpu": 2.0, "memory": 150 * MI}}
    assert trace.changes[3].pod == fits.results[1]
    too_big = Resizer(2048 * MI)
    trace = simulate(f := fleet(), LeakUsage(f), too_big)
    assert too_big.results[0] is False
    assert [c.kind for c in trace.changes] == ["admission", "admission", "eviction"]


def test_node_memory_pressure_evicts_in_the_kubelet_s_order_and_the_pod_restarts_on_its_node() -> None:
    # No memory limits: both leaks grow 100 Mi + 10 Mi × age, 510 Mi each at age 41 — 1020 Mi on a 1000 Mi node.
    # web (request 150 Mi) is above its request, db (600 Mi) within it: web goes, and the rest fits.
    def app(name: str, memory_request: float) -> App:
        return App(name, {"app": name}, (ContainerSpec("main", {"cpu": 0.1, "memory": memory_request}, {}),), {})

    node = NodeSpec("node-1", {"cpu": 4.0, "memory": 1000 * MI, "ephemeral-storage": 10 * 2**30})
    workloads = (Workload("team-a", app("web", 150 * MI), 1), Workload("team-a", app("db", 600 * MI), 1))
    world = World(f := Fleet(workloads, (node,), 3600), LeakUsage(f), AsWritten())
    for step in range(41):
        world.advance(step)
    assert world.trace().pressure_evictions == []
    (web,) = [pod for pod in world.pods.values() if pod.workload == "team-a/web"]

    world.advance(41)
    world.advance(42)

    (eviction,) = world.trace().pressure_evictions
    assert (eviction.at_s, eviction.pod, eviction.node) == (41 * 15, web.name, "node-1")
    assert eviction.workload == "team-a/web"
    assert (eviction.usage, eviction.request) == (510 * MI, 150 * MI)
    assert world.pods[web.name].node == "node-1"  # the same pod, on the same node, with the requests it had
    assert world.pods[web.name].containers[0].requests["memory"] == 150 * MI
    assert world.pods[web.name].containers[0].started_s == 41 * 15
    memory = {world.usage.slots[i].workload: world.observed()[i, 1] for i in range(2)}
    assert memory == {"team-a/web": 100 * MI, "team-a/db": 520 * MI}  # web started over; db kept growing
    assert world.trace().ooms == []


class HalfMemory:
    """A recommender that admits every pod with half its manifest's memory request, and does nothing else."""

    name = "half"

    def admit(self, pod: PodState, cluster: Cluster) -> None:
        for container in pod.containers:
            container.requests["memory"] /= 2

    def tick(self, cluster: Cluster) -> None:
        return None

    def close(self) -> None:
        return None


def test_a_node_pressure_eviction_is_counted_against_the_recommender_that_set_the_requests() -> None:
    # One leak without a limit on a 300 Mi node: 100 Mi + 10 Mi × age passes 300 Mi at age 21, every 21 steps after
    # each restart. The recommender admitted it with 75 Mi of the manifest's 150 Mi: that is what the record holds.
    app = App("web", {"app": "web"}, (ContainerSpec("main", {"cpu": 0.1, "memory": 150 * MI}, {}),), {})
    node = NodeSpec("node-1", {"cpu": 4.0, "memory": 300 * MI, "ephemeral-storage": 10 * 2**30})
    the_fleet = Fleet((Workload("team-a", app, 1),), (node,), 3600)

    trace = simulate(the_fleet, LeakUsage(the_fleet), HalfMemory())

    assert trace.recommender == "half"
    assert [eviction.at_s // STEP_SECONDS for eviction in trace.pressure_evictions][:3] == [21, 43, 65]
    assert {eviction.request for eviction in trace.pressure_evictions} == {75 * MI}
    assert trace.ooms == []
