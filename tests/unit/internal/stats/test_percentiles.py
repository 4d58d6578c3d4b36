from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.internal.stats import EMPTY_STATS, compute_stats, nearest_rank

_SERIES = st.lists(st.integers(min_value=0, max_value=10**12), min_size=1, max_size=300)


def test_one_to_twenty_gives_the_anchor_percentiles() -> None:
    stats = compute_stats(range(1, 21))
    assert (stats.p50, stats.p75, stats.p90, stats.p95, stats.p99, stats.max) == (10, 15, 18, 19, 20, 20)
    assert stats.mean == Fraction(21, 2)
    assert stats.count == 20


def test_population_stddev_and_cv_of_the_anchor_example() -> None:
    stats = compute_stats([2, 4, 4, 4, 5, 5, 7, 9])
    assert stats.mean == 5
    assert stats.variance == 4
    assert stats.stddev == Decimal(2)
    assert stats.cv == Decimal("0.4")


def test_no_samples_give_all_zeros() -> None:
    assert compute_stats([]) == EMPTY_STATS
    assert EMPTY_STATS.count == 0
    assert EMPTY_STATS.cv == 0
    assert EMPTY_STATS.max == 0


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([7], (7, 7, 7, 7, 7, 7)),
        ([1, 2], (1, 2, 2, 2, 2, 2)),
        ([5, 1, 3, 2, 4], (3, 4, 5, 5, 5, 5)),
        (list(range(1, 101)), (50, 75, 90, 95, 99, 100)),
        (list(range(1, 1001)), (500, 750, 900, 950, 990, 1000)),
    ],
)
def test_percentiles_are_nearest_rank(values: list[int], expected: tuple[int, ...]) -> None:
    stats = compute_stats(values)
    assert (stats.p50, stats.p75, stats.p90, stats.p95, stats.p99, stats.max) == expected


def test_an_all_zero_series_has_cv_zero() -> None:
    stats = compute_stats([0, 0, 0])
    assert stats.mean == 0
    assert stats.stddev == 0
    assert stats.cv == 0


def test_values_may_come_in_any_order() -> None:
    values = list(range(10_000))
    shuffled = values[1::2][::-1] + values[::2]
    assert compute_stats(shuffled) == compute_stats(values)


@pytest.mark.parametrize("bad", [1.5, True, "3", None])
def test_a_sample_that_is_not_an_int_is_named(bad: object) -> None:
    with pytest.raises(TypeError, match=rf"samples must be ints .* got {type(bad).__name__}"):
        compute_stats([1, bad, 3])  # type: ignore[list-item]


@pytest.mark.parametrize(("p", "message"), [(-1, "within"), (101, "within")])
def test_nearest_rank_refuses_a_percentile_out_of_range(p: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        nearest_rank([1, 2, 3], p)


def test_nearest_rank_needs_values() -> None:
    with pytest.raises(ValueError, match="at least one value"):
        nearest_rank([], 50)


@given(_SERIES, st.integers(0, 100), st.integers(0, 100))
def test_percentiles_are_monotone_in_p(values: list[int], p: int, q: int) -> None:
    ordered = sorted(values)
    low, high = sorted((p, q))
    assert nearest_rank(ordered, low) <= nearest_rank(ordered, high)


@given(_SERIES)
def test_statistics_are_ordered_and_exact(values: list[int]) -> None:
    stats = compute_stats(values)
    assert min(values) <= stats.p50 <= stats.p75 <= stats.p90 <= stats.p95 <= stats.p99 <= stats.max == max(values)
    assert min(values) <= stats.mean <= max(values)
    assert stats.mean == Fraction(sum(values), len(values))
    assert stats.variance == sum((v - stats.mean) ** 2 for v in values) / len(values)
    squared = stats.stddev**2
    assert abs(squared - Decimal(stats.variance.numerator) / stats.variance.denominator) <= Decimal("1e-25") * max(
        Decimal(1), squared
    )


@given(_SERIES, st.sampled_from([50, 75, 90, 95, 99]))
def test_a_percentile_covers_at_least_p_percent_of_the_samples(values: list[int], p: int) -> None:
    value = getattr(compute_stats(values), f"p{p}")
    assert sum(v <= value for v in values) * 100 >= p * len(values)
    assert sum(v < value for v in values) * 100 < p * len(values)


class _Sample(int):
    """An int subclass: takes the generic path of compute_stats, the reference for the fast ones."""


_FAST_PATH_SERIES = st.one_of(
    st.lists(st.integers(0, 20), min_size=1, max_size=1_200),  # repeating: counted
    st.lists(st.integers(0, 10**6), min_size=1, max_size=1_200),  # distinct, one digit: sorted as ints
    st.lists(st.integers(2**30, 2**40), min_size=1, max_size=1_200),  # large: sorted as floats
    st.lists(st.integers(2**53 - 3, 2**53 + 3), min_size=1, max_size=600),  # beyond exact floats
    st.lists(st.integers(-(2**62), 2**62), min_size=1, max_size=600),
)


@given(_FAST_PATH_SERIES)
def test_the_fast_paths_give_exactly_what_the_generic_path_gives(values: list[int]) -> None:
    fast, generic = compute_stats(values), compute_stats([_Sample(v) for v in values])
    assert fast == generic
    assert all(type(getattr(fast, name)) is int for name in ("p50", "p75", "p90", "p95", "p99", "max"))
