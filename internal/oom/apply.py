"""The OOM floors of a profile applied to its recommendations: what admission writes, what in-place resize
moves toward and what `ballast explain` narrates (docs/design.md, difference 62).

A floor binds the memory **limit**: the recommended limit is raised to it (or, when the policy recommends no
memory limit, the floor becomes the limit). The request moves only through the history — except where request
and limit are equal (a Guaranteed pod's container), where it moves with the limit so the QoS class stays. A
container whose recommendations are not ready yet still gets the floor, so the next pod after a kill is not
killed at the same limit while its profile accrues.
"""

from __future__ import annotations

import datetime
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from ballast.api.ballast.v1.workloadprofile import Recommendation, WorkloadProfileStatus
from ballast.internal.enrollment import managed_container_bodies
from ballast.internal.quantity import QuantityError, format_bytes, to_units
from ballast.internal.stats.applicable import ready_recommendations

OOM_RAISED_FOR = "ballast.tightlinesoftware.com/oom-raised-for"
"""Pod annotation: which containers' memory limits an OOM floor raised, to what, and after kills in which
namespaces (`app=600Mi after OOM kills in team-a,team-b`; several containers separated by `; `)."""


@dataclass(frozen=True, slots=True)
class Floor:
    """A container's memory-limit floor in force."""

    container: str
    limit: int
    until: datetime.datetime | None
    namespaces: tuple[str, ...]


def active_floors(status: WorkloadProfileStatus | None, now: datetime.datetime | None = None) -> dict[str, Floor]:
    """The floors in `status.oomKills` by container; with `now`, those that have lapsed are left out (the OOM
    watcher removes them at their end; this covers the time until it does)."""
    floors: dict[str, Floor] = {}
    for entry in (status.oom_kills if status else None) or ():
        if not entry.floor:
            continue
        if now is not None and entry.floor_until is not None and entry.floor_until <= now:
            continue
        try:
            limit = to_units(entry.floor, "memory")
        except (QuantityError, ValueError):  # a hand-edited status: no floor rather than a failed admission
            continue
        floors[entry.container] = Floor(entry.container, limit, entry.floor_until, tuple(entry.namespaces or ()))
    return floors


def _bytes(text: str | None) -> int | None:
    try:
        return to_units(text, "memory") if text else None
    except (QuantityError, ValueError):  # unreadable: treated as absent (the floor is a readable value)
        return None


def _raised(recommendation: Recommendation | None, floor: int, *, coupled: bool) -> Recommendation:
    current = recommendation or Recommendation()
    limit = _bytes(current.limit)
    if limit is not None and limit >= floor:
        return current
    update = {"limit": format_bytes(floor)}
    if coupled:  # request = limit (Guaranteed): the request moves with the limit so the QoS class stays
        update["request"] = format_bytes(floor)
    return current.model_copy(update=update)


def with_floors(
    recommendations: Mapping[str, Mapping[str, Recommendation]],
    floors: Mapping[str, Floor],
    *,
    coupled: Collection[str] = (),
) -> dict[str, dict[str, Recommendation]]:
    """`recommendations` with every container's memory limit at least its floor (containers with a floor and no
    recommendations get a memory limit only); for the `coupled` containers (request = limit, a Guaranteed pod's)
    the request is raised with the limit."""
    merged = {name: dict(by_resource) for name, by_resource in recommendations.items()}
    for name, floor in floors.items():
        by_resource = merged.setdefault(name, {})
        by_resource["memory"] = _raised(by_resource.get("memory"), floor.limit, coupled=name in coupled)
    return merged


def coupled_containers(pod: Mapping[str, Any], recommendations: Mapping[str, Mapping[str, Recommendation]]) -> set[str]:
    """The containers of `pod` (a dict) whose memory request would equal their memory limit after admission
    without the floor — the recommended value where there is one, the container's own otherwise."""
    coupled: set[str] = set()
    for _, container in managed_container_bodies(pod):
        name = str(container.get("name") or "")
        resources = container.get("resources") or {}
        recommended = (recommendations.get(name) or {}).get("memory") or Recommendation()
        request = _bytes(recommended.request) or _bytes((resources.get("requests") or {}).get("memory"))
        limit = _bytes(recommended.limit) or _bytes((resources.get("limits") or {}).get("memory"))
        if request is not None and request == limit:
            coupled.add(name)
    return coupled


def raised_for(floors: Mapping[str, Floor], written: Mapping[str, int]) -> str | None:
    """The `oom-raised-for` annotation for the containers whose written memory limit (`written`, bytes) is their
    floor; None when no floor set a limit."""
    parts = [
        f"{name}={format_bytes(floor.limit)} after OOM kills in {','.join(floor.namespaces) or 'unknown namespaces'}"
        for name, floor in sorted(floors.items())
        if written.get(name) == floor.limit
    ]
    return "; ".join(parts) or None


def applicable_recommendations(
    status: WorkloadProfileStatus | None, now: datetime.datetime | None = None
) -> dict[str, dict[str, Recommendation]]:
    """What a pod of the profile gets: the ready containers' recommendations (`ready_recommendations`) with the
    OOM floors in force."""
    return with_floors(ready_recommendations(status), active_floors(status, now))
