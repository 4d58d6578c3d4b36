"""Collection (`metricscollector`): one cycle per MetricsSource poll — fetch once, write once, then status.

The reconcile key is a MetricsSource (cluster-scoped), driven by `Result(requeue_after=pollInterval)` — the
interval is honoured, not capped at 60 s (architecture.md §5 item 1). A cycle (§5 item 19):

1. the profiles the source feeds: WorkloadProfiles (cache) whose policy (`status.policyRef`, defaults applied)
   has a `metrics[]` entry with `source` = this MetricsSource; profiles without a policy are never measured;
2. one fetch (`internal/sources`, one backoff per source), for the nodes hosting those profiles' pods;
3. attribution through the cached pod, failing closed (`sources.attribution`), and every sample of every fed
   profile written in ONE `store.write_cycle` (cycle id `<source>/<cycle time ms>`, so a retry is a no-op;
   §5 items 11 and 12 — reservoir from the source, retention from `BallastConfig ballast`);
4. per fed profile: statistics → readiness → recommendations → status (`sources.usage`), applied with
   server-side apply on the status subresource as field manager `ballast-collector`, which owns only
   `containers`, `meetsThreshold`, `state` and the `Ready` condition.

Kill switch: no fetch, no writes, requeue at the poll interval. `--dry-run-measure`: fetch and attribute, but no
sample and no status is written. A store outage skips the cycle and keeps the last status.

In-process state (leader only, rebuilt by a fresh leader within one cycle of each source): each source's plugin
and backoff, which resources each source's latest cycle delivered per profile (for `Ready`), and the last status
applied per profile (so one source's cycle carries the other sources' entries without reading a lagging cache).
"""

from __future__ import annotations

import contextvars
import datetime
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ballast.api.ballast.v1 import BallastConfig, ClusterResourcePolicy, MetricsSource, ResourcePolicy, WorkloadProfile
from ballast.api.ballast.v1.workloadprofile import READY, SUFFICIENT, PolicyRef
from ballast.internal.enrollment import BALLAST_CONFIG_NAME, PROFILE_REF_INDEX
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.operator import OperatorOptions
from ballast.internal.runtime import (
    APPLY,
    Builder,
    Context,
    Controller,
    Manager,
    NotFoundError,
    Request,
    Result,
    objects,
)
from ballast.internal.runtime.apierrors import APIStatusError
from ballast.internal.runtime.predicate import generation_changed
from ballast.internal.sources import (
    SOURCE_TYPES,
    Attribution,
    BackingOffError,
    ContainerState,
    FetchError,
    FetchTarget,
    MeasuredPod,
    MeasuredProfile,
    Pair,
    PodKey,
    PolicyView,
    PolledSource,
    ProfileStatus,
    SourceFactory,
    UsageSample,
    attribute,
    is_stale,
    measured_pod,
    previously_missing,
    profile_status,
    ready_condition,
    resource_status,
    series_to_read,
    state_from_status,
)
from ballast.internal.stats import parse_duration
from ballast.internal.store import Cycle, HistoryStore, Series, SeriesKey, StoreError
from ballast.internal.store.series import check_measurement_hash
from ballast.internal.telemetry import (
    FETCH_ERRORS,
    PROFILES,
    PROFILES_THRESHOLD_MET,
    SAMPLES_COLLECTED,
    profile_attributes,
)

NAME = "metricscollector"
FIELD_MANAGER = "ballast-collector"
POD = "v1/Pod"
DEFAULT_POLL_INTERVAL = 60.0
"""The MetricsSource CRD default; also used for a pollInterval that does not parse or is not positive."""
MIN_REQUEUE = 1.0
READ_CHUNK = 64
"""Series read per store call while computing statistics: memory stays bounded by a few series of history."""
STATUS_WRITERS = 4
"""Status patches in flight at once (I/O concurrency while the next chunk's statistics are computed)."""

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def poll_interval_seconds(text: str | None) -> float:
    """A MetricsSource's `pollInterval` in seconds, as written (no 60 s cap); 60 s when unset, invalid or ≤ 0."""
    try:
        nanoseconds = parse_duration(text or "")
    except ValueError:
        return DEFAULT_POLL_INTERVAL
    return nanoseconds / 1e9 if nanoseconds > 0 else DEFAULT_POLL_INTERVAL


