"""The Ballast side of the fleet simulator: the operator's own reconcilers and admission handler, on the in-memory
API server, driven on a virtual clock from one thread (docs/simulate.md, "What runs as in ballastd").

As in `ballastd`: the manager's cache (`wiring.new_manager`: enrolled pods as projections with the profile-ref
index), the preset's objects validated by the API models, the real history store (SQLite or Redis), and the lanes'
reconcilers — `workloadwatcher-pod` (enrollment), `workloadwatcher-profile`, `metricscollector` with the real
`kubernetesMetrics` and `kubeletSummary` plugins, `resourceadjuster`, `oomwatcher` — and the pod mutating handler,
called by the in-memory API server on every pod CREATE exactly as the API server calls the webhook.

Driven differently: no workqueues and no free-running reconciles. At each step the driver binds the pods the world
created (node, Running status), deletes the pods it removed, reconciles their enrollment; at each MetricsSource's
poll it runs that source's collection cycle, then the resize lane for every profile, then acts as the kubelet on
the resizes written (`pods/resize` applied when the node has room, `PodResizePending`/`Infeasible` otherwise), and
writes each OOM kill of the world into the pod's status (`restartCount` + 1, `lastState` `OOMKilled`), from which
the OOM watcher learns of it. The
informers run, and are settled (`FakeAPI.settle`) before every read, so the cache holds every write: one seed gives
one result. Usage reaches the plugins as metrics-server's PodMetrics (cpu in nanocores, memory in KiB) and the
kubelet's Summary API (ephemeral-storage used bytes per pod) would serve it, from what the world measured.
"""

from __future__ import annotations

import contextlib
import datetime
import math
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import jsonpatch
import numpy as np
import orjson

from ballast.api.ballast.v1 import BallastConfig, ClusterResourcePolicy, MetricsSource, WorkloadProfile
from ballast.api.scheme import KINDS, add_to_scheme
from ballast.controllers.collector import MetricsCollector
from ballast.controllers.enrollment import EnrollmentReconciler
from ballast.controllers.oom import OOMWatcher
from ballast.controllers.profile import ProfileReconciler
from ballast.controllers.resize import ResourceAdjuster, profile_predicate
from ballast.internal.cmd.wiring import new_manager
from ballast.internal.collection import RefreshPolicy, poll_interval_seconds
from ballast.internal.dev.preset import SAMPLES_DIR, load_preset
from ballast.internal.dev.scenario import actuated_status, running_status
from ballast.internal.enrollment import MODE_LABEL, PROFILE_REF, PROFILE_REF_INDEX
from ballast.internal.fleetsim.model import CPU, EPHEMERAL, MEMORY, STEP_SECONDS, Cluster, Fleet, PodState
from ballast.internal.fleetsim.shards import ShardError, ShardLink, Step, WriteLog
from ballast.internal.history import HistoryStore, open_store
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.metricsources import KubeletSummarySource, KubernetesMetricsSource, SourceFactory
from ballast.internal.operator import OperatorOptions
from ballast.internal.quantity import parse_quantity
from ballast.internal.quantity.format import format_bytes, format_cpu_millis
from ballast.internal.resize.outcome import POD_RESIZE_PENDING, REASON_INFEASIBLE
from ballast.runtime import (
    AdmissionRequest,
    Client,
    Context,
    FakeAPI,
    FakeClock,
    GroupVersionKind,
    Request,
    Result,
    Scheme,
    objects,
    rfc3339,
)
from ballast.runtime.apierrors import ForbiddenError
from ballast.runtime.event import UpdateEvent
from ballast.runtime.log import get_logger
from ballast.webhook.pods import PodMutator

