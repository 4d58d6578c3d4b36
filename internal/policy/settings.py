"""Checks of a policy's values (headrooms, readiness, thresholds, resize pace) that the Go operator silently replaces
with a default at use time; the validating webhook refuses them at write time instead (docs/design.md, difference 18).
"""

from __future__ import annotations

from collections.abc import Callable

from ballast.api.ballast.v1.policyspec import Behaviors, Readiness, ResourcePolicySpec
from ballast.internal.quantity import QuantityError, parse_quantity
from ballast.internal.resize import parse_percent
from ballast.internal.stats import parse_decimal, parse_duration

from .problems import PolicyProblem, index, key, quote

Check = Callable[[str], str | None]
"""A value check: the problem with a non-blank value, or None when it is fine."""


def _headroom(text: str) -> str | None:
    value = parse_decimal(text)
    if value is None or not value.is_finite() or value <= 0:
        return f'invalid headroom {quote(text)}: must be a decimal number > 0 such as "1.2"'
    return None


def _duration(minimum_exclusive: bool) -> Check:
    def check(text: str) -> str | None:
        try:
            nanoseconds = parse_duration(text)
        except ValueError:
            return f'invalid duration {quote(text)}: must be a Go duration such as "24h", "15m" or "90s"'
        if nanoseconds < 0 or (minimum_exclusive and nanoseconds == 0):
            bound = "longer than 0" if minimum_exclusive else "0 or longer"
            return f"invalid duration {quote(text)}: must be {bound}"
        return None

    return check


def _max_cv(text: str) -> str | None:
    value = parse_decimal(text)
    if value is None or not value.is_finite() or value < 0:
        return f'invalid maxCV {quote(text)}: must be a decimal number ≥ 0 such as "1.5"'
    return None


def _floor(text: str) -> str | None:
    try:
        value = parse_quantity(text)
    except QuantityError:
        return f'invalid quantity {quote(text)}: must be a quantity such as "25m" or "25Mi" ("0" always checks the CV)'
    if value < 0:
        return f"invalid quantity {quote(text)}: must not be negative"
    return None


def _percent(text: str) -> str | None:
    if parse_percent(text) is None:
        return f'invalid percentage {quote(text)}: must be a number > 0, optionally followed by %, such as "10%"'
    return None


_MIN_TIME_SPAN = _duration(minimum_exclusive=True)
_INTERVAL = _duration(minimum_exclusive=False)


def _check(path: str, text: str | None, check: Check, problems: list[PolicyProblem]) -> None:
    # Blank means omitted, as in with_defaults(): the default (or the next threshold level) applies.
    if text:
        message = check(text)
        if message is not None:
            problems.append(PolicyProblem(path, message))


def _readiness(readiness: Readiness, problems: list[PolicyProblem]) -> None:
    path = "spec.readiness"
    _check(f"{path}.minTimeSpan", readiness.min_time_span, _MIN_TIME_SPAN, problems)
    _check(f"{path}.maxCV", readiness.max_cv, _max_cv, problems)
    for resource, floor in (readiness.cv_mean_floor or {}).items():
        where = key(f"{path}.cvMeanFloor", resource)
        if not resource:
            problems.append(PolicyProblem(where, "resource name must not be empty"))
        message = _floor(floor)
        if message is not None:
            problems.append(PolicyProblem(where, message))


def _behaviors(behaviors: Behaviors, problems: list[PolicyProblem]) -> None:
    path = "spec.behaviors"
    thresholds = behaviors.thresholds
    if thresholds is not None:
        _check(f"{path}.thresholds.default", thresholds.default, _percent, problems)
        resize = thresholds.resize
        if resize is not None:
            _check(f"{path}.thresholds.resize.default", resize.default, _percent, problems)
            for resource, levels in (resize.resource_thresholds or {}).items():
                where = key(f"{path}.thresholds.resize.resourceThresholds", resource)
                if not resource:
                    problems.append(PolicyProblem(where, "resource name must not be empty"))
                _check(f"{where}.request", levels.request, _percent, problems)
                _check(f"{where}.limit", levels.limit, _percent, problems)
    pace = behaviors.resize
    if pace is not None:
        _check(f"{path}.resize.maxChangePerCycle", pace.max_change_per_cycle, _percent, problems)
        _check(f"{path}.resize.interval", pace.interval, _INTERVAL, problems)


def settings_problems(spec: ResourcePolicySpec) -> tuple[PolicyProblem, ...]:
    """Return the problems of the spec's values, none of which blocks matching.

    Checked: `metrics[].headroom` (a decimal > 0), `readiness.minTimeSpan` (a Go duration > 0),
    `readiness.maxCV` (a decimal ≥ 0), `readiness.cvMeanFloor` values (quantities ≥ 0), every threshold and
    `resize.maxChangePerCycle` (a percentage > 0, `"10%"` or `"10"`), `resize.interval` (a Go duration ≥ 0).
    A blank string counts as omitted, as in `with_defaults()`. Never raises for bad content.
    """
    problems: list[PolicyProblem] = []
    for position, metric in enumerate(spec.metrics or ()):
        _check(f"{index('spec.metrics', position)}.headroom", metric.headroom, _headroom, problems)
    if spec.readiness is not None:
        _readiness(spec.readiness, problems)
    if spec.behaviors is not None:
        _behaviors(spec.behaviors, problems)
    return tuple(problems)
