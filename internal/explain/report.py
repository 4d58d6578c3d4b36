"""The explanation of a pod, as lines: `explain(ctx)` puts the sections together — pod, identity, policy,
profile, scheduling policies, then one section per container with each resource's figures (`figures`). Pure:
it sees only the `PodContext` that `gather` read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ballast.api.ballast.v1 import ContainerOOMKills, ContainerProfile, ContributingNamespaces, ResourcePolicySpec
from ballast.internal.enrollment import (
    BALLAST_CONFIG_NAME,
    LAST_RESIZE,
    MODE_LABEL,
    MODES,
    POLICY_REF,
    PROFILE_REF,
    RESIZE_BLOCKED,
    RESIZE_BLOCKED_AT,
    managed_container_bodies,
    pod_projection,
)
from ballast.internal.naming import NO_POLICY, tuple_labels
from ballast.internal.oom import OOM_RAISED_FOR
from ballast.internal.policy import PodFacts, discriminator_for, pod_identity
from ballast.internal.scheduling.describe import scheduling_lines

from .context import PodContext, original_container, owner_lookup
from .figures import applied_lines, formula, headroom_text, limit_lines, readiness_line, running_line, usage_lines
from .policies import PolicyVerdict, judge_policies, policy_label, policy_spec

MODE_MEANING = {
    "measure": "usage is measured; requests and limits are never changed",
    "apply": "usage is measured; recommendations are written into the pod at creation, by the admission webhook",
    "resize": "usage is measured; recommendations are written at creation and resized in place while it runs",
}


def explain(ctx: PodContext) -> list[str]:
    """The explanation of a pod, as lines: pod, identity, policy, profile, scheduling policies, then per container
    each resource's samples, statistics, readiness, the formula of every recommended value, the limit rule, what
    admission wrote and what the pod spec says now."""
    facts = PodFacts.from_pod(pod_projection(ctx.pod), lookup=owner_lookup(ctx.owners))
    verdict = judge_policies(facts, ctx.policies)
    profile_status = ctx.profile.status if ctx.profile else None
    measured = profile_status.policy_ref if profile_status else None
    # The figures are explained under the policy the profile was measured under, which may no longer be the winner.
    if measured is not None:
        spec = policy_spec(ctx.policies, measured.kind, measured.namespace or "", measured.name)
    elif verdict.resolution is not None:
        spec = verdict.resolution.spec
    else:
        spec = None
    lines = _pod_section(ctx) + _identity_section(ctx, verdict) + _policy_section(verdict, spec)
    lines += _profile_section(ctx)
    lines += scheduling_lines(ctx.pod, ctx.namespace_labels, ctx.scheduling_policies)
    entries = {c.name: c for c in (profile_status.containers if profile_status else None) or ()}
    containers = [container for _, container in managed_container_bodies(ctx.pod)]
    kills = {k.container: k for k in (profile_status.oom_kills if profile_status else None) or ()}
    for container in containers:
        lines.append("")
        lines += _container_section(ctx, container, entries.get(str(container.get("name"))), spec)
        lines += oom_lines(kills.get(str(container.get("name"))))
    if len(containers) > 1:
        lines += [
            "",
            "Note: applied-* annotations are per pod; with several containers they hold the last one's values.",
        ]
    stale = sorted(set(entries) - {str(c.get("name")) for c in containers})
    if stale:
        lines += ["", f"The profile also has statistics of containers this pod does not run: {', '.join(stale)}"]
    return lines


def _pod_section(ctx: PodContext) -> list[str]:
    metadata = ctx.pod.get("metadata") or {}
    labels = metadata.get("labels") or {}
    annotations = metadata.get("annotations") or {}
    mode = labels.get(MODE_LABEL)
    if mode in MODES:
        mode_text = f"{mode} ({MODE_MEANING[mode]})"
    elif mode is None:
        mode_text = f"not enrolled (no {MODE_LABEL} label)"
    else:
        mode_text = f"{mode!r} is not a mode (one of {', '.join(MODES)}): the operator ignores the pod"
    lines = [f"Pod {metadata.get('namespace')}/{metadata.get('name')}", f"  mode:        {mode_text}"]
    if ctx.owners:
        lines.append("  owners:      " + " → ".join(f"{o.kind} {o.name}" for o in ctx.owners))
    lines.append(f"  profile-ref: {annotations.get(PROFILE_REF) or '(none yet)'}")
    lines.append(f"  policy-ref:  {annotations.get(POLICY_REF) or '(none)'}")
    for key in (LAST_RESIZE, RESIZE_BLOCKED, RESIZE_BLOCKED_AT, OOM_RAISED_FOR):
        if key in annotations:
            lines.append(f"  {key.rsplit('/', 1)[1]}: {annotations[key]}")
    return lines


def _identity_section(ctx: PodContext, verdict: PolicyVerdict) -> list[str]:
    lines = ["", "Identity"]
    if ctx.identity_labels is None:
        lines.append("  identityLabels: unknown (the BallastConfig 'ballast' could not be read)")
        return lines
    labels = (ctx.pod.get("metadata") or {}).get("labels") or {}
    values = tuple_labels(labels, ctx.identity_labels)
    lines.append(f"  identityLabels (BallastConfig {BALLAST_CONFIG_NAME}): {', '.join(ctx.identity_labels)}")
    lines.append("  tuple:        " + ", ".join(f"{key}={values[key]}" for key in ctx.identity_labels))
    discriminator = discriminator_for(verdict.resolution)
    try:
        expected = pod_identity(labels, ctx.identity_labels, verdict.resolution).profile  # as the operator names it
    except ValueError as exc:
        lines.append(f"  profile name: none ({exc})")
        return lines
    how = "no policy matches" if discriminator == NO_POLICY else f"policy discriminator {discriminator}"
    lines.append(f"  profile name: {expected} (tuple values, then {how})")
    stamped = ((ctx.pod.get("metadata") or {}).get("annotations") or {}).get(PROFILE_REF)
    if stamped and stamped != expected:
        lines.append(
            f"  note: the pod is stamped with {stamped}; today's policies give {expected} "
            "(a policy or identity change migrates it on the operator's next reconcile)"
        )
    return lines


def _policy_section(verdict: PolicyVerdict, spec: ResourcePolicySpec | None) -> list[str]:
    lines = [""]
    resolution = verdict.resolution
    if resolution is None:
        lines.append("Policy: none selects this pod (its profile is <tuple>--nopolicy and is never measured)")
    else:
        label = policy_label(resolution.kind, resolution.namespace, resolution.name)
        lines.append(f"Policy: {label} (priority {resolution.priority}; policy-ref {resolution.ref})")
        lines.append("  selects this pod: kinds, namespaces, annotations and labelSelector all match")
        for rival, reason in verdict.rivals:
            lines.append(f"  wins over {policy_label(rival.kind, rival.namespace, rival.name)}: {reason}")
    for other in verdict.unmatched:
        lines.append(f"  does not select it: {policy_label(other.kind, other.namespace, other.name)}")
    for bad in verdict.invalid:
        lines.append(
            f"  skipped as invalid: {policy_label(bad.kind, bad.namespace, bad.name)} ({'; '.join(bad.messages)})"
        )
    if spec is not None:
        for metric in spec.metrics or ():
            lines.append(
                f"  metric: {metric.resource} {metric.field or 'request'} = {metric.aggregation or '?'} × "
                f"{headroom_text(metric.headroom)}, from source {metric.source}"
            )
    return lines


def _profile_section(ctx: PodContext) -> list[str]:
    annotations = (ctx.pod.get("metadata") or {}).get("annotations") or {}
    reference = annotations.get(PROFILE_REF)
    if ctx.profile is None:
        if not reference:
            return ["", "Profile: none yet (the operator has not stamped a profile-ref on the pod)"]
        return ["", f"Profile: {reference} not found (deleted, or not created yet)"]
    status = ctx.profile.status
    lines = ["", f"Profile: {ctx.profile.metadata.name}"]
    if status is None:
        return [*lines, "  no status yet"]
    meets = str(bool(status.meets_threshold)).lower()
    active = status.active_workloads or 0
    lines.append(f"  state:           {status.state} (meetsThreshold {meets}), {active} active pod(s)")
    if status.contributing_namespaces is not None:
        lines.append(f"  shared by:       {_namespaces_line(status.contributing_namespaces)}")
    if status.policy_ref is not None:
        ref = status.policy_ref
        lines.append(f"  measured under:  {policy_label(ref.kind, ref.namespace or '', ref.name)}")
    else:
        lines.append("  measured under:  no policy")
    for condition in status.conditions or ():
        lines.append(
            f"  condition:       {condition.type}={condition.status} ({condition.reason}: {condition.message})"
        )
    if status.measurement_hash:
        lines.append(f"  measurementHash: {status.measurement_hash} (the history's key in the operator's store)")
    return lines


def oom_lines(entry: ContainerOOMKills | None) -> list[str]:
    """What OOM kills did to the container's memory limit (docs/design.md, difference 62): the floor, until
    when, and which namespaces' kills set it."""
    if entry is None:
        return []
    where = ", ".join(entry.namespaces or ()) or "unknown namespaces"
    last = f", the last at {entry.last_limit}" if entry.last_limit else ""
    lines = [f"  OOM kills: {entry.count} in the window (in {where}){last}"]
    if entry.floor:
        until = f" until {entry.floor_until:%Y-%m-%dT%H:%M:%SZ}" if entry.floor_until else ""
        lines.append(f"    memory limit floor {entry.floor}{until}: admission and resize give no less")
    if entry.repeated:
        lines.append("    raising stopped: killed again at the raised limit (OOMKillsRepeated; memory keeps growing)")
    return lines