def _rfc3339(moment: datetime.datetime) -> str:
    return moment.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class _Fed:
    """A profile this cycle measures."""

    profile: WorkloadProfile
    policy: PolicyView
    measured: MeasuredProfile

    @property
    def name(self) -> str:
        return self.measured.name


@dataclass(slots=True)
class _Applied:
    """The last status this process applied to a profile (same uid), and what it judged."""

    uid: str
    state: ContainerState
    meets_threshold: bool


@dataclass(frozen=True, slots=True)
class _Plan:
    """A fed profile's status work in a cycle: its starting state and the series to recompute."""

    fed: _Fed
    state: ContainerState
    fresh: list[Pair]
    quiet: list[Pair]

    def key(self, pair: Pair) -> SeriesKey:
        return SeriesKey(self.fed.measured.measurement_hash, *pair)


@dataclass(slots=True)
class _Cycle:
    """One poll of one source: its time and what it found."""

    source: str
    now: datetime.datetime
    fed: list[_Fed]
    attribution: Attribution = field(default_factory=Attribution)
    _sources: dict[str, bool] = field(default_factory=dict)

    def source_exists(self, name: str, lookup: Callable[[str], bool]) -> bool:
        """Whether MetricsSource `name` exists, looked up once per cycle."""
        if name not in self._sources:
            self._sources[name] = lookup(name)
        return self._sources[name]

    @property
    def now_ms(self) -> int:
        return (self.now - _EPOCH) // datetime.timedelta(milliseconds=1)

    @property
    def now_text(self) -> str:
        return _rfc3339(self.now)


