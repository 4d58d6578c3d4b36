"""Collection (`metricscollector`): a cycle per poll — each MetricsSource fetched once and written once, then one
status per profile.

The reconcile key is a MetricsSource (cluster-scoped), driven by `Result(requeue_after=pollInterval)` — the
interval is honoured, not capped at 60 s (docs/design.md, difference 1). A cycle (difference 19):

1. the profiles the source feeds: WorkloadProfiles (cache) whose policy (`status.policyRef`, defaults applied)
   has a `metrics[]` entry with `source` = this MetricsSource; profiles without a policy are never measured;
2. one fetch (`internal/metricsources`, one backoff per source), for the nodes hosting those profiles' pods;
3. attribution through the cached pod, failing closed (`collection.attribution`), and every sample of every fed
   profile written in ONE `store.write_cycle` (cycle id `<source>/<cycle time ms>`, so a retry is a no-op;
   differences 11 and 12 — reservoir from the source, retention from `BallastConfig ballast`);
4. per fed profile: the series that are due are read back and their statistics → readiness → recommendations
   recomputed, the others keep their last computation (`collection.refresh`); a recommended value of 0 or above
   the largest allocatable of the Nodes the profile's pods ran on (each Node read live, at most every 10 minutes)
   is left out and named in `Ready` (difference 25, `collection.ceilings`); the status is applied with
   server-side apply on the status subresource as field manager `ballast-collector`, which owns only
   `containers`, `meetsThreshold`, `state` and the `Ready` condition — and only when it differs from the status
   this process last applied.

Sources due together share a cycle (difference 19, `collection.schedule`): another valid source of the same
pollInterval whose next poll is due within a tenth of it is collected in the running cycle — fetched, attributed
and written as its own store cycle, its series recomputed under its own stamp — and each fed profile gets one
status from all of them. That source's own reconcile, a moment later, only requeues for the rest of its interval,
so the two stay aligned: the default preset's two sources make one status write per profile per poll, not two. A
source never collected by this process, or whose object or spec changed, is polled on its own; one taken with
another cycle whose fetch or write fails is left to its own reconcile; a cycle the store refuses counts as
delivering nothing (`Ready` says so).

Statistics are cached within a documented tolerance (benchmarks/RESULTS.md: a cycle over 10k enrolled pods costs
≤ 2 s CPU). A series is recomputed when it first appears, when the policy, the profile's history identity or the
MetricsSource changed, once the samples written since reach 2 % of the series, at least every 15 minutes
(`RefreshPolicy`), and while it accrues (below `minDataPoints` or younger than `minTimeSpan`) at the cycle both
gates may have opened, so readiness flips at the exact cycle (docs/design.md, difference 78; the OOM watcher's
samples count as the collector's own). Otherwise the `usageStats` entry, readiness and recommendation shown are
those of the last computation, whose `lastUpdated` they carry: computed at most 15 minutes ago over a sample set
that differs from the current one by fewer than 2 % of its samples — each percentile within about two percentile
points of its current value (p95 shown: between the current p93 and p97), `samples` and `timeSpan` as of
`lastUpdated`.

The cycle's sequence is pure code in `ballast.internal.collection` (`fed_profiles`, `measured_pods`, `attribute`,
`StatusRun`); this module reads the cache, fetches, writes the store, applies the statuses and counts the metrics,
like `controllers/resize.py`.

An invalid MetricsSource (difference 26: a type without a plugin, a pollInterval that is not a Go duration longer
than 0) is not polled: its cycle fetches nothing and writes no sample, and every profile it feeds, whichever
source's cycle writes its status, gets `Ready=False` with reason `InvalidSource` naming the problems; it is
logged at each poll (its `Valid` condition and event are the `configstatus-metricssource` lane's). An invalid
BallastConfig is not used for the retention window either.

Kill switch: no fetch, no writes, requeue at the poll interval. `--dry-run-measure`: fetch and attribute, but no
sample and no status is written. A store outage keeps the last status; the cycle is held in memory
(`collection.PendingCycles`, bounded by `--history-buffer-bytes`) and written, oldest first and exactly once, as
soon as a primary answers again — after a Sentinel failover too (docs/design.md, difference 67).

In-process state (leader only, rebuilt by a fresh leader within one cycle of each source, `CollectionMemory`):
each source's plugin, backoff and last collection (`PollSchedule`), which resources each source's latest cycle
delivered per profile (for `Ready`), and per profile the last status applied with the memo of each series' last
computation (so one source's cycle carries the other sources' entries without reading a lagging cache, and reuses
statistics).
"""

