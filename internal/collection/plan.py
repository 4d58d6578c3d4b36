"""A fed profile's status work in one cycle: which of its series are read and recomputed, which keep their last
computation (`refresh`), which leave the status — and the recomputation itself once the series are read."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from ballast.internal.history import Series, SeriesKey
from ballast.internal.stats import RunningStats

from .cycle import FedProfile
from .policy_resources import PolicyView
from .refresh import NEW, POLICY, PolicyStamp, RefreshPolicy, SeriesMemo, refresh_reason
from .status import ContainerState, Pair, resource_status

READ_CHUNK = 64
"""Series read per store call while computing statistics: memory stays bounded by a few series of history."""


def series_to_read(
    state: ContainerState, observed: Iterable[Pair], owned: frozenset[str]
) -> tuple[list[Pair], list[Pair]]:
    """The owned pairs of a cycle: (observed this cycle, quiet) — quiet pairs are known from the status but got
    no sample this cycle; when recomputed they are read with sample times to tell whether they went stale."""
    fresh = sorted({pair for pair in observed if pair[1] in owned})
    seen = set(fresh)
    quiet = sorted(
        (container, resource)
        for container, resources in state.items()
        for resource in resources
        if resource in owned and (container, resource) not in seen
    )
    return fresh, quiet


def is_stale(series: Series, now_ms: int, policy: PolicyView) -> bool:
    """Whether a quiet series leaves the status: no sample at all, or none within the policy's minTimeSpan."""
    if not series.values:
        return True
    last_s = series.times_s[-1] if series.times_s else (series.first_seen_ms or 0) // 1000
    return now_ms - last_s * 1000 > policy.min_time_span_ms


@dataclass(slots=True)
class StatusPlan:
    """One profile's status work: the state it starts from (a working copy), its series memos (idem), and the
    pairs to recompute — `fresh` (sampled this cycle: read without times) and `quiet` (read with times)."""

    fed: FedProfile
    state: ContainerState
    memos: dict[Pair, SeriesMemo]
    fresh: list[Pair] = field(default_factory=list)
    quiet: list[Pair] = field(default_factory=list)
    reasons: dict[Pair, str] = field(default_factory=dict)
    """Why each pair of `fresh` and `quiet` is recomputed."""
    reused: int = 0
    """Owned pairs whose last computation stands this cycle."""
    dropped: bool = False
    """A pair left the state while planning (known stale)."""
    stamps: dict[Pair, PolicyStamp] = field(default_factory=dict)
    """The pairs planned under another source's `fed` (`extend`) and its stamp; the others are under `fed.stamp`."""

    @property
    def changed(self) -> bool:
        """Whether this cycle changes the state it started from (something recomputed or dropped)."""
        return bool(self.fresh or self.quiet or self.dropped)

    def extend(self, other: StatusPlan) -> None:
        """Take in the plan of the same profile for another source collected in the same cycle, made on this plan's
        state and memos: its pairs (each source owns its own) keep the stamp of their source."""
        self.fresh += other.fresh
        self.quiet += other.quiet
        self.reasons.update(other.reasons)
        self.reused += other.reused
        self.dropped = self.dropped or other.dropped
        for pair in (*other.fresh, *other.quiet):
            self.stamps[pair] = other.stamps.get(pair, other.fed.stamp)

    def keys(self) -> tuple[list[SeriesKey], list[SeriesKey]]:
        """The series to read: (without times, with times)."""
        return [self.fed.key(pair) for pair in self.fresh], [self.fed.key(pair) for pair in self.quiet]


