"""Statistics, readiness and recommendations of usage series (docs/compatibility.md).

Series are integer samples: millicores for cpu, bytes otherwise. Arithmetic is exact (docs/design.md, difference 13):
the mean and variance are fractions, headroom is a Decimal, and results truncate toward zero as the Go operator does.
"""

from __future__ import annotations

from .decimals import (
    HEADROOM_RANGE,
    MAX_CV_RANGE,
    MAX_DECIMAL_PLACES,
    PERCENT_RANGE,
    DecimalRange,
    decimal_places,
    parse_decimal,
)
from .display import UsageDisplay, display_usage
from .duration import format_duration, format_time_span, parse_duration
from .limits import LimitFit, fit_limit
from .percentiles import EMPTY_STATS, RunningStats, Stats, compute_stats, nearest_rank
from .readiness import (
    DEFAULT_CV_MEAN_FLOOR,
    DEFAULT_MAX_CV,
    DEFAULT_MIN_DATA_POINTS,
    DEFAULT_MIN_TIME_SPAN,
    Readiness,
    container_ready,
    evaluate_readiness,
    meets_threshold,
    ready_containers,
)
from .recommendation import AGGREGATIONS, aggregate, parse_headroom, recommend, recommend_units

__all__ = [
    "AGGREGATIONS",
    "DEFAULT_CV_MEAN_FLOOR",
    "DEFAULT_MAX_CV",
    "DEFAULT_MIN_DATA_POINTS",
    "DEFAULT_MIN_TIME_SPAN",
    "EMPTY_STATS",
    "HEADROOM_RANGE",
    "MAX_CV_RANGE",
    "MAX_DECIMAL_PLACES",
    "PERCENT_RANGE",
    "DecimalRange",
    "LimitFit",
    "Readiness",
    "RunningStats",
    "Stats",
    "UsageDisplay",
    "aggregate",
    "compute_stats",
    "container_ready",
    "decimal_places",
    "display_usage",
    "evaluate_readiness",
    "fit_limit",
    "format_duration",
    "format_time_span",
    "meets_threshold",
    "nearest_rank",
    "parse_decimal",
    "parse_duration",
    "parse_headroom",
    "ready_containers",
    "recommend",
    "recommend_units",
]
