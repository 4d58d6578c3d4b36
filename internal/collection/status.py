"""A profile's collected status — `containers`, `meetsThreshold`, `state` — from its history series
(docs/compatibility.md), one MetricsSource cycle at a time.

A cycle of source S recomputes the usage statistics of the resources S *owns* in a profile (the source of the
resource's first policy metric entry, which is also what `usageStats.source` shows); the other resources' entries
are carried over from the last status, with their readiness. Differences from the Go operator (docs/design.md):

- readiness is per container (item 5): a container is ready when every resource it has is ready;
  `meetsThreshold` stays the all-containers summary;
- a (container, resource) entry whose series has no sample newer than the policy's `minTimeSpan` leaves the
  status, and a container without entries leaves `status.containers` (item 6; the Go operator keeps them forever);
- a recommended value of 0, or above the largest allocatable of the nodes the profile's pods ran on, is left out of
  `recommendations` and named in the `Ready` message (item 25, `ceilings`); the state keeps it, so it returns as
  soon as a larger node is known.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ballast.api.ballast.v1 import WorkloadProfile
from ballast.api.ballast.v1.policyspec import MetricConfig
from ballast.api.ballast.v1.workloadprofile import ACCRUING, SUFFICIENT
from ballast.internal.history import Series
from ballast.internal.stats import (
    RunningStats,
    Stats,
    compute_stats,
    display_usage,
    evaluate_readiness,
    meets_threshold,
    recommend,
)

from .ceilings import Ceilings, NotApplied, bounded
from .policy_resources import PolicyView

Pair = tuple[str, str]
"""(container, resource)."""

_log = logging.getLogger("ballast.collection")


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


def resource_status(
    series: Series,
    policy: PolicyView,
    now_ms: int,
    now_text: str,
    *,
    profile: str = "",
    running: RunningStats | None = None,
) -> ResourceStatus:
    """Statistics, readiness and recommendation of one series (docs/compatibility.md); `running`: the series'
    statistics kept from its last computation (the same results, from the new values only)."""
    resource = series.key.resource
    values = series.values
    stats = running.of(values, grown_from=series.grown_from) if running is not None else compute_stats(values)
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
        except ValueError as exc:  # the Go operator logs it and leaves the field unset
            _log.error("cannot compute recommendation: %s", exc, extra={"profile": profile, "resource": resource})
    return values


@dataclass(frozen=True, slots=True)
class ProfileStatus:
    """What the collector applies: `containers`, `meetsThreshold`, `state` (wire values) and readiness by pair;
    the recommended values left out (`not_applied`) and the ceilings they were judged by."""

    containers: list[dict[str, Any]]
    meets_threshold: bool
    state: str
    ready: Mapping[Pair, bool]
    not_applied: tuple[NotApplied, ...] = ()
    ceilings: Ceilings = field(default_factory=dict)


def profile_status(state: ContainerState, policy: PolicyView, ceilings: Ceilings | None = None) -> ProfileStatus:
    """Containers sorted by name with their entries sorted by resource (as the Go operator writes them); a container
    with no entry left is dropped. Ready is per container; meetsThreshold needs every container ready. Recommended
    values of 0 or above `ceilings` are left out (`ceilings.bounded`); a resource left without any value loses its
    `recommendations` entry."""
    containers: list[dict[str, Any]] = []
    readiness: dict[str, dict[str, bool]] = {}
    ready: dict[Pair, bool] = {}
    not_applied: list[NotApplied] = []
    for name in sorted(state):
        resources = {r: s for r, s in state[name].items() if r in policy.owners}
        if not resources:
            continue
        entry: dict[str, Any] = {"name": name, "usageStats": [dict(resources[r].usage) for r in sorted(resources)]}
        recommendations: dict[str, dict[str, str]] = {}
        for resource, status in sorted(resources.items()):
            kept, refused = bounded(name, resource, status.recommendation, ceilings or {})
            not_applied += refused
            if kept:
                recommendations[resource] = kept
        if recommendations:
            entry["recommendations"] = recommendations
        containers.append(entry)
        readiness[name] = {r: s.ready for r, s in resources.items()}
        ready.update({(name, r): s.ready for r, s in resources.items()})
    meets = meets_threshold(readiness)
    state_name = SUFFICIENT if meets else ACCRUING
    return ProfileStatus(containers, meets, state_name, ready, tuple(not_applied), dict(ceilings or {}))


def status_body(name: str, status: ProfileStatus, ready: Mapping[str, Any]) -> dict[str, Any]:
    """The server-side apply body of the collector's status fields: `containers`, `meetsThreshold`, `state` and
    the `Ready` condition — exactly the fields its field manager owns (anything it stops sending is dropped)."""
    return {
        "apiVersion": WorkloadProfile.API_VERSION,
        "kind": WorkloadProfile.KIND,
        "metadata": {"name": name},
        "status": {
            "containers": status.containers,
            "meetsThreshold": status.meets_threshold,
            "state": status.state,
            "conditions": [dict(ready)],
        },
    }


def profile_condition(profile: WorkloadProfile, condition_type: str) -> dict[str, Any] | None:
    """The profile's status condition of `condition_type` in wire form, or None."""
    for condition in (profile.status.conditions if profile.status else None) or ():
        if condition.type == condition_type:
            return condition.to_wire()
    return None
