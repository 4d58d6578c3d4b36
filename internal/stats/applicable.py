"""Which containers of a profile are ready to have their recommendations applied (docs/design.md, difference 5).

With `meetsThreshold` every container is ready (the Go operator's rule). Otherwise a container is ready when it has at
least one `usageStats` entry and a recommendation for every resource of them — the collector writes a
resource's recommendation only once that resource is ready — so a sparse sidecar still accruing does not hold
back the main container. Admission and in-place resize use this same rule.
"""

from __future__ import annotations

from ballast.api.ballast.v1.workloadprofile import Recommendation, WorkloadProfileStatus

from .readiness import ready_containers


def ready_recommendations(status: WorkloadProfileStatus | None) -> dict[str, dict[str, Recommendation]]:
    """The recommendations of the ready containers, by container name (containers without any are left out)."""
    if status is None:
        return {}
    containers = [c for c in status.containers or () if c.recommendations]
    if not status.meets_threshold:
        judged = {
            c.name: {usage.resource: usage.resource in (c.recommendations or {}) for usage in c.usage_stats or ()}
            for c in containers
        }
        ready = ready_containers(judged)
        containers = [c for c in containers if c.name in ready]
    return {c.name: dict(c.recommendations or {}) for c in containers}
