"""The VPA baseline against VPA 1.6.0's rules: the expectations are the rules' arithmetic written out (bucket ends,
+15 %, confidence, pod minimum, truncation), never values read back from the code under test."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from ballast.internal.fleetsim.model import (
    App,
    ContainerSpec,
    ContainerState,
    Fleet,
    FleetEvent,
    NodeSpec,
    OomKill,
    PodState,
    Workload,
)
from ballast.internal.fleetsim.vpa import VpaRecommender, limits_for
from ballast.internal.fleetsim.vpa_histogram import (
    CPU_SCHEME,
    MEMORY_SCHEME,
    DecayingHistogram,
    checkpoint,
    percentiles,
    restore,
)

MI = 2**20
GI = 2**30
HOUR, DAY = 3600, 86_400
R = 1.05


def bucket(value: float, first: float) -> int:
    return math.floor(math.log(value * (R - 1) / first + 1) / math.log(R))


def bucket_end(value: float, first: float) -> float:
    """The end of `value`'s bucket: the start of the next, `first·(r^(n+1) − 1)/(r − 1)`."""
    return first * (R ** (bucket(value, first) + 1) - 1) / (R - 1)


CPU_100M = bucket_end(0.1, 0.01) * 1.15
"""0.110266 cores + 15 % = 0.126806 cores."""
MEMORY_200MI = bucket_end(200 * MI, 1e7) * 1.15
"""215,785,640 B + 15 % = 248,153,486 B: under the 250 MiB pod minimum."""
POD_MIN_MEMORY = 250 * MI


class FakeCluster:
    """A cluster of the fleet's pods, every container on its own slot; usage set per container name."""

    def __init__(self, fleet: Fleet, recommender: VpaRecommender) -> None:
        self.fleet, self.recommender = fleet, recommender
        self.now_s = 0
        self.pods: dict[str, PodState] = {}
        self.usage: dict[str, tuple[float, float]] = {}
        self.ooms: list[OomKill] = []
        self.evicted: list[tuple[int, str]] = []
        self.resized: list[tuple[str, str, dict[str, float]]] = []
        self.fits = True
        self.generation: dict[str, int] = {}
        self._names = 0
        self._slots: dict[tuple[str, int, str], int] = {}
        for workload in fleet.workloads:
            if workload.created_s == 0:
                self.deploy(workload.key)

    def deploy(self, key: str) -> list[PodState]:
        workload = self.fleet.workload(key)
        return [self.create(workload, replica) for replica in range(workload.replicas)]

    def rollout(self, key: str) -> None:
        self.generation[key] = self.generation.get(key, 0) + 1
        for pod in [p for p in self.pods.values() if p.workload == key]:
            del self.pods[pod.name]
            self.create(self.fleet.workload(key), pod.replica)

    def create(self, workload: Workload, replica: int) -> PodState:
        self._names += 1
        generation = self.generation.get(workload.key, 0)
        containers = [
            ContainerState(s.name, dict(s.requests), dict(s.limits), self.now_s) for s in workload.app.containers
        ]
        slots = [self._slots.setdefault((workload.key, replica, c.name), len(self._slots)) for c in containers]
        pod = PodState(
            f"{workload.app.name}-{generation}-{self._names}",
            workload.namespace,
            workload.key,
            replica,
            {**workload.app.labels, "pod-template-hash": str(generation)},
            "node-1",
            self.now_s,
            containers,
            slots,
        )
        self.recommender.admit(pod, self)
        self.pods[pod.name] = pod
        return pod

    def observed(self) -> NDArray[np.float64]:
        matrix = np.zeros((len(self._slots), 3))
        for pod in self.pods.values():
            for container, slot in zip(pod.containers, pod.slots, strict=True):
                matrix[slot, :2] = self.usage.get(container.name, (0.0, 0.0))
        return matrix

    def running(self) -> NDArray[np.bool_]:
        running = np.zeros(len(self._slots), dtype=np.bool_)
        for pod in self.pods.values():
            running[pod.slots] = True
        return running

    def ooms_since(self, at_s: int) -> Sequence[OomKill]:
        return [oom for oom in self.ooms if oom.at_s >= at_s]

    def resize(self, pod: str, container: str, requests: Mapping[str, float], limits: Mapping[str, float]) -> bool:
        if not self.fits:
            return False
        state = next(c for c in self.pods[pod].containers if c.name == container)
        state.requests |= requests
        self.resized.append((pod, container, dict(requests)))
        return True

    def evict(self, pod: str) -> str:
        state = self.pods.pop(pod)
        self.evicted.append((self.now_s, pod))
        return self.create(self.fleet.workload(state.workload), state.replica).name

    def run_until(self, until_s: int) -> None:
        """Tick every minute up to and including `until_s`."""
        while self.now_s <= until_s:
            self.recommender.tick(self)
            self.now_s += 60
        self.now_s -= 60

    def advance_to(self, at_s: int) -> None:
        self.run_until(at_s - 60)
        self.now_s = at_s


