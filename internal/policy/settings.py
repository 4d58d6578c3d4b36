"""Checks of a policy's values (headrooms, readiness, thresholds, resize pace) that the Go operator silently replaces
with a default at use time; the validating webhook refuses them at write time instead (docs/design.md, difference 18).

Every decimal has a finite range (difference 25), written the way the CRD's pattern accepts it (plain decimals, no
exponent, sign or spaces): headroom 0 < h ≤ 100, `maxCV` 0 ≤ v ≤ 100, thresholds and `maxChangePerCycle`
0 < p ≤ 100 (percent), each with at most 6 decimal places; `cvMeanFloor` values are quantities from 0 to
2**63 − 1 units (millicores for cpu, bytes otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from decimal import Decimal

from ballast.api.ballast.v1.policyspec import (
    DECIMAL_PATTERN,
    PERCENT_PATTERN,
    QUANTITY_PATTERN,
    Behaviors,
    Readiness,
    ResourcePolicySpec,
)
from ballast.internal.quantity import INT64_MAX, QuantityError, parse_quantity
from ballast.internal.stats import HEADROOM_RANGE, MAX_CV_RANGE, PERCENT_RANGE, DecimalRange, parse_duration

from .problems import PolicyProblem, index, key, quote

OOM_BUMP_RATIO_RANGE = DecimalRange(Decimal(1), Decimal(100), low_inclusive=True)
"""`behaviors.oom.bumpRatio`: 1 ≤ r ≤ 100 (1 leaves the raise to `minBump`)."""

Check = Callable[[str], str | None]
"""A value check: the problem with a non-blank value, or None when it is fine."""


_DECIMAL = re.compile(DECIMAL_PATTERN)
_PERCENT = re.compile(PERCENT_PATTERN)
_QUANTITY = re.compile(QUANTITY_PATTERN)


def _in_range(text: str, syntax: re.Pattern[str], bounds: DecimalRange) -> bool:
    # The CRD's syntax first (so `1e-1`, `+1` and `1.2 ` are refused here too), then the range.
    return syntax.fullmatch(text) is not None and Decimal(text.removesuffix("%")) in bounds


def _decimal(name: str, bounds: DecimalRange, example: str) -> Check:
    def check(text: str) -> str | None:
        if _in_range(text, _DECIMAL, bounds):
            return None
        return f"invalid {name} {quote(text)}: must be a decimal number {bounds.describe(name)}, such as {example}"

    return check


_headroom = _decimal("headroom", HEADROOM_RANGE, '"1.2"')
_max_cv = _decimal("maxCV", MAX_CV_RANGE, '"1.5"')
_bump_ratio = _decimal("bumpRatio", OOM_BUMP_RATIO_RANGE, '"1.2"')


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


def _floor(resource: str) -> Check:
    def check(text: str) -> str | None:
        if text.startswith("-"):
            return f"invalid quantity {quote(text)}: must not be negative"
        if _QUANTITY.fullmatch(text) is None:
            return (
                f'invalid quantity {quote(text)}: must be a quantity such as "25m" or "25Mi" ("0" always checks the '
                "CV), with an exponent of at most two digits"
            )
        try:
            value = parse_quantity(text)
        except QuantityError:  # the syntax is right, so the value is beyond 2**63 − 1 cores or bytes
            value = None
        if value is None or (value * 1000 if resource == "cpu" else value) > INT64_MAX:
            unit = "millicores" if resource == "cpu" else "bytes"
            return f"invalid quantity {quote(text)}: must be at most {INT64_MAX} {unit} (2**63 − 1)"
        return None

    return check


def _percent(text: str) -> str | None:
    if _in_range(text, _PERCENT, PERCENT_RANGE):
        return None
    return (
        f"invalid percentage {quote(text)}: must be a number {PERCENT_RANGE.describe('p')}, optionally followed by "
        '%, such as "10%"'
    )


_MIN_TIME_SPAN = _duration(minimum_exclusive=True)
_INTERVAL = _duration(minimum_exclusive=False)


def _check(path: str, text: str | None, check: Check, problems: list[PolicyProblem]) -> None:
    # Blank means omitted, as in with_defaults(): the default (or the next threshold level) applies.
    if text:
        message = check(text)
        if message is not None:
            problems.append(PolicyProblem(path, message))


MAX_MIN_DATA_POINTS = 365 * 24 * 3600
"""The most samples `readiness.minDataPoints` may ask for: a year of polls once a second, the collector's fastest
(docs/design.md, difference 70). More can never be collected, so the profile would never be ready."""


def _readiness(readiness: Readiness, problems: list[PolicyProblem]) -> None:
    path = "spec.readiness"
    wanted = readiness.min_data_points
    if wanted is not None and wanted > MAX_MIN_DATA_POINTS:
        problems.append(
            PolicyProblem(
                f"{path}.minDataPoints",
                f"{wanted} samples can never be collected: at most {MAX_MIN_DATA_POINTS} (a year of polls once a "
                "second)",
            )
        )
    _check(f"{path}.minTimeSpan", readiness.min_time_span, _MIN_TIME_SPAN, problems)
    _check(f"{path}.maxCV", readiness.max_cv, _max_cv, problems)
    for resource, floor in (readiness.cv_mean_floor or {}).items():
        where = key(f"{path}.cvMeanFloor", resource)
        if not resource:
            problems.append(PolicyProblem(where, "resource name must not be empty"))
        message = _floor(resource)(floor)
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
    oom = behaviors.oom
    if oom is not None:
        _check(f"{path}.oom.bumpRatio", oom.bump_ratio, _bump_ratio, problems)
        _check(f"{path}.oom.minBump", oom.min_bump, _floor("memory"), problems)
        _check(f"{path}.oom.window", oom.window, _MIN_TIME_SPAN, problems)
        _check(f"{path}.oom.maxLimit", oom.max_limit, _floor("memory"), problems)


def settings_problems(spec: ResourcePolicySpec) -> tuple[PolicyProblem, ...]:
    """Return the problems of the spec's values, none of which blocks matching.

    Checked: `metrics[].headroom` (a decimal 0 < h ≤ 100), `readiness.minTimeSpan` (a Go duration > 0),
    `readiness.maxCV` (a decimal 0 ≤ v ≤ 100), `readiness.cvMeanFloor` values (quantities from 0 to 2**63 − 1
    units), every threshold and `resize.maxChangePerCycle` (a percentage 0 < p ≤ 100, `"10%"` or `"10"`), each
    decimal with at most 6 decimal places and no exponent, sign or spaces (the CRD's patterns); `resize.interval`
    (a Go duration ≥ 0); `oom.bumpRatio` (a decimal 1 ≤ r ≤ 100), `oom.minBump` and `oom.maxLimit` (byte
    quantities), `oom.window` (a Go duration > 0).
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