START = datetime.datetime(2026, 1, 5, tzinfo=datetime.UTC)
"""Virtual time zero: a Monday at midnight UTC, so simulated days start at whole days."""
NAMESPACE = "ballast-system"
PRESET = "homogeneous-large-fleet"
SERVER_VERSION = "v1.35.0"
"""The simulated API server's version: in-place resize is GA."""
POD_GVK = GroupVersionKind("", "v1", "Pod")
PROFILE_KIND = f"{WorkloadProfile.GROUP}/{WorkloadProfile.VERSION}/{WorkloadProfile.KIND}"
RESOURCE_KEYS = {"cpu": CPU, "memory": MEMORY, "ephemeral-storage": EPHEMERAL}
_FAILED = object()
"""What `_reconcile` returns for a reconcile that raised (the controller would retry it with backoff)."""
READ_CACHE_SAMPLES = 4_000_000
"""The SQLite store's read cache in the simulator (samples; ~70 bytes each): a default fleet's 3 days hold 1.4 M."""

PRODUCTION_POLICY = ClusterResourcePolicy.model_validate(
    {
        "apiVersion": "ballast.tightlinesoftware.com/v1",
        "kind": "ClusterResourcePolicy",
        "metadata": {"name": "production"},
        "spec": {
            "priority": 10,
            "selector": {},  # the seed selects `*-prod` namespaces; a simulated fleet's are all production here
            "metrics": [
                {"resource": "cpu", "field": "request", "source": "kubernetes-metrics", "aggregation": "p99",
                 "headroom": "1.15"},
                {"resource": "memory", "field": "request", "source": "kubernetes-metrics", "aggregation": "p99",
                 "headroom": "1.25"},
            ],
            "readiness": {"minDataPoints": 1000, "minTimeSpan": "72h", "maxCV": "1.0"},
        },
    }
)  # fmt: skip
"""The Ballast seed's tighter policy for production namespaces, over the preset's default (`ballast simulate
--long`): p99 × 1.15 cpu and p99 × 1.25 memory requests, ready after 1000 points over 72 h."""


def oom_floor_off_policy(preset: str = PRESET, samples: Path = SAMPLES_DIR) -> ClusterResourcePolicy:
    """The preset's default policy with OOM kills ignored (`behaviors.oom.enabled: false`, the Go operator's
    behaviour), one priority above it: `ballast simulate --compare-oom` runs it as "ballast-oom-off"."""
    default = load_preset(samples / preset).policy()
    wire = default.model_dump(by_alias=True, exclude_none=True, mode="json")
    spec = wire["spec"]
    spec["priority"] = (default.spec.priority or 0) + 1
    spec.setdefault("behaviors", {})["oom"] = {**spec["behaviors"].get("oom", {}), "enabled": False}
    wire["metadata"] = {"name": "oom-floor-off"}
    return ClusterResourcePolicy.model_validate(wire)


