"""The drift test: does a recommendation differ from the current value by more than the threshold?"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction
from functools import lru_cache

from ballast.internal.quantity import parse_quantity

Percent = Decimal | int


def percent(value: Percent, name: str) -> Fraction:
    """Return a percentage argument exactly; raise TypeError/ValueError naming `name` for a non-number or < 0."""
    if isinstance(value, bool) or not isinstance(value, Decimal | int):
        raise TypeError(f"{name} must be a Decimal or int percentage, got {type(value).__name__} {value!r}")
    if isinstance(value, Decimal) and not value.is_finite():
        raise ValueError(f"{name} must be finite, got {value}")
    if value < 0:
        raise ValueError(f"{name} must be ≥ 0, got {value}")
    return _exact(value)


@lru_cache(maxsize=256)  # a policy has a few thresholds, converted for every field of every pod planned
def _exact(value: Decimal | int) -> Fraction:
    return Fraction(value)


def quantity_pair(current: str | int, recommended: str | int) -> tuple[Fraction, Fraction]:
    """Return two quantities given both as strings or both as int units, exactly, in the same unit.

    Raises TypeError when they are mixed (an int's unit depends on the resource), QuantityError for a string
    that is not a quantity, ValueError for a negative value.
    """
    pair: list[Fraction] = []
    for name, value in (("current", current), ("recommended", recommended)):
        if isinstance(value, str):
            pair.append(_quantity(value))
        elif isinstance(value, int) and not isinstance(value, bool):
            pair.append(Fraction(value))
        else:
            raise TypeError(f"{name} must be a quantity string or int units, got {type(value).__name__} {value!r}")
        if pair[-1] < 0:
            raise ValueError(f"{name} quantity must not be negative, got {value!r}")
    if isinstance(current, str) != isinstance(recommended, str):
        raise TypeError(
            f"pass current and recommended both as quantity strings or both as int units, got {current!r} and "
            f"{recommended!r}"
        )
    return pair[0], pair[1]


@lru_cache(maxsize=4096)  # the same few quantities (a pod's values, a profile's recommendations) again and again
def _quantity(value: str) -> Fraction:
    return Fraction(parse_quantity(value))


def drifts(current: Fraction, recommended: Fraction, threshold_pct: Fraction) -> bool:
    """The drift rule on exact values: current 0 drifts toward any positive value, else |Δ| / current > thr %."""
    if current == 0:
        return recommended > 0
    # |r − c| · 100 > t · c over a common denominator, in integers (Fraction arithmetic normalises at every step).
    c, r, t = current.as_integer_ratio(), recommended.as_integer_ratio(), threshold_pct.as_integer_ratio()
    return abs(r[0] * c[1] - c[0] * r[1]) * 100 * t[1] > t[0] * c[0] * r[1]


def exceeds_drift(current: str | int, recommended: str | int, threshold_pct: Percent) -> bool:
    """Return whether `recommended` differs from `current` by strictly more than `threshold_pct` percent of
    `current`; a current of 0 drifts whenever the recommendation is positive.

    Quantities are both strings (`"250m"`, `"1Gi"`) or both int units; the comparison is exact. Raises
    TypeError for mixed or non-quantity arguments, ValueError for negative values or threshold.
    """
    threshold = percent(threshold_pct, "threshold_pct")
    cur, rec = quantity_pair(current, recommended)
    return drifts(cur, rec, threshold)
