"""OOM watcher (`oomwatcher`): OOM kills of a profile's pods raise its memory limit (docs/design.md, 62–65).

Per WorkloadProfile: the cached enrolled pods of the profile are read for containers whose current or last state
terminated with reason `OOMKilled` (`ballast.internal.oom.observed_kills`); each kill not yet recorded is added to
the container's `status.oomKills[]` entry, and the floor is replayed from the kills kept in the window
(`ballast.internal.oom.record`): VPA's bump of the limit at OOM, capped by `behaviors.oom.maxLimit` and the
largest allocatable memory of the nodes the killed pods ran on, stopping after `maxKills` raises with the
condition and event `OOMKillsRepeated`. Each new kill is also written into the profile's history as one memory
sample of the floor (VPA's OOM sample), so the request moves only through the history. Admission and in-place
resize apply the floor
(`ballast.internal.oom.applicable_recommendations`); the resize lane wakes on the status change.

The kills kept in the status are how a kill is counted once: across the pod's later status updates, a restart
of the operator and a new leader. Written by server-side apply on the status subresource as field manager
`ballast-oomwatcher` (`oomKills` and the `OOMKillsRepeated` condition only). Events on the profile: `OOMKilled`
per kill, `OOMKillsRepeated` when raising stops. Metrics: `ballast_oom_kills_total{profile attributes,
container}` and the gauge `ballast_oom_floor_bytes`. With `behaviors.oom.enabled: false` (the Go operator's
behaviour) the lane removes what it wrote and records nothing. Under `--dry-run=measure` it logs only.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from typing import Any

from ballast.api.ballast.v1 import (
    BallastConfig,
    ClusterResourcePolicy,
    MetricsSource,
    PolicyRef,
    ResourcePolicy,
    ResourcePolicySpec,
    WorkloadProfile,
    WorkloadProfileStatus,
)
from ballast.api.ballast.v1.groupversion import GROUP, VERSION
from ballast.api.ballast.v1.workloadprofile import OOM_KILLS_REPEATED
from ballast.api.meta import find_status_condition
from ballast.internal.collection import CollectionMemory
from ballast.internal.collection.ceilings import NODE_REFRESH_MS, largest, node_allocatable
from ballast.internal.collection.cycle import retention_window
from ballast.internal.enrollment import BALLAST_CONFIG_NAME, PROFILE_REF, PROFILE_REF_INDEX, PodProjection
from ballast.internal.enrollment.config import validate_ballast_config
from ballast.internal.history import Cycle, HistoryStore, Sample, SeriesKey, StoreError
from ballast.internal.oom import ObservedKill, OOMSettings, OOMState, kills_from, observed_kills, record, status_entry
from ballast.internal.operator import OperatorOptions
from ballast.internal.quantity import format_bytes
from ballast.internal.telemetry import OOM_FLOOR_BYTES, OOM_KILLS, profile_attributes
from ballast.runtime import (
    APPLY,
    Builder,
    Context,
    Controller,
    EnqueueRequestsFromMapFunc,
    GroupVersionKind,
    Manager,
    NotFoundError,
    Request,
    Result,
    objects,
)
from ballast.runtime.conditions import condition
from ballast.runtime.predicate import Funcs, new_predicate_funcs

NAME = "oomwatcher"
FIELD_MANAGER = "ballast-oomwatcher"
EVENT_COMPONENT = "ballast"
POD = "v1/Pod"
NODE = "v1/Node"
PROFILE_KIND = GroupVersionKind(GROUP, VERSION, "WorkloadProfile")
OOM_KILLED_EVENT = "OOMKilled"
REPEATED_REASON = "MemoryKeepsGrowing"


def _policy_spec(reader: Any, ref: PolicyRef | None) -> ResourcePolicySpec | None:
    """The spec of the profile's policy from the cache; None without one (then the defaults apply)."""
    if ref is None:
        return None
    try:
        if ref.kind == "ClusterResourcePolicy":
            return reader.get(ClusterResourcePolicy, ref.name).spec  # type: ignore[no-any-return]
        return reader.get(ResourcePolicy, ref.name, ref.namespace or "").spec  # type: ignore[no-any-return]
    except NotFoundError:
        return None


def _by_container(kills: Iterable[ObservedKill]) -> dict[str, list[ObservedKill]]:
    grouped: dict[str, list[ObservedKill]] = {}
    for kill in kills:
        grouped.setdefault(kill.container, []).append(kill)
    return grouped


