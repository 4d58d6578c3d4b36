"""The per-cycle step cap: move a fraction of the gap toward the recommendation, snapping when close."""

from __future__ import annotations

import math
from fractions import Fraction

from ballast.internal.quantity import format_bytes, format_cpu_millis, format_units, to_units

from .drift import Percent, drifts, percent, quantity_pair


def _capped(current: Fraction, recommended: Fraction, max_change: Fraction, threshold: Fraction) -> Fraction | None:
    """The exact capped value, or None when the step lands within the threshold (snap to the recommendation)."""
    if current == 0:
        return None
    step = abs(recommended - current) * max_change / 100
    capped = current + step if recommended > current else current - step
    return capped if drifts(capped, recommended, threshold) else None


def _max_change(max_change_pct: Percent) -> Fraction:
    value = percent(max_change_pct, "max_change_pct")
    if value == 0:
        raise ValueError("max_change_pct must be > 0")
    return value


def _require_units(value: object, name: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"step_toward takes int units; {name} is {value!r} (use cap_change for quantity strings)")


def _step_units(current: int, recommended: int, max_change: Fraction, threshold: Fraction) -> int:
    cur, rec = quantity_pair(current, recommended)
    capped = _capped(cur, rec, max_change, threshold)
    return recommended if capped is None else math.trunc(capped)


def step_toward(current: int, recommended: int, max_change_pct: Percent, threshold_pct: Percent) -> int:
    """Return the next value, in int units, of a move from `current` toward `recommended`.

    The step is `max_change_pct` percent of the gap, truncated toward zero; when the stepped value is within
    `threshold_pct` of the recommendation (or current is 0) the result is the recommendation itself. At 50 % /
    10 %, 1000 → 288 goes 644, 466, 377, 332, 288. Raises TypeError for non-int units, ValueError for negative
    values, a negative threshold or a max change ≤ 0.
    """
    for name, value in (("current", current), ("recommended", recommended)):
        _require_units(value, name)
    return _step_units(current, recommended, _max_change(max_change_pct), percent(threshold_pct, "threshold_pct"))


def cap_change(
    current: str | int,
    recommended: str | int,
    max_change_pct: Percent,
    threshold_pct: Percent,
    *,
    resource: str | None = None,
) -> str:
    """Return the quantity a resize should set this cycle on the way from `current` to `recommended`.

    A snap returns `recommended` itself (as given when it is a string). With `resource`, both values may be
    strings or int units and the step is exact in integer millicores (cpu) or bytes: `cap_change("1", "2", 50,
    10, resource="cpu")` is `1500m`. Without it both must be strings and, as in the Go operator, a
    recommendation ending in `m` steps in millicores and any other in whole base units (so whole-core cpu
    recommendations truncate to whole cores). Raises TypeError for ints without `resource` or mixed kinds,
    QuantityError for a string that is not a quantity, ValueError as `step_toward` does.
    """
    max_change = _max_change(max_change_pct)
    threshold = percent(threshold_pct, "threshold_pct")
    if resource is not None:
        target = to_units(recommended, resource)
        units = _step_units(to_units(current, resource), target, max_change, threshold)
        if units == target and isinstance(recommended, str):
            return recommended
        return format_units(units, resource)
    if not (isinstance(current, str) and isinstance(recommended, str)):
        raise TypeError(
            f"cap_change needs resource= to format int units, got {current!r} and {recommended!r} without it"
        )
    cur, rec = quantity_pair(current, recommended)
    capped = _capped(cur, rec, max_change, threshold)
    if capped is None:
        return recommended
    if recommended.endswith("m"):
        return format_cpu_millis(math.trunc(capped * 1000))
    return format_bytes(math.trunc(capped))
