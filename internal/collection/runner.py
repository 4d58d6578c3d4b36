"""The status half of a cycle, in order: plan every fed profile, read its due series a chunk at a time, recompute,
assemble each status and its server-side apply body — the caller only reads the store and applies the bodies.
A cycle may collect several sources at once (`schedule`): each fed profile still gets one status.

    run = StatusRun(cycles, memory, refresh, sources)  # the sources' cycles at one time; sources: the valid ones
    for reads in run.reads():                          # about READ_CHUNK series per chunk
        series = store reads of reads.without_times and reads.with_times
        for write in run.statuses(reads, series):      # one per fed profile; write.changed: apply write.body
            ...
    newly_met = run.applied(write)                     # once the body is in the API server (or was unchanged)

What a status is made of is the business of `plan`, `status`, `ceilings` and `ready`; this module only sequences
them and keeps the leader-local memory (`CollectionMemory`) in step with what was applied. The ceilings a status
is bounded by are the memory's (`memory.ceilings`, raised by the caller before the run).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ballast.api.ballast.v1.workloadprofile import READY
from ballast.internal.history import Series, SeriesKey

from .cycle import CollectionCycle, FedProfile
from .memory import CollectionMemory, ProfileMemory
from .plan import StatusPlan, chunks, plan_status, recompute
from .profile_ready import collected_in_latest_cycles, ready_condition
from .refresh import RefreshPolicy, SeriesMemo
from .status import (
    ContainerState,
    Pair,
    ProfileStatus,
    profile_condition,
    profile_status,
    state_from_status,
    status_body,
)


@dataclass(frozen=True, slots=True)
class SeriesReads:
    """One chunk of plans and the series they need: quiet series are read with their sample times (to tell
    whether they went stale), the others without."""

    plans: Sequence[StatusPlan]
    without_times: list[SeriesKey]
    with_times: list[SeriesKey]


@dataclass(frozen=True, slots=True)
class StatusWrite:
    """A fed profile's status this cycle: `changed` is False when `body` is what this process last applied."""

    plan: StatusPlan
    status: ProfileStatus
    body: dict[str, Any]
    changed: bool

    @property
    def fed(self) -> FedProfile:
        return self.plan.fed


class StatusRun:
    """See the module docstring. One run per cycle; not shared between threads."""

    def __init__(
        self,
        cycles: Sequence[CollectionCycle],
        memory: CollectionMemory,
        refresh: RefreshPolicy,
        sources: Collection[str],
        invalid_sources: Mapping[str, str] | None = None,
    ) -> None:
        if not cycles or len({cycle.now for cycle in cycles}) != 1:
            raise ValueError("a status run needs the cycles of one time, at least one")
        self.cycle = cycles[0]
        """The first source's cycle: its time is every cycle's."""
        self.memory = memory
        self.refresh = refresh
        self.sources = sources
        self.invalid_sources = invalid_sources or {}
        """MetricsSource name → its problems: not polled, so what they own is missing (`ready_condition`)."""
        plans: dict[str, StatusPlan] = {}
        for each in cycles:
            for fed in each.fed:
                known = plans.get(fed.name)
                if known is None:
                    plans[fed.name] = self._plan(each, fed, *self._start(fed))
                else:
                    known.extend(self._plan(each, fed, known.state, known.memos))
        self.plans = list(plans.values())
        self._delivered = {each.source: each.delivered() for each in cycles}
        """Per source of this run, the resources its cycle delivered per fed profile (what `Ready` is judged by)."""

    def reads(self) -> Iterator[SeriesReads]:
        """The plans in chunks of about `READ_CHUNK` series, with the keys to read for each."""
        for chunk in chunks(self.plans):
            without_times: list[SeriesKey] = []
            with_times: list[SeriesKey] = []
            for plan in chunk:
                fresh, quiet = plan.keys()
                without_times += fresh
                with_times += quiet
            yield SeriesReads(chunk, without_times, with_times)

    def statuses(self, reads: SeriesReads, series: Mapping[SeriesKey, Series]) -> Iterator[StatusWrite]:
        """Recompute each plan of the chunk from `series` (every key of `reads`) and assemble its status."""
        cycle = self.cycle
        for plan in reads.plans:
            recompute(plan, series, self.refresh, cycle.now_ms, cycle.now_text)
            remembered = self.memory.profile(plan.fed.name, plan.fed.uid)
            ceilings = self.memory.ceilings.of(plan.fed.name, plan.fed.uid)
            status = remembered.status_if_unchanged(plan, ceilings) if remembered is not None else None
            if status is None:
                status = profile_status(plan.state, plan.fed.policy, ceilings)
            body = status_body(plan.fed.name, status, self._ready(plan.fed, status))
            yield StatusWrite(plan, status, body, changed=remembered is None or remembered.body != body)

    def applied(self, write: StatusWrite) -> bool:
        """Remember a status applied (or unchanged); returns whether its `meetsThreshold` just became true."""
        fed, plan, status = write.fed, write.plan, write.status
        cached_meets = bool(fed.profile.status and fed.profile.status.meets_threshold)
        remembered = ProfileMemory(
            fed.uid, plan.state, plan.memos, status.meets_threshold, write.body, status, fed.policy_stamp
        )
        return self.memory.remember(fed.name, remembered, cached_meets_threshold=cached_meets)

    def summary(self, writes: Sequence[StatusWrite]) -> dict[str, object]:
        """What the cycle did with its series and statuses (for the cycle's log line)."""
        reasons = Counter(reason for plan in self.plans for reason in plan.reasons.values())
        return {
            "series_recomputed": dict(reasons),
            "series_reused": sum(plan.reused for plan in self.plans),
            "statuses_written": sum(write.changed for write in writes),
            "statuses_unchanged": sum(not write.changed for write in writes),
        }

    def _start(self, fed: FedProfile) -> tuple[ContainerState, dict[Pair, SeriesMemo]]:
        """The state and memos the profile's plan starts from: what this process applied last, else its status."""
        remembered = self.memory.profile(fed.name, fed.uid)
        if remembered is not None:
            return remembered.working_copy()
        containers = fed.profile.status.containers if fed.profile.status else None
        return state_from_status([c.to_wire() for c in containers or ()], fed.policy), {}

    @staticmethod
    def _plan(
        cycle: CollectionCycle, fed: FedProfile, state: ContainerState, memos: dict[Pair, SeriesMemo]
    ) -> StatusPlan:
        observed = cycle.attribution.observed.get(fed.name, {})
        return plan_status(fed, state, memos, observed, fed.policy.owned_by(cycle.source), cycle.now_ms)

    def _ready(self, fed: FedProfile, status: ProfileStatus) -> dict[str, Any]:
        previous = profile_condition(fed.profile, READY)
        delivered = self.memory.delivered_to(fed.name)  # the other sources' latest cycles
        for source, by_profile in self._delivered.items():
            delivered[source] = by_profile.get(fed.name)
        collected = collected_in_latest_cycles(
            fed.policy,
            self.cycle.source,
            delivered.get(self.cycle.source) or frozenset(),
            delivered,
            self.sources,
            previous,
        )
        return ready_condition(
            fed.policy,
            collected,
            previous,
            self.cycle.now_text,
            status.not_applied,
            invalid_sources=self.invalid_sources,
        )