def _repeated_message(states: Mapping[str, OOMState]) -> str:
    parts = [
        f"{name} ({len(state.kills)} kills in {', '.join(state.namespaces)}; limit held at "
        f"{format_bytes(state.floor or 0)})"
        for name, state in sorted(states.items())
        if state.repeated
    ]
    return "OOM-killed again at the raised memory limit, raising stopped: " + "; ".join(parts)


class OOMWatcher:
    """The reconciler of the OOM lane; see the module docstring."""

    def __init__(
        self,
        manager: Manager,
        *,
        options: OperatorOptions,
        store: HistoryStore | None = None,
        collection_memory: CollectionMemory | None = None,
    ) -> None:
        """`collection_memory`: the collector's memory, told of each sample written here, so that a series'
        refresh (readiness included) counts it as it counts the collector's own (docs/design.md, difference 78)."""
        self.store = store
        self.collection_memory = collection_memory
        self.client = manager.client
        self.cache = manager.cache
        self.api_reader = manager.api_reader
        self.recorder = manager.get_event_recorder(EVENT_COMPONENT)
        self.clock = options.clock
        self.dry_run = options.dry_run.measure
        self._allocatable: dict[str, tuple[datetime.datetime, dict[str, int]]] = {}  # node → (read at, values)

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        try:
            profile: WorkloadProfile = self.client.get(WorkloadProfile, request.name)
        except NotFoundError:
            return None
        status = profile.status or WorkloadProfileStatus()
        attributes = profile_attributes(request.name, status.tuple_labels)
        spec = _policy_spec(self.client, status.policy_ref) or ResourcePolicySpec()
        try:
            settings = OOMSettings.from_spec(spec)
        except ValueError as exc:  # the policy status lane reports the bad value; nothing is raised meanwhile
            ctx.logger.info("policy's behaviors.oom unusable; OOM kills not recorded", extra={"error": str(exc)})
            return None
        now = self.clock.now()
        if not settings.enabled:
            self._write(ctx, profile, {}, now)
            for entry in status.oom_kills or ():
                OOM_FLOOR_BYTES.set({**attributes, "container": entry.container}, 0)
            return None
        pods: list[PodProjection] = self.cache.list(POD, index=(PROFILE_REF_INDEX, request.name)).items
        observed = _by_container(
            kill for pod in pods if _oom_reported(pod) for kill in observed_kills(objects.thaw(pod))
        )
        previous = {entry.container: entry for entry in status.oom_kills or ()}
        ceiling = self._ceiling(pods) if observed or previous else None
        states = {
            name: record(kills_from(previous.get(name)), observed.get(name, ()), settings, now=now, ceiling=ceiling)
            for name in sorted({*previous, *observed})
        }
        states = {name: state for name, state in states.items() if state.kills}
        for name, state in states.items():
            labels = {**attributes, "container": name}
            if state.new:
                OOM_KILLS.inc(labels, len(state.new))
            OOM_FLOOR_BYTES.set(labels, state.floor or 0)
        for name in set(previous) - set(states):
            OOM_FLOOR_BYTES.set({**attributes, "container": name}, 0)
        if not self.dry_run:
            self._record_samples(ctx, request.name, status, spec, states, now)
        if self._write(ctx, profile, states, now):
            self._events(profile, states, previous)
        return self._requeue(states, settings.window, now)

    def _record_samples(
        self,
        ctx: Context,
        profile_name: str,
        status: WorkloadProfileStatus,
        spec: ResourcePolicySpec,
        states: Mapping[str, OOMState],
        now: datetime.datetime,
    ) -> None:
        """Each new kill as one memory sample of the floor in the profile's history (VPA's OOM sample): the
        request moves only through the history. One cycle per kill, its id naming the kill, so a retry after a
        failed status write adds nothing; before the status write, so a kill is never recorded without it."""
        if self.store is None or not status.measurement_hash:
            return
        source = self._memory_source(spec)
        if source is None:
            return
        for name, state in states.items():
            if state.floor is None:
                continue
            for kill in state.new:
                stamp = int(kill.finished_at.timestamp() * 1000)
                cycle = Cycle(
                    f"oom/{status.measurement_hash}/{name}/{kill.uid or kill.pod}/{stamp}",
                    int(now.timestamp() * 1000),
                    [Sample(SeriesKey(status.measurement_hash, name, "memory"), state.floor)],
                    reservoir_size=source.spec.config.reservoir_size,
                    retention=self._retention(),
                )
                try:
                    written = self.store.write_cycle(cycle)
                except StoreError as exc:  # the kill still sets the floor; only its history sample is lost
                    ctx.logger.error("history store unavailable; OOM sample not recorded: %s", exc)
                    return
                if written and self.collection_memory is not None:
                    self.collection_memory.samples_written({profile_name: {(name, "memory"): 1}}, cycle.at_ms)

    def _memory_source(self, spec: ResourcePolicySpec) -> MetricsSource | None:
        """The MetricsSource of the policy's memory metric (its reservoir size bounds the series)."""
        names = [m.source for m in spec.metrics or () if m.resource == "memory"]
        for name in names:
            try:
                source: MetricsSource = self.client.get(MetricsSource, name)
            except NotFoundError:
                continue
            return source
        return None

    def _retention(self) -> datetime.timedelta | None:
        """The BallastConfig's `retentionWindow`, as the collector applies it (None: unusable or absent)."""
        try:
            config: BallastConfig = self.client.get(BallastConfig, BALLAST_CONFIG_NAME)
        except NotFoundError:
            return None
        if validate_ballast_config(config.spec):
            return None
        try:
            return retention_window(config.spec.retention_window)
        except ValueError:  # the config lane reports it; samples are kept until the reservoir pushes them out
            return None

    def _ceiling(self, pods: Iterable[PodProjection]) -> int | None:
        """The largest allocatable memory of the nodes the profile's pods run on (docs/design.md, difference 25);
        None when none can be read."""
        allocatables = []
        now = self.clock.now()
        ttl = datetime.timedelta(milliseconds=NODE_REFRESH_MS)
        for node_name in sorted({pod.spec.node_name for pod in pods if pod.spec.node_name}):
            known = self._allocatable.get(node_name)
            if known is None or now - known[0] >= ttl:  # one get per node at most every NODE_REFRESH_MS, as collection
                try:
                    known = (now, node_allocatable(self.api_reader.get(NODE, node_name)))
                except NotFoundError:
                    continue
                self._allocatable[node_name] = known
            allocatables.append(known[1])
        return largest(allocatables).get("memory")

    def _write(self, ctx: Context, profile: WorkloadProfile, states: Mapping[str, OOMState], now: datetime.datetime
               ) -> bool:  # fmt: skip
        """Apply `status.oomKills` and the `OOMKillsRepeated` condition when they differ; whether it wrote."""
        status = profile.status or WorkloadProfileStatus()
        entries = [entry for name, state in states.items() if (entry := status_entry(name, state)) is not None]
        current = find_status_condition(status.conditions, OOM_KILLS_REPEATED)
        wanted = None
        if any(state.repeated for state in states.values()):
            wanted = condition(OOM_KILLS_REPEATED, "True", REPEATED_REASON, _repeated_message(states),
                               previous=current, now=now)  # fmt: skip
        written = [e.model_dump(by_alias=True, exclude_none=True, mode="json") for e in status.oom_kills or ()]
        same_condition = (current is None and wanted is None) or (
            current is not None and wanted is not None and (current.status, current.message) == (wanted["status"],
                                                                                                   wanted["message"])
        )  # fmt: skip
        if written == entries and same_condition:
            return False
        if self.dry_run:
            ctx.logger.info("dry-run: would record OOM kills", extra={"dry_run": True, "oomKills": entries})
            return False
        body: dict[str, Any] = {"apiVersion": WorkloadProfile.API_VERSION, "kind": WorkloadProfile.KIND,
                                "metadata": {"name": profile.metadata.name}, "status": {}}  # fmt: skip
        if entries:
            body["status"]["oomKills"] = entries
        if wanted is not None:
            body["status"]["conditions"] = [wanted]
        self.client.status().patch(body, body, patch_type=APPLY, field_manager=FIELD_MANAGER, force=True)
        summary = [{k: e.get(k) for k in ("container", "count", "floor", "floorUntil", "repeated")} for e in entries]
        ctx.logger.info("recorded OOM kills", extra={"oomKills": summary})
        return True

    def _events(self, profile: WorkloadProfile, states: Mapping[str, OOMState], previous: Mapping[str, Any]) -> None:
        for name, state in states.items():
            for kill in state.new:
                floor = f"memory limit floor {format_bytes(state.floor)}" if state.floor else "no floor"
                message = (f"container {name} of pod {kill.namespace}/{kill.pod} was OOM-killed at memory limit "
                           f"{format_bytes(kill.limit)}; {floor}")  # fmt: skip
                self.recorder.event(profile, "Warning", OOM_KILLED_EVENT, message, kind=PROFILE_KIND)
            before = previous.get(name)
            if state.repeated and not (before is not None and before.repeated):
                self.recorder.event(profile, "Warning", OOM_KILLS_REPEATED, _repeated_message({name: state}),
                                    kind=PROFILE_KIND)  # fmt: skip

    @staticmethod
    def _requeue(states: Mapping[str, OOMState], window: datetime.timedelta, now: datetime.datetime) -> Result | None:
        """Back when the oldest kill leaves the window (a floor lapses with the kill that set it)."""
        oldest = min((kill.finished_at for state in states.values() for kill in state.kills), default=None)
        if oldest is None:
            return None
        return Result(requeue_after=max((oldest + window - now).total_seconds(), 1.0))


