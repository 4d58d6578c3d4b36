"""A profile's collected status — `containers`, `meetsThreshold`, `state` and the `Ready` condition — from its
history series (ballast-anchor.md §4.1 steps 8–12, §5), one MetricsSource cycle at a time.

A cycle of source S recomputes the usage statistics of the resources S *owns* in a profile (the source of the
resource's first policy metric entry, which is also what `usageStats.source` shows); the other resources' entries
are carried over from the last status, with their readiness. Differences from the anchor (architecture.md §5):

- readiness is per container (item 5): a container is ready when every resource it has is ready;
  `meetsThreshold` stays the all-containers summary;
- a (container, resource) entry whose series has no sample newer than the policy's `minTimeSpan` leaves the
  status, and a container without entries leaves `status.containers` (item 6; the anchor keeps them forever);
- `Ready` judges each policy resource by the latest cycle of its own source (item 19).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ballast.api.ballast.v1.policyspec import MetricConfig, ResourcePolicySpec
from ballast.api.ballast.v1.workloadprofile import ACCRUING, READY, SUFFICIENT
from ballast.internal.stats import (
    DEFAULT_MIN_TIME_SPAN,
    Readiness,
    Stats,
    compute_stats,
    display_usage,
    evaluate_readiness,
    meets_threshold,
    parse_duration,
    recommend,
)
from ballast.internal.store import Series

SAMPLES_COLLECTED_REASON = "SamplesCollected"
MISSING_SAMPLES_REASON = "MissingSamples"
ALL_COLLECTED_MESSAGE = "All policy resources produced samples in the latest collection cycle"
MISSING_PREFIX = "No samples in the latest collection cycle for: "

Pair = tuple[str, str]
"""(container, resource)."""

_log = logging.getLogger("ballast.sources")


@dataclass(frozen=True, slots=True)
class PolicyView:
    """What collection needs of a profile's policy (resolve-time defaults applied)."""

    resources: tuple[str, ...]
    """Policy resources, in the order of their first metric entry."""
    owners: Mapping[str, str]
    """Resource → the source of its first metric entry: whose cycle computes its statistics and judges it."""
    metrics: tuple[MetricConfig, ...]
    readiness: Readiness
    min_time_span_ms: int

    @classmethod
    def from_spec(cls, spec: ResourcePolicySpec) -> PolicyView:
        """Read a policy spec; `with_defaults()` is applied here."""
        spec = spec.with_defaults()
        metrics = tuple(spec.metrics or ())
        owners: dict[str, str] = {}
        for metric in metrics:
            owners.setdefault(metric.resource, metric.source)
        settings = spec.readiness
        readiness = Readiness(
            min_data_points=settings.min_data_points if settings else None,
            min_time_span=settings.min_time_span if settings else None,
            max_cv=settings.max_cv if settings else None,
            cv_mean_floor=settings.cv_mean_floor if settings else None,
        )
        return cls(tuple(owners), owners, metrics, readiness, _span_ms(readiness.min_time_span))

    def fed_by(self, source: str) -> frozenset[str]:
        """Resources with a metric entry from `source`: the samples its cycles write for this profile."""
        return frozenset(metric.resource for metric in self.metrics if metric.source == source)

    def owned_by(self, source: str) -> frozenset[str]:
        """Resources whose statistics and readiness `source`'s cycles compute."""
        return frozenset(resource for resource, owner in self.owners.items() if owner == source)


def _span_ms(text: str | None) -> int:
    try:
        span = parse_duration(text or DEFAULT_MIN_TIME_SPAN)
    except ValueError:
        span = 0
    if span <= 0:
        span = parse_duration(DEFAULT_MIN_TIME_SPAN)  # as the readiness gate falls back
    return span // 1_000_000


@dataclass(frozen=True, slots=True)
class ResourceStatus:
    """One `usageStats` entry (wire form), whether the resource is ready, and its recommendation (wire form)."""

    usage: Mapping[str, Any]
    ready: bool
    recommendation: Mapping[str, str]


ContainerState = dict[str, dict[str, ResourceStatus]]
"""container → resource → status."""


def state_from_status(containers: Iterable[Mapping[str, Any]] | None, policy: PolicyView) -> ContainerState:
    """The state a status shows (a fresh leader's starting point): entries of policy resources only; a resource
    counts as ready when it has a recommendation (the status keeps no readiness of its own)."""
    state: ContainerState = {}
    for container in containers or ():
        name = str(container.get("name") or "")
        recommendations = container.get("recommendations") or {}
        for usage in container.get("usageStats") or ():
            resource = str(usage.get("resource") or "")
            if not name or resource not in policy.owners:
                continue
            recommendation = dict(recommendations.get(resource) or {})
            state.setdefault(name, {})[resource] = ResourceStatus(dict(usage), bool(recommendation), recommendation)
    return state


