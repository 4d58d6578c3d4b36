"""What `ballast balancer status` reads and prints (`ballast.internal.cmd.balancer` parses its flags): how a
Balancer spreads its replicas, and why.

Reads the Balancer, each target's `scale` subresource and the pods its `scale.status.selector` selects in the
Balancer's namespace — what the controller reads — and prints, per target, its bounds, its replicas now, the
placement the controller computes from those pods (`ballast.internal.balancer.reasons`, with the reasons: late
pods, full targets, fallback, missing/overflow), its Running, Pending and late pods, and the Balancer's
conditions. What `kubectl describe` cannot show: the placement is computed here, not read back from the status.
Writes nothing. Exit 0, or 1 for a missing Balancer, a target whose scale or pods cannot be read, a spec the
placement refuses, or an unreachable API server.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ballast.api.balancer.v1alpha1 import PRIORITY, TARGET_CONFLICT, Balancer
from ballast.internal.balancer import (
    Explanation,
    PlacementInputError,
    PodSummary,
    Reason,
    TargetExplanation,
    explain,
    request_from_spec,
    summarize_targets,
)
from ballast.internal.balancer.stored import in_spec_terms
from ballast.internal.tabular import columns
from ballast.runtime import GroupVersionKind
from ballast.runtime import labels as label_selectors

BALANCER = f"{Balancer.GROUP}/{Balancer.VERSION}/{Balancer.KIND}"
SCALED = "scaled"
"""The code of the note on a target whose replicas differ from its placement (not one of `explain`'s)."""
MISLABELED = "mislabeled"
"""The code of the note on a target with pods `spec.selector` does not match (the controller's phase 3 fails)."""


class StatusError(Exception):
    """What keeps the status from being computed; the message names the Balancer or target and the cause."""


@dataclass(frozen=True, slots=True)
class TargetStatus:
    """One target as read and placed: `ref` its scaleTargetRef (wire form), `replicas` its scale's
    `spec.replicas`, `selector` its scale's `status.selector`, `explained` the placement with its reasons,
    `notes` what this command adds (replicas to be set, mislabeled pods)."""

    name: str
    ref: Mapping[str, Any]
    replicas: int
    selector: str
    explained: TargetExplanation
    notes: tuple[Reason, ...] = ()

    @property
    def pending(self) -> int:
        """Pods Pending (late ones included): summaries count Running and Pending pods only."""
        return self.explained.summary.total - self.explained.summary.running


@dataclass(frozen=True, slots=True)
class Status:
    """A Balancer as `ballast balancer status` shows it: targets in spec order."""

    namespace: str
    name: str
    replicas: int
    policy: Mapping[str, Any]
    startup_timeout_seconds: int | None
    targets: tuple[TargetStatus, ...]
    explanation: Explanation
    conditions: tuple[Mapping[str, Any], ...]


def _ref_text(ref: Mapping[str, Any]) -> str:
    return f"{ref.get('kind')}/{ref.get('name')}"


def _api_error(exc: Any) -> str:
    return f"{exc.reason or exc.status}: {exc.message}"


def _scale(client: Any, namespace: str, target: Mapping[str, Any]) -> Mapping[str, Any]:
    """The target's scale subresource; raises StatusError naming the target and the object."""
    from ballast.runtime import APIStatusError  # noqa: PLC0415

    ref = target.get("scaleTargetRef") or {}
    where = f"target {target.get('name')} ({_ref_text(ref)} in namespace {namespace})"
    try:
        gvk = GroupVersionKind.from_api_version(str(ref.get("apiVersion") or ""), str(ref.get("kind") or ""))
        scale: Mapping[str, Any] = client.subresource("scale").get(gvk, name=str(ref.get("name")), namespace=namespace)
    except ValueError as exc:
        raise StatusError(f"{where}: invalid scaleTargetRef: {exc}") from None
    except LookupError as exc:  # the REST mapper: the kind is not served
        raise StatusError(f"{where}: {exc}") from None
    except APIStatusError as exc:
        raise StatusError(f"{where}: scale subresource not readable: {_api_error(exc)}") from None
    return scale


def _pods(client: Any, namespace: str, name: str, selector: str) -> list[Mapping[str, Any]]:
    """The pods `selector` selects in `namespace` ('' selects every pod, as it does for the controller)."""
    from ballast.runtime import APIStatusError  # noqa: PLC0415

    try:
        label_selectors.parse(selector)
        return list(client.list_all("v1/Pod", namespace, label_selector=selector or None))
    except label_selectors.SelectorError as exc:
        raise StatusError(f"target {name}: invalid scale selector {selector!r}: {exc}") from None
    except APIStatusError as exc:
        raise StatusError(f"target {name}: pods not readable: {_api_error(exc)}") from None


def _mislabeled(spec: Mapping[str, Any], pods: Sequence[Mapping[str, Any]]) -> int:
    """Pods of a target that `spec.selector` does not match (0 when the selector itself is invalid: the
    Balancing condition says so)."""
    try:
        selector = label_selectors.from_label_selector(spec.get("selector") or {})
    except label_selectors.SelectorError:
        return 0
    return sum(1 for pod in pods if not selector.matches((pod.get("metadata") or {}).get("labels") or {}))


def _notes(target: TargetExplanation, replicas: int, mislabeled: int, conflict: bool) -> tuple[Reason, ...]:
    notes = []
    if replicas != target.replicas:
        unless = " (unless TargetConflict names it)" if conflict else ""
        notes.append(
            Reason(SCALED, f"has {replicas} now: the controller sets {target.replicas} at its next run" + unless)
        )
    if mislabeled:
        notes.append(
            Reason(MISLABELED, f"{mislabeled} of its pods do not match spec.selector: the controller stops at "
                               "PodLabelsChecking and scales nothing")
        )  # fmt: skip
    return tuple(notes)


def gather(client: Any, namespace: str, name: str, now: datetime.datetime) -> Status:
    """Read the Balancer, its targets' scales and pods, and place. Raises NotFoundError when the Balancer does
    not exist, StatusError for a target that cannot be read or a spec the placement refuses, and what the API
    raises for the Balancer itself."""
    balancer: Mapping[str, Any] = client.get(BALANCER, name, namespace)
    spec: Mapping[str, Any] = balancer.get("spec") or {}
    where = f"balancer {namespace}/{name}"
    try:
        request = request_from_spec(spec)
    except PlacementInputError as exc:
        raise StatusError(f"{where}: {exc}") from None
    except ValueError as exc:  # the spec does not validate as the model (pydantic's error names the field)
        raise StatusError(f"{where}: invalid spec: {exc}") from None
    targets: list[Mapping[str, Any]] = list(spec.get("targets") or [])
    scales = {str(t["name"]): _scale(client, namespace, t) for t in targets}
    selectors = {target: str((scale.get("status") or {}).get("selector") or "") for target, scale in scales.items()}
    pods = {target: _pods(client, namespace, target, selector) for target, selector in selectors.items()}
    try:
        summaries = summarize_targets(pods, now, request.startup_timeout_seconds)
        explanation = explain(request.replicas, request.targets, request.policy, summaries)
    except PlacementInputError as exc:  # named as the user wrote it (spec.…, wire names)
        raise StatusError(f"{where}: {in_spec_terms(exc)}") from None
    conditions = tuple((balancer.get("status") or {}).get("conditions") or ())
    conflict = any(c.get("type") == TARGET_CONFLICT and c.get("status") == "True" for c in conditions)
    by_name = {target.name: target for target in explanation.targets}
    shown = []
    for target in targets:
        target_name = str(target["name"])
        explained = by_name[target_name]
        replicas = int((scales[target_name].get("spec") or {}).get("replicas") or 0)
        notes = _notes(explained, replicas, _mislabeled(spec, pods[target_name]), conflict)
        shown.append(TargetStatus(target_name, target.get("scaleTargetRef") or {}, replicas, selectors[target_name],
                                  explained, notes))  # fmt: skip
    return Status(namespace, name, request.replicas, request.policy, request.startup_timeout_seconds, tuple(shown),
                  explanation, conditions)  # fmt: skip


# ------------------------------------------------------------------------------------------------ output


def _policy_text(status: Status) -> str:
    policy = status.policy
    if policy["name"] == PRIORITY:
        text = f"priority (targetOrder {', '.join(policy['target_order'])})"
    else:
        weights = ", ".join(f"{k} {v}" for k, v in sorted(policy["target_proportions"].items()))
        text = f"proportional (targetProportions {weights})"
    if status.startup_timeout_seconds is None:
        return f"{text}, no fallback"
    return f"{text}, fallback after {status.startup_timeout_seconds}s Pending"


def render_text(status: Status) -> list[str]:
    """For people: the header, one table row per target, the reasons under the target names, the problems, the
    conditions."""
    placement = status.explanation.placement
    lines = [
        f"Balancer {status.namespace}/{status.name}: spec.replicas {status.replicas}, placement total "
        f"{placement.total}; policy {_policy_text(status)}",
        "",
    ]
    rows = [["TARGET", "SCALES", "MIN", "MAX", "REPLICAS", "PLACEMENT", "RUNNING", "PENDING", "LATE"]]
    for target in status.targets:
        explained = target.explained
        rows.append([
            target.name, _ref_text(target.ref), str(explained.min_replicas),
            "-" if explained.max_replicas is None else str(explained.max_replicas), str(target.replicas),
            str(explained.replicas), str(explained.summary.running), str(target.pending),
            str(explained.summary.not_started),
        ])  # fmt: skip
    lines += columns(rows)
    reasons = [(t.name, r) for t in status.targets for r in (*t.explained.reasons, *t.notes)]
    if reasons:
        lines += ["", "Why:"] + [f"  {name}: {reason}" for name, reason in reasons]
    lines += ["", "Problems:"] + [f"  {p}" for p in status.explanation.problems or ("none",)]
    lines += ["", "Conditions:"]
    if status.conditions:
        rows = [["TYPE", "STATUS", "REASON", "MESSAGE"]]
        rows += [[str(c.get(k) or "") for k in ("type", "status", "reason", "message")] for c in status.conditions]
        lines += [f"  {line}" for line in columns(rows)]
    else:
        lines.append("  none (the controller has not written a status yet)")
    return lines


def _reasons_json(reasons: Sequence[Reason]) -> list[dict[str, str]]:
    return [{"code": reason.code, "message": reason.message} for reason in reasons]


def _summary_json(summary: PodSummary, pending: int) -> dict[str, int]:
    return {"total": summary.total, "running": summary.running, "pending": pending, "late": summary.not_started}


def _policy_json(policy: Mapping[str, Any]) -> dict[str, Any]:
    """The policy in the spec's field names."""
    if policy["name"] == PRIORITY:
        return {"policyName": PRIORITY, "targetOrder": list(policy["target_order"])}
    return {"policyName": policy["name"], "targetProportions": dict(policy["target_proportions"])}


def render_json(status: Status) -> str:
    """For machines: the same facts; `placement` the controller's, `replicas` each scale's now."""
    placement = status.explanation.placement
    document = {
        "namespace": status.namespace,
        "name": status.name,
        "replicas": status.replicas,
        "policy": _policy_json(status.policy),
        "startupTimeoutSeconds": status.startup_timeout_seconds,
        "placed": placement.total,
        "missing": placement.missing,
        "overflow": placement.overflow,
        "targets": [
            {
                "name": target.name,
                "scaleTargetRef": dict(target.ref),
                "selector": target.selector,
                "minReplicas": target.explained.min_replicas,
                "maxReplicas": target.explained.max_replicas,
                "replicas": target.replicas,
                "placement": target.explained.replicas,
                "fallback": placement.fallback.get(target.name, 0),
                "pods": _summary_json(target.explained.summary, target.pending),
                "reasons": _reasons_json((*target.explained.reasons, *target.notes)),
            }
            for target in status.targets
        ],
        "problems": _reasons_json(status.explanation.problems),
        "conditions": [dict(condition) for condition in status.conditions],
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)