def plan_status(
    fed: FedProfile,
    state: ContainerState,
    memos: dict[Pair, SeriesMemo],
    observed: Iterable[Pair],
    owned: frozenset[str],
    now_ms: int,
) -> StatusPlan:
    """Sort the owned pairs of a profile into recomputed and kept ones (`refresh_reason`); a quiet pair whose last
    known sample is older than minTimeSpan leaves the state at once, with no read."""
    plan = StatusPlan(fed, state, memos)
    fresh, quiet = series_to_read(state, observed, owned)
    for pair in fresh:
        reason = refresh_reason(memos.get(pair), fed.stamp, now_ms, fed.policy) if _known(state, pair) else NEW
        if reason is None:
            plan.reused += 1
            continue
        plan.fresh.append(pair)
        plan.reasons[pair] = reason
    for pair in quiet:
        memo = memos.get(pair)
        reason = refresh_reason(memo, fed.stamp, now_ms, fed.policy)
        if memo is not None and reason != POLICY and now_ms - memo.last_sample_ms > fed.policy.min_time_span_ms:
            _drop(plan, pair)  # stale: its newest sample is known without reading it back
        elif reason is None:
            plan.reused += 1
        else:
            plan.quiet.append(pair)
            plan.reasons[pair] = reason
    _drop_empty(plan.state)
    return plan


def _known(state: ContainerState, pair: Pair) -> bool:
    container, resource = pair
    return resource in state.get(container, {})


def _drop(plan: StatusPlan, pair: Pair) -> None:
    container, resource = pair
    plan.state.get(container, {}).pop(resource, None)
    plan.memos.pop(pair, None)
    plan.dropped = True


def _drop_empty(state: ContainerState) -> None:
    for container in [name for name, resources in state.items() if not resources]:
        del state[container]


def recompute(
    plan: StatusPlan, series: Mapping[SeriesKey, Series], refresh: RefreshPolicy, now_ms: int, now_text: str
) -> None:
    """Recompute the planned pairs from their series, in place: statistics, readiness and recommendation of each,
    and a new memo; a quiet series gone stale leaves the state, and so does a container left without entries."""
    fed = plan.fed
    for pair in plan.quiet:
        found = series[fed.key(pair)]
        if is_stale(found, now_ms, fed.policy):
            _drop(plan, pair)
            continue
        _compute(plan, pair, found, refresh, now_ms, now_text)
    for pair in plan.fresh:
        found = series[fed.key(pair)]
        if not found.values:
            continue  # written this cycle, so only a concurrent purge empties it
        _compute(plan, pair, found, refresh, now_ms, now_text)
    _drop_empty(plan.state)


def _compute(plan: StatusPlan, pair: Pair, found: Series, refresh: RefreshPolicy, now_ms: int, now_text: str) -> None:
    fed = plan.fed
    container, resource = pair
    last = plan.memos.get(pair)
    running = last.running if last is not None and last.running is not None else RunningStats()
    plan.state.setdefault(container, {})[resource] = resource_status(
        found, fed.policy, now_ms, now_text, profile=fed.name, running=running
    )
    count, first_seen = len(found.values), found.first_seen_ms or 0
    memo = refresh.memo(
        found.key,
        count=count,
        accruing=fed.policy.accruing(count, first_seen, now_ms),
        stamp=plan.stamps.get(pair, fed.stamp),
        now_ms=now_ms,
        reason=plan.reasons[pair],
        first_seen_ms=first_seen,
    )
    # An accruing series is recomputed often (at every poll while it is short): keep its sorted values for the
    # next. A ready one waits for `min_new_fraction` new samples, so a fresh computation costs little per cycle
    # and no copy is held (unless the refresh policy keeps one: `keep_sorted`).
    memo.running = running if memo.accruing or refresh.keep_sorted else None
    if found.times_s:
        memo.last_sample_ms = found.times_s[-1] * 1000
    plan.memos[pair] = memo


def chunks(plans: Sequence[StatusPlan], size: int = READ_CHUNK) -> Iterator[list[StatusPlan]]:
    """Plans grouped so that each group reads about `size` series (a profile's series are never split)."""
    chunk: list[StatusPlan] = []
    count = 0
    for plan in plans:
        chunk.append(plan)
        count += len(plan.fresh) + len(plan.quiet)
        if count >= size:
            yield chunk
            chunk, count = [], 0
    if chunk:
        yield chunk