from __future__ import annotations

import contextvars
import datetime
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, Literal

from ballast.api.ballast.v1 import BallastConfig, ClusterResourcePolicy, MetricsSource, ResourcePolicy, WorkloadProfile
from ballast.api.ballast.v1.workloadprofile import SUFFICIENT
from ballast.internal.collection import (
    CollectionCycle,
    CollectionMemory,
    FedProfile,
    HeldCycle,
    LoadedPolicy,
    MeasuredPod,
    MeasuredPodMemo,
    PendingCycles,
    PodKey,
    PolicyKey,
    Polled,
    PollSchedule,
    RefreshPolicy,
    SeriesReads,
    StatusRun,
    StatusWrite,
    attribute,
    fed_profiles,
    measured_pods,
    node_allocatable,
    nodes_by_profile,
    policy_keys,
    poll_interval_seconds,
    retention_window,
)
from ballast.internal.enrollment import BALLAST_CONFIG_NAME, PROFILE_REF_INDEX
from ballast.internal.enrollment.config import validate_ballast_config
from ballast.internal.history import (
    Cycle,
    HistoryStore,
    Series,
    SeriesKey,
    StoreError,
    StoreUnavailableError,
)
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.metricsources import (
    SOURCE_TYPES,
    BackingOffError,
    FetchError,
    FetchTarget,
    PolledSource,
    SourceFactory,
    UsageSample,
    validate_metrics_source,
)
from ballast.internal.operator import OperatorOptions
from ballast.internal.policy import PolicyMemo
from ballast.internal.telemetry import (
    FETCH_ERRORS,
    HISTORY_BUFFERED_BYTES,
    HISTORY_CYCLES_BUFFERED,
    HISTORY_CYCLES_DROPPED,
    HISTORY_PRIMARY,
    HISTORY_WRITES_RETRIED,
    PROFILES,
    PROFILES_THRESHOLD_MET,
    SAMPLES_COLLECTED,
    STORE_ERRORS,
    profile_attributes,
)
from ballast.runtime import (
    APPLY,
    APIStatusError,
    Builder,
    Context,
    Controller,
    EnqueueRequestsFromMapFunc,
    Manager,
    NotFoundError,
    Request,
    Result,
    objects,
)
from ballast.runtime.log import get_logger
from ballast.runtime.predicate import generation_changed
from ballast.runtime.source import Channel

NAME = "metricscollector"
FIELD_MANAGER = "ballast-collector"
POD = "v1/Pod"
NODE = "v1/Node"
PROFILE_KIND = f"{WorkloadProfile.GROUP}/{WorkloadProfile.VERSION}/{WorkloadProfile.KIND}"
MIN_REQUEUE = 1.0
WriteOutcome = Literal["written", "held", "refused"]
WRITTEN: WriteOutcome = "written"
HELD: WriteOutcome = "held"
REFUSED: WriteOutcome = "refused"
STATUS_WRITERS = 4
"""Status patches in flight at once (I/O concurrency while the next chunk's statistics are computed); 0 applies
each in the cycle's thread (an in-memory API server, as the fleet simulator's, answers at once)."""


@dataclass(frozen=True, slots=True)
class _Measured:
    """One source's part of a cycle, fetched and attributed: what is written, and the pods and nodes measured."""

    source: MetricsSource
    cycle: CollectionCycle
    pods: dict[PodKey, MeasuredPod]
    nodes: frozenset[str]
    taken: bool = False
    """Taken with the running source's cycle (a failure of its own then leaves the cycle to the others)."""