def app(name: str = "web", *containers: ContainerSpec, labels: Mapping[str, str] | None = None) -> App:
    specs = containers or (ContainerSpec("main", {"cpu": 0.5, "memory": 512.0 * MI}, {}),)
    return App(name, dict(labels or {"app": name}), specs, {c.name: "idle" for c in specs})


def fleet_of(*workloads: Workload, events: tuple[FleetEvent, ...] = ()) -> Fleet:
    node = NodeSpec("node-1", {"cpu": 64.0, "memory": 256.0 * GI, "ephemeral-storage": 100.0 * GI})
    return Fleet(tuple(workloads), (node,), 10 * DAY, events)


def cluster_of(*workloads: Workload, events: tuple[FleetEvent, ...] = (), in_place: bool = False) -> FakeCluster:
    fleet = fleet_of(*workloads, events=events)
    return FakeCluster(fleet, VpaRecommender(fleet, update_mode="InPlaceOrRecreate" if in_place else "Recreate"))


def test_the_worked_vectors_bucket_percentile_and_target() -> None:
    expected = [
        (CPU_SCHEME, 0.1, 8, 0.110266, 126),
        (CPU_SCHEME, 0.5, 25, 0.511135, 587),
        (CPU_SCHEME, 1.0, 36, 1.016281, 1168),
    ]
    for scheme, usage, index, end, millicores in expected:
        histogram = DecayingHistogram(scheme)
        for minute in range(1441):
            histogram.add(usage, 0.1, minute * 60)
        assert scheme.bucket(usage) == index
        assert round(histogram.percentile(0.9), 6) == end
        assert math.floor(histogram.percentile(0.9) * 1.15 * 1000) == millicores
    for usage, index, end in [(256 * MI, 17, 281_323_846), (GI, 37, 1_077_095_457)]:
        histogram = DecayingHistogram(MEMORY_SCHEME)
        histogram.add(usage, 1.0, DAY)
        assert MEMORY_SCHEME.bucket(usage) == index
        assert math.floor(histogram.percentile(0.9)) == end
        assert [math.floor(v[0]) for v in percentiles(MEMORY_SCHEME, histogram.weights[None, :], (0.9,))] == [end]
    assert CPU_SCHEME.size == MEMORY_SCHEME.size == 176


def test_the_percentile_walks_to_the_bucket_reaching_the_share_and_returns_its_end() -> None:
    histogram = DecayingHistogram(CPU_SCHEME)
    for value, weight in [(0.1, 5.0), (0.5, 4.0), (1.0, 1.0)]:
        histogram.add(value, weight, 0)
    assert histogram.percentile(0.5) == CPU_SCHEME.start(9)
    assert histogram.percentile(0.9) == CPU_SCHEME.start(26)
    assert histogram.percentile(0.95) == CPU_SCHEME.start(37)
    assert DecayingHistogram(CPU_SCHEME).percentile(0.9) == 0.0
    top = DecayingHistogram(CPU_SCHEME)
    top.add(5000.0, 1.0, 0)
    assert top.percentile(0.9) == CPU_SCHEME.start(175)  # the last bucket returns its start
    rows = np.vstack([histogram.weights, np.zeros(176), top.weights])
    assert [v.tolist() for v in percentiles(CPU_SCHEME, rows, (0.5, 0.9))] == [
        [CPU_SCHEME.start(9), 0.0, CPU_SCHEME.start(175)],
        [CPU_SCHEME.start(26), 0.0, CPU_SCHEME.start(175)],
    ]


