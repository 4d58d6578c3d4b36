"""Summary statistics of a sample series: nearest-rank percentiles, exact mean, population stddev and CV."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Context, Decimal
from fractions import Fraction

# stddev and CV are irrational in general; 34 significant digits (IEEE decimal128) is far beyond display needs.
_ROOT_CONTEXT = Context(prec=34)


@dataclass(frozen=True, slots=True)
class Stats:
    """Statistics of one (container, resource) series, in its integer units (millicores or bytes).

    `mean` and `variance` (population, ÷n) are exact; `stddev` and `cv` (stddev / mean, 0 when the mean is 0)
    are Decimals to 34 significant digits. Percentiles are nearest-rank sample values; `max` is the largest.
    """

    count: int
    mean: Fraction
    variance: Fraction
    stddev: Decimal
    cv: Decimal
    p50: int
    p75: int
    p90: int
    p95: int
    p99: int
    max: int


EMPTY_STATS = Stats(
    count=0,
    mean=Fraction(0),
    variance=Fraction(0),
    stddev=Decimal(0),
    cv=Decimal(0),
    p50=0,
    p75=0,
    p90=0,
    p95=0,
    p99=0,
    max=0,
)


def nearest_rank(sorted_values: Sequence[int], p: int | Fraction | Decimal) -> int:
    """Return the `p`-th percentile of ascending `sorted_values` by nearest rank: rank ⌈p/100 × n⌉ in [1, n].

    The rank is computed exactly (no binary float). Raises ValueError for an empty sequence or p outside [0, 100].
    """
    if not sorted_values:
        raise ValueError("nearest_rank needs at least one value")
    if not 0 <= p <= 100:
        raise ValueError(f"percentile must be within [0, 100], got {p}")
    exact = Fraction(p) * len(sorted_values) / 100
    rank = -(-exact.numerator // exact.denominator)
    return sorted_values[min(max(rank, 1), len(sorted_values)) - 1]


def _root(numerator: int, denominator: int) -> Decimal:
    return _ROOT_CONTEXT.sqrt(_ROOT_CONTEXT.divide(Decimal(numerator), Decimal(denominator)))


def compute_stats(values: Iterable[int]) -> Stats:
    """Return the statistics of integer samples `values`, given in any order; all zeros for no samples.

    Raises TypeError naming the first value that is not an int (bools and floats included).
    """
    ordered = list(values)
    for value in ordered:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"samples must be ints (millicores or bytes), got {type(value).__name__} {value!r}")
    ordered.sort()
    n = len(ordered)
    if n == 0:
        return EMPTY_STATS
    total = sum(ordered)
    spread = n * sum(v * v for v in ordered) - total * total  # n² × population variance, exact
    # cv² = variance / mean² = spread / total²: one rounding before the root.
    cv = Decimal(0) if total == 0 else _root(spread, total * total).copy_sign(Decimal(total))
    return Stats(
        count=n,
        mean=Fraction(total, n),
        variance=Fraction(spread, n * n),
        stddev=_root(spread, n * n),
        cv=cv,
        p50=nearest_rank(ordered, 50),
        p75=nearest_rank(ordered, 75),
        p90=nearest_rank(ordered, 90),
        p95=nearest_rank(ordered, 95),
        p99=nearest_rank(ordered, 99),
        max=ordered[-1],
    )
