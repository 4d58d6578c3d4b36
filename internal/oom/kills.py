"""OOM kills as a pod's status reports them: a container whose current state, or last state, terminated with
reason `OOMKilled` (the two places VPA's recommender looks).

The kill is named by the pod's UID, the container and the termination's `finishedAt`; the OOM watcher keeps
the kills it has counted in the profile's status, so a kill seen again — the pod's next status update, a restart
of the operator, a new leader — is never counted twice. VPA instead compares a pod's old and new restart counts,
which a restarted recommender cannot do.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ballast.internal.quantity import QuantityError, to_units

OOM_KILLED = "OOMKilled"
"""The termination reason the kubelet reports for a container the kernel's OOM killer ended."""


@dataclass(frozen=True, slots=True)
class ObservedKill:
    """One OOM kill read from a pod: where, when and at which memory limit."""

    container: str
    pod: str
    namespace: str
    uid: str
    finished_at: datetime.datetime
    limit: int
    """The container's memory limit in bytes when it was killed."""

    @property
    def key(self) -> tuple[str, str, datetime.datetime]:
        """What names the kill: the pod's UID (its name when it has none), the container, the time."""
        return (self.uid or f"{self.namespace}/{self.pod}", self.container, self.finished_at)


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _memory_limit(resources: Mapping[str, Any]) -> int | None:
    text = _mapping(resources.get("limits")).get("memory")
    if not text:
        return None
    try:
        value = to_units(str(text), "memory")
    except (QuantityError, ValueError):  # a limit the API server accepted but we cannot read: not a usable kill
        return None
    return value if value > 0 else None


def _parse_time(text: str) -> datetime.datetime:
    """RFC 3339 (`2026-03-01T12:00:00Z`) as an aware UTC datetime to the second; ValueError without an offset."""
    parsed = datetime.datetime.fromisoformat(text)
    if parsed.tzinfo is None:
        raise ValueError(f"timestamp {text!r} has no UTC offset")
    return parsed.astimezone(datetime.UTC).replace(microsecond=0)


def _oom_termination(status: Mapping[str, Any]) -> datetime.datetime | None:
    """`finishedAt` of an OOMKilled termination in the current state, else in the last state."""
    for state in ("state", "lastState"):
        terminated = _mapping(_mapping(status.get(state)).get("terminated"))
        if terminated.get("reason") == OOM_KILLED and terminated.get("finishedAt"):
            try:
                return _parse_time(str(terminated["finishedAt"]))
            except ValueError:  # an unreadable time cannot name the kill; the next status update may carry it
                return None
    return None


def observed_kills(pod: Mapping[str, Any]) -> list[ObservedKill]:
    """The OOM kills `pod` (a dict as the API returns it) reports, one per container at most.

    The limit is the one the kubelet reports it enforced (`status.containerStatuses[].resources`, in-place resize
    aware), else the spec's; a container without a memory limit is left out (the node, not its limit, killed it).
    """
    metadata = _mapping(pod.get("metadata"))
    spec = _mapping(pod.get("spec"))
    specs = {
        str(c.get("name")): _mapping(c.get("resources"))
        for c in [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]
        if isinstance(c, Mapping)
    }
    status = _mapping(pod.get("status"))
    kills: list[ObservedKill] = []
    for entry in [*(status.get("containerStatuses") or ()), *(status.get("initContainerStatuses") or ())]:
        if not isinstance(entry, Mapping):
            continue
        finished_at = _oom_termination(entry)
        name = str(entry.get("name") or "")
        if finished_at is None or not name:
            continue
        limit = _memory_limit(_mapping(entry.get("resources"))) or _memory_limit(specs.get(name, {}))
        if limit is None:
            continue
        kills.append(
            ObservedKill(
                container=name,
                pod=str(metadata.get("name") or ""),
                namespace=str(metadata.get("namespace") or ""),
                uid=str(metadata.get("uid") or ""),
                finished_at=finished_at,
                limit=limit,
            )
        )
    return kills