def test_a_sample_a_day_old_weighs_half_as_much() -> None:
    histogram = DecayingHistogram(CPU_SCHEME)
    histogram.add(0.1, 0.1, 0)
    histogram.add(1.0, 0.1, DAY)
    assert histogram.weights[8] == 0.1
    assert histogram.weights[36] == 0.2
    assert histogram.percentile(0.3) == CPU_SCHEME.start(9)
    assert histogram.percentile(0.4) == CPU_SCHEME.start(37)


def test_a_constant_100m_200mi_container_at_1h_24h_and_8_days() -> None:
    cluster = cluster_of(Workload("team-a", app(), 1))
    cluster.usage["main"] = (0.1, 200.0 * MI)
    expected: dict[int, dict[str, tuple[float, float, float]]] = {}
    for at_s in (HOUR, DAY, 8 * DAY):
        samples = at_s // 60 + 1  # one a minute, from 0 to at_s inclusive
        confidence = min(at_s / DAY, samples / 1440)
        upper, lower = 1 + 1 / confidence, (1 + 0.001 / confidence) ** -2
        expected[at_s] = {
            "cpu": (
                math.floor(CPU_100M * 1000) / 1000,
                math.floor(CPU_100M * lower * 1000) / 1000,
                math.floor(CPU_100M * upper * 1000) / 1000,
            ),
            "memory": (
                POD_MIN_MEMORY,
                max(math.floor(MEMORY_200MI * lower), POD_MIN_MEMORY),
                max(math.floor(MEMORY_200MI * upper), POD_MIN_MEMORY),
            ),
        }
    assert expected[HOUR]["cpu"] == (0.126, 0.120, 3.170)
    assert expected[8 * DAY]["memory"][2] == math.floor(MEMORY_200MI * 1.125)
    for at_s, values in expected.items():
        cluster.run_until(at_s)
        recommendation = cluster.recommender.recommendation("team-a/web")["main"]
        for resource, (target, lower_bound, upper_bound) in values.items():
            assert recommendation.target[resource] == target, (at_s, resource)
            assert recommendation.lower[resource] == lower_bound, (at_s, resource)
            assert recommendation.upper[resource] == upper_bound, (at_s, resource)


def test_the_first_sample_gives_an_unbounded_upper_bound() -> None:
    cluster = cluster_of(Workload("team-a", app(), 1))
    cluster.usage["main"] = (0.1, 200.0 * MI)
    cluster.run_until(0)
    recommendation = cluster.recommender.recommendation("team-a/web")["main"]
    assert recommendation.upper == {"cpu": math.inf, "memory": math.inf}
    assert recommendation.lower == {"cpu": 0.025, "memory": POD_MIN_MEMORY}
    assert recommendation.target == {"cpu": 0.126, "memory": POD_MIN_MEMORY}


def oom_target(request: float, usage: float, limit: float) -> float:
    """The memory target after one OOM kill of a container using `usage` with `request`."""
    spec = ContainerSpec("main", {"cpu": 0.5, "memory": request}, {"memory": limit})
    cluster = cluster_of(Workload("team-a", app("web", spec), 1))
    cluster.usage["main"] = (0.1, usage)
    cluster.run_until(60)
    pod = next(iter(cluster.pods.values()))
    cluster.ooms.append(OomKill(90, pod.name, pod.workload, "main", request, limit))
    cluster.run_until(120)
    return cluster.recommender.recommendation("team-a/web")["main"].target["memory"]


