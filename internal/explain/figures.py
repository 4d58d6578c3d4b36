"""The per-resource lines of an explanation: the profile's statistics and readiness, the formula of each
recommended value, the limit rule, what admission wrote and what the pod spec says now.

Quantities read with binary suffixes (`shown`): a byte count that is not a whole number of KiB, which the status
and the pod spec keep as a bare integer (`258534604`), is shown as `246.56Mi (exactly 258534604)`.

Every value is recomputed with the domain functions the operator uses (`recommend`, `fit_limit`,
`parse_headroom`), fed with the figures the profile's status displays, never with arithmetic of its own: a
figure that does not give the profile's value back is shown next to it rather than corrected.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from ballast.api.ballast.v1 import MetricConfig, Recommendation, ResourcePolicySpec, UsageStats
from ballast.internal.enrollment import applied_annotation
from ballast.internal.limitplan import LimitPlan, limit_plan
from ballast.internal.quantity import QuantityError, human_quantity, to_units
from ballast.internal.stats import EMPTY_STATS, parse_headroom, recommend
from ballast.runtime import rfc3339

PERCENTILES = ("p50", "p75", "p90", "p95", "p99")
"""The percentiles a profile's `usageStats` displays, in the order they are printed."""


def shown(value: str, resource: str) -> str:
    """`value` as the explanation prints it: `human_quantity`, with the exact value after it when that rounded
    (`246.56Mi (exactly 258534604)`); canonical whole units (`192Mi`, `243m`) print as they are."""
    human = human_quantity(value, resource)
    if human == value:
        return value
    try:
        exact = to_units(human, resource) == to_units(value, resource)
    except (QuantityError, ValueError):
        exact = False
    return human if exact else f"{human} (exactly {value})"


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
        result = f" = {shown(recommended, resource)}" if recommended else ""
        return f"{head} × {factor}{result} ({why})"
    computed = recompute(figure, aggregation, metric.headroom, resource)
    if recommended:
        note = ""
        if computed is not None and computed != recommended:
            note = f" (from the exact {aggregation}; the figure shown is rounded: {computed})"
        return f"{head} ({figure}) × {factor} = {shown(recommended, resource)}{note}"
    pending = f" → {computed}" if computed else ""
    return f"{head} ({figure}) × {factor}{pending}, not recommended yet (still accruing)"


def _resource(container: Mapping[str, Any] | None, section: str, resource: str) -> str | None:
    value = (((container or {}).get("resources") or {}).get(section) or {}).get(resource)
    return None if value is None else str(value)


def limit_lines(
    resource: str,
    recommendation: Recommendation | None,
    original: Mapping[str, Any] | None,
    managed_limit: bool,
    *,
    why_unknown: str = "the pod template could not be read",
    bare: bool = False,
) -> list[str]:
    """How the limit follows the request: admission's own plan (`apply.limit_plan`) on the values the pod was
    created with (`original`: its template's container, or with `bare` a bare pod's own spec), in words — a limit
    the policy does not manage is kept, or raised keeping the original limit:request ratio; a recommended limit
    below the request is raised to it. Without `original`, `why_unknown` says why the creation values are not
    known."""
    origin = _BARE if bare else _TEMPLATE
    request = recommendation.request if recommendation else None
    limit = recommendation.limit if recommendation else None
    if not limit and (managed_limit or not request):
        return []
    if not limit and original is None:
        return [f"{resource} limit: not managed by the policy ({why_unknown})"]
    original_request = _resource(original, "requests", resource)
    try:
        plan = limit_plan(
            resource, request=request or None, limit=limit or None, current_request=original_request,
            current_limit=_resource(original, "limits", resource),
        )  # fmt: skip
    except (QuantityError, TypeError, ValueError):
        return [f"{resource} limit: {origin.possessive} values are not quantities"]
    line = _limit_line(resource, plan, request or original_request, original_request, origin)
    return [line] if line else []


@dataclasses.dataclass(frozen=True, slots=True)
class _Origin:
    """How the lines name where the creation values come from."""

    name: str
    possessive: str
    ratio: str


_TEMPLATE = _Origin("the pod template", "the pod template's", "the template's")
_BARE = _Origin("the pod's own spec (a bare pod)", "the pod's", "the pod's")


def _limit_line(
    resource: str, plan: LimitPlan, request: str | None, original_request: str | None, origin: _Origin
) -> str | None:
    request = shown(request, resource) if request else request
    original_request = shown(original_request, resource) if original_request else original_request
    before = shown(plan.before, resource) if plan.before else plan.before
    limit = shown(plan.limit, resource) if plan.limit else plan.limit
    if plan.managed:
        if not plan.scaled:
            return None  # the recommended limit, as written: nothing to explain
        return f"{resource} limit raised to the request {request}: a request never exceeds its limit"
    if plan.rule == "none":
        return f"{resource} limit: none (the policy manages none and {origin.name} sets none)"
    if plan.rule == "kept":
        return f"{resource} limit: {before} from {origin.name}, kept (request {request} ≤ limit)"
    if plan.rule == "raised-to-request":
        return f"{resource} limit: {before} → {limit}, raised to the request (a request never exceeds its limit)"
    return (
        f"{resource} limit = {before} × {request} / {original_request} = {limit} "
        f"({origin.ratio} limit:request ratio, kept so the request stays within the limit)"
    )


def usage_lines(usage: UsageStats) -> list[str]:
    """`cpu: 74 samples over 22s from …`, then the displayed figures on one line (those the status keeps)."""
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
    updated = f" (updated {rfc3339(usage.last_updated)})" if usage.last_updated else ""
    span = f" over {usage.time_span}" if usage.time_span else ""
    return [f"{usage.resource}: {usage.samples or 0} samples{span}{source}{updated}", f"  {figures}"]


def readiness_line(usage: UsageStats, spec: ResourcePolicySpec | None, ready: bool) -> str:
    """`ready`/`accruing`, with each readiness threshold of the policy next to the figure it is checked against."""
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


def applied_lines(pod: Mapping[str, Any], resource: str, recommendation: Recommendation | None) -> list[str]:
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
    values = ", ".join(f"{f} {shown(v, resource)}" for f, v in written.items())
    lines = [f"admission wrote {values} (annotations {keys})"]
    if recommendation is not None and written.get("request") not in (None, recommendation.request):
        lines.append(
            f"the profile now recommends request {shown(recommendation.request or '', resource)}: the pod keeps "
            "the values of its creation until it is recreated (apply) or resized in place (resize)"
        )
    return lines


def running_line(container: Mapping[str, Any], resource: str) -> str:
    """`pod spec now: request 243m, limit 1`: what the running container has, whatever was recommended."""
    request = _resource(container, "requests", resource)
    limit = _resource(container, "limits", resource)
    parts = [
        f"request {shown(request, resource)}" if request else "no request",
        f"limit {shown(limit, resource)}" if limit else "no limit",
    ]
    return f"pod spec now: {', '.join(parts)}"
