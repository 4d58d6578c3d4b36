"""Summary statistics of a sample series: nearest-rank percentiles, exact mean, population stddev and CV."""

from __future__ import annotations

import bisect
import operator
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import Context, Decimal
from fractions import Fraction

# stddev and CV are irrational in general; 34 significant digits (IEEE decimal128) is far beyond display needs.
_ROOT_CONTEXT = Context(prec=34)
_PERCENTILES = (50, 75, 90, 95, 99)
_PROBE = 512
"""Values looked at to choose the fast path (the oldest ones of a series)."""
_REPEATING = 0.9
"""Fewer distinct values than this share of the probe: count instead of sorting (≲ 2,300 distinct in 10,000)."""
_SLOW_INT = 1 << 30
"""From one 30-bit CPython digit on, int comparisons in a sort cost about twice float ones."""
_EXACT_FLOAT = 1 << 53
_INSORT = 64
"""New values up to which `RunningStats` inserts each in place; beyond, it appends them and sorts once."""


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


def _check_ints(values: Iterable[object]) -> None:
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"samples must be ints (millicores or bytes), got {type(value).__name__} {value!r}")


def compute_stats(values: Iterable[int]) -> Stats:
    """Return the statistics of integer samples `values`, given in any order; all zeros for no samples.

    Raises TypeError naming the first value that is not an int (bools and floats included).

    Plain ints (what the history store returns) take a fast path with the same results: the statistics come from
    counts when values repeat (cpu millicores do), else from one sort — of floats when the values are large
    enough for int comparisons to be slow yet small enough (< 2⁵³) for floats to hold them exactly.
    """
    ordered = list(values)
    if set(map(type, ordered)) != {int}:
        _check_ints(ordered)  # the slow path: names the first offender (int subclasses other than bool pass)
        if not ordered:
            return EMPTY_STATS
        ordered.sort()
        ranked = [nearest_rank(ordered, p) for p in _PERCENTILES] + [ordered[-1]]
        return _stats(len(ordered), sum(ordered), sum(v * v for v in ordered), ranked)
    n = len(ordered)
    probe = ordered[:_PROBE]
    if len(set(probe)) < len(probe) * _REPEATING:
        return _from_counts(n, Counter(ordered))
    ranked = _ranked_sorted(ordered, max(probe) >= _SLOW_INT)
    return _stats(n, sum(ordered), sum(map(operator.mul, ordered, ordered)), ranked)


def _ranks(n: int) -> list[int]:
    """The 1-based nearest ranks ⌈p/100 × n⌉ of the percentiles, then n (the max), ascending."""
    return [min(max(-(-p * n // 100), 1), n) for p in _PERCENTILES] + [n]


def _ranked_sorted(ordered: list[int], large: bool) -> list[int]:
    """The percentile values and the max of plain ints, from one sort."""
    ranks = _ranks(len(ordered))
    if large:
        floats = sorted(map(float, ordered))
        if floats[0] > -_EXACT_FLOAT and floats[-1] < _EXACT_FLOAT:  # every value exact, so the order too
            return [int(floats[rank - 1]) for rank in ranks]
    ordered.sort()
    return [ordered[rank - 1] for rank in ranks]


def _from_counts(n: int, counts: Counter[int]) -> Stats:
    """Statistics from value → count: sums over distinct values, percentiles by walking cumulative counts."""
    ranks = _ranks(n)
    ranked: list[int] = []
    seen = 0
    for value in sorted(counts):
        seen += counts[value]
        while len(ranked) < len(ranks) and seen >= ranks[len(ranked)]:
            ranked.append(value)
    total = sum(value * count for value, count in counts.items())
    squares = sum(value * value * count for value, count in counts.items())
    return _stats(n, total, squares, ranked)


def _stats(n: int, total: int, squares: int, ranked: list[int]) -> Stats:
    """Stats from the count, sum, sum of squares and [p50, p75, p90, p95, p99, max] of the samples."""
    spread = n * squares - total * total  # n² × population variance, exact
    # cv² = variance / mean² = spread / total²: one rounding before the root.
    cv = Decimal(0) if total == 0 else _root(spread, total * total).copy_sign(Decimal(total))
    p50, p75, p90, p95, p99, largest = ranked
    return Stats(
        count=n,
        mean=Fraction(total, n),
        variance=Fraction(spread, n * n),
        stddev=_root(spread, n * n),
        cv=cv,
        p50=p50,
        p75=p75,
        p90=p90,
        p95=p95,
        p99=p99,
        max=largest,
    )


class RunningStats:
    """`compute_stats` of one series polled again and again, from the values new since the last call.

    Between two polls a series usually only grows at its end (the history store returns values oldest first, and
    nothing is pushed out until its reservoir is full): then the sorted values and the sums are updated with the
    new values only. Anything else — samples pushed out, a purge, another series — is computed afresh. The results
    are `compute_stats`'s, always; the cost is one sorted copy of the series, so keep one only where a series is
    recomputed often (the collector keeps it while the series accrues). Safe to share between threads.
    """

    __slots__ = ("_lock", "_sorted", "_squares", "_total", "_values")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._values: tuple[int, ...] = ()
        self._sorted: list[int] = []
        self._total = 0
        self._squares = 0

    def of(self, values: Sequence[int], *, grown_from: tuple[int, ...] | None = None) -> Stats:
        """The statistics of `values` (as `compute_stats`, which raises the same errors for bad values).

        `grown_from`: a tuple `values` is known to begin with, element for element (a store's read cache says so,
        `Series.grown_from`). When it is the very tuple of the last call, the values known are not compared again
        — for a long series that comparison costs more than the rest of the update."""
        values = values if isinstance(values, tuple) else tuple(values)
        with self._lock:
            known = len(self._values)
            grown = known and len(values) >= known and (grown_from is self._values or values[:known] == self._values)
            if not grown:
                known = 0
                self._sorted, self._total, self._squares = [], 0, 0
            new = values[known:]
            if set(map(type, new)) - {int}:  # not plain ints: the slow path's checks and results
                self._values, self._sorted = (), []
                return compute_stats(values)
            self._values = values
            if not values:
                return EMPTY_STATS
            if len(new) <= _INSORT:
                for value in new:
                    bisect.insort(self._sorted, value)
            else:
                self._sorted += new
                self._sorted.sort()
            self._total += sum(new)
            self._squares += sum(map(operator.mul, new, new))
            ordered = self._sorted
            ranked = [ordered[rank - 1] for rank in _ranks(len(ordered))]
            return _stats(len(ordered), self._total, self._squares, ranked)
