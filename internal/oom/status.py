"""A container's OOM state as `status.oomKills[]` of its WorkloadProfile, and back."""

from __future__ import annotations

from typing import Any

from ballast.api.ballast.v1.workloadprofile import ContainerOOMKills
from ballast.internal.quantity import QuantityError, format_bytes, to_units
from ballast.runtime import rfc3339

from .floor import Kill, OOMState


def kills_from(entry: ContainerOOMKills | None) -> list[Kill]:
    """The kills a status entry keeps (an entry whose limit cannot be read is dropped, not fatal)."""
    kills: list[Kill] = []
    for kept in (entry.kills if entry else None) or ():
        try:
            limit = to_units(kept.limit, "memory")
        except (QuantityError, ValueError):  # a hand-edited status: forget that kill rather than stop the lane
            continue
        kills.append(Kill(kept.pod, kept.namespace, kept.uid or "", kept.finished_at, limit))
    return kills


def status_entry(container: str, state: OOMState) -> dict[str, Any] | None:
    """The `status.oomKills[]` item (wire JSON) for `state`; None when no kill is left in the window."""
    last = state.last
    if last is None:
        return None
    entry: dict[str, Any] = {
        "container": container,
        "count": len(state.kills),
        "lastTime": rfc3339(last.finished_at),
        "lastLimit": format_bytes(last.limit),
        "namespaces": state.namespaces,
        "kills": [
            {
                "pod": kill.pod,
                "namespace": kill.namespace,
                **({"uid": kill.uid} if kill.uid else {}),
                "finishedAt": rfc3339(kill.finished_at),
                "limit": format_bytes(kill.limit),
            }
            for kill in state.kills
        ],
    }
    if state.floor is not None and state.floor_until is not None:
        entry["floor"] = format_bytes(state.floor)
        entry["floorUntil"] = rfc3339(state.floor_until)
    if state.repeated:
        entry["repeated"] = True
    return entry