def series_to_read(
    state: ContainerState, observed: Iterable[Pair], owned: frozenset[str]
) -> tuple[list[Pair], list[Pair]]:
    """The pairs a cycle recomputes: (observed this cycle, quiet) — quiet pairs are known from the status but got
    no sample this cycle; they are read with sample times to tell whether they went stale."""
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


def resource_status(
    series: Series, policy: PolicyView, now_ms: int, now_text: str, *, profile: str = ""
) -> ResourceStatus:
    """Statistics, readiness and recommendation of one series (ballast-anchor.md §4.1 step 9, §5)."""
    resource = series.key.resource
    stats = compute_stats(series.values)
    first_seen = series.first_seen_ms or 0
    ready = evaluate_readiness(stats, first_seen, now_ms, resource, policy.readiness)
    usage: dict[str, Any] = {"resource": resource, "source": policy.owners.get(resource, "")}
    usage |= display_usage(stats, resource, first_seen, now_ms).as_status()
    usage["lastUpdated"] = now_text
    recommendation = _recommendation(stats, resource, policy.metrics, profile) if ready else {}
    return ResourceStatus(usage, ready, recommendation)


def _recommendation(stats: Stats, resource: str, metrics: Sequence[MetricConfig], profile: str) -> dict[str, str]:
    values: dict[str, str] = {}
    for metric in metrics:
        if metric.resource != resource or not metric.field:
            continue
        try:
            values[metric.field] = recommend(stats, metric.aggregation or "", metric.headroom, resource)
        except ValueError as exc:  # the anchor logs it and leaves the field unset
            _log.error("cannot compute recommendation: %s", exc, extra={"profile": profile, "resource": resource})
    return values


@dataclass(frozen=True, slots=True)
class ProfileStatus:
    """What the collector applies: `containers`, `meetsThreshold`, `state` (wire values) and readiness by pair."""

    containers: list[dict[str, Any]]
    meets_threshold: bool
    state: str
    ready: Mapping[Pair, bool]


def profile_status(state: ContainerState, policy: PolicyView) -> ProfileStatus:
    """Containers sorted by name with their entries sorted by resource (as the anchor writes them); a container
    with no entry left is dropped. Ready is per container; meetsThreshold needs every container ready."""
    containers: list[dict[str, Any]] = []
    readiness: dict[str, dict[str, bool]] = {}
    ready: dict[Pair, bool] = {}
    for name in sorted(state):
        resources = {r: s for r, s in state[name].items() if r in policy.owners}
        if not resources:
            continue
        entry: dict[str, Any] = {"name": name, "usageStats": [dict(resources[r].usage) for r in sorted(resources)]}
        recommendations = {r: dict(s.recommendation) for r, s in sorted(resources.items()) if s.recommendation}
        if recommendations:
            entry["recommendations"] = recommendations
        containers.append(entry)
        readiness[name] = {r: s.ready for r, s in resources.items()}
        ready.update({(name, r): s.ready for r, s in resources.items()})
    meets = meets_threshold(readiness)
    return ProfileStatus(containers, meets, SUFFICIENT if meets else ACCRUING, ready)


def previously_missing(condition: Mapping[str, Any] | None) -> frozenset[str] | None:
    """The resources a `Ready` condition reported as missing (empty when it is True); None without a condition."""
    if condition is None:
        return None
    if condition.get("status") == "True":
        return frozenset()
    message = str(condition.get("message") or "")
    if not message.startswith(MISSING_PREFIX):
        return None
    return frozenset(part.strip() for part in message[len(MISSING_PREFIX) :].split(",") if part.strip())


def ready_condition(
    policy: PolicyView,
    collected: Callable[[str], bool],
    previous: Mapping[str, Any] | None,
    now_text: str,
) -> dict[str, Any]:
    """The `Ready` condition: True when every policy resource got samples in the latest cycle of its own source
    (`collected(resource)`), else False listing the missing ones. `lastTransitionTime` moves only on a flip."""
    missing = sorted(resource for resource in policy.resources if not collected(resource))
    status = "False" if missing else "True"
    condition = {
        "type": READY,
        "status": status,
        "reason": MISSING_SAMPLES_REASON if missing else SAMPLES_COLLECTED_REASON,
        "message": MISSING_PREFIX + ", ".join(missing) if missing else ALL_COLLECTED_MESSAGE,
        "lastTransitionTime": now_text,
    }
    if previous is not None and previous.get("status") == status and previous.get("lastTransitionTime"):
        condition["lastTransitionTime"] = previous["lastTransitionTime"]
    return condition