def _namespaces_line(shown: ContributingNamespaces) -> str:
    """Who feeds the profile's history: every pod with its identity under its policy, in any namespace."""
    names = list(shown.names or ())
    listed = ", ".join(names) + (f", … ({shown.count - len(names)} more)" if shown.count > len(names) else "")
    noun = "namespace" if shown.count == 1 else "namespaces"
    return f"{shown.count} {noun}" + (f": {listed}" if names else "")


def _container_section(
    ctx: PodContext, container: Mapping[str, Any], entry: ContainerProfile | None, spec: ResourcePolicySpec | None
) -> list[str]:
    name = str(container.get("name") or "")
    lines = [f"Container {name}"]
    usages = {usage.resource: usage for usage in (entry.usage_stats if entry else None) or ()}
    recommendations = (entry.recommendations if entry else None) or {}
    metrics = [m for m in (spec.metrics if spec else None) or () if m.resource]
    resources = sorted(set(usages) | {m.resource for m in metrics})
    if not resources:
        lines.append("  no statistics and no policy metric for this container")
        return lines
    original = original_container(ctx, container)
    for resource in resources:
        usage = usages.get(resource)
        recommendation = recommendations.get(resource)
        if usage is not None:
            lines += [f"  {line}" for line in usage_lines(usage)]
            lines.append(f"  {readiness_line(usage, spec, recommendation is not None)}")
        else:
            lines.append(f"  {resource}: no samples in the profile yet")
        resource_metrics = [m for m in metrics if m.resource == resource]
        for metric in resource_metrics:
            field_value = getattr(recommendation, metric.field or "request", None) if recommendation else None
            lines.append(f"    {formula(metric, usage, field_value)}")
        managed_limit = any(m.field == "limit" for m in resource_metrics)
        limits = limit_lines(
            resource, recommendation, original.container, managed_limit,
            why_unknown=original.why_unknown, bare=not ctx.owners,
        )  # fmt: skip
        lines += [f"    {line}" for line in limits]
        lines += [f"    {line}" for line in applied_lines(ctx.pod, resource, recommendation)]
        lines.append(f"    {running_line(container, resource)}")
    return lines
