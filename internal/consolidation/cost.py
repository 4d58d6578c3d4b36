"""What evicting a pod costs and what disrupting a node costs, as Karpenter v1.15.0 scores them.

`eviction_cost(pod)` starts at 1.0, adds `karpenter.sh/disruption-cost / 2**27` (or, when that annotation is
absent, `controller.kubernetes.io/pod-deletion-cost / 2**27`), then `spec.priority / 2**25`, and clamps the sum
to [-10, 10]. Both annotations are read as Go's `strconv.ParseInt(s, 10, 32)` reads them: an optional sign and
ASCII digits inside int32, nothing else. A value Go refuses adds nothing and is logged, never an error, and a
present-but-invalid `karpenter.sh/disruption-cost` does not fall back to the deletion cost.

A node costs `1.0 + Σ max(0, eviction_cost)` over the pods that would be rescheduled (not DaemonSet pods, not
mirror pods): negative costs count as 0 so a low-priority pod cannot discount the node.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any

from .errors import ConsolidationInputError

logger = logging.getLogger(__name__)

DISRUPTION_COST_ANNOTATION = "karpenter.sh/disruption-cost"
POD_DELETION_COST_ANNOTATION = "controller.kubernetes.io/pod-deletion-cost"
PER_NODE_BASE_DISRUPTION_COST = 1.0
"""What disrupting a node costs before any pod: an empty node still costs something to disrupt."""

INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1
MAX_EVICTION_COST = 10.0
MIN_EVICTION_COST = -10.0
_ANNOTATION_SCALE = 2.0**27  # the int32 range of an annotation maps to about -16..+16
_PRIORITY_SCALE = 2.0**25  # priority outweighs the annotations, as in Karpenter
# Go's ParseInt with base 10: a sign, then ASCII digits (no spaces, underscores, fractions or exponents).
_GO_INT = re.compile(r"[+-]?[0-9]+")


def parse_int32(text: str) -> int | None:
    """`text` as Go's `strconv.ParseInt(text, 10, 32)` reads it, or None where Go returns an error.

    `"42"`, `"+7"`, `"-0"` and `"007"` parse; `"1.5"`, `"1e3"`, `" 5"`, `"5 "`, `"1_000"`, `""`, `"٣"` (a
    non-ASCII digit) and anything outside [-2**31, 2**31 - 1] do not.
    """
    if not _GO_INT.fullmatch(text):
        return None
    value = int(text)
    return value if INT32_MIN <= value <= INT32_MAX else None


def _annotation_cost(pod: Mapping[str, Any], annotations: Mapping[str, Any], key: str) -> float:
    raw = annotations[key]
    value = parse_int32(raw) if isinstance(raw, str) else None
    if value is None:
        logger.warning(
            "ignoring the %s annotation of pod %s: %r is not an int32", key, pod_key(pod), raw, extra={"value": raw}
        )
        return 0.0
    return value / _ANNOTATION_SCALE


def eviction_cost(pod: Mapping[str, Any], *, pod_deletion_cost_management: bool = False) -> float:
    """What evicting `pod` (a Pod as Kubernetes JSON) costs, in [-10, 10]; a default pod costs 1.0.

    `pod_deletion_cost_management` is Karpenter's `PodDeletionCostManagement` feature gate (off by default): when
    on, Karpenter writes the deletion cost itself, so only `karpenter.sh/disruption-cost` is read. Raises
    `ConsolidationInputError` when `spec.priority` is not an int32 (the API server never stores one that is not).
    """
    metadata = pod.get("metadata") or {}
    annotations = metadata.get("annotations") or {}
    cost = 1.0
    if DISRUPTION_COST_ANNOTATION in annotations:
        cost += _annotation_cost(pod, annotations, DISRUPTION_COST_ANNOTATION)
    elif not pod_deletion_cost_management and POD_DELETION_COST_ANNOTATION in annotations:
        cost += _annotation_cost(pod, annotations, POD_DELETION_COST_ANNOTATION)
    priority = (pod.get("spec") or {}).get("priority")
    if priority is not None:
        if isinstance(priority, bool) or not isinstance(priority, int) or not INT32_MIN <= priority <= INT32_MAX:
            raise ConsolidationInputError(f"pods[{pod_key(pod)!r}].spec.priority", f"{priority!r} is not an int32")
        cost += priority / _PRIORITY_SCALE
    return min(MAX_EVICTION_COST, max(MIN_EVICTION_COST, cost))


def reschedule_disruption_cost(eviction_costs: Iterable[float]) -> float:
    """`1.0 + Σ max(0, cost)`: what disrupting a node costs, from the eviction costs of the pods it would
    reschedule (the caller leaves out DaemonSet and mirror pods; `is_reschedulable` says which)."""
    total = PER_NODE_BASE_DISRUPTION_COST
    for cost in eviction_costs:
        total += max(0.0, cost)
    return total


def savings_ratio(price: float, disruption_cost: float) -> float:
    """Price per unit of disruption, the order in which Karpenter tries candidates (highest first)."""
    if disruption_cost == 0:
        raise ValueError("a node's disruption cost is at least 1.0; use reschedule_disruption_cost")
    return price / disruption_cost


def pod_key(pod: Mapping[str, Any]) -> str:
    """`namespace/name` of a Pod as Kubernetes JSON (`default/` when it has no namespace)."""
    metadata = pod.get("metadata") or {}
    return f"{metadata.get('namespace') or 'default'}/{metadata.get('name') or ''}"


def owned_by(pod: Mapping[str, Any], api_version: str, kind: str) -> bool:
    """Whether any owner reference of `pod` is `api_version`/`kind` (Karpenter's `IsOwnedBy`: any owner, not only
    the controller)."""
    owners = (pod.get("metadata") or {}).get("ownerReferences") or ()
    return any(
        isinstance(owner, Mapping) and owner.get("apiVersion") == api_version and owner.get("kind") == kind
        for owner in owners
    )


def is_daemonset_pod(pod: Mapping[str, Any]) -> bool:
    return owned_by(pod, "apps/v1", "DaemonSet")


def is_mirror_pod(pod: Mapping[str, Any]) -> bool:
    """A static pod's mirror, known as Karpenter knows it: owned by its Node."""
    return owned_by(pod, "v1", "Node")


def is_terminal(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def is_terminating(pod: Mapping[str, Any]) -> bool:
    return (pod.get("metadata") or {}).get("deletionTimestamp") is not None


def is_reschedulable(pod: Mapping[str, Any]) -> bool:
    """Whether disrupting the node would have to place `pod` elsewhere: active (or a terminating StatefulSet pod,
    which must go before its replacement comes), not a DaemonSet pod, not a mirror pod."""
    active = not is_terminal(pod) and not is_terminating(pod)
    stateful_leaving = owned_by(pod, "apps/v1", "StatefulSet") and is_terminating(pod)
    return (active or stateful_leaving) and not is_daemonset_pod(pod) and not is_mirror_pod(pod)
