"""Decimal numbers written in policy fields (`"1.25"`, `"1.5"`, `"20"`), parsed exactly, and the range each kind of
field accepts (docs/design.md, difference 25)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?")

MAX_DECIMAL_PLACES = 6
"""The most decimal places a policy decimal may have (headroom, maxCV, percentages)."""


def parse_decimal(text: str | None) -> Decimal | None:
    """Return the exact value of a decimal literal such as `1.25`, ` 2 `, `1e-1`, or None when it is not one.

    Surrounding whitespace is ignored. Blank text, NaN, infinities and exponents beyond three digits give None,
    so callers apply their documented fallback (the Go operator's `strconv.ParseFloat` error path). The range a
    field accepts is checked separately (`DecimalRange`).
    """
    if text is None:
        return None
    stripped = text.strip()
    if _DECIMAL.fullmatch(stripped) is None:
        return None
    return Decimal(stripped)


def decimal_places(value: Decimal) -> int:
    """The decimal places `value` needs, trailing zeros ignored: `1.250` → 2, `1e-400` → 400, `1e3` → 0.

    Computed from the digits, never through a context, so nothing is rounded first. Raises ValueError for NaN
    or an infinity.
    """
    _, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):  # 'n', 'N' or 'F'
        raise ValueError(f"{value} has no decimal places")
    places = max(0, -exponent)
    position = len(digits) - 1
    while places and position >= 0 and digits[position] == 0:
        places -= 1
        position -= 1
    return places


@dataclass(frozen=True, slots=True)
class DecimalRange:
    """The values a kind of policy decimal accepts: `low < x ≤ high` (`low ≤ x ≤ high` when `low_inclusive`),
    with at most `places` decimal places. `value in RANGE` is False for NaN, infinities and non-Decimals."""

    low: Decimal
    high: Decimal
    low_inclusive: bool = False
    places: int = MAX_DECIMAL_PLACES

    def __contains__(self, value: object) -> bool:
        if not isinstance(value, Decimal) or not value.is_finite():
            return False
        above = value >= self.low if self.low_inclusive else value > self.low
        return above and value <= self.high and decimal_places(value) <= self.places

    def describe(self, name: str) -> str:
        """The range in words: `0 < headroom ≤ 100 with at most 6 decimal places`."""
        low = "≤" if self.low_inclusive else "<"
        return f"{self.low} {low} {name} ≤ {self.high} with at most {self.places} decimal places"


HEADROOM_RANGE = DecimalRange(Decimal(0), Decimal(100))
"""`metrics[].headroom`: 0 < h ≤ 100 (a factor: 1.25 is 25 % above the statistic)."""

MAX_CV_RANGE = DecimalRange(Decimal(0), Decimal(100), low_inclusive=True)
"""`readiness.maxCV`: 0 ≤ v ≤ 100 (a population CV over n samples is at most √(n − 1), ≈ 100 for 10,000)."""

PERCENT_RANGE = DecimalRange(Decimal(0), Decimal(100))
"""Drift thresholds and `resize.maxChangePerCycle`, in percent: 0 < p ≤ 100 (100 % of the gap reaches the target;
more would step past it)."""
