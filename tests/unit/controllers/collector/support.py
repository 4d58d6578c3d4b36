"""A small world for the collector's unit tests: the in-memory API server wired as `ballastd` wires the operator
(pod cache of enrolled pods as PodProjection with the profile-ref index, our kinds in the scheme), a SQLite
history store, a fake clock, and builders for the objects a collection cycle reads."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Any

from ballast.api.ballast.v1 import WorkloadProfile
from ballast.api.scheme import add_to_scheme
from ballast.controllers.collector import NAME, STATUS_WRITERS, MetricsCollector
from ballast.internal.collection import RefreshPolicy
from ballast.internal.enrollment import MODE_LABEL, PROFILE_REF, PROFILE_REF_INDEX, PodProjection, profile_ref_index
from ballast.internal.history import (
    Cycle,
    HistoryStore,
    Series,
    SeriesKey,
    StoreError,
    StoreNotReplicatedError,
    StoreUnavailableError,
    open_store,
)
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.metricsources import SOURCE_TYPES, FetchResult, FetchTarget, Source, SourceFactory
from ballast.internal.naming import measurement_hash, policy_key, selector_labels, tuple_labels
from ballast.internal.operator import DryRun, OperatorOptions
from ballast.runtime import (
    APPLY,
    CacheScope,
    Context,
    FakeAPI,
    FakeClock,
    GroupVersionKind,
    Manager,
    NotFoundError,
    Request,
    Result,
    Scheme,
)
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.log import get_logger
from tests.unit.support import register_our_kinds

GROUP = "ballast.tightlinesoftware.com"
API_VERSION = f"{GROUP}/v1"
POD_METRICS = GroupVersionKind("metrics.k8s.io", "v1beta1", "PodMetrics")
IDENTITY = ["app"]
START = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)


def manager_for(api: FakeAPI) -> Manager:
    """A manager over `api` configured like the operator's wiring."""
    register_our_kinds(api)
    api.register(POD_METRICS, "pods", namespaced=True, status=False)
    client = api.client(scheme=add_to_scheme(Scheme()), field_owner="tests")
    manager = Manager(
        client=client,
        cache_by_kind={"v1/Pod": CacheScope(label_selector=MODE_LABEL, projection=PodProjection)},
    )
    manager.cache.index_field("v1/Pod", PROFILE_REF_INDEX, profile_ref_index)
    return manager


class RecordingStore:
    """A real store that records every cycle written and can be made unavailable."""

    def __init__(self, inner: HistoryStore) -> None:
        self.inner = inner
        self.cycles: list[Cycle] = []
        self.reads = 0
        self.read_keys: list[tuple[SeriesKey, bool]] = []
        """Every series read, with whether its sample times were asked for."""
        self.down = False
        self.unreplicated = False
        """Writes reach the primary, but no replica acknowledges them (a WAIT that timed out)."""
        self.refusing = False
        self.refused_sources: set[str] = set()
        """Sources whose cycles the store refuses (the others are written)."""
        self.broken_sources: set[str] = set()
        """Sources whose cycles make the store fail with an error it does not know (a bug)."""

    def write_cycle(self, cycle: Cycle) -> bool:
        if self.down:
            raise StoreUnavailableError("store down (test)")
        if self.refusing or cycle.cycle_id.split("/")[0] in self.refused_sources:
            raise StoreError("WRONGTYPE (test)")
        if cycle.cycle_id.split("/")[0] in self.broken_sources:
            raise RuntimeError("a bug in the store (test)")
        self.cycles.append(cycle)
        applied = self.inner.write_cycle(cycle)
        if self.unreplicated:
            raise StoreNotReplicatedError("0 of the 1 replicas wanted acknowledged it (test)")
        return applied

    def read_many(self, keys: Sequence[SeriesKey], *, with_times: bool = False) -> list[Series]:
        if self.down:
            raise StoreUnavailableError("store down (test)")
        self.reads += 1
        self.read_keys += [(key, with_times) for key in keys]
        return self.inner.read_many(keys, with_times=with_times)

    def read(self, key: SeriesKey, *, with_times: bool = False) -> Series:
        return self.read_many([key], with_times=with_times)[0]

    def purge(self, measurement_hash: str) -> int:
        return self.inner.purge(measurement_hash)

    def measurement_hashes(self) -> set[str]:
        return self.inner.measurement_hashes()

    def unowned_since(self, unowned: Collection[str], now_ms: int) -> dict[str, int]:
        return self.inner.unowned_since(unowned, now_ms)

    def ping(self) -> None:
        self.inner.ping()

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> RecordingStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class StubSource:
    """A source whose next answers the test sets (a FetchResult, or an exception to raise)."""

    def __init__(self) -> None:
        self.answers: list[FetchResult | Exception] = []
        self.calls: list[FetchTarget] = []

    def fetch(self, target: FetchTarget) -> FetchResult:
        self.calls.append(target)
        answer = self.answers.pop(0) if self.answers else FetchResult([])
        if isinstance(answer, Exception):
            raise answer
        return answer


