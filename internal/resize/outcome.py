"""The kubelet's verdict on a pod's last resize, read from its conditions (KEP-1287; docs/design.md, difference 20).

`PodResizeInProgress` — being actuated; with reason `Error` — the kubelet tried and failed (a memory limit below
the container's usage, a runtime error), and retries the same spec on its own (difference 74);
`PodResizePending` with reason `Infeasible` — the node can never fit it; with reason `Deferred` — not now, maybe
later. A verdict about an older spec (its observedGeneration below the pod's generation) no longer counts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ballast.runtime import objects

POD_RESIZE_PENDING = "PodResizePending"
POD_RESIZE_IN_PROGRESS = "PodResizeInProgress"
REASON_INFEASIBLE = "Infeasible"
REASON_DEFERRED = "Deferred"
REASON_ERROR = "Error"


@dataclass(frozen=True, slots=True)
class ResizeOutcome:
    """What the pod's conditions say about its last resize."""

    in_progress: bool = False
    """`PodResizeInProgress` is True and not an error: the kubelet is actuating the resize."""
    pending_reason: str | None = None
    """The reason of a current `PodResizePending` (`Infeasible`, `Deferred`, …), None when there is none."""
    pending_message: str = ""
    error_message: str | None = None
    """The message of a current `PodResizeInProgress` with reason `Error` (the kubelet failed to actuate the
    resize), None when there is none."""

    @property
    def infeasible(self) -> bool:
        return self.pending_reason == REASON_INFEASIBLE

    @property
    def deferred(self) -> bool:
        return self.pending_reason == REASON_DEFERRED

    @property
    def failed(self) -> bool:
        return self.error_message is not None


def _true_condition(pod: Mapping[str, Any], condition_type: str) -> Mapping[str, Any] | None:
    """The pod condition of `condition_type` with status True, or None."""
    for condition in (pod.get("status") or {}).get("conditions") or ():
        if condition.get("type") == condition_type and condition.get("status") == "True":
            return dict(condition)
    return None


def _current(pod: Mapping[str, Any], condition_type: str) -> Mapping[str, Any] | None:
    """The true condition of `condition_type`, unless the kubelet judged an older spec (observedGeneration <
    generation)."""
    condition = _true_condition(pod, condition_type)
    if condition is None:
        return None
    observed = int(condition.get("observedGeneration") or 0)
    return None if observed and observed < objects.generation(pod) else condition


def resize_outcome(pod: Mapping[str, Any]) -> ResizeOutcome:
    """The kubelet's verdict on `pod` (a dict as the API returns it)."""
    pending = _current(pod, POD_RESIZE_PENDING)
    in_progress = _true_condition(pod, POD_RESIZE_IN_PROGRESS)
    failed = _current(pod, POD_RESIZE_IN_PROGRESS)
    if failed is not None and failed.get("reason") != REASON_ERROR:
        failed = None
    return ResizeOutcome(
        in_progress=in_progress is not None and in_progress.get("reason") != REASON_ERROR,
        pending_reason=pending.get("reason") if pending is not None else None,
        pending_message=str(pending.get("message") or "") if pending is not None else "",
        error_message=str(failed.get("message") or REASON_ERROR) if failed is not None else None,
    )