class BallastOperator:
    """`model.Recommender` "ballast": the operator's code deciding every pod's size (see the module docstring).

    `mode` is the enrollment label every pod carries (`resize` by default: sized at admission and in place);
    `read_cache_samples` the SQLite store's read cache (0: none, as ballastd); `policies` are created after the
    preset's objects (`PRODUCTION_POLICY` for "ballast-production"); `name` is the recommender's. With `link`,
    this is one of the two processes sharing the run (`shards`): its lanes reconcile the profiles it owns only,
    and at each step where a lane of either may have written the two exchange their lanes' writes.
    """

    def __init__(
        self,
        fleet: Fleet,
        *,
        store_url: str,
        preset: str = PRESET,
        mode: str = "resize",
        samples: Path = SAMPLES_DIR,
        read_cache_samples: int = READ_CACHE_SAMPLES,
        policies: Sequence[ClusterResourcePolicy] = (),
        name: str = "ballast",
        link: ShardLink | None = None,
    ) -> None:
        self.name = name
        self.fleet = fleet
        self.mode = mode
        self.link = link
        self.clock = FakeClock(START)
        self.write_log = WriteLog(self.clock) if link is not None else None
        """With `link`: the API server, keeping its lanes' writes for the other process."""
        self.api: FakeAPI = self.write_log if self.write_log is not None else FakeAPI(clock=self.clock)
        for kind in KINDS:
            gvk = GroupVersionKind(kind.GROUP, kind.VERSION, kind.KIND)
            self.api.register(gvk, kind.PLURAL, namespaced=kind.SCOPE == "Namespaced", status=kind.STATUS_SUBRESOURCE)
        self.client = self.api.client(scheme=add_to_scheme(Scheme()), field_owner="ballast-simulate")
        # The informers keep wall time (their backoff and resync); the lanes read the virtual clock.
        self.manager = new_manager(self.client, namespace=NAMESPACE, scheduling=False)
        cached_kinds: tuple[type[Any] | str, ...] = (*KINDS, "v1/Pod", "v1/Namespace")
        for cached in cached_kinds:
            # Started up front: one started lazily inside an admission call would LIST the API server that is
            # busy admitting (a real API server would answer; the in-memory one serves one request at a time).
            self.manager.cache.get_informer(cached)
        # Every poll re-reads whole histories, as ballastd does; the read cache fetches only what the last poll
        # wrote (same results). Sized for the fleet: 3 resources per container, up to the reservoir each.
        # A simulation's history is thrown away after the run: SQLite commits need no fsync (the same store code).
        self.store: HistoryStore = open_store(store_url, read_cache_samples=read_cache_samples, durable=False)
        kill_switch = KillSwitchState()
        options = OperatorOptions(clock=self.clock, scheduling_webhooks=False)
        self.metrics = SimulatedMetrics()
        plugins: dict[str, SourceFactory] = {
            "kubernetesMetrics": lambda _: KubernetesMetricsSource(cast(Client, self.metrics)),
            "kubeletSummary": lambda _: KubeletSummarySource(self.metrics, concurrency=1),
        }
        self.enrollment = EnrollmentReconciler(self.manager, kill_switch, options)
        self.profiles = ProfileReconciler(self.manager, self.store, options)
        # The in-memory API server answers at once: statuses are applied in the cycle's thread, not handed off.
        # Every series' sorted values kept between polls (a few MB for a simulated fleet): a ready series' refresh
        # then sorts in its new samples only, with the statistics a fresh computation gives.
        self.collector = MetricsCollector(
            self.manager, self.store, kill_switch, options, plugins=plugins, status_writers=0,
            refresh=RefreshPolicy(keep_sorted=True), owns=link.shard.owns if link is not None else None,
        )  # fmt: skip
        self.adjuster = ResourceAdjuster(
            self.manager, kill_switch=kill_switch, options=options, server_version=lambda: SERVER_VERSION
        )
        self.oom = OOMWatcher(self.manager, options=options, store=self.store, collection_memory=self.collector.memory)
        self.mutator = PodMutator(
            self.manager.client, kill_switch=kill_switch, options=options, owner_reader=self.manager.api_reader
        )
        self.api.admission(self._admission)
        self.logger = get_logger("ballast.simulate")
        self._resized: set[tuple[str, str]] = set()
        self._bound: dict[str, str] = {}
        """Pods bound and started, by name → namespace."""
        self._owners: set[str] = set()
        self._profiles_seen: dict[str, dict[str, Any]] = {}
        """Each WorkloadProfile as the resize lane last looked at it (for its controller's predicate)."""
        self._adjust_at: dict[str, float] = {}
        """Profile → virtual second its resize reconcile is requeued for."""
        self._next_adjust = math.inf
        self._exchange_at = math.inf
        """With `link`: the step the two processes agreed to exchange at next besides polls and kills."""
        self._oom_from_s = 0
        """OOM kills of the world at or after this second are still to be delivered."""
        self._restarts: dict[tuple[str, str], int] = {}
        """(pod, container) → its restart count, as the kubelet reports it."""
        self._oom_at: dict[str, float] = {}
        """Profile → virtual second the OOM watcher's reconcile is requeued for (when a kill leaves the window)."""
        self._install(samples / preset, policies)
        self.manager.cache.start()
        if not self.manager.cache.wait_for_sync(30):
            raise RuntimeError("the simulator's cache did not sync")
        self.polls = {
            source.metadata.name or "": poll_interval_seconds(source.spec.config.poll_interval)
            for source in self.client.list(MetricsSource).items
        }

    @property
    def poll_interval(self) -> int:
        """The shortest MetricsSource pollInterval (seconds): the cadence of the figures' cold-start bound."""
        return int(min(self.polls.values()))

    # ------------------------------------------------------------------------------------------- set-up

    def _install(self, preset_dir: Path, policies: Sequence[ClusterResourcePolicy]) -> None:
        for obj in [*load_preset(preset_dir).objects, *policies]:
            wire = obj.to_wire()
            if isinstance(obj, BallastConfig):  # the fleet's identity (a replay states its own)
                wire["spec"]["identityLabels"] = list(self.fleet.identity_labels)
            self.client.create(wire)
        for namespace in sorted({NAMESPACE, *(w.namespace for w in self.fleet.workloads)}):
            self.client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        for node in self.fleet.nodes:
            allocatable = {r: _quantity(r, v) for r, v in node.allocatable.items()}
            self.client.create(
                {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node.name},
                 "status": {"allocatable": allocatable, "capacity": allocatable}}
            )  # fmt: skip

    def _owner(self, pod: PodState) -> list[dict[str, Any]]:
        """The pod's ReplicaSet (created with its Deployment on first use), as its ownerReferences."""
        workload = self.fleet.workload(pod.workload)
        deployment, replica_set = workload.app.name, f"{workload.app.name}-{pod.labels['pod-template-hash']}"
        key = f"{pod.namespace}/{replica_set}"
        if key not in self._owners:
            self._owners.add(key)
            meta = {"namespace": pod.namespace, "labels": dict(workload.app.labels)}
            if f"{pod.namespace}/{deployment}" not in self._owners:
                self._owners.add(f"{pod.namespace}/{deployment}")
                self.client.create(
                    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {**meta, "name": deployment},
                     "spec": {"replicas": workload.replicas, "selector": {"matchLabels": dict(workload.app.labels)}}}
                )  # fmt: skip
            created = self.client.get("apps/v1/Deployment", deployment, pod.namespace)
            self.client.create(
                {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                 "metadata": {**meta, "name": replica_set, "ownerReferences": [_reference(created, "Deployment")]},
                 "spec": {"replicas": workload.replicas, "selector": {"matchLabels": dict(pod.labels)}}}
            )  # fmt: skip
        return [_reference(self.client.get("apps/v1/ReplicaSet", replica_set, pod.namespace), "ReplicaSet")]

    # ------------------------------------------------------------------------------------------ admission

    def admit(self, pod: PodState, cluster: Cluster) -> None:
        """Create the pod through the in-memory API server, whose admission calls the pod mutator; the pod keeps
        the requests and limits it was admitted with."""
        self._at(cluster.now_s)
        manifest = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": pod.name, "namespace": pod.namespace, "labels": {**pod.labels, MODE_LABEL: self.mode},
                         "ownerReferences": self._owner(pod)},
            "spec": {"containers": [_container(c.name, c.requests, c.limits) for c in pod.containers]},
        }  # fmt: skip
        self.api.settle()
        created: dict[str, Any] = self.client.create(manifest)
        for state, container in zip(pod.containers, created["spec"]["containers"], strict=True):
            resources = container.get("resources") or {}
            state.requests = _values(resources.get("requests") or {})
            state.limits = _values(resources.get("limits") or {})

    def _admission(
        self, operation: str, gvk: GroupVersionKind, obj: dict[str, Any], old: dict[str, Any] | None
    ) -> dict[str, Any] | None:
        """The API server's side of the webhook: CREATE goes through the mutator; an UPDATE that changes a pod's
        resources (a resize) is remembered for the kubelet."""
        if gvk != POD_GVK:
            return None
        if operation == "UPDATE":
            if old is not None and _resources(old) != _resources(obj):
                self._resized.add((objects.namespace(obj), objects.name(obj)))
            return None
        request = AdmissionRequest(
            uid=str(uuid.UUID(int=len(self._bound))),
            kind={"group": "", "version": "v1", "kind": "Pod"},
            resource={"group": "", "version": "v1", "resource": "pods"},
            operation=operation,
            name=objects.name(obj),
            namespace=objects.namespace(obj),
            object=obj,
        )
        response = self.mutator(request)
        if not response.allowed:
            raise ForbiddenError(403, "Forbidden", response.message or "denied by the pod mutator")
        if not response.patch:
            return None
        patched: dict[str, Any] = jsonpatch.apply_patch(obj, response.patch)
        return patched

    # ----------------------------------------------------------------------------------------------- tick

    def tick(self, cluster: Cluster) -> None:
        now = cluster.now_s
        self._sync_pods(cluster)
        killed, watched = self._deliver_ooms(cluster)
        due = [source for source, interval in sorted(self.polls.items()) if now % int(interval) == 0]
        if due:
            self._at(now)
            self.metrics.observe(cluster, self._measured_here())
            for source in due:
                self.api.settle()
                self._reconcile(self.collector, "metricscollector", Request("", source), lane=True)
        # The resize lane runs for every profile whenever any profile's requeue comes due, as alone: with the other
        # process's requeues too (`_exchange_at`, which in a pair already holds this process's own).
        if due or killed or watched or now >= min(self._next_adjust, self._exchange_at):
            self._adjust(now)
        if self.link is not None:
            self._exchange(now, exchanging=bool(due) or killed or now >= self._exchange_at)
        if self._resized:
            self._actuate(cluster)

    def _exchange(self, now: int, *, exchanging: bool) -> None:
        """At a step where a lane of either process may have written (a poll, a kill, or the step the two agreed
        on at their last exchange: the earlier of their lanes' next requeues), send the other process what this
        one's lanes wrote and write what its lanes did (a resize among them is remembered for the kubelet here
        too, by `_admission`); at any other step neither has written anything."""
        assert self.link is not None
        assert self.write_log is not None
        if not exchanging:
            if self.write_log.written:
                raise ShardError(f"a lane wrote at {now} s, a step the two simulation processes do not exchange at")
            return
        self._at(now)
        ours = self._next_requeue()
        theirs = self.link.exchange(Step(now, self.write_log.take(), ours))
        self.write_log.replay(theirs.writes)
        self._exchange_at = min(ours, theirs.next_requeue_s)

    def _measured_here(self) -> set[str] | None:
        """The pods this process measures, by name (all: None): those of the profiles it owns. The other
        process's metrics servers answer for the others, as the collector here would drop their samples."""
        if self.link is None:
            return None
        self.api.settle()
        return {
            objects.name(pod)
            for profile in self.manager.client.list(PROFILE_KIND)
            if self._owns(objects.name(profile))
            for pod in self.manager.client.list("v1/Pod", index=(PROFILE_REF_INDEX, objects.name(profile)))
        }

    def _next_requeue(self) -> float:
        """The virtual second this process's lanes next reconcile without a poll or a kill."""
        return min(self._next_adjust, min(self._oom_at.values(), default=math.inf))

    def _owns(self, profile: str) -> bool:
        return self.link is None or self.link.shard.owns(profile)

    def _adjust(self, now: int) -> None:
        """The resize lane as its controller schedules it: a profile is reconciled when it is new (seen at a poll,
        not at its create event), when an update passes the controller's predicate (`meetsThreshold` flipped, a new
        generation), and when the `Result`'s requeue comes due (the resize interval; 15 minutes for a skipped
        profile); a failed one on the next step. The predicate compares consecutive looks at the cache."""
        self._at(now)
        self.api.settle()
        predicate = profile_predicate()
        seen: dict[str, dict[str, Any]] = {}
        # What the controller's informer delivers: the cached objects as they are (never changed in place).
        for profile in self.manager.client.list(PROFILE_KIND):
            name, wire = objects.name(profile), objects.stored(profile)
            if not self._owns(name):
                continue
            seen[name] = wire
            old = self._profiles_seen.get(name)
            changed = old is None or predicate.update(UpdateEvent(old, wire))
            if not changed and now < self._adjust_at.get(name, math.inf):
                continue
            result = self._reconcile(self.adjuster, "resourceadjuster", Request("", name), lane=True)
            if result is _FAILED:
                self._adjust_at[name] = now + STEP_SECONDS
            elif isinstance(result, Result) and result.requeue_after > 0:
                self._adjust_at[name] = now + result.requeue_after
            else:
                self._adjust_at.pop(name, None)
        self._profiles_seen = seen
        self._adjust_at = {name: at for name, at in self._adjust_at.items() if name in seen}
        self._next_adjust = min(self._adjust_at.values(), default=math.inf)

    def _sync_pods(self, cluster: Cluster) -> None:
        """Bind and start the pods the world created; delete the ones it removed; reconcile their enrollment."""
        pods = cluster.pods
        if pods.keys() == self._bound.keys():  # nothing created or removed since the last step
            return
        self._at(cluster.now_s)
        changed: list[tuple[str, str]] = []
        for name in [n for n in self._bound if n not in pods]:
            namespace = self._bound.pop(name)
            self.client.delete({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}},
                               ignore_not_found=True)  # fmt: skip
            changed.append((namespace, name))
        for name, state in pods.items():
            if name in self._bound:
                continue
            ref = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": state.namespace}}
            pod = self.client.patch(ref, {"spec": {"nodeName": state.node}})
            self.client.status().patch(ref, running_status(pod, rfc3339(self.clock.now())))
            self._bound[name] = state.namespace
            changed.append((state.namespace, name))
        for namespace, name in changed:
            self.api.settle()
            self._reconcile(self.enrollment, "workloadwatcher-pod", Request(namespace, name))
        self.api.settle()
        for profile in self.client.list(PROFILE_KIND).items:
            self._reconcile(self.profiles, "workloadwatcher-profile", Request("", objects.name(profile)))

    def _deliver_ooms(self, cluster: Cluster) -> tuple[bool, bool]:
        """The kubelet's part of an OOM kill: the container's status says it (`restartCount` + 1, `lastState`
        terminated `OOMKilled`, exit code 137), and the OOM watcher learns of it from the pod, as it would through
        its watch — never from the world directly. Whether a kill was delivered, and whether the OOM watcher
        reconciled here (a kill in a profile this process owns, or a requeue come due)."""
        kills = [kill for kill in cluster.ooms_since(self._oom_from_s) if kill.pod in self._bound]
        self._oom_from_s = cluster.now_s + 1
        profiles = {profile for profile, at in self._oom_at.items() if at <= cluster.now_s}
        if not kills and not profiles:
            return False, False
        self._at(cluster.now_s)
        for kill in kills:
            namespace = self._bound[kill.pod]
            restarts = self._restarts.get((kill.pod, kill.container), 0) + 1
            self._restarts[(kill.pod, kill.container)] = restarts
            pod = self.client.get("v1/Pod", kill.pod, namespace)
            stamp = rfc3339(START + datetime.timedelta(seconds=kill.at_s))
            statuses = [
                {**status, "restartCount": restarts, "state": {"running": {"startedAt": stamp}},
                 "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137, "finishedAt": stamp}}}
                if status.get("name") == kill.container else status
                for status in (pod.get("status") or {}).get("containerStatuses") or ()
            ]  # fmt: skip
            ref = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": kill.pod, "namespace": namespace}}
            self.client.status().patch(ref, {"status": {"containerStatuses": statuses}})
            profile = objects.annotations(pod).get(PROFILE_REF)
            if profile and self._owns(profile):
                profiles.add(profile)
        self.api.settle()
        for profile in sorted(profiles):
            result = self._reconcile(self.oom, "oomwatcher", Request("", profile), lane=True)
            if isinstance(result, Result) and result.requeue_after > 0:
                self._oom_at[profile] = cluster.now_s + result.requeue_after
            else:
                self._oom_at.pop(profile, None)
        return bool(kills), bool(profiles)

    def _actuate(self, cluster: Cluster) -> None:
        """The kubelet's part of an in-place resize: apply what fits the node, mark the rest Infeasible."""
        resized, self._resized = sorted(self._resized), set()
        for namespace, name in resized:
            if name not in cluster.pods:
                continue
            pod = self.client.get("v1/Pod", name, namespace)
            fits = all(
                cluster.resize(name, c["name"], _values(c["resources"].get("requests") or {}),
                               _values(c["resources"].get("limits") or {}))
                for c in pod["spec"]["containers"]
            )  # fmt: skip
            ref = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace}}
            if fits:
                status = actuated_status(pod)
                if status is not None:
                    self.client.status().patch(ref, status)
                continue
            pending = {
                "type": POD_RESIZE_PENDING, "status": "True", "reason": REASON_INFEASIBLE,
                "message": "Node didn't have enough capacity", "observedGeneration": objects.generation(pod),
                "lastTransitionTime": rfc3339(self.clock.now()),
            }  # fmt: skip
            conditions = [c for c in pod["status"].get("conditions") or [] if c.get("type") != POD_RESIZE_PENDING]
            self.client.status().patch(ref, {"status": {"conditions": [*conditions, pending]}})

    def _reconcile(self, reconciler: Any, controller: str, request: Request, *, lane: bool = False) -> object:
        """The reconciler's `Result` (or None), `_FAILED` when it raised. `lane`: one of the lanes a process of a
        pair runs for its own profiles only, whose writes go to the other process."""
        ctx = Context(controller, request, "simulate", self.logger.with_values(controller=controller), self.clock)
        recording = self.write_log.recording() if lane and self.write_log is not None else contextlib.nullcontext()
        with recording:
            try:
                return reconciler.reconcile(ctx, request)
            except Exception as exc:  # as the controller does: one failed reconcile is logged, the run goes on
                self.logger.error("reconcile failed", exc_info=exc, extra={"controller": controller})
                return _FAILED

    def _at(self, now_s: int) -> None:
        target = START + datetime.timedelta(seconds=now_s)
        if target > self.clock.now():
            self.clock.advance((target - self.clock.now()).total_seconds())

    def close(self) -> None:
        self.manager.cache.stop()
        self.api.close()
        self.store.close()