class MetricsCollector:
    """Reconciles one MetricsSource: a collection cycle per poll.

    `plugins` maps a MetricsSource `spec.type` to the factory of its source (default: `SOURCE_TYPES`); a source
    of another type is invalid (the Go operator skips it with a log line and its profiles stay Ready). `refresh`
    sets when statistics are recomputed rather than reused (see the module docstring). `owns` (a profile's name →
    whether this collector measures it; every profile when None) splits a fleet's profiles between collectors that
    each write their own history: the fleet simulator's shards (docs/simulate.md, "Two processes").
    """

    def __init__(
        self,
        manager: Manager,
        store: HistoryStore,
        kill_switch: KillSwitchState,
        options: OperatorOptions,
        *,
        plugins: Mapping[str, SourceFactory] = SOURCE_TYPES,
        refresh: RefreshPolicy | None = None,
        status_writers: int = STATUS_WRITERS,
        memory: CollectionMemory | None = None,
        owns: Callable[[str], bool] | None = None,
    ) -> None:
        self.client = manager.client
        self.live = manager.api_reader
        self.store = store
        self.kill_switch = kill_switch
        self.options = options
        self.clock = options.clock
        self.refresh = refresh or RefreshPolicy()
        self.memory = memory if memory is not None else CollectionMemory()
        self.pending = PendingCycles(options.history_buffer_bytes)
        self.schedule = PollSchedule()
        self._write_lock = threading.Lock()
        self._primary: str | None = None
        self._factories = plugins
        self._owns = owns
        self._lock = threading.Lock()
        self._plugins: dict[str, PolledSource] = {}
        self._typed_profiles: dict[str, tuple[Any, WorkloadProfile]] = {}
        """Profile name → (the cached object, the typed model made of it) as of the last cycle."""
        self._loaded_policies = PolicyMemo[LoadedPolicy]()
        """Each policy's view, once per version of the object."""
        self._measured: dict[str, MeasuredPodMemo] = {}
        """Per source: each cached pod as its last cycle measured it."""
        # Kept across cycles (threads start on first use and idle between polls; they end with the collector).
        # None (`status_writers=0`): each status is applied in the cycle's thread, as soon as it is computed.
        self._writers = (
            ThreadPoolExecutor(status_writers, thread_name_prefix="collector-status") if status_writers > 0 else None
        )

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
        problems = self._problems(source)
        if problems:
            ctx.logger.warning(
                "MetricsSource is invalid, not polled: %s", "; ".join(problems),
                extra={"source": request.name, "problems": problems},
            )  # fmt: skip
            with self._lock:
                self._plugins.pop(request.name, None)
            self._collect(ctx, [(source, None)])  # no fetch: the profiles it feeds say in Ready why they get nothing
            return Result(requeue_after=poll)
        plugin = self._plugin(request.name, source.spec.type)
        if plugin is None:
            ctx.logger.info(
                "no plugin registered for source type, skipping",
                extra={"source": request.name, "type": source.spec.type},
            )
            return Result(requeue_after=poll)
        polled = self._polled(source)
        remaining = self.schedule.remaining(polled, started)
        if remaining is not None:  # another source's cycle collected it for this poll
            ctx.logger.debug("collected with another source's cycle", extra={"source": request.name})
            return Result(requeue_after=max(MIN_REQUEUE, remaining))
        self._collect(ctx, [(source, plugin), *self._due_with(polled, started)], scheduled=(polled, started))
        return Result(requeue_after=max(MIN_REQUEUE, poll - (self.clock.monotonic() - started)))

    @staticmethod
    def _polled(source: MetricsSource) -> Polled:
        interval = poll_interval_seconds(source.spec.config.poll_interval)
        return Polled(objects.name(source), source.metadata.uid or "", source.metadata.generation, interval)

    def _due_with(self, running: Polled, now: float) -> list[tuple[MetricsSource, PolledSource]]:
        """The other valid sources due within the window of this cycle (`collection.schedule`), with their plugins."""
        candidates = {
            objects.name(source): source
            for source in self.client.list(MetricsSource).items
            if not self._problems(source)
        }
        together = self.schedule.due_with(running, [self._polled(s) for s in candidates.values()], now)
        group = []
        for polled in together:
            source = candidates[polled.name]
            plugin = self._plugin(polled.name, source.spec.type)
            if plugin is not None:
                group.append((source, plugin))
        return group

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

    def _problems(self, source: MetricsSource) -> list[str]:
        """What makes `source` unusable here (difference 26): its type must be one of this collector's plugins."""
        return validate_metrics_source(source.spec, self._factories.keys())

    def _forget(self, source: str) -> None:
        with self._lock:
            self._plugins.pop(source, None)
            self._measured.pop(source, None)
        self.memory.forget_source(source)
        self.schedule.forget(source)

    # ----------------------------------------------------------------------------------------------- cycle

    def _collect(
        self,
        ctx: Context,
        group: Sequence[tuple[MetricsSource, PolledSource | None]],
        scheduled: tuple[Polled, float] | None = None,
    ) -> None:
        """One cycle of the sources in `group` at one time — the running source first, then those taken with it:
        each fetched, attributed and written on its own, then one status per fed profile. Without a plugin (an
        invalid source) nothing is fetched and the statuses are still judged. `scheduled` (the running source and
        the reconcile's monotonic start): record in the schedule the sources polled — a taken source whose fetch or
        write failed is left out, so that its own reconcile polls it."""
        taken: list[Polled] = []
        try:
            self._collect_group(ctx, group, taken)
        finally:
            if scheduled is not None:
                running, at = scheduled
                self.schedule.collected(running, taken, at)

    def _collect_group(
        self, ctx: Context, group: Sequence[tuple[MetricsSource, PolledSource | None]], taken: list[Polled]
    ) -> None:
        profiles = self._profiles()
        measured = self._measure_all(ctx, group, profiles, taken)
        if not measured:
            self._update_profiles_gauge(profiles, {})
            return
        if self.options.dry_run.measure:
            for part in measured:
                ctx.logger.info(
                    "dry-run: would write samples and update WorkloadProfile status",
                    extra={"source": part.cycle.source, "dry_run": True, "profiles": len(part.cycle.fed),
                           "samples": len(part.cycle.attribution.samples)},
                )  # fmt: skip
            return
        written = self._write_all(ctx, measured, taken)
        if not written:
            return  # the store is unavailable (or refused every cycle): every profile keeps its last status
        for part in written:
            self._raise_ceilings(ctx, part.cycle, part.pods, part.nodes)
        cycles = [part.cycle for part in written]
        try:
            states = self._update_statuses(ctx, cycles)
        except StoreError as exc:
            names = ", ".join(cycle.source for cycle in cycles)
            ctx.logger.error("history store unavailable; statuses skipped: %s", exc, extra={"source": names})
            for cycle in cycles:
                STORE_ERRORS.inc({"source": cycle.source, "operation": "read"})
            return
        self._update_profiles_gauge(profiles, states)

    def _measure_all(
        self,
        ctx: Context,
        group: Sequence[tuple[MetricsSource, PolledSource | None]],
        profiles: Sequence[WorkloadProfile],
        taken: list[Polled],
    ) -> list[_Measured]:
        """Each source's fetch and attribution, for the sources that feed a profile; the sources taken with the
        running one are added to `taken` as they are polled (one that fails is left to its own reconcile)."""
        policies = self._policies(policy_keys(profiles))
        now = self.clock.now()
        listed: dict[str, list[Any]] = {}
        measured: list[_Measured] = []
        for position, (source, plugin) in enumerate(group):
            try:
                found = self._measure(ctx, source, plugin, profiles, policies, now, listed)
            except Exception as exc:  # a taken source's own failure must not cost the running one its cycle
                if position == 0:
                    raise
                self._left_to_itself(ctx, source, exc)
                continue
            if position > 0:
                taken.append(self._polled(source))
            if found is not None:
                measured.append(replace(found, taken=position > 0))
        return measured

    def _write_all(self, ctx: Context, measured: Sequence[_Measured], taken: list[Polled]) -> list[_Measured]:
        """Write each source's cycle; returns those written — none while the store is unavailable (a held cycle
        waits, and so do the statuses). A refused cycle is lost: its source delivered nothing this cycle, and the
        profiles get their status from the others. A taken source whose write fails otherwise is left out of
        `taken`, to its own reconcile."""
        written: list[_Measured] = []
        held = False
        for part in measured:
            try:
                outcome = self._write(ctx, part.cycle, part.source) if part.cycle.attribution.samples else WRITTEN
            except Exception as exc:  # as in `_measure_all`: only the running source's failure fails the cycle
                if not part.taken:
                    raise
                self._left_to_itself(ctx, part.source, exc)
                taken[:] = [polled for polled in taken if polled.name != part.cycle.source]
                continue
            held = held or outcome == HELD
            if outcome != HELD:
                delivered = part.cycle.delivered() if outcome == WRITTEN else {}
                self.memory.remember_delivered(part.cycle.source, delivered)
            if outcome == WRITTEN:
                written.append(part)
        return [] if held else written

    @staticmethod
    def _left_to_itself(ctx: Context, source: MetricsSource, error: Exception) -> None:
        ctx.logger.error("source taken with this cycle failed; it is polled on its own: %s", error,
                         exc_info=error, extra={"source": objects.name(source)})  # fmt: skip

    def _measure(
        self,
        ctx: Context,
        source: MetricsSource,
        plugin: PolledSource | None,
        profiles: Sequence[WorkloadProfile],
        policies: Mapping[PolicyKey, LoadedPolicy | None],
        now: datetime.datetime,
        listed: dict[str, list[Any]],
    ) -> _Measured | None:
        """One source's part of a cycle: its fed profiles, their pods (listed once per cycle, in `listed`), the
        fetch and attribution; None when it feeds no profile."""
        name = source.metadata.name or ""
        fed = fed_profiles(source, profiles, policies)
        for unmeasured in fed.without_identity:
            ctx.logger.debug("profile has no identity yet, not measured", extra={"profile": unmeasured})
        cycle = CollectionCycle(name, now, fed.profiles)
        if not cycle.fed:
            ctx.logger.debug("no profile takes samples from this source", extra={"source": name})
            self.memory.remember_delivered(name, {})
            with self._lock:
                self._measured.pop(name, None)
            return None
        with self._lock:
            memo = self._measured.setdefault(name, MeasuredPodMemo())
        for profile in cycle.fed:
            if profile.name not in listed:
                listed[profile.name] = self._pods(profile.name)
        pods, nodes = measured_pods(cycle.fed, listed, memo)
        cycle.attribution = attribute(self._fetch(ctx, cycle, plugin, nodes) if plugin is not None else (), pods)
        return _Measured(source, cycle, pods, nodes)

    def _fetch(
        self, ctx: Context, cycle: CollectionCycle, plugin: PolledSource, nodes: frozenset[str]
    ) -> Sequence[UsageSample]:
        try:
            fetched = plugin.fetch(FetchTarget(cycle.now_ms, nodes))
        except BackingOffError as exc:  # the failure that started it was logged with the next attempt
            ctx.logger.debug("%s", exc, extra={"source": cycle.source})
            return ()
        except FetchError as exc:
            next_attempt = plugin.backoff.remaining()
            ctx.logger.error("failed to fetch metrics: %s; next attempt in %.0fs", exc, next_attempt,
                             extra={"source": cycle.source})  # fmt: skip
            for fed in cycle.fed:
                FETCH_ERRORS.inc({**self._attributes(fed.profile), "source": cycle.source})
            return ()
        for problem in fetched.problems:
            ctx.logger.info("partial fetch: %s", problem, extra={"source": cycle.source})
        return fetched.samples

    def _write(self, ctx: Context, cycle: CollectionCycle, source: MetricsSource) -> WriteOutcome:
        """One store call for the whole cycle, after the cycles held from earlier ones: WRITTEN; HELD when the store
        is unavailable (the cycle waits, and the profiles keep their last status); REFUSED (the cycle is lost)."""
        write = Cycle(
            cycle.cycle_id,
            cycle.now_ms,
            cycle.attribution.samples,
            reservoir_size=source.spec.config.reservoir_size,
            retention=self._retention(ctx),
        )
        by_name = {fed.name: fed for fed in cycle.fed}
        attributes = {profile: self._attributes(by_name[profile].profile) for profile in cycle.attribution.observed}
        counts = tuple(
            ({**attributes[profile], "source": cycle.source, "resource": resource, "container": container}, count)
            for profile, observed in cycle.attribution.observed.items()
            for (container, resource), count in observed.items()
        )
        held = HeldCycle(write, cycle.source, cycle.attribution.observed, counts)
        with self._write_lock:
            if not self._flush(ctx):  # still unavailable: this cycle waits behind the held ones
                STORE_ERRORS.inc({"source": cycle.source, "operation": "write"})
                self._hold(ctx, held)
                return HELD
            try:
                applied = self.store.write_cycle(write)
            except StoreUnavailableError as exc:
                ctx.logger.error("history store unavailable; cycle held: %s", exc, extra={"source": cycle.source})
                STORE_ERRORS.inc({"source": cycle.source, "operation": "write"})
                self._hold(ctx, held)
                return HELD
            except StoreError as exc:
                ctx.logger.error("history store refused the cycle; skipped: %s", exc, extra={"source": cycle.source})
                STORE_ERRORS.inc({"source": cycle.source, "operation": "write"})
                return REFUSED
            self._written(held, applied)
        return WRITTEN

    def _flush(self, ctx: Context) -> bool:
        """Write the held cycles, oldest first; False when the store still does not acknowledge them."""
        while (held := self.pending.oldest()) is not None:
            try:
                applied = self.store.write_cycle(held.cycle)
            except StoreUnavailableError as exc:
                ctx.logger.info("history store still unavailable; %d cycles held: %s", self.pending.cycles, exc)
                return False
            except StoreError as exc:
                ctx.logger.error("history store refused a held cycle; dropped: %s", exc, extra={"source": held.source})
                HISTORY_CYCLES_DROPPED.inc({"source": held.source, "reason": "refused"})
                self.pending.written()
                continue
            HISTORY_WRITES_RETRIED.inc({"source": held.source})
            self.pending.written()
            self._written(held, applied=True)
            ctx.logger.info(
                "held cycle written", extra={"source": held.source, "cycle": held.cycle.cycle_id, "applied": applied}
            )
        self._buffer_gauges()
        return True

    def _hold(self, ctx: Context, held: HeldCycle) -> None:
        for dropped in self.pending.hold(held):
            ctx.logger.error(
                "history buffer full (--history-buffer-bytes); cycle dropped",
                extra={"source": dropped.source, "cycle": dropped.cycle.cycle_id},
            )
            HISTORY_CYCLES_DROPPED.inc({"source": dropped.source, "reason": "buffer_full"})
        self._buffer_gauges()

    def drop_held(self, reason: str = "stopped") -> int:
        """Forget the held cycles (leadership lost, or the process stopping: they live in this leader's memory
        only); each is counted in `ballast_history_cycles_dropped` and the loss is logged. Returns how many."""
        with self._write_lock:
            dropped = self.pending.clear()
        for held in dropped:
            HISTORY_CYCLES_DROPPED.inc({"source": held.source, "reason": reason})
        if dropped:
            get_logger(NAME).error(
                "%d collection cycles held for the history store are lost (%s)", len(dropped), reason,
                extra={"cycles": [held.cycle.cycle_id for held in dropped]},
            )  # fmt: skip
        self._buffer_gauges()
        return len(dropped)

    def _buffer_gauges(self) -> None:
        HISTORY_CYCLES_BUFFERED.set({}, self.pending.cycles)
        HISTORY_BUFFERED_BYTES.set({}, self.pending.bytes)

    def _written(self, held: HeldCycle, applied: bool) -> None:
        """Record a cycle the store acknowledged. `applied` is False for a cycle id already applied: a held cycle
        whose first attempt reached the primary but not its replicas — recorded now, as it never was before."""
        self._primary_gauge()
        if not applied:
            return
        self.memory.samples_written(held.observed, held.cycle.at_ms)
        for labels, count in held.counts:
            SAMPLES_COLLECTED.inc(labels, count)

    def _primary_gauge(self) -> None:
        primary = getattr(self.store, "primary", None)
        current = primary() if callable(primary) else None
        if current == self._primary:
            return
        if self._primary is not None:
            HISTORY_PRIMARY.set({"address": self._primary}, 0)
        if current is not None:
            HISTORY_PRIMARY.set({"address": current}, 1)
        self._primary = current

    def _retention(self, ctx: Context) -> datetime.timedelta | None:
        try:
            config: BallastConfig = self.client.get(BallastConfig, BALLAST_CONFIG_NAME)
        except NotFoundError:
            return None
        problems = validate_ballast_config(config.spec)
        if problems:  # not used (difference 26): samples are kept until the reservoir pushes them out
            ctx.logger.info("BallastConfig is invalid, no retention window applied", extra={"problems": problems})
            return None
        try:
            return retention_window(config.spec.retention_window)
        except ValueError as exc:
            ctx.logger.error("BallastConfig retentionWindow ignored: %s", exc)
            return None

    # ------------------------------------------------------------------------------------------- policies

    def _policies(self, keys: set[PolicyKey]) -> dict[PolicyKey, LoadedPolicy | None]:
        """Each policy's view and stamp (kind, namespace, name, uid, generation) from the cache; None: not found."""
        return {key: self._policy(*key) for key in keys}

    def _policy(self, kind: str, namespace: str, name: str) -> LoadedPolicy | None:
        policy: ClusterResourcePolicy | ResourcePolicy
        try:
            if kind == "ClusterResourcePolicy":
                policy = self.client.get(ClusterResourcePolicy, name)
            else:
                policy = self.client.get(ResourcePolicy, name, namespace or None)
        except NotFoundError:
            return None
        return self._loaded_policies.get(policy, LoadedPolicy.of)  # once per version: defaulting a spec is not cheap

    def _profiles(self) -> list[WorkloadProfile]:
        """The cached WorkloadProfiles this collector owns (`owns`), typed. A profile the cache still holds as the
        same object as at the last cycle keeps the typed model made of it then: the cache replaces an object on
        every change and never edits one in place, and a cycle only reads profiles (a fleet's worth of validation
        saved per poll)."""
        typed: dict[str, tuple[Any, WorkloadProfile]] = {}
        profiles: list[WorkloadProfile] = []
        for cached in self.client.list(PROFILE_KIND).items:
            wire = objects.stored(cached)
            name = objects.name(wire)
            if self._owns is not None and not self._owns(name):
                continue
            known = self._typed_profiles.get(name)
            profile = known[1] if known is not None and known[0] is wire else WorkloadProfile.model_validate(wire)
            typed[name] = (wire, profile)
            profiles.append(profile)
        self._typed_profiles = typed
        return profiles

    def _pods(self, profile: str) -> list[Any]:
        """The cached pods carrying the profile's `profile-ref`."""
        return self.client.list(POD, index=(PROFILE_REF_INDEX, profile)).items

    def _raise_ceilings(
        self, ctx: Context, cycle: CollectionCycle, pods: Mapping[PodKey, MeasuredPod], nodes: frozenset[str]
    ) -> None:
        """Raise each fed profile's recommendation ceilings (`collection.ceilings`) to the allocatable of the nodes
        its pods run on; a node is read live, at most once per `NODE_REFRESH_MS` (no cluster-wide Node watch)."""
        ceilings = self.memory.ceilings
        for node in ceilings.due(nodes, cycle.now_ms):
            try:
                allocatable = node_allocatable(self.live.get(NODE, node))
            except NotFoundError:
                allocatable = {}
            except (APIStatusError, ConnectionError, TimeoutError) as exc:
                ctx.logger.error("cannot read node allocatable: %s", exc, extra={"node": node})
                allocatable = {}
            ceilings.remember_node(node, allocatable, cycle.now_ms)
        by_profile = nodes_by_profile(pods)
        for fed in cycle.fed:
            ceilings.raise_for(fed.name, fed.uid, by_profile.get(fed.name, ()))

    # ------------------------------------------------------------------------------------------- statuses

    def _update_statuses(self, ctx: Context, cycles: Sequence[CollectionCycle]) -> dict[str, str]:
        """Apply every fed profile's status that changed (`StatusRun`), reading history a chunk at a time; returns
        the states of the profiles applied or unchanged. Raises StoreError when the history cannot be read
        (statuses not yet applied are skipped)."""
        listed: list[MetricsSource] = self.client.list(MetricsSource).items
        invalid = {
            objects.name(source): "; ".join(problems) for source in listed if (problems := self._problems(source))
        }
        sources = {objects.name(source) for source in listed} - invalid.keys()
        run = StatusRun(cycles, self.memory, self.refresh, sources, invalid)
        states: dict[str, str] = {}
        pending: list[tuple[StatusWrite, Future[None] | None]] = []
        context = contextvars.copy_context()
        try:
            for reads in run.reads():
                for write in run.statuses(reads, self._read(reads)):
                    future = self._submit(context, write.body) if write.changed else None
                    pending.append((write, future))
        finally:
            for write, future in pending:
                if future is None or self._applied_ok(ctx, write.fed, future):
                    states[write.fed.name] = write.status.state
                    if run.applied(write):
                        self._threshold_met(write.fed.profile)
        summary = run.summary([write for write, _ in pending])
        sources_collected = ", ".join(cycle.source for cycle in cycles)
        ctx.logger.debug("collection cycle statuses", extra={"source": sources_collected, **summary})
        return states

    def _read(self, reads: SeriesReads) -> dict[SeriesKey, Series]:
        series = {s.key: s for s in self.store.read_many(reads.without_times)} if reads.without_times else {}
        if reads.with_times:
            series.update((s.key, s) for s in self.store.read_many(reads.with_times, with_times=True))
        return series

    def _submit(self, context: contextvars.Context, body: dict[str, Any]) -> Future[None]:
        """The status patch of `body`, in flight on a writer thread (or applied here, without writers)."""
        if self._writers is not None:
            return self._writers.submit(context.copy().run, self._apply, body)
        done: Future[None] = Future()
        try:
            self._apply(body)
        except Exception as exc:  # handed to `_applied_ok` exactly as a writer thread's failure would be
            done.set_exception(exc)
        else:
            done.set_result(None)
        return done

    def _apply(self, body: dict[str, Any]) -> None:
        self.client.status().patch(body, body, patch_type=APPLY, field_manager=FIELD_MANAGER, force=True)

    @staticmethod
    def _applied_ok(ctx: Context, fed: FedProfile, future: Future[None]) -> bool:
        try:
            future.result()
        except NotFoundError:
            return False  # deleted meanwhile
        except (APIStatusError, ConnectionError, TimeoutError) as exc:
            ctx.logger.error("failed to update WorkloadProfile status: %s", exc, extra={"profile": fed.name})
            return False
        return True

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
        self.memory.keep_only(names)

    def _threshold_met(self, profile: WorkloadProfile) -> None:
        ref = profile.status.policy_ref if profile.status else None
        PROFILES_THRESHOLD_MET.inc({**self._attributes(profile), "policy": ref.name if ref else ""})

    @staticmethod
    def _attributes(profile: WorkloadProfile) -> dict[str, str]:
        return profile_attributes(profile.metadata.name, profile.status.tuple_labels if profile.status else None)


