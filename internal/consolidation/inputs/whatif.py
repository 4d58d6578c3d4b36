"""The what-if of the consolidation advisor: the requests each pod would have once its WorkloadProfile's
recommendations are applied, by the rule admission applies them (webhook/recommendations.py).

Admission writes a container's recommended request when the container is ready (`ready_recommendations`: every
container with `meetsThreshold`, else those with a recommendation for each measured resource) and the value is a
quantity; the limit it writes beside it (`ballast.internal.limitplan.limit_plan`) never changes a request, so the
requests alone are what the scheduler, and so the planner, sees.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ballast.api.ballast.v1 import WorkloadProfileStatus
from ballast.internal.enrollment import PROFILE_REF, managed_container_bodies
from ballast.internal.quantity import QuantityError, parse_quantity
from ballast.internal.stats.applicable import ready_recommendations

PLANNED_RESOURCES = ("cpu", "memory")
"""What the planner packs; other recommended resources (ephemeral-storage) are not simulated."""

ContainerRequests = dict[str, dict[str, str]]
"""Container name → resource → request (what `plan(what_if=…)` takes for one pod)."""


def profile_name(pod: Mapping[str, Any]) -> str | None:
    """The WorkloadProfile an enrolled pod belongs to (its `profile-ref` annotation), or None."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(PROFILE_REF)
    return str(value) if value else None


def profile_requests(status: WorkloadProfileStatus | None) -> ContainerRequests:
    """A profile's recommended requests that admission would write: ready containers only, cpu and memory,
    values that are quantities (admission skips the others, and so does this)."""
    requests: ContainerRequests = {}
    for container, by_resource in ready_recommendations(status).items():
        wanted = {}
        for resource in PLANNED_RESOURCES:
            recommendation = by_resource.get(resource)
            value = recommendation.request if recommendation is not None else None
            if value and _is_quantity(value):
                wanted[resource] = value
        if wanted:
            requests[container] = wanted
    return requests


def pod_requests(pod: Mapping[str, Any], profile: ContainerRequests) -> ContainerRequests:
    """The part of `profile` that applies to `pod`: its managed containers (by name, as admission matches them)."""
    names = {str(body.get("name") or "") for _, body in managed_container_bodies(pod)}
    return {name: dict(requests) for name, requests in profile.items() if name in names}


def _is_quantity(value: str) -> bool:
    try:
        parse_quantity(value)
    except (QuantityError, TypeError):
        return False
    return True
