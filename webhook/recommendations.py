"""A WorkloadProfile's recommendations written into a pod at admission (docs/compatibility.md), with two
deliberate differences: only ready containers are applied (docs/design.md, difference 5), and no request is ever left
above its limit (item 4).

**Which containers are ready.** The collector writes a container's recommendations for a resource only once
that resource's series is ready, and judges a container ready when all its measured resources are; the
profile's `meetsThreshold` is the all-containers summary. So at admission, from the profile status alone:

- `meetsThreshold: true` — every container in `status.containers` is ready (the Go operator's rule);
- otherwise a container is ready when it has at least one `usageStats` entry and a `recommendations` entry for
  every resource of its `usageStats`. A container with some resources still accruing is not applied at all
  (never half of it), and a sparse sidecar does not hold back the main container.

**Request ≤ limit.** For each recommended resource, the value the pod ends up with never has its request above
its limit:

- a limit the policy does not manage (no recommended limit) that the new request would exceed is raised to keep
  the container's original limit:request ratio (`fit_limit`, VPA's rule);
- a recommended limit below the request the container ends up with (the recommended one, or the container's own
  when the policy manages only the limit) is raised to that request.

Both are reported as `ScaledLimit`s, so the handler can count `ballast_apply_limit_scaled`. The rule itself is
the domain's (`ballast.internal.limitplan.limit_plan`), which `ballast explain` narrates; this module writes it.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, Literal

from ballast.api.ballast.v1 import Recommendation
from ballast.internal.enrollment import applied_annotation, managed_container_bodies
from ballast.internal.limitplan import LimitPlan, limit_plan
from ballast.internal.quantity import QuantityError, parse_quantity

Field = Literal["request", "limit"]
Recommendations = Mapping[str, Mapping[str, Recommendation]]
"""Container name → resource → recommended request/limit."""


@dataclass(frozen=True, slots=True)
class AppliedValue:
    """One value written into a container (and into its `applied-<resource>-<field>` annotation)."""

    container: str
    resource: str
    field: Field
    value: str


@dataclass(frozen=True, slots=True)
class ScaledLimit:
    """A limit raised so that the container's request does not exceed it.

    `before` is the limit that would have been too low: the container's own (not managed by the policy) or the
    recommended one.
    """

    container: str
    resource: str
    before: str
    limit: str
    managed: bool
    """True when the policy recommends this limit (it was raised to the request)."""


@dataclass(frozen=True, slots=True)
class Mutation:
    """What `apply_recommendations` changed.

    `containers` are the pod's containers that had recommendations — the Go operator's count for
    `ballast_apply_applied` versus `no_change`, even when the values were already in place.
    """

    containers: tuple[str, ...] = ()
    values: tuple[AppliedValue, ...] = ()
    scaled_limits: tuple[ScaledLimit, ...] = ()


def apply_recommendations(pod: MutableMapping[str, Any], recommendations: Recommendations) -> Mutation:
    """Write `recommendations` into `pod` (a mutable dict, changed in place) and annotate what was written.

    Regular containers and restartable-init sidecars are matched by name. For every recommended resource, each
    non-empty value that parses as a quantity is set in `resources.requests`/`resources.limits` (maps created
    only when something is written), limits are raised where needed to keep request ≤ limit (module docstring),
    and `ballast.tightlinesoftware.com/applied-<resource>-<request|limit>` is set to the value written (the last
    container wins, as in the Go operator).
    """
    matched: list[str] = []
    values: list[AppliedValue] = []
    scaled: list[ScaledLimit] = []
    for _, container in managed_container_bodies(pod):
        name = str(container.get("name") or "")
        wanted = recommendations.get(name)
        if not wanted:
            continue
        matched.append(name)
        for resource in sorted(wanted):
            written, raised = _apply_resource(container, name, resource, wanted[resource])
            values.extend(written)
            if raised is not None:
                scaled.append(raised)
    for value in values:
        annotate(pod, applied_annotation(value.resource, value.field), value.value)
    return Mutation(tuple(matched), tuple(values), tuple(scaled))


def annotate(pod: MutableMapping[str, Any], key: str, value: str) -> None:
    """Set annotation `key` on `pod`, creating `metadata.annotations` when the pod has none."""
    _child(_child(pod, "metadata"), "annotations")[key] = value


def _apply_resource(
    container: MutableMapping[str, Any], name: str, resource: str, recommendation: Recommendation
) -> tuple[list[AppliedValue], ScaledLimit | None]:
    request = _usable(recommendation.request)
    limit = _usable(recommendation.limit)
    if request is None and limit is None:
        return [], None
    current_request = _current(container, "requests", resource)
    current_limit = _current(container, "limits", resource)
    try:
        plan = limit_plan(
            resource, request=request, limit=limit, current_request=current_request, current_limit=current_limit
        )
    except (QuantityError, TypeError):
        # A value the container came with is not a quantity: the API server refuses the pod for it anyway.
        plan = LimitPlan(limit, "recommended" if limit is not None else "kept", managed=limit is not None)
    limit = plan.limit
    raised = None
    if plan.scaled and plan.before is not None and plan.limit is not None:  # a scaled plan names both
        raised = ScaledLimit(name, resource, plan.before, plan.limit, plan.managed)
    written: list[AppliedValue] = []
    if request is not None:
        _child(_child(container, "resources"), "requests")[resource] = request
        written.append(AppliedValue(name, resource, "request", request))
    if limit is not None:
        _child(_child(container, "resources"), "limits")[resource] = limit
        written.append(AppliedValue(name, resource, "limit", limit))
    return written, raised


def _usable(value: str | None) -> str | None:
    """The recommended value when it is non-empty and a quantity, else None (the Go operator skips it)."""
    if not value:
        return None
    try:
        parse_quantity(value)
    except (QuantityError, TypeError):
        return None
    return value


def _current(container: Mapping[str, Any], section: str, resource: str) -> str | None:
    value = ((container.get("resources") or {}).get(section) or {}).get(resource)
    return None if value is None else str(value)


def _child(parent: MutableMapping[str, Any], key: str) -> MutableMapping[str, Any]:
    """`parent[key]` as a mapping, created (or replacing a JSON null) when absent."""
    child = parent.get(key)
    if not isinstance(child, MutableMapping):
        child = parent[key] = {}
    return child