def _oom_reported(obj: object) -> bool:
    """Whether a pod (a projection) reports an OOMKilled termination in any container."""
    status = getattr(obj, "status", None)
    for entry in [*getattr(status, "container_statuses", ()), *getattr(status, "init_container_statuses", ())]:
        for state in (entry.state, entry.last_state):
            if state.terminated is not None and state.terminated.reason == "OOMKilled":
                return True
    return False


def _status_field(obj: object, name: str) -> object:
    """A status field in wire form, of a profile as a dict or view, or as a model (cache reads of our kinds)."""
    if isinstance(obj, Mapping):
        status = obj.get("status")
        return status.get(name) if isinstance(status, Mapping) else None
    typed = getattr(obj, "status", None)
    if typed is None or not hasattr(typed, "model_dump"):
        return None
    return typed.model_dump(by_alias=True, exclude_none=True, mode="json", include={_SNAKE[name]}).get(name)


_SNAKE = {"policyRef": "policy_ref", "oomKills": "oom_kills"}


def profile_predicate() -> Funcs:
    """Updates pass when the profile's policy or its `oomKills` changed (not at every collection cycle)."""
    return Funcs(
        update_func=lambda e: any(
            _status_field(e.object_old, name) != _status_field(e.object_new, name) for name in ("policyRef", "oomKills")
        )
    )


