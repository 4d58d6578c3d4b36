"""The scheduling policies of a pod, in words: the ones admission merged into it (its `scheduling-policies`
annotation, which leaves out a policy skipped as contradictory) and whether today's policies would give the same
list. Today's list is `select_policies` over the
pod's labels and its namespace's labels, the webhook's own selection, so a policy created, changed or deleted
since the pod was admitted shows up as added or removed; the pod's spec itself only changes when it is
re-created."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ballast.internal.scheduling import (
    CLUSTER_KIND,
    CONFLICT,
    POLICIES_ANNOTATION,
    is_daemonset_pod,
    is_mirror_pod,
    merge_detailed,
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


@dataclass(frozen=True, slots=True)
class Today:
    """What today's policies would do to the pod: the refs that would be merged, in merge order; `ref (why)` of
    each one skipped as contradictory (every required node-affinity term unsatisfiable: merged nowhere, so never
    in the annotation) and of each invalid one (left out, as admission leaves it out)."""

    merged: tuple[str, ...]
    contradictory: tuple[str, ...]
    invalid: tuple[str, ...]


def policies_today(
    pod: Mapping[str, Any], namespace_labels: Mapping[str, str], policies: Sequence[Mapping[str, Any]]
) -> Today:
    """The webhook's selection and merge over the pod today. Only the cluster's policies and the pod namespace's
    are read."""
    metadata = pod.get("metadata") or {}
    namespace = metadata.get("namespace")
    candidates = [
        policy
        for policy in policies
        if policy.get("kind") == CLUSTER_KIND or (policy.get("metadata") or {}).get("namespace") == namespace
    ]
    selection = select_policies(candidates, namespace_labels, metadata.get("labels") or {})
    outcomes = merge_detailed(pod.get("spec") or {}, selection.matched).outcomes if selection.matched else ()
    return Today(
        merged=tuple(outcome.ref for outcome in outcomes if outcome.result != CONFLICT),
        contradictory=tuple(f"{o.ref} ({o.message})" for o in outcomes if o.result == CONFLICT),
        invalid=tuple(f"{error.ref} ({error.message})" for error in selection.errors),
    )


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
    found = policies_today(pod, namespace_labels, policies)
    today = found.merged
    if daemonset:
        if today:
            lines.append(f"  today its template would get: {', '.join(today)}")
    elif stamped:
        lines.append(f"  today: {comparison(stamped, today)}")
    elif today:
        lines.append(f"  today: {', '.join(today)} would match (it applies when the pod is re-created)")
    lines += [f"  skipped as contradictory: {text}" for text in found.contradictory]
    lines += [f"  skipped as invalid: {text}" for text in found.invalid]
    return lines
