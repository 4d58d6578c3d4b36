"""A recommendation from a series' statistics: an aggregate × headroom, truncated, as a canonical quantity."""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

from ballast.internal.quantity import format_units

from .decimals import HEADROOM_RANGE, parse_decimal
from .percentiles import Stats

AGGREGATIONS = ("p50", "p75", "p90", "p95", "p99", "max", "avg")
_ONE = Decimal(1)


def parse_headroom(headroom: str | Decimal | int | None) -> Decimal:
    """Return the headroom factor a policy's `headroom` field stands for: `"1.25"` → 1.25.

    None, blank, unparseable, non-finite or ≤ 0 values mean 1.0, as in the Go operator; so does a value outside
    `HEADROOM_RANGE` (0 < h ≤ 100, at most 6 decimal places — docs/design.md, difference 25), which the CRD and the
    validating webhook refuse but a policy stored before them may hold (`"1e-400"`, `"1e26"`).
    """
    if isinstance(headroom, bool):
        raise TypeError(f"headroom must be a decimal string, Decimal or int, got {headroom!r}")
    if isinstance(headroom, int):
        headroom = Decimal(headroom)
    value = headroom if isinstance(headroom, Decimal) else parse_decimal(headroom)
    if value is None or value not in HEADROOM_RANGE:
        return _ONE
    return value


def aggregate(stats: Stats, aggregation: str) -> int | Fraction:
    """Return the statistic named by `aggregation`: a percentile, `max`, or `avg` (the exact mean).

    Raises ValueError naming an unknown aggregation and the valid ones.
    """
    if aggregation == "avg":
        return stats.mean
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {aggregation!r} (expected one of {', '.join(AGGREGATIONS)})")
    value: int = getattr(stats, aggregation)
    return value


def recommend_units(stats: Stats, aggregation: str, headroom: str | Decimal | int | None) -> int:
    """Return aggregate × headroom in integer units, truncated toward zero (230m avg × 1.25 → 287).

    The product is exact: 200m × 1.15 is 230, not Go's 229. Raises ValueError on an unknown aggregation.
    """
    return math.trunc(Fraction(aggregate(stats, aggregation)) * Fraction(parse_headroom(headroom)))


def recommend(stats: Stats, aggregation: str, headroom: str | Decimal | int | None, resource: str) -> str:
    """Return the recommended quantity string for `resource`: `287m`, `1`, `1500m` for cpu; `192Mi`, `330` else.

    `aggregation` is one of p50, p75, p90, p95, p99, max, avg; `headroom` as in `parse_headroom`. Raises
    ValueError on an unknown aggregation (callers log it and leave that field unset) or an empty resource.
    """
    return format_units(recommend_units(stats, aggregation, headroom), resource)