def test_an_oom_feeds_the_larger_of_used_plus_100mi_and_used_times_1_2() -> None:
    # used = the request (above the usage peak): 400 Mi + 100 Mi beats 400 Mi × 1.2
    assert oom_target(400.0 * MI, 300.0 * MI, 400.0 * MI) == math.floor(bucket_end(500.0 * MI, 1e7) * 1.15)
    # at 500 Mi both rules give 600 Mi
    assert oom_target(500.0 * MI, 300.0 * MI, 500.0 * MI) == math.floor(bucket_end(600.0 * MI, 1e7) * 1.15)
    # used = the interval's peak (above the request): 1000 Mi × 1.2 beats 1000 Mi + 100 Mi
    assert oom_target(600.0 * MI, 1000.0 * MI, 2000.0 * MI) == math.floor(bucket_end(1200.0 * MI, 1e7) * 1.15)


def test_the_oom_peak_replaces_the_interval_peak_in_the_memory_histogram() -> None:
    spec = ContainerSpec("main", {"cpu": 0.5, "memory": 400.0 * MI}, {"memory": 400.0 * MI})
    cluster = cluster_of(Workload("team-a", app("web", spec), 1))
    cluster.usage["main"] = (0.1, 300.0 * MI)
    cluster.run_until(60)
    pod = next(iter(cluster.pods.values()))
    cluster.ooms.append(OomKill(90, pod.name, pod.workload, "main", 400.0 * MI, 400.0 * MI))
    cluster.run_until(600)
    _, memory = cluster.recommender.histograms("team-a/web", "main")
    weights = {int(b): float(w) for b, w in enumerate(memory.weights) if w > 0}
    # one peak, dated at the interval's end (day 1: weight 2^(86400/86400) = 2)
    assert weights == {bucket(500.0 * MI, 1e7): 2.0}


def test_the_pod_minimum_is_shared_between_two_containers() -> None:
    small = (ContainerSpec("main", {"cpu": 0.1, "memory": 64.0 * MI}, {}),)
    sidecar = (ContainerSpec("sidecar", {"cpu": 0.1, "memory": 64.0 * MI}, {}),)
    cluster = cluster_of(Workload("team-a", app("web", *small, *sidecar), 2))
    cluster.usage.update({"main": (0.001, 10.0 * MI), "sidecar": (0.001, 10.0 * MI)})
    cluster.run_until(DAY)
    recommendation = cluster.recommender.recommendation("team-a/web")
    for container in ("main", "sidecar"):
        assert recommendation[container].target == {
            "cpu": math.floor(25 / 2) / 1000,
            "memory": math.floor(262_144_000 / 2),
        }


def updater_cluster(cpu_request: float, replicas: int = 2, *, in_place: bool = False) -> FakeCluster:
    """Pods of a container steady at 100 m / 200 Mi (target 126 m / 250 MiB) requesting `cpu_request` and exactly
    the memory target (its difference: 0)."""
    spec = ContainerSpec("main", {"cpu": cpu_request, "memory": float(POD_MIN_MEMORY)}, {})
    cluster = cluster_of(Workload("team-a", app("web", spec), replicas), in_place=in_place)
    cluster.usage["main"] = (0.1, 200.0 * MI)
    return cluster


def test_after_12h_a_10_percent_difference_evicts_one_pod_per_pass() -> None:
    cpu_request = 0.15
    assert abs(cpu_request - 0.126) / cpu_request >= 0.1
    cluster = updater_cluster(cpu_request)
    cluster.run_until(12 * HOUR - 60)
    assert cluster.evicted == []
    cluster.run_until(12 * HOUR)
    assert [at for at, _ in cluster.evicted] == [12 * HOUR]  # tolerance 0.5 of 2 replicas: one a pass
    cluster.run_until(12 * HOUR + 120)
    assert [at for at, _ in cluster.evicted] == [12 * HOUR, 12 * HOUR + 60]
    assert sorted(c.requests["cpu"] for p in cluster.pods.values() for c in p.containers) == [0.126, 0.126]


