"""What `ballast scheduling preview` reads and prints (`ballast.internal.cmd.scheduling` parses its flags and
the previewed file): what scheduling policies would change, before they are applied.

Reads the previewed policies (`load_policies`), then the cluster — its scheduling policies, the namespaces'
labels, every workload of a target kind and every pod (`-n`: one namespace), the MutatingWebhookConfigurations
— and prints what `ballast.internal.scheduling.preview` makes of it: a unified diff of the scheduling fields
and a summary line per selected object. Writes nothing; only reads, as the user running it. Exit 0, or 1 for
a bad file, a missing namespace or an unreachable API server.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ballast.api.kupid.v1alpha1 import ClusterPodSchedulingPolicy, PodSchedulingPolicy
from ballast.internal.scheduling import APPLIED, CONFLICT, ERROR, NAMESPACED_KIND, TARGETS, PolicyOutcome
from ballast.internal.scheduling.preview import (
    API_VERSION,
    ForeignWebhook,
    ObjectPreview,
    Preview,
)

WEBHOOK_CONFIGURATIONS = "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration"
NOTES = (
    "Nothing was written to the cluster.",
    "Running pods change only when they are re-created; the pods a workload creates get the policies at creation "
    "(except DaemonSet pods, which follow their DaemonSet's template).",
    "A workload's template changes at its next template update (e.g. kubectl rollout restart); a Job's never "
    "(Jobs are mutated at creation only).",
)


@dataclass(frozen=True, slots=True)
class ClusterState:
    """What the preview read: the cluster's scheduling policies, the namespaces' labels, the objects (workloads
    and pods), the MutatingWebhookConfigurations (None when they could not be read) and what could not be read."""

    policies: tuple[Mapping[str, Any], ...]
    namespace_labels: Mapping[str, Mapping[str, str]]
    objects: tuple[Mapping[str, Any], ...]
    configurations: tuple[Mapping[str, Any], ...] | None
    unreadable: tuple[str, ...] = ()


def listing_scope(policies: Sequence[Mapping[str, Any]], namespace: str | None) -> str | None:
    """The namespace to read (None: all): `-n`, or the one namespace of the previewed policies when every one
    is a PodSchedulingPolicy there (no object elsewhere can be selected, so reading the cluster would be waste)."""
    if namespace:
        return namespace
    namespaces = {
        str((policy.get("metadata") or {}).get("namespace"))
        for policy in policies
        if policy.get("kind") == NAMESPACED_KIND
    }
    if len(namespaces) == 1 and all(policy.get("kind") == NAMESPACED_KIND for policy in policies):
        return namespaces.pop()
    return None


def gather(client: Any, namespace: str | None) -> ClusterState:
    """Read the cluster. Raises NotFoundError when `namespace` does not exist, and what the API raises for the
    namespaces themselves (without their labels no cluster policy can be judged); a kind that is not served or
    not readable is left out and named in `unreadable`."""
    from ballast.runtime import APIStatusError  # noqa: PLC0415

    failures = (APIStatusError, LookupError)
    namespaces = [client.get("v1/Namespace", namespace)] if namespace else list(client.list_all("v1/Namespace"))
    labels = {str(ns["metadata"]["name"]): dict(ns["metadata"].get("labels") or {}) for ns in namespaces}
    unreadable: list[str] = []
    policies: list[Mapping[str, Any]] = []
    for model, scope in ((ClusterPodSchedulingPolicy, None), (PodSchedulingPolicy, namespace)):
        try:
            policies.extend(client.list_all(f"{API_VERSION}/{model.KIND}", scope))
        except failures as exc:
            unreadable.append(f"{model.PLURAL} ({_reason(exc)}): previewed as if there were none")
    objects: list[Mapping[str, Any]] = []
    for target in TARGETS:
        api_version = f"{target.group}/{target.version}" if target.group else target.version
        try:
            objects.extend(client.list_all(f"{api_version}/{target.kind}", namespace))
        except failures as exc:
            unreadable.append(f"{target.resource} ({_reason(exc)}): not previewed")
    configurations: tuple[Mapping[str, Any], ...] | None
    try:
        configurations = tuple(client.list_all(WEBHOOK_CONFIGURATIONS))
    except failures as exc:
        configurations = None
        unreadable.append(f"mutatingwebhookconfigurations ({_reason(exc)}): other injecting webhooks not checked")
    return ClusterState(tuple(policies), labels, tuple(objects), configurations, tuple(unreadable))


def _reason(exc: Exception) -> str:
    return str(getattr(exc, "reason", "") or exc)


def webhook_warnings(found: Sequence[ForeignWebhook]) -> list[str]:
    """One warning per foreign webhook that intercepts what the scheduling webhook mutates."""
    return [
        f"MutatingWebhookConfiguration {hook.configuration} (webhook {hook.webhook}) also mutates "
        f"{', '.join(hook.resources)}: two webhooks injecting scheduling fields are not idempotent together "
        "(each sees the other's result); the preview shows Ballast's merge alone"
        for hook in found
    ]


def _outcome_text(outcome: PolicyOutcome, previewed: bool) -> str:
    text = f"{outcome.ref}{' (previewed)' if previewed else ''} {outcome.result}"
    if outcome.result == APPLIED and outcome.changed:
        text += f" ({', '.join(outcome.changed)})"
    if outcome.result in (CONFLICT, ERROR) and outcome.message:
        text += f": {outcome.message}"
    elif outcome.conflicts:
        text += f"; not merged (first writer wins): {'; '.join(str(c) for c in outcome.conflicts)}"
    return text


def summary_line(item: ObjectPreview, same_as: str | None = None) -> str:
    """`Deployment shop/web: applied — ClusterPodSchedulingPolicy/spot (previewed) applied (nodeSelector)`."""
    outcomes = "; ".join(_outcome_text(o, o.ref in item.previewed) for o in item.outcomes)
    line = f"{item.label}: {item.result} — {outcomes}"
    if item.denied_by:
        line += f" — admission would deny it ({', '.join(item.denied_by)} is enforced and not fully applied)"
    if same_as:
        line += f" — the same change as {same_as}"
    return line


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def render_text(result: Preview, warnings: Sequence[str], notes: Sequence[str], scope: str | None) -> list[str]:
    """The preview for people: what is previewed against what, one diff and summary line per selected object
    (a diff already shown for another object is not repeated), the tally, the skipped pods, and the notes."""
    replaced = set(result.replaced)
    previewed = ", ".join(f"{ref} ({'replaces the one in the cluster' if ref in replaced else 'new'})"
                          for ref in result.previewed)  # fmt: skip
    where = f"namespace {scope}" if scope else "all namespaces"
    existing = ", ".join(result.existing) or "none"
    lines = [f"Previewing {previewed} in {where}", f"with the cluster's policies: {existing}"]
    lines += [f"warning: {text}" for text in (*warnings, *notes)]
    lines += [f"warning: {o.ref} in the cluster is invalid and never applies: {o.message}" for o in result.invalid]
    shown: dict[tuple[str, ...], str] = {}
    for item in result.objects:
        lines.append("")
        diff = item.diff()
        body = tuple(diff[2:])
        same_as = shown.get(body) if body else None
        if diff and same_as is None:
            shown[body] = item.label
            lines += diff
        lines.append(summary_line(item, same_as))
    counts: dict[str, int] = {}
    for item in result.objects:
        counts[item.result] = counts.get(item.result, 0) + 1
    tally = ", ".join(f"{count} {name}" for name, count in sorted(counts.items()))
    lines += ["", f"Summary: {_plural(len(result.objects), 'object')} selected" + (f": {tally}." if tally else ".")]
    if result.skipped_daemonset_pods:
        lines.append(
            f"Skipped {_plural(result.skipped_daemonset_pods, 'DaemonSet pod')}: the webhook leaves them to their "
            "DaemonSet's template."
        )
    if result.skipped_mirror_pods:
        lines.append(
            f"Skipped {_plural(result.skipped_mirror_pods, 'mirror pod')}: the API server refuses changes to them."
        )
    return [*lines, *(f"Note: {note}" for note in NOTES)]


def _outcome_json(outcome: PolicyOutcome, previewed: bool) -> dict[str, Any]:
    return {
        "ref": outcome.ref,
        "previewed": previewed,
        "result": outcome.result,
        "message": outcome.message,
        "changed": list(outcome.changed),
        "conflicts": [str(conflict) for conflict in outcome.conflicts],
    }


def _object_json(item: ObjectPreview) -> dict[str, Any]:
    return {
        "kind": item.kind,
        "namespace": item.namespace,
        "name": item.name,
        "result": item.result,
        "before": item.before,
        "after": item.after,
        "diff": item.diff(),
        "deniedBy": list(item.denied_by),
        "outcomes": [_outcome_json(outcome, outcome.ref in item.previewed) for outcome in item.outcomes],
    }


def render_json(result: Preview, warnings: Sequence[str], notes: Sequence[str], scope: str | None) -> str:
    """The preview for machines: the same facts, with the scheduling fields before and after as objects."""
    document = {
        "previewed": list(result.previewed),
        "replaced": list(result.replaced),
        "existing": list(result.existing),
        "namespace": scope,
        "objects": [_object_json(item) for item in result.objects],
        "skipped": {"daemonSetPods": result.skipped_daemonset_pods, "mirrorPods": result.skipped_mirror_pods},
        "invalid": [{"ref": outcome.ref, "message": outcome.message} for outcome in result.invalid],
        "warnings": [*warnings, *notes],
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)
