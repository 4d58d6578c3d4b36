"""`ballast explain pod/<namespace>/<name>`: why a pod has the requests and limits it has.

Everything comes from the API server — the pod and its annotations (`profile-ref`, `policy-ref`,
`applied-*`), its owners (whose pod template holds the resources the pod was created from), the BallastConfig,
the policies and the WorkloadProfile's status — so it works from a laptop that cannot reach the operator's
history store. The figures are the profile's (the collector's statistics as it displays them); every value is
recomputed with the domain functions the operator uses (`recommend`, `fit_limit`, `resolve_policy`,
`profile_name`), never with arithmetic of its own.

`gather` reads; `explain` turns what was read into lines (pure, unit-tested).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ballast.api.ballast.v1 import (
    BallastConfig,
    ClusterResourcePolicy,
    ContainerProfile,
    MetricConfig,
    Recommendation,
    ResourcePolicy,
    ResourcePolicySpec,
    UsageStats,
    WorkloadProfile,
)
from ballast.internal.cmd.ballast import EXIT_USAGE, connect, fail
from ballast.internal.enrollment import (
    BALLAST_CONFIG_NAME,
    LAST_RESIZE,
    MODE_LABEL,
    MODES,
    POLICY_REF,
    PROFILE_REF,
    RESIZE_BLOCKED,
    RESIZE_BLOCKED_AT,
    applied_annotation,
    managed_containers,
)
from ballast.internal.naming import NO_POLICY, profile_name, tuple_labels
from ballast.internal.policy import (
    MAX_OWNER_DEPTH,
    CompiledPolicy,
    OwnerLookup,
    PodFacts,
    Policy,
    PolicyCache,
    Resolution,
    controller_reference,
    discriminator_for,
    precedence,
    resolve_policy,
)
from ballast.internal.quantity import QuantityError, format_units, to_units
from ballast.internal.stats import EMPTY_STATS, fit_limit, parse_headroom, recommend

MODE_MEANING = {
    "measure": "usage is measured; requests and limits are never changed",
    "apply": "usage is measured; recommendations are written into the pod at creation, by the admission webhook",
    "resize": "usage is measured; recommendations are written at creation and resized in place while it runs",
}
PERCENTILES = ("p50", "p75", "p90", "p95", "p99")


# -------------------------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class Owner:
    """One step of the pod's controller chain; `obj` is None when it could not be read."""

    kind: str
    name: str
    obj: Mapping[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class PodContext:
    """What `explain` reads: the pod, its owners (direct controller first), the BallastConfig's identityLabels
    (None when unreadable), the candidate policies (ClusterResourcePolicies and the pod namespace's
    ResourcePolicies) and the profile named by `profile-ref` (None when absent or missing)."""

    pod: Mapping[str, Any]
    owners: tuple[Owner, ...] = ()
    identity_labels: tuple[str, ...] | None = None
    policies: tuple[Policy, ...] = ()
    profile: WorkloadProfile | None = None


def parse_pod_ref(text: str, namespace: str | None) -> tuple[str, str]:
    """`pod/NS/NAME`, `NS/NAME`, `pod/NAME` or `NAME` (the last two with `namespace`) → (namespace, name).

    Raises ValueError for anything else.
    """
    parts = text.split("/")
    if parts[0] in ("pod", "pods", "po") and len(parts) > 1:
        parts = parts[1:]
    if len(parts) == 2 and all(parts):
        return parts[0], parts[1]
    if len(parts) == 1 and parts[0] and namespace:
        return namespace, parts[0]
    raise ValueError(f"expected pod/NAMESPACE/NAME (or NAME with -n), got {text!r}")


def gather(client: Any, namespace: str, name: str) -> PodContext:
    """Read everything `explain` needs. Raises NotFoundError when the pod does not exist; anything else that
    cannot be read (no BallastConfig, no profile, a forbidden owner) is left out and explained as missing."""
    from ballast.internal.runtime.apierrors import APIStatusError  # noqa: PLC0415

    failures = (APIStatusError, LookupError, ValueError)
    pod = client.get("v1/Pod", name, namespace)
    owners = _owners(client, pod, failures)
    try:
        identity: tuple[str, ...] | None = tuple(client.get(BallastConfig, BALLAST_CONFIG_NAME).spec.identity_labels)
    except failures:
        identity = None
    policies: list[Policy] = []
    for kind, scope in ((ClusterResourcePolicy, None), (ResourcePolicy, namespace)):
        # An uninstalled or unreadable kind leaves its policies out; explain then reports what matched without them.
        with contextlib.suppress(*failures):
            policies.extend(client.list_all(kind, scope))
    profile = None
    profile_ref = ((pod.get("metadata") or {}).get("annotations") or {}).get(PROFILE_REF)
    if profile_ref:
        try:
            profile = client.get(WorkloadProfile, profile_ref)
        except failures:
            profile = None
    return PodContext(pod, owners, identity, tuple(policies), profile)


def _owners(client: Any, pod: Mapping[str, Any], failures: tuple[type[Exception], ...]) -> tuple[Owner, ...]:
    """The controller chain, read live; an owner that cannot be read ends it (its kind and name stay known)."""
    chain: list[Owner] = []
    current: Mapping[str, Any] | None = pod
    namespace = str((pod.get("metadata") or {}).get("namespace") or "")
    while current is not None and len(chain) < MAX_OWNER_DEPTH:
        reference = controller_reference(current)
        if reference is None:
            break
        kind, name = str(reference["kind"]), str(reference.get("name") or "")
        try:
            current = client.get(f"{reference.get('apiVersion')}/{kind}", name, namespace or None)
        except failures:
            current = None
        chain.append(Owner(kind, name, current))
    return tuple(chain)


# ------------------------------------------------------------------------------------------ explaining


@dataclass(frozen=True, slots=True)
class PolicyVerdict:
    """Which policy governs the pod today and why: the winner, the other matching policies with the reason each
    loses, the ones that do not select the pod, and the ones skipped because they are invalid."""

    resolution: Resolution | None
    rivals: tuple[tuple[CompiledPolicy, str], ...] = ()
    unmatched: tuple[CompiledPolicy, ...] = ()
    invalid: tuple[CompiledPolicy, ...] = ()


def policy_label(kind: str, namespace: str, name: str) -> str:
    """`ClusterResourcePolicy default`, `ResourcePolicy shop/local`."""
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def why_loses(winner: Resolution, other: CompiledPolicy) -> str:
    """Why `other`, which also selects the pod, loses to `winner` (the anchor's precedence, §8.2)."""
    if winner.kind != other.kind:
        return "a ResourcePolicy in the pod's namespace wins over any ClusterResourcePolicy, whatever the priorities"
    if winner.priority != other.priority:
        return f"lower priority ({other.priority} < {winner.priority})"
    return f"same priority {winner.priority}; {winner.name!r} sorts before {other.name!r}"


def judge_policies(facts: PodFacts, policies: Sequence[Policy]) -> PolicyVerdict:
    """Resolve the pod's policy with `resolve_policy` and sort the other candidates into rivals (they match but
    lose, best first), unmatched and invalid."""
    cache = PolicyCache()
    resolution = resolve_policy(facts, policies, cache=cache)
    compiled = [cache.compile(policy) for policy in policies]
    candidates = [c for c in compiled if c.kind == "ClusterResourcePolicy" or c.namespace == facts.namespace]
    invalid = tuple(c for c in candidates if not c.matchable)
    matching = sorted((c for c in candidates if c.matches(facts)), key=precedence)
    rivals: list[tuple[CompiledPolicy, str]] = []
    if resolution is not None:
        winner_key = (resolution.kind, resolution.namespace, resolution.name)
        rivals = [(c, why_loses(resolution, c)) for c in matching if (c.kind, c.namespace, c.name) != winner_key]
    unmatched = tuple(c for c in candidates if c.matchable and not c.matches(facts))
    return PolicyVerdict(resolution, tuple(rivals), unmatched, invalid)


def _owner_lookup(owners: Sequence[Owner]) -> OwnerLookup:
    by_name = {(owner.kind, owner.name): owner.obj for owner in owners}

    def lookup(namespace: str, reference: Mapping[str, Any]) -> Mapping[str, Any] | None:
        return by_name.get((str(reference.get("kind")), str(reference.get("name"))))

    return lookup


def statistic(usage: UsageStats, aggregation: str) -> str | None:
    """The displayed figure a policy aggregation reads (`avg` → mean); None for `max`, which no status keeps."""
    if aggregation == "avg":
        return usage.mean
    if aggregation in PERCENTILES:
        value: str | None = getattr(usage, aggregation)
        return value
    return None


def recompute(figure: str, aggregation: str, headroom: str | None, resource: str) -> str | None:
    """`recommend` applied to one displayed statistic (None when it is not a quantity): the operator's own
    arithmetic, fed with the figure the status shows."""
    try:
        units = to_units(figure, resource)
    except (QuantityError, ValueError):
        return None
    if aggregation == "avg":
        stats = dataclasses.replace(EMPTY_STATS, mean=Fraction(units))
    else:  # `recommend` reads only the named statistic
        stats = dataclasses.replace(EMPTY_STATS, p50=units, p75=units, p90=units, p95=units, p99=units, max=units)
    try:
        return recommend(stats, aggregation, headroom, resource)
    except (ValueError, TypeError):
        return None


def headroom_text(headroom: str | None) -> str:
    """The factor as the policy wrote it, or `1` with why (unset, or not a positive decimal)."""
    factor = parse_headroom(headroom)
    if headroom is None or not headroom.strip():
        return "1 (headroom unset)"
    if str(factor) != headroom.strip() and factor == 1:
        return f"1 (headroom {headroom!r} is not a positive decimal)"
    return headroom.strip()


def formula(metric: MetricConfig, usage: UsageStats | None, recommended: str | None) -> str:
    """`cpu request = p95 (212m) × 1.15 = 243m`: how one recommended value comes from the statistics."""
    resource, field, aggregation = metric.resource, metric.field or "request", metric.aggregation or ""
    head = f"{resource} {field} = {aggregation or '?'}"
    if not aggregation:
        return f"{head}: the policy names no aggregation, so no value is recommended"
    figure = statistic(usage, aggregation) if usage is not None else None
    factor = headroom_text(metric.headroom)
    if figure is None:
        why = "no statistics yet" if usage is None else f"the status keeps no {aggregation} figure"
        result = f" = {recommended}" if recommended else ""
        return f"{head} × {factor}{result} ({why})"
    computed = recompute(figure, aggregation, metric.headroom, resource)
    if recommended:
        note = ""
        if computed is not None and computed != recommended:
            note = f" (from the exact {aggregation}; the figure shown is rounded: {computed})"
        return f"{head} ({figure}) × {factor} = {recommended}{note}"
    pending = f" → {computed}" if computed else ""
    return f"{head} ({figure}) × {factor}{pending}, not recommended yet (still accruing)"


def _template_container(owners: Sequence[Owner], name: str) -> Mapping[str, Any] | None:
    """The container `name` of the nearest owner's pod template: the resources the pod was created from."""
    for owner in owners:
        template = ((owner.obj or {}).get("spec") or {}).get("template")
        if template:
            return next((c for c in managed_containers(template) if c.get("name") == name), None)
    return None


def _resource(container: Mapping[str, Any] | None, section: str, resource: str) -> str | None:
    value = (((container or {}).get("resources") or {}).get(section) or {}).get(resource)
    return None if value is None else str(value)


def limit_lines(
    resource: str,
    recommendation: Recommendation | None,
    original: Mapping[str, Any] | None,
    managed_limit: bool,
) -> list[str]:
    """How the limit follows the request (`fit_limit`): a limit the policy does not manage is kept, or raised to
    keep the template's limit:request ratio; a recommended limit below the request is raised to it."""
    request = recommendation.request if recommendation else None
    limit = recommendation.limit if recommendation else None
    try:
        if limit:
            line = _managed_limit_line(resource, request or _resource(original, "requests", resource), limit)
        elif managed_limit or not request:
            line = None
        else:
            line = _template_limit_line(resource, request, original)
    except (QuantityError, TypeError, ValueError):
        line = f"{resource} limit: the pod template's values are not quantities"
    return [line] if line else []


def _managed_limit_line(resource: str, request: str | None, limit: str) -> str | None:
    if request is None or not fit_limit(request, None, limit, resource).scaled:
        return None
    return f"{resource} limit raised to the request {request}: a request never exceeds its limit"


def _template_limit_line(resource: str, request: str, original: Mapping[str, Any] | None) -> str:
    """A limit the policy does not manage: the template's, kept or raised with `fit_limit`."""
    if original is None:
        return f"{resource} limit: not managed by the policy (the pod template could not be read)"
    original_request = _resource(original, "requests", resource)
    original_limit = _resource(original, "limits", resource)
    if original_limit is None:
        return f"{resource} limit: none (the policy manages none and the pod template sets none)"
    fit = fit_limit(request, original_request, original_limit, resource)
    if not fit.scaled:
        return f"{resource} limit: {original_limit} from the pod template, kept (request {request} ≤ limit)"
    if original_request is None or fit.limit == format_units(to_units(request, resource), resource):
        return (
            f"{resource} limit: {original_limit} → {fit.limit}, raised to the request "
            "(a request never exceeds its limit)"
        )
    return (
        f"{resource} limit = {original_limit} × {request} / {original_request} = {fit.limit} "
        "(the template's limit:request ratio, kept so the request stays within the limit)"
    )


def _usage_lines(usage: UsageStats) -> list[str]:
    figures = "  ".join(
        f"{name} {value}"
        for name, value in (
            *((p, getattr(usage, p)) for p in PERCENTILES),
            ("mean", usage.mean),
            ("stdDev", usage.std_dev),
            ("cv", usage.cv),
        )
        if value is not None
    )
    source = f" from {usage.source}" if usage.source else ""
    updated = f" (updated {usage.last_updated:%Y-%m-%dT%H:%M:%SZ})" if usage.last_updated else ""
    span = f" over {usage.time_span}" if usage.time_span else ""
    return [f"{usage.resource}: {usage.samples or 0} samples{span}{source}{updated}", f"  {figures}"]


def _readiness_line(usage: UsageStats, spec: ResourcePolicySpec | None, ready: bool) -> str:
    verdict = "ready" if ready else "accruing"
    if spec is None or spec.readiness is None:
        return f"  {verdict}"
    readiness = spec.readiness
    floor = (readiness.cv_mean_floor or {}).get(usage.resource)
    floor_text = f"; the CV is not checked below a mean of {floor}" if floor and floor != "0" else ""
    return (
        f"  {verdict}: {usage.samples or 0} samples (needs {readiness.min_data_points}), "
        f"span {usage.time_span or '0s'} (needs {readiness.min_time_span}), "
        f"cv {usage.cv or '?'} (max {readiness.max_cv}){floor_text}"
    )


def _applied_line(pod: Mapping[str, Any], resource: str, recommendation: Recommendation | None) -> list[str]:
    """What admission wrote (the `applied-*` annotations), and whether the profile recommends the same today."""
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    written = {
        field: str(annotations[applied_annotation(resource, field)])
        for field in ("request", "limit")
        if applied_annotation(resource, field) in annotations
    }
    if not written:
        return []
    keys = ", ".join(applied_annotation(resource, field).rsplit("/", 1)[1] for field in written)
    lines = [f"admission wrote {', '.join(f'{f} {v}' for f, v in written.items())} (annotations {keys})"]
    if recommendation is not None and written.get("request") not in (None, recommendation.request):
        lines.append(
            f"the profile now recommends request {recommendation.request}: the pod keeps the values of its "
            "creation until it is recreated (apply) or resized in place (resize)"
        )
    return lines


def _running_line(container: Mapping[str, Any], resource: str) -> str:
    request = _resource(container, "requests", resource)
    limit = _resource(container, "limits", resource)
    parts = [f"request {request}" if request else "no request", f"limit {limit}" if limit else "no limit"]
    return f"pod spec now: {', '.join(parts)}"


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
    original = _template_container(ctx.owners, name)
    for resource in resources:
        usage = usages.get(resource)
        recommendation = recommendations.get(resource)
        if usage is not None:
            lines += [f"  {line}" for line in _usage_lines(usage)]
            lines.append(f"  {_readiness_line(usage, spec, recommendation is not None)}")
        else:
            lines.append(f"  {resource}: no samples in the profile yet")
        resource_metrics = [m for m in metrics if m.resource == resource]
        for metric in resource_metrics:
            field_value = getattr(recommendation, metric.field or "request", None) if recommendation else None
            lines.append(f"    {formula(metric, usage, field_value)}")
        managed_limit = any(m.field == "limit" for m in resource_metrics)
        lines += [f"    {line}" for line in limit_lines(resource, recommendation, original, managed_limit)]
        lines += [f"    {line}" for line in _applied_line(ctx.pod, resource, recommendation)]
        lines.append(f"    {_running_line(container, resource)}")
    return lines


def _policy_spec(ctx: PodContext, kind: str, namespace: str, name: str) -> ResourcePolicySpec | None:
    for policy in ctx.policies:
        policy_kind = "ResourcePolicy" if isinstance(policy, ResourcePolicy) else "ClusterResourcePolicy"
        policy_namespace = (policy.metadata.namespace or "") if policy_kind == "ResourcePolicy" else ""
        if (policy_kind, policy_namespace, policy.metadata.name) == (kind, namespace, name):
            return policy.spec.with_defaults()
    return None


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
    for key in (LAST_RESIZE, RESIZE_BLOCKED, RESIZE_BLOCKED_AT):
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
        expected = profile_name(values, ctx.identity_labels, discriminator)
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


def explain(ctx: PodContext) -> list[str]:
    """The explanation of a pod, as lines: pod, identity, policy, profile, then per container each resource's
    samples, statistics, readiness, the formula of every recommended value, the limit rule, what admission wrote
    and what the pod spec says now."""
    facts = PodFacts.from_pod(ctx.pod, lookup=_owner_lookup(ctx.owners))
    verdict = judge_policies(facts, ctx.policies)
    profile_status = ctx.profile.status if ctx.profile else None
    measured = profile_status.policy_ref if profile_status else None
    if measured is not None:
        spec = _policy_spec(ctx, measured.kind, measured.namespace or "", measured.name)
    elif verdict.resolution is not None:
        spec = verdict.resolution.spec
    else:
        spec = None
    lines = _pod_section(ctx) + _identity_section(ctx, verdict) + _policy_section(verdict, spec)
    lines += _profile_section(ctx)
    entries = {c.name: c for c in (profile_status.containers if profile_status else None) or ()}
    containers = managed_containers(ctx.pod)
    for container in containers:
        lines.append("")
        lines += _container_section(ctx, container, entries.get(str(container.get("name"))), spec)
    if len(containers) > 1:
        lines += [
            "",
            "Note: applied-* annotations are per pod; with several containers they hold the last one's values.",
        ]
    stale = sorted(set(entries) - {str(c.get("name")) for c in containers})
    if stale:
        lines += ["", f"The profile also has statistics of containers this pod does not run: {', '.join(stale)}"]
    return lines


def run(args: argparse.Namespace) -> int:
    """`ballast explain` with parsed flags; returns 0, or 1 for a bad reference, a missing pod or no cluster."""
    from ballast.internal.runtime.apierrors import APIStatusError, NotFoundError  # noqa: PLC0415

    try:
        namespace, name = parse_pod_ref(args.pod, args.namespace)
    except ValueError as exc:
        print(f"ballast explain: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        client = connect(args)
    except Exception as exc:  # kubeconfig problems surface as several exception types; all end the run
        return fail(exc)
    try:
        ctx = gather(client, namespace, name)
    except NotFoundError:
        return fail(f'pod "{name}" not found in namespace "{namespace}"')
    except (APIStatusError, OSError) as exc:
        return fail(exc)
    finally:
        client.close()
    print("\n".join(explain(ctx)))
    return 0
