"""The in-place raise an OOM kill calls for: a running pod's memory limit below its profile's OOM floor goes to
the floor in one step (docs/design.md, difference 64).

Unlike a step toward a recommendation, neither the cooldown (`resize.interval`) nor `maxChangePerCycle` holds it
back — the sibling that was killed shows the pod will be killed at the same limit — and it never lowers anything.
A Guaranteed pod's request moves with its limit, so its QoS class stays; a container without a memory limit is
left alone (no limit of its own can kill it). Once the limit is at the floor there is nothing to raise, so one
recorded kill raises a pod at most once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ballast.internal.enrollment import managed_container_bodies
from ballast.internal.quantity import QuantityError, format_bytes, to_units

from .plan import ContainerChange, Plan
from .qos import GUARANTEED, pod_qos


def _bytes(value: object) -> int | None:
    if not isinstance(value, str | int) or isinstance(value, bool) or value == "":
        return None
    try:
        return to_units(value, "memory")
    except (QuantityError, ValueError):
        return None


def plan_oom_raise(pod: Mapping[str, Any], floors: Mapping[str, int]) -> Plan:
    """The raise of every managed container whose memory limit is below its floor (`floors`: container → bytes);
    an empty plan when none is."""
    coupled = pod_qos(pod) == GUARANTEED
    changes: list[ContainerChange] = []
    for group, container in managed_container_bodies(pod):
        name = str(container.get("name"))
        floor = floors.get(name)
        resources = container.get("resources") or {}
        limit = _bytes((resources.get("limits") or {}).get("memory"))
        if floor is None or limit is None or limit >= floor:
            continue
        value = format_bytes(floor)
        requests = {"memory": value} if coupled else {}
        changes.append(ContainerChange(group, name, requests, {"memory": value}))
    return Plan(tuple(changes))