def setup(
    manager: Manager,
    *,
    store: HistoryStore,
    kill_switch: KillSwitchState,
    options: OperatorOptions,
    refresh: RefreshPolicy | None = None,
    memory: CollectionMemory | None = None,
) -> Controller:
    """Register the `metricscollector` controller: one reconcile per MetricsSource, requeued at its pollInterval.

    Spec changes of a MetricsSource start a cycle at once; status writes and profile or pod events never do —
    a profile is picked up at its sources' next poll. One worker, as the Go operator: cycles never overlap.
    `refresh` tunes when statistics are recomputed (default: 2 % new samples, 15 minutes); `memory`: the lane's
    memory, shared with the OOM watcher, which writes to the same history (`oom.setup`).
    """
    collector = MetricsCollector(manager, store, kill_switch, options, refresh=refresh, memory=memory)
    manager.add(_DropHeldOnStop(collector))

    def every_source(_: object) -> list[Request]:
        return [Request("", objects.name(source)) for source in manager.client.list(MetricsSource)]

    return (
        Builder(manager)
        .for_(MetricsSource, predicates=[generation_changed()])
        .watches_source(Channel(kill_switch.resumptions(), EnqueueRequestsFromMapFunc(every_source)))
        .named(NAME)
        .with_options(max_concurrent_reconciles=1)
        .complete(collector)
    )


class _DropHeldOnStop:
    """Leader-only, as the collector: when leadership ends or the process stops, the cycles still held for the
    store are lost — counted (`reason="stopped"`) and logged, not silently gone (docs/design.md, difference 67)."""

    def __init__(self, collector: MetricsCollector) -> None:
        self._collector = collector

    def start(self, stop: threading.Event) -> None:
        stop.wait()
        self._collector.drop_held()