def setup(
    manager: Manager,
    *,
    options: OperatorOptions,
    store: HistoryStore | None = None,
    collection_memory: CollectionMemory | None = None,
) -> Controller:
    """Register the OOM watcher on `manager` (the wiring caches enrolled pods with the profile-ref index);
    `collection_memory`: the collector's memory, when both run (`collector.setup`)."""

    def profile_of(pod: object) -> list[Request]:
        ref = objects.annotations(pod).get(PROFILE_REF)
        return [Request("", ref)] if ref else []

    def profiles_with_kills_of(kind: str) -> Any:
        """A policy's change (`behaviors.oom`) reaches the profiles it governs that hold kills."""

        def mapped(policy: object) -> list[Request]:
            name, namespace = objects.name(policy), objects.namespace(policy) or None
            return [
                Request("", objects.name(profile))
                for profile in manager.client.list(WorkloadProfile)
                if _status_field(profile, "oomKills")
                and (ref := _status_field(profile, "policyRef")) is not None
                and isinstance(ref, Mapping)
                and (ref.get("kind"), ref.get("name"), ref.get("namespace") or None) == (kind, name, namespace)
            ]

        return EnqueueRequestsFromMapFunc(mapped)

    return (
        Builder(manager)
        .for_(WorkloadProfile, predicates=[profile_predicate()])
        .watches(POD, EnqueueRequestsFromMapFunc(profile_of), predicates=[new_predicate_funcs(_oom_reported)])
        .watches(ClusterResourcePolicy, profiles_with_kills_of("ClusterResourcePolicy"))
        .watches(ResourcePolicy, profiles_with_kills_of("ResourcePolicy"))
        .named(NAME)
        .complete(OOMWatcher(manager, options=options, store=store, collection_memory=collection_memory))
    )