class SimulatedMetrics:
    """What metrics-server and the kubelets would serve at one poll, from the world's measured usage: a LIST of
    PodMetrics (the `kubernetesMetrics` plugin's client) and each node's Summary API (its transport)."""

    def __init__(self) -> None:
        self._pod_metrics: list[dict[str, Any]] = []
        self._summaries: dict[str, bytes] = {}
        self._layouts: dict[str, _PodLayout] = {}
        """Pod name → what its answers hold besides the usage (a pod's containers and node never change)."""

    def observe(self, cluster: Cluster, pods: set[str] | None = None) -> None:
        """Take the usage the world measured at this step: of `pods` (by name) only, or of every pod."""
        observed = cluster.observed()
        # Plain ints, converted once: truncated as `int(value)` truncates (usage is never negative).
        nanocores = (observed[:, CPU] * 1e9).astype(np.int64).tolist()
        kibibytes = (observed[:, MEMORY].astype(np.int64) // 1024).tolist()
        ephemeral = observed[:, EPHEMERAL].tolist()
        stamp = rfc3339(START + datetime.timedelta(seconds=cluster.now_s))
        metrics: list[dict[str, Any]] = []
        by_node: dict[str, list[bytes]] = {}
        layouts: dict[str, _PodLayout] = {}
        for name, pod in cluster.pods.items():
            if pods is not None and name not in pods:
                continue
            layout = self._layouts.get(name)
            if layout is None or layout.pod is not pod:
                layout = _PodLayout.of(pod)
            layouts[name] = layout
            containers = [
                {"name": container, "usage": {"cpu": f"{nanocores[slot]}n", "memory": f"{kibibytes[slot]}Ki"}}
                for container, slot in layout.containers
            ]
            metrics.append({"metadata": {**layout.meta}, "timestamp": stamp, "window": "15s", "containers": containers})
            used = int(sum(ephemeral[slot] for slot in pod.slots))  # summed in slot order, as the world's floats
            by_node.setdefault(pod.node, []).append(b"%s%d}}" % (layout.summary_head, used))
        self._layouts = layouts
        self._pod_metrics = metrics
        self._summaries = {
            node: b'{"node":{"nodeName":%s},"pods":[%s]}' % (orjson.dumps(node), b",".join(pods))
            for node, pods in by_node.items()
        }

    def list(self, kind: str, namespace: str | None = None, *, label_selector: str | None = None) -> _Listed:
        return _Listed(self._pod_metrics)

    def request(self, method: str, path: str, *, timeout: float | None = None) -> _Body:
        node = path.split("/nodes/", 1)[1].split("/", 1)[0]
        return _Body(self._summaries.get(node, b'{"pods": []}'))


@dataclass(frozen=True, slots=True)
class _PodLayout:
    """One pod's part of the answers that never changes: its PodMetrics metadata, its containers' names and usage
    slots, and its Summary API entry up to the used bytes."""

    pod: PodState
    meta: dict[str, Any]
    containers: tuple[tuple[str, int], ...]
    summary_head: bytes

    @classmethod
    def of(cls, pod: PodState) -> _PodLayout:
        entry = {
            "podRef": {"name": pod.name, "namespace": pod.namespace},
            "containers": [{"name": c.name} for c in pod.containers],
        }
        head = orjson.dumps(entry)[:-1] + b',"ephemeral-storage":{"usedBytes":'
        meta = {"name": pod.name, "namespace": pod.namespace, "labels": {MODE_LABEL: "on"}}
        return cls(pod, meta, tuple(zip((c.name for c in pod.containers), pod.slots, strict=True)), head)


class _Listed:
    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.items = items


class _Body:
    def __init__(self, data: bytes) -> None:
        self.data = data


def _reference(obj: Mapping[str, Any], kind: str) -> dict[str, Any]:
    meta = obj["metadata"]
    api_version = "apps/v1"
    return {"apiVersion": api_version, "kind": kind, "name": meta["name"], "uid": meta["uid"], "controller": True}


def _container(name: str, requests: Mapping[str, float], limits: Mapping[str, float]) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {r: _quantity(r, v) for r, v in requests.items()}}
    if limits:
        resources["limits"] = {r: _quantity(r, v) for r, v in limits.items()}
    return {"name": name, "image": "registry.example/app:1", "resources": resources}


def _quantity(resource: str, value: float) -> str:
    """A manifest's quantity: millicores for cpu (rounded up), bytes otherwise."""
    if resource == "cpu":
        return format_cpu_millis(math.ceil(value * 1000 - 1e-9))
    return format_bytes(math.ceil(value - 1e-9))


def _values(quantities: Mapping[str, Any]) -> dict[str, float]:
    return {r: float(parse_quantity(str(q))) for r, q in quantities.items() if r in RESOURCE_KEYS}


def _resources(pod: Mapping[str, Any]) -> list[Any]:
    return [c.get("resources") for c in (pod.get("spec") or {}).get("containers") or []]