def test_after_12h_a_9_percent_difference_evicts_nothing() -> None:
    cpu_request = 0.138
    assert 0.08 < abs(cpu_request - 0.126) / cpu_request < 0.09
    cluster = updater_cluster(cpu_request)
    cluster.run_until(13 * HOUR)
    assert cluster.evicted == []


def test_a_request_under_the_lower_bound_is_evicted_at_once() -> None:
    # lowerBound = 0.126806 × (1 + 0.001 / confidence)^-2 with confidence = t / 1 day: it passes 50 m at t = 180 s
    assert CPU_100M * (1 + 0.001 / (120 / DAY)) ** -2 < 0.05 < CPU_100M * (1 + 0.001 / (180 / DAY)) ** -2
    cluster = updater_cluster(0.05)
    cluster.run_until(HOUR)
    assert [at for at, _ in cluster.evicted] == [180, 240]


def test_a_workload_with_one_running_pod_is_never_touched() -> None:
    cluster = updater_cluster(0.05, replicas=1)
    cluster.run_until(13 * HOUR)
    assert cluster.evicted == []


def test_in_place_resizes_first_and_evicts_when_infeasible() -> None:
    cluster = updater_cluster(0.05, in_place=True)
    cluster.run_until(180)
    assert [(container, requests["cpu"]) for _, container, requests in cluster.resized] == [("main", 0.126)]
    assert cluster.evicted == []
    cluster.fits = False
    cluster.run_until(240)
    assert [at for at, _ in cluster.evicted] == [240]


def test_a_quick_oom_evicts_when_the_recommendation_differs() -> None:
    cluster = updater_cluster(0.126, replicas=2)
    cluster.run_until(60)
    assert cluster.evicted == []
    pod = next(iter(cluster.pods.values()))
    pod.containers[0].requests["memory"] = 300.0 * MI  # differs from the 250 MiB target
    cluster.recommender._slots.requests[pod.slots[0], 1] = 300.0 * MI  # as the recommender read it at admission
    cluster.ooms.append(OomKill(90, pod.name, pod.workload, "main", 300.0 * MI, 300.0 * MI))
    cluster.run_until(120)
    assert cluster.evicted == [(120, pod.name)]


