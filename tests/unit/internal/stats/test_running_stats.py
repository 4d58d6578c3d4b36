from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.internal.stats import EMPTY_STATS, RunningStats, compute_stats

_VALUES = st.integers(min_value=0, max_value=2**40)
_POLLS = st.lists(
    st.tuples(
        st.sampled_from(["grow", "replace", "shrink"]),
        st.lists(_VALUES, max_size=80),
    ),
    min_size=1,
    max_size=12,
)


@given(st.lists(_VALUES, max_size=200), _POLLS)
def test_every_poll_gives_compute_stats_results(start: list[int], polls: list[tuple[str, list[int]]]) -> None:
    """Growing at the end (the usual poll), replaced values (a full reservoir) and a shrunk series (a purge) all
    give exactly what a fresh computation gives."""
    running = RunningStats()
    series = tuple(start)
    assert running.of(series) == compute_stats(series)
    for change, values in polls:
        if change == "grow":
            series += tuple(values)
        elif change == "replace" and series:
            series = (*values[: len(series)], *series[len(values) :])
        else:
            series = series[len(values) :]
        assert running.of(series) == compute_stats(series)


def test_repeating_cpu_values_across_the_insert_and_sort_paths() -> None:
    running = RunningStats()
    series: tuple[int, ...] = ()
    for poll in range(40):
        series += tuple(100 + (poll * 7 + i) % 5 for i in range(3 if poll % 2 else 100))
        assert running.of(series) == compute_stats(series)


def test_an_empty_series_after_samples_gives_all_zeros() -> None:
    running = RunningStats()
    assert running.of((5, 6)).count == 2
    assert running.of(()) == EMPTY_STATS


def test_a_value_that_is_not_an_int_is_refused_and_forgotten() -> None:
    running = RunningStats()
    running.of((1, 2, 3))
    with pytest.raises(TypeError, match="samples must be ints"):
        running.of((1, 2, 3, 4.5))  # type: ignore[arg-type]
    assert running.of((1, 2, 3, 4)) == compute_stats((1, 2, 3, 4))


def test_a_list_is_read_as_the_same_series() -> None:
    running = RunningStats()
    running.of((1, 2))
    assert running.of([1, 2, 10]) == compute_stats([1, 2, 10])


@given(st.lists(_VALUES, max_size=200), st.lists(st.lists(_VALUES, max_size=80), min_size=1, max_size=12))
def test_a_series_said_to_have_grown_from_the_last_values_gives_compute_stats_results(
    start: list[int], appended: list[list[int]]
) -> None:
    running = RunningStats()
    series = tuple(start)
    running.of(series)
    for values in appended:
        grown = series + tuple(values)
        assert running.of(grown, grown_from=series) == compute_stats(grown)
        series = grown


def test_grown_from_another_tuple_than_the_last_is_not_trusted() -> None:
    running = RunningStats()
    running.of(tuple(range(5, 8)))
    stale = tuple(range(5, 8))  # equal values, but not the tuple of the last call: the values are compared
    assert running.of((1, 2, 3, 4), grown_from=stale) == compute_stats((1, 2, 3, 4))


def test_grown_from_the_last_tuple_is_trusted_without_comparing() -> None:
    """Said to have grown from the last values, a series is not compared with them: a caller that says so wrongly
    gets the statistics of what it said (the store's read cache says it only when it holds)."""
    running = RunningStats()
    last = tuple(range(1, 4))
    running.of(last)
    assert running.of((9, 9, 9, 4), grown_from=last) == compute_stats((1, 2, 3, 4))