class World:
    """The API objects, store and collector of one test."""

    def __init__(
        self,
        tmp_path: Path,
        *,
        dry_run: DryRun | None = None,
        refresh: RefreshPolicy | None = None,
        history_buffer_bytes: int = 64 << 20,
        status_writers: int = STATUS_WRITERS,
        owns: Callable[[str], bool] | None = None,
    ) -> None:
        self.api = FakeAPI()
        self.manager = manager_for(self.api)
        self.client = self.manager.api_reader
        self.clock = FakeClock(START)
        self.store = RecordingStore(open_store(f"sqlite:///{tmp_path / 'history.db'}"))
        self.kill_switch = KillSwitchState()
        self.options = OperatorOptions(
            dry_run=dry_run or DryRun(), clock=self.clock, history_buffer_bytes=history_buffer_bytes
        )
        self.kubelet = StubSource()
        plugins: dict[str, SourceFactory] = {**SOURCE_TYPES, "kubeletSummary": self._kubelet}
        self.collector = MetricsCollector(
            self.manager, self.store, self.kill_switch, self.options, plugins=plugins, refresh=refresh,
            status_writers=status_writers, owns=owns,
        )  # fmt: skip
        self.manager.cache.start()

    def _kubelet(self, _: Any) -> Source:
        return self.kubelet

    def close(self) -> None:
        self.manager.cache.stop()
        self.api.close()
        self.store.close()

    # ------------------------------------------------------------------------------------------ objects

    def config(self, retention: str = "168h") -> None:
        self.client.create(
            {"apiVersion": API_VERSION, "kind": "BallastConfig", "metadata": {"name": "ballast"},
             "spec": {"identityLabels": IDENTITY, "retentionWindow": retention}}
        )  # fmt: skip

    def source(self, name: str, type_: str = "kubernetesMetrics", poll: str = "60s", reservoir: int = 10_000) -> None:
        self.client.create(
            {"apiVersion": API_VERSION, "kind": "MetricsSource", "metadata": {"name": name},
             "spec": {"type": type_, "config": {"pollInterval": poll, "reservoirSize": reservoir}}}
        )  # fmt: skip

    def policy(self, name: str, metrics: list[dict[str, Any]], readiness: dict[str, Any] | None = None) -> None:
        spec: dict[str, Any] = {"metrics": metrics}
        if readiness is not None:
            spec["readiness"] = readiness
        self.client.create(
            {"apiVersion": API_VERSION, "kind": "ClusterResourcePolicy", "metadata": {"name": name}, "spec": spec}
        )

    def profile(self, app: str, policy: str | None = "default", **status: Any) -> str:
        """A WorkloadProfile with the identity the enrollment lane would give it; returns its name."""
        labels = tuple_labels({"app": app}, IDENTITY)
        name = f"{app}--{policy or 'nopolicy'}"
        key = policy_key("ClusterResourcePolicy", "", policy) if policy else ""
        wire: dict[str, Any] = {
            "tupleLabels": labels,
            "selectorLabels": selector_labels({"app": app}, IDENTITY),
            "measurementHash": measurement_hash(labels, key),
            "activeWorkloads": 1,
            **status,
        }
        if policy:
            wire["policyRef"] = {"kind": "ClusterResourcePolicy", "name": policy}
        body = {"apiVersion": API_VERSION, "kind": "WorkloadProfile", "metadata": {"name": name}}
        self.client.create(body)
        self.client.status().patch(body, {**body, "status": wire}, patch_type=APPLY, field_manager="watcher")
        return name

    def pod(
        self,
        name: str,
        app: str,
        profile: str | None,
        *,
        namespace: str = "shop",
        containers: Sequence[str] = ("app",),
        sidecars: Sequence[str] = (),
        inits: Sequence[str] = (),
        ephemeral: Sequence[str] = (),
        node: str = "node-a",
        mode: str | None = "measure",
    ) -> None:
        labels = {"app": app}
        if mode is not None:
            labels[MODE_LABEL] = mode
        annotations = {PROFILE_REF: profile} if profile else {}
        spec: dict[str, Any] = {"nodeName": node, "containers": [{"name": c, "image": "x"} for c in containers]}
        init = [{"name": c, "image": "x", "restartPolicy": "Always"} for c in sidecars]
        init += [{"name": c, "image": "x"} for c in inits]
        if init:
            spec["initContainers"] = init
        if ephemeral:
            spec["ephemeralContainers"] = [{"name": c, "image": "x"} for c in ephemeral]
        self.client.create(
            {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": name, "namespace": namespace, "labels": labels, "annotations": annotations},
             "spec": spec}
        )  # fmt: skip

    def pod_metrics(self, name: str, app: str, usage: Mapping[str, Mapping[str, str]], *, namespace: str = "shop",
                    mode: str | None = "measure") -> None:  # fmt: skip
        """PodMetrics as metrics-server serves them (labels copied from the pod); `usage` by container."""
        labels = {"app": app}
        if mode is not None:
            labels[MODE_LABEL] = mode
        body: dict[str, Any] = {
            "apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "timestamp": "2026-03-01T12:00:00Z", "window": "15s",
            "containers": [{"name": c, "usage": dict(u)} for c, u in usage.items()],
        }  # fmt: skip
        try:
            current = self.client.get(POD_METRICS, name, namespace)
        except NotFoundError:
            self.client.create(body)
            return
        body["metadata"] = {**body["metadata"], "resourceVersion": current["metadata"]["resourceVersion"]}
        self.client.update(body)

    # ------------------------------------------------------------------------------------------ running

    def synced(self, condition: Callable[[], bool], what: str) -> None:
        """Wait until the cache shows what the test just wrote (the informers run on threads)."""
        poll_until(condition, timeout=5.0, what=what, interval=0.005)

    def settle(self) -> None:
        """Wait until the cache holds every pod, profile, policy and source written so far."""
        expectations = {
            "v1/Pod": len([p for p in self.api.objects("v1/Pod") if MODE_LABEL in p["metadata"].get("labels", {})]),
            f"{API_VERSION}/WorkloadProfile": len(self.api.objects(f"{API_VERSION}/WorkloadProfile")),
            f"{API_VERSION}/ClusterResourcePolicy": len(self.api.objects(f"{API_VERSION}/ClusterResourcePolicy")),
            f"{API_VERSION}/MetricsSource": len(self.api.objects(f"{API_VERSION}/MetricsSource")),
            f"{API_VERSION}/BallastConfig": len(self.api.objects(f"{API_VERSION}/BallastConfig")),
        }
        for kind, count in expectations.items():
            self.synced(self._cached(kind, count), f"{count} {kind} cached")
        versions = {o["metadata"]["name"]: o["metadata"]["resourceVersion"]
                    for o in self.api.objects(f"{API_VERSION}/WorkloadProfile")}  # fmt: skip

        def profiles_current() -> bool:
            cached = self.manager.client.list(f"{API_VERSION}/WorkloadProfile")
            return all(versions.get(p["metadata"]["name"]) == p["metadata"]["resourceVersion"] for p in cached)

        self.synced(profiles_current, "cached profiles up to date")

    def _cached(self, kind: str, count: int) -> Callable[[], bool]:
        return lambda: len(self.manager.client.list(kind)) == count

    def cycle(self, source: str = "metrics") -> Result | None:
        """Run one reconcile of MetricsSource `source` once the cache has caught up."""
        self.settle()
        request = Request("", source)
        logger = get_logger("tests.collector")
        ctx = Context(NAME, request, "test", logger, self.clock)
        return self.collector.reconcile(ctx, request)

    def status(self, profile: str) -> dict[str, Any]:
        obj: WorkloadProfile = self.client.get(WorkloadProfile, profile)
        return obj.status.to_wire() if obj.status else {}

    def container(self, profile: str, name: str) -> dict[str, Any]:
        containers: dict[str, dict[str, Any]] = {c["name"]: c for c in self.status(profile).get("containers", [])}
        return containers[name]

    def usage(self, profile: str, container: str, resource: str) -> dict[str, Any]:
        usage = self.container(profile, container).get("usageStats", [])
        entries: dict[str, dict[str, Any]] = {u["resource"]: u for u in usage}
        return entries[resource]

    def ready(self, profile: str) -> dict[str, Any]:
        found: dict[str, dict[str, Any]] = {c["type"]: c for c in self.status(profile).get("conditions", [])}
        return found["Ready"]

    def series(self, profile: str, container: str, resource: str) -> Series:
        hash_ = self.status(profile)["measurementHash"]
        return self.store.inner.read(SeriesKey(hash_, container, resource), with_times=True)


CPU_P95 = {"resource": "cpu", "field": "request", "source": "metrics", "aggregation": "p95"}
STORAGE = {"resource": "ephemeral-storage", "field": "request", "source": "kubelet", "aggregation": "max"}


def measured_by_two_sources(world: World) -> str:
    """One profile of one pod, measured by `metrics` (cpu, 120 s) and `kubelet` (ephemeral-storage, 30 s), with
    the pod's cpu served; returns the profile's name."""
    world.config()
    world.source("metrics", poll="120s")
    world.source("kubelet", type_="kubeletSummary", poll="30s")
    world.policy("default", [CPU_P95, STORAGE])
    profile = world.profile("api")
    world.pod("api-1", "api", profile)
    world.pod_metrics("api-1", "api", {"app": {"cpu": "200m"}})
    return profile