def test_admission_sets_the_target_and_scales_limits_requests_and_limits() -> None:
    spec = ContainerSpec("main", {"cpu": 0.5, "memory": 512.0 * MI}, {"cpu": 1.0, "memory": 512.0 * MI})
    target = {"cpu": 0.126, "memory": float(POD_MIN_MEMORY)}
    # cpu keeps its 2× ratio (in millicores: 1000 × 126 / 500); memory's limit equalled its request
    assert limits_for(spec, target, spec.limits) == {"cpu": 1000 * 126 // 500 / 1000, "memory": POD_MIN_MEMORY}
    no_limits = ContainerSpec("main", {"cpu": 0.5, "memory": 512.0 * MI}, {})
    assert limits_for(no_limits, target, {}) == {}
    no_request = ContainerSpec("main", {}, {"cpu": 2.0, "memory": GI})
    assert limits_for(no_request, target, no_request.limits) == target
    odd = ContainerSpec("main", {"cpu": 0.3, "memory": 300.0 * MI}, {"cpu": 0.7, "memory": 1000.0 * MI})
    assert limits_for(odd, target, odd.limits) == {
        "cpu": 700 * 126 // 300 / 1000,
        "memory": float(1000 * MI * POD_MIN_MEMORY // (300 * MI)),
    }

    cluster = cluster_of(Workload("team-a", app("web", spec), 2))
    first = next(iter(cluster.pods.values()))
    assert first.containers[0].requests == spec.requests  # no recommendation yet: unchanged
    assert first.containers[0].limits == spec.limits
    cluster.usage["main"] = (0.1, 200.0 * MI)
    cluster.run_until(HOUR)
    pod = cluster.create(cluster.fleet.workload("team-a/web"), 0)
    assert pod.containers[0].requests == target
    assert pod.containers[0].limits == {"cpu": 0.252, "memory": POD_MIN_MEMORY}


def test_a_checkpoint_round_trip_keeps_the_percentiles_and_drops_buckets_under_epsilon() -> None:
    histogram = DecayingHistogram(CPU_SCHEME)
    for minute in range(1440):
        histogram.add(0.1 if minute % 10 else 0.5, 0.1, minute * 60)
    stored = checkpoint(histogram)
    assert stored["version"] == "v3"
    assert max(stored["bucketWeights"].values()) == 10_000
    assert set(stored["bucketWeights"]) == {"8", "25"}
    back = restore(stored, CPU_SCHEME)
    assert math.isclose(back.total, histogram.total)
    for share in (0.5, 0.9, 0.95):
        assert back.percentile(share) == histogram.percentile(share)

    light = DecayingHistogram(MEMORY_SCHEME)
    light.weights[10], light.weights[12] = 1e-3, 2e-7
    light.total = 1e-3 + 2e-7
    stored = checkpoint(light)
    assert stored["bucketWeights"] == {"10": 10_000, "12": 2}
    back = restore(stored, MEMORY_SCHEME)
    assert np.flatnonzero(back.weights).tolist() == [10]  # 2 × total / 10 002 ≈ 2e-7 < 1e-4: trimmed


def test_a_rollout_keeps_the_history_and_a_new_namespace_starts_cold() -> None:
    newcomer = Workload("team-b", app(), 2, created_s=DAY)
    cluster = cluster_of(Workload("team-a", app(), 2), newcomer)
    cluster.usage["main"] = (0.1, 200.0 * MI)
    cluster.run_until(DAY - 60)
    cluster.now_s = DAY
    cluster.rollout("team-a/web")  # new pod-template-hash: new aggregation keys, same VPA
    for pod in cluster.deploy("team-b/web"):
        assert pod.containers[0].requests == {"cpu": 0.5, "memory": 512.0 * MI}  # no recommendation: as written
    assert all(p.containers[0].requests["cpu"] == 0.126 for p in cluster.pods.values() if p.namespace == "team-a")
    cluster.run_until(DAY)
    kept = cluster.recommender.recommendation("team-a/web")["main"]
    cold = cluster.recommender.recommendation("team-b/web")["main"]
    # team-a: 1441 samples per replica-key over one day, merged with the new key's first: confidence 1 → × 2
    assert kept.upper["cpu"] == math.floor(CPU_100M * 2 * 1000) / 1000
    assert cold.upper["cpu"] == math.inf


def test_a_cold_redeploy_forgets_the_history_and_a_warm_one_keeps_it() -> None:
    events = (
        FleetEvent(DAY, "redeploy", "team-a/web", vpa_cold="new-labels"),
        FleetEvent(DAY, "redeploy", "team-a/api"),
    )
    cluster = cluster_of(Workload("team-a", app("web"), 2), Workload("team-a", app("api"), 2), events=events)
    cluster.usage["main"] = (0.1, 200.0 * MI)
    cluster.run_until(DAY - 60)
    cluster.now_s = DAY
    for key in ("team-a/web", "team-a/api"):
        for pod in [p for p in cluster.pods.values() if p.workload == key]:
            del cluster.pods[pod.name]
        cluster.deploy(key)
    requests = {p.workload: p.containers[0].requests["cpu"] for p in cluster.pods.values()}
    assert requests == {"team-a/web": 0.5, "team-a/api": 0.126}
    cluster.run_until(DAY)
    assert cluster.recommender.recommendation("team-a/web")["main"].upper["cpu"] == math.inf
    assert (
        cluster.recommender.recommendation("team-a/api")["main"].upper["cpu"] == math.floor(CPU_100M * 2 * 1000) / 1000
    )