class MetricsCollector:
    """Reconciles one MetricsSource: a collection cycle per poll.

    `plugins` maps a MetricsSource `spec.type` to the factory of its source (default: `SOURCE_TYPES`); a type
    without one is skipped with a log line, as the anchor does.
    """

    def __init__(
        self,
        manager: Manager,
        store: HistoryStore,
        kill_switch: KillSwitchState,
        options: OperatorOptions,
        *,
        plugins: Mapping[str, SourceFactory] = SOURCE_TYPES,
    ) -> None:
        self.client = manager.client
        self.live = manager.api_reader
        self.store = store
        self.kill_switch = kill_switch
        self.options = options
        self.clock = options.clock
        self._factories = plugins
        self._lock = threading.Lock()
        self._plugins: dict[str, PolledSource] = {}
        self._collected: dict[str, dict[str, frozenset[str]]] = {}
        """source → profile → the resources its latest cycle delivered samples for."""
        self._applied: dict[str, _Applied] = {}

    # ------------------------------------------------------------------------------------------- reconcile

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        started = self.clock.monotonic()
        try:
            source: MetricsSource = self.client.get(MetricsSource, request.name)
        except NotFoundError:
            self._forget(request.name)
            return None
        poll = poll_interval_seconds(source.spec.config.poll_interval)
        if self.kill_switch.active:
            ctx.logger.info(
                "kill switch active, skipping collection",
                extra={"source": request.name, "kill_switch": True, "kill_switch_reason": self.kill_switch.reason},
            )
            return Result(requeue_after=poll)
        plugin = self._plugin(request.name, source.spec.type)
        if plugin is None:
            ctx.logger.info(
                "no plugin registered for source type, skipping",
                extra={"source": request.name, "type": source.spec.type},
            )
            return Result(requeue_after=poll)
        self._collect(ctx, source, plugin)
        return Result(requeue_after=max(MIN_REQUEUE, poll - (self.clock.monotonic() - started)))

    def _plugin(self, name: str, kind: str) -> PolledSource | None:
        with self._lock:
            plugin = self._plugins.get(name)
            if plugin is not None and plugin.kind == kind:
                return plugin
            factory = self._factories.get(kind)
            if factory is None:
                self._plugins.pop(name, None)
                return None
            plugin = self._plugins[name] = PolledSource(name, kind, factory(self.live), self.clock)
            return plugin

    def _forget(self, source: str) -> None:
        with self._lock:
            self._plugins.pop(source, None)
            self._collected.pop(source, None)

    # ----------------------------------------------------------------------------------------------- cycle

    def _collect(self, ctx: Context, source: MetricsSource, plugin: PolledSource) -> None:
        name = source.metadata.name or ""
        profiles: list[WorkloadProfile] = self.client.list(WorkloadProfile)
        cycle = _Cycle(name, self.clock.now(), self._fed_profiles(ctx, name, profiles))
        if not cycle.fed:
            ctx.logger.debug("no profile takes samples from this source", extra={"source": name})
            with self._lock:
                self._collected[name] = {}
            self._update_profiles_gauge(profiles, {})
            return
        pods, nodes = self._measured_pods(cycle.fed)
        cycle.attribution = attribute(self._fetch(ctx, cycle, plugin, nodes), pods)
        samples = cycle.attribution.samples
        if self.options.dry_run.measure:
            ctx.logger.info(
                "dry-run: would write samples and update WorkloadProfile status",
                extra={"source": name, "dry_run": True, "samples": len(samples), "profiles": len(cycle.fed)},
            )
            return
        if samples and not self._write(ctx, cycle, source):
            return  # the store is unavailable: skip the cycle, keep every profile's last status
        self._remember_collected(cycle)
        try:
            states = self._update_statuses(ctx, cycle)
        except StoreError as exc:
            ctx.logger.error("history store unavailable; statuses skipped: %s", exc, extra={"source": name})
            return
        self._update_profiles_gauge(profiles, states)

    def _fetch(self, ctx: Context, cycle: _Cycle, plugin: PolledSource, nodes: frozenset[str]) -> Sequence[UsageSample]:
        try:
            fetched = plugin.fetch(FetchTarget(cycle.now_ms, nodes))
        except BackingOffError as exc:
            ctx.logger.info("%s", exc, extra={"source": cycle.source})
            return ()
        except FetchError as exc:
            ctx.logger.error("failed to fetch metrics: %s", exc, extra={"source": cycle.source})
            for fed in cycle.fed:
                FETCH_ERRORS.inc({**self._attributes(fed.profile), "source": cycle.source})
            return ()
        for problem in fetched.problems:
            ctx.logger.info("partial fetch: %s", problem, extra={"source": cycle.source})
        return fetched.samples

    def _write(self, ctx: Context, cycle: _Cycle, source: MetricsSource) -> bool:
        """One store call for the whole cycle; False when the store is unavailable."""
        write = Cycle(
            f"{cycle.source}/{cycle.now_ms}",
            cycle.now_ms,
            cycle.attribution.samples,
            reservoir_size=source.spec.config.reservoir_size,
            retention=self._retention(ctx),
        )
        try:
            applied = self.store.write_cycle(write)
        except StoreError as exc:
            ctx.logger.error("history store unavailable; cycle skipped: %s", exc, extra={"source": cycle.source})
            return False
        if applied:
            by_name = {fed.name: fed for fed in cycle.fed}
            for profile, counts in cycle.attribution.observed.items():
                attributes = {**self._attributes(by_name[profile].profile), "source": cycle.source}
                for (container, resource), count in counts.items():
                    SAMPLES_COLLECTED.inc({**attributes, "resource": resource, "container": container}, count)
        return True

    def _retention(self, ctx: Context) -> datetime.timedelta | None:
        try:
            config: BallastConfig = self.client.get(BallastConfig, BALLAST_CONFIG_NAME)
        except NotFoundError:
            return None
        try:
            nanoseconds = parse_duration(config.spec.retention_window)
        except ValueError as exc:
            ctx.logger.error("BallastConfig retentionWindow ignored: %s", exc)
            return None
        return datetime.timedelta(microseconds=nanoseconds // 1000) if nanoseconds > 0 else None

    # ------------------------------------------------------------------------------------ fed profiles, pods

    def _fed_profiles(self, ctx: Context, source: str, profiles: Iterable[WorkloadProfile]) -> list[_Fed]:
        policies: dict[tuple[str, str, str], PolicyView | None] = {}
        fed: list[_Fed] = []
        for profile in profiles:
            status = profile.status
            if status is None or status.policy_ref is None or profile.metadata.deletion_timestamp:
                continue  # no policy: never measured; being deleted: its history is being purged
            ref = status.policy_ref
            key = (ref.kind, ref.namespace or "", ref.name)
            if key not in policies:
                policies[key] = self._policy(ref)
            policy = policies[key]
            resources = policy.fed_by(source) if policy is not None else frozenset()
            if policy is None or not resources:
                continue
            name = profile.metadata.name or ""
            try:
                check_measurement_hash(status.measurement_hash or "")
            except ValueError:
                ctx.logger.debug("profile has no identity yet, not measured", extra={"profile": name})
                continue
            if status.selector_labels is None:
                continue
            fed.append(_Fed(profile, policy, MeasuredProfile(name, status.measurement_hash or "", resources)))
        return fed

    def _policy(self, ref: PolicyRef) -> PolicyView | None:
        try:
            if ref.kind == "ClusterResourcePolicy":
                return PolicyView.from_spec(self.client.get(ClusterResourcePolicy, ref.name).spec)
            return PolicyView.from_spec(self.client.get(ResourcePolicy, ref.name, ref.namespace or None).spec)
        except NotFoundError:
            return None

    def _measured_pods(self, fed: Iterable[_Fed]) -> tuple[dict[PodKey, MeasuredPod], frozenset[str]]:
        pods: dict[PodKey, MeasuredPod] = {}
        nodes: set[str] = set()
        for profile in fed:
            selector = (profile.profile.status.selector_labels if profile.profile.status else None) or {}
            for pod in self.client.list(POD, index=(PROFILE_REF_INDEX, profile.name)):
                measured = measured_pod(pod, profile.measured, selector)
                if measured is None:
                    continue
                pods[(objects.namespace(pod), objects.name(pod))] = measured
                node = _node_name(pod)
                if node:
                    nodes.add(node)
        return pods, frozenset(nodes)

    # ------------------------------------------------------------------------------------------- statuses

    def _remember_collected(self, cycle: _Cycle) -> None:
        delivered = {
            fed.name: frozenset(resource for _, resource in cycle.attribution.observed.get(fed.name, {}))
            for fed in cycle.fed
        }
        with self._lock:
            self._collected[cycle.source] = delivered

    def _update_statuses(self, ctx: Context, cycle: _Cycle) -> dict[str, str]:
        """Recompute and apply every fed profile's status, reading history a chunk at a time; returns the states
        applied. Raises StoreError when the history cannot be read (statuses not yet applied are skipped)."""
        states: dict[str, str] = {}
        pending: list[tuple[_Plan, ProfileStatus, Future[None]]] = []
        plans = [self._plan(cycle, fed) for fed in cycle.fed]
        context = contextvars.copy_context()
        with ThreadPoolExecutor(STATUS_WRITERS, thread_name_prefix="collector-status") as writers:
            try:
                for chunk in _chunks(plans):
                    series = self._read(chunk)
                    for plan in chunk:
                        status, body = self._status(ctx, cycle, plan, series)
                        pending.append((plan, status, writers.submit(context.copy().run, self._apply, body)))
            finally:
                for plan, status, future in pending:
                    if self._applied_ok(ctx, plan.fed, future):
                        states[plan.fed.name] = status.state
                        self._after_apply(plan, status)
        return states

    def _plan(self, cycle: _Cycle, fed: _Fed) -> _Plan:
        uid = fed.profile.metadata.uid or ""
        with self._lock:
            applied = self._applied.get(fed.name)
        if applied is not None and applied.uid == uid:
            state = {container: dict(resources) for container, resources in applied.state.items()}
        else:
            containers = fed.profile.status.containers if fed.profile.status else None
            state = state_from_status([c.to_wire() for c in containers or ()], fed.policy)
        observed = cycle.attribution.observed.get(fed.name, {})
        fresh, quiet = series_to_read(state, observed, fed.policy.owned_by(cycle.source))
        return _Plan(fed, state, fresh, quiet)

    def _read(self, chunk: Sequence[_Plan]) -> dict[SeriesKey, Series]:
        fresh = [plan.key(pair) for plan in chunk for pair in plan.fresh]
        quiet = [plan.key(pair) for plan in chunk for pair in plan.quiet]
        series = {s.key: s for s in self.store.read_many(fresh)} if fresh else {}
        if quiet:  # quiet series are read with their sample times, to tell whether they went stale
            series.update((s.key, s) for s in self.store.read_many(quiet, with_times=True))
        return series

    def _status(
        self, ctx: Context, cycle: _Cycle, plan: _Plan, series: Mapping[SeriesKey, Series]
    ) -> tuple[ProfileStatus, dict[str, Any]]:
        fed = plan.fed
        self._recompute(cycle, plan, series)
        status = profile_status(plan.state, fed.policy)
        previous = _condition(fed.profile, READY)
        condition = ready_condition(fed.policy, self._collected_check(cycle, fed, previous), previous, cycle.now_text)
        body = {
            "apiVersion": WorkloadProfile.API_VERSION,
            "kind": WorkloadProfile.KIND,
            "metadata": {"name": fed.name},
            "status": {
                "containers": status.containers,
                "meetsThreshold": status.meets_threshold,
                "state": status.state,
                "conditions": [condition],
            },
        }
        ctx.logger.debug("profile status computed", extra={"profile": fed.name, "state": status.state})
        return status, body

    @staticmethod
    def _recompute(cycle: _Cycle, plan: _Plan, series: Mapping[SeriesKey, Series]) -> None:
        fed, state = plan.fed, plan.state
        for container, resource in plan.quiet:
            found = series[plan.key((container, resource))]
            if is_stale(found, cycle.now_ms, fed.policy):
                state[container].pop(resource, None)
                continue
            state[container][resource] = resource_status(
                found, fed.policy, cycle.now_ms, cycle.now_text, profile=fed.name
            )
        for container, resource in plan.fresh:
            found = series[plan.key((container, resource))]
            if not found.values:
                continue  # written this cycle, so only a concurrent purge empties it
            state.setdefault(container, {})[resource] = resource_status(
                found, fed.policy, cycle.now_ms, cycle.now_text, profile=fed.name
            )
        for container in [name for name, resources in state.items() if not resources]:
            del state[container]

    def _collected_check(self, cycle: _Cycle, fed: _Fed, condition: Mapping[str, Any] | None) -> Callable[[str], bool]:
        """Whether a resource got samples in the latest cycle of its own source (architecture.md §5 item 19)."""
        here = frozenset(resource for _, resource in cycle.attribution.observed.get(fed.name, {}))
        previous = previously_missing(condition)
        with self._lock:
            memory = {source: by_profile.get(fed.name) for source, by_profile in self._collected.items()}

        def collected(resource: str) -> bool:
            owner = fed.policy.owners.get(resource, "")
            if owner == cycle.source:
                return resource in here
            delivered = memory.get(owner)
            if delivered is not None:
                return resource in delivered
            if not cycle.source_exists(owner, self._source_exists):
                return False
            # Not polled by this process yet (a fresh leader): keep what the status said.
            return previous is not None and resource not in previous

        return collected

    def _source_exists(self, name: str) -> bool:
        try:
            self.client.get(MetricsSource, name)
        except NotFoundError:
            return False
        return True

    def _apply(self, body: dict[str, Any]) -> None:
        self.client.status().patch(body, body, patch_type=APPLY, field_manager=FIELD_MANAGER, force=True)

    @staticmethod
    def _applied_ok(ctx: Context, fed: _Fed, future: Future[None]) -> bool:
        try:
            future.result()
        except NotFoundError:
            return False  # deleted meanwhile
        except (APIStatusError, ConnectionError, TimeoutError) as exc:
            ctx.logger.error("failed to update WorkloadProfile status: %s", exc, extra={"profile": fed.name})
            return False
        return True

    def _after_apply(self, plan: _Plan, status: ProfileStatus) -> None:
        fed = plan.fed
        uid = fed.profile.metadata.uid or ""
        with self._lock:
            previous = self._applied.get(fed.name)
            self._applied[fed.name] = _Applied(uid, plan.state, status.meets_threshold)
        was = (
            previous.meets_threshold
            if previous is not None and previous.uid == uid
            else bool(fed.profile.status and fed.profile.status.meets_threshold)
        )
        if status.meets_threshold and not was:
            ref = fed.profile.status.policy_ref if fed.profile.status else None
            PROFILES_THRESHOLD_MET.inc({**self._attributes(fed.profile), "policy": ref.name if ref else ""})

    # ---------------------------------------------------------------------------------------------- gauge

    def _update_profiles_gauge(self, profiles: Sequence[WorkloadProfile], states: Mapping[str, str]) -> None:
        """`ballast_profiles`: WorkloadProfiles in the cache by identity and state (accruing/ready); the cycle's
        fresh states win over the cache, which may lag our own writes. Forgets profiles that are gone."""
        counts: dict[frozenset[tuple[str, str]], float] = {}
        names = set()
        for profile in profiles:
            name = profile.metadata.name or ""
            names.add(name)
            status = profile.status
            state = states.get(name) or (status.state if status else None)
            attributes = profile_attributes(None, status.tuple_labels if status else None)
            attributes["state"] = "ready" if state == SUFFICIENT else "accruing"
            key = frozenset(attributes.items())
            counts[key] = counts.get(key, 0.0) + 1.0
        PROFILES.replace((dict(key), value) for key, value in counts.items())
        with self._lock:
            for gone in [name for name in self._applied if name not in names]:
                del self._applied[gone]

    @staticmethod
    def _attributes(profile: WorkloadProfile) -> dict[str, str]:
        return profile_attributes(profile.metadata.name, profile.status.tuple_labels if profile.status else None)


def _chunks(plans: Sequence[_Plan]) -> Iterable[list[_Plan]]:
    chunk: list[_Plan] = []
    size = 0
    for plan in plans:
        chunk.append(plan)
        size += len(plan.fresh) + len(plan.quiet)
        if size >= READ_CHUNK:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


def _condition(profile: WorkloadProfile, type_: str) -> dict[str, Any] | None:
    for condition in (profile.status.conditions if profile.status else None) or ():
        if condition.type == type_:
            return condition.to_wire()
    return None


def _node_name(pod: Any) -> str:
    if isinstance(pod, Mapping):
        return str((pod.get("spec") or {}).get("nodeName") or "")
    return str(getattr(getattr(pod, "spec", None), "node_name", "") or "")


def setup(
    manager: Manager, *, store: HistoryStore, kill_switch: KillSwitchState, options: OperatorOptions
) -> Controller:
    """Register the `metricscollector` controller: one reconcile per MetricsSource, requeued at its pollInterval.

    Spec changes of a MetricsSource start a cycle at once; status writes and profile or pod events never do —
    a profile is picked up at its sources' next poll. One worker, as the anchor: cycles never overlap.
    """
    collector = MetricsCollector(manager, store, kill_switch, options)
    return (
        Builder(manager)
        .for_(MetricsSource, predicates=[generation_changed()])
        .named(NAME)
        .with_options(max_concurrent_reconciles=1)
        .complete(collector)
    )
