"""The scheduling policies of a pod, in words: the ones admission merged into it (its `scheduling-policies`
annotation) and whether today's policies would give the same list. Today's list is `select_policies` over the
pod's labels and its namespace's labels, the webhook's own selection, so a policy created, changed or deleted
since the pod was admitted shows up as added or removed; the pod's spec itself only changes when it is
re-created."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ballast.internal.scheduling import (
    CLUSTER_KIND,
    POLICIES_ANNOTATION,
    is_daemonset_pod,
    is_mirror_pod,
    policy_ref,
    select_policies,
)


def stamped_policies(pod: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The refs of the annotation, in merge order; None when the pod has none (no policy matched at admission,
    or the pod was admitted without the scheduling webhook)."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    value = annotations.get(POLICIES_ANNOTATION)
    if value is None:
        return None
    return tuple(ref.strip() for ref in str(value).split(",") if ref.strip())


def policies_today(
    pod: Mapping[str, Any], namespace_labels: Mapping[str, str], policies: Sequence[Mapping[str, Any]]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The refs of the policies that select the pod today, in merge order, and `ref: why` of each invalid
    one (left out, as admission leaves it out). Only the cluster's policies and the pod namespace's are read."""
    metadata = pod.get("metadata") or {}
    namespace = metadata.get("namespace")
    candidates = [
        policy
        for policy in policies
        if policy.get("kind") == CLUSTER_KIND or (policy.get("metadata") or {}).get("namespace") == namespace
    ]
    selection = select_policies(candidates, namespace_labels, metadata.get("labels") or {})
    invalid = tuple(f"{error.ref} ({error.message})" for error in selection.errors)
    return tuple(policy_ref(policy) for policy in selection.matched), invalid


def comparison(stamped: Sequence[str], today: Sequence[str]) -> str:
    """`same policies today`, or what was added and removed since admission (or only the order changed)."""
    if list(stamped) == list(today):
        return "same policies today"
    added = [ref for ref in today if ref not in stamped]
    removed = [ref for ref in stamped if ref not in today]
    if not added and not removed:
        return f"the same policies in another order today: {', '.join(today)}"
    parts = [f"added {', '.join(added)}" if added else "", f"removed {', '.join(removed)}" if removed else ""]
    now = ", ".join(today) or "none"
    return f"{now} ({'; '.join(part for part in parts if part)}; the pod changes only when it is re-created)"


def scheduling_lines(
    pod: Mapping[str, Any],
    namespace_labels: Mapping[str, str] | None,
    policies: Sequence[Mapping[str, Any]] | None,
) -> list[str]:
    """The `Scheduling policies` section. `namespace_labels` or `policies` is None when it could not be read
    (then today's result is unknown, and is only said to be when the pod has an annotation to compare)."""
    lines = ["", "Scheduling policies"]
    if is_mirror_pod(pod):
        return [*lines, "  a mirror pod: the API server refuses changes to it, so no policy applies"]
    stamped = stamped_policies(pod)
    daemonset = is_daemonset_pod(pod)
    if daemonset:
        lines.append("  a DaemonSet pod: admission leaves it to its DaemonSet's template, which the policies mutate")
    elif stamped:
        lines.append(f"  matched at admission: {', '.join(stamped)}")
    else:
        lines.append("  no scheduling policy matched at admission")
    if policies is None or namespace_labels is None:
        if stamped and not daemonset:
            lines.append("  today: unknown (the scheduling policies or the namespace's labels could not be read)")
        return lines
    today, invalid = policies_today(pod, namespace_labels, policies)
    if daemonset:
        if today:
            lines.append(f"  today its template would get: {', '.join(today)}")
    elif stamped:
        lines.append(f"  today: {comparison(stamped, today)}")
    elif today:
        lines.append(f"  today: {', '.join(today)} would match (it applies when the pod is re-created)")
    lines += [f"  skipped as invalid: {text}" for text in invalid]
    return lines
