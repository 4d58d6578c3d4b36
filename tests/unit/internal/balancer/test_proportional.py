"""The proportional policy: highest averages (D'Hondt) over the targets with a weight, minimums counting as seats
already won, ties to the alphabetically first name."""

from __future__ import annotations

from ballast.internal.balancer import place
from ballast.internal.balancer.distribute import _by_next_average

from .builders import proportional, target


def test_the_proposals_example_splits_evenly() -> None:
    targets = [target("nginx-1", 1, 7), target("nginx-2", 1)]
    result = place(10, targets, proportional(**{"nginx-1": 50, "nginx-2": 50}))
    assert result.placement == {"nginx-1": 5, "nginx-2": 5}
    assert (result.missing, result.overflow) == (0, 0)


def test_highest_averages_with_ties_to_the_first_name() -> None:
    targets = [target("a"), target("b"), target("c")]
    # a 3/1, b 2/1 → a; a 3/2 < b 2 → b; a 1.5 → a; a 1 = b 1 = c 1 → a; b 1 = c 1 → b; c 1 → c
    assert place(6, targets, proportional(a=3, b=2, c=1)).placement == {"a": 3, "b": 2, "c": 1}
    assert place(4, targets, proportional(a=3, b=2, c=1)).placement == {"a": 3, "b": 1, "c": 0}


def test_a_tie_goes_to_the_alphabetically_first_name_whatever_the_order_given() -> None:
    assert place(1, [target("b"), target("a")], proportional(b=1, a=1)).placement == {"a": 1, "b": 0}
    assert place(3, [target("b"), target("a")], proportional(b=1, a=1)).placement == {"a": 2, "b": 1}


def test_minimums_count_as_seats_already_won() -> None:
    targets = [target("a", 3), target("b")]
    assert place(4, targets, proportional(a=1, b=1)).placement == {"a": 3, "b": 1}
    assert place(6, targets, proportional(a=1, b=1)).placement == {"a": 3, "b": 3}
    assert place(7, targets, proportional(a=1, b=1)).placement == {"a": 4, "b": 3}


def test_a_full_target_drops_out_and_the_rest_share_by_their_weights() -> None:
    targets = [target("a", high=2), target("b"), target("c")]
    assert place(8, targets, proportional(a=2, b=1, c=1)).placement == {"a": 2, "b": 3, "c": 3}
    assert place(10, targets, proportional(a=1, b=3, c=1)).placement == {"a": 2, "b": 6, "c": 2}


def test_weight_zero_never_wins_and_a_target_without_a_weight_gets_its_minimum() -> None:
    targets = [target("a", 2), target("b"), target("c", 1)]
    assert place(10, targets, proportional(a=0, b=1)).placement == {"a": 2, "b": 7, "c": 1}


def test_proportions_of_names_that_are_not_targets_are_ignored() -> None:
    assert place(4, [target("a"), target("b")], proportional(a=1, b=1, gone=100)).placement == {"a": 2, "b": 2}


def test_with_no_weight_above_zero_everything_beyond_the_minimums_overflows() -> None:
    result = place(5, [target("a", 1), target("b")], proportional(a=0, b=0))
    assert result.placement == {"a": 1, "b": 0}
    assert result.overflow == 4


def test_replicas_beyond_every_maximum_overflow() -> None:
    result = place(9, [target("a", high=3), target("b", high=2)], proportional(a=1, b=5))
    assert result.placement == {"a": 3, "b": 2}
    assert (result.missing, result.overflow) == (0, 4)


def test_minimums_above_the_request_are_missing() -> None:
    result = place(3, [target("a", 2), target("b", 2), target("c")], proportional(a=1, b=1, c=1))
    assert result.placement == {"a": 2, "b": 2, "c": 0}
    assert (result.missing, result.overflow) == (1, 0)


def test_large_requests_are_placed_exactly_and_quickly() -> None:
    targets = [target("a", 10**6), target("b"), target("c", high=10**8)]
    result = place(10**9, targets, proportional(a=1, b=2, c=7))
    assert result.placement == {"a": 300_000_000, "b": 600_000_000, "c": 100_000_000}
    assert result.total == 10**9


def test_averages_are_compared_exactly_where_float64_would_tie() -> None:
    big = 2**53
    assert float(big + 1) == float(big)  # upstream's float ranks would tie, and "a" would win
    assert place(1, [target("a"), target("b")], proportional(a=big, b=big + 1)).placement == {"a": 0, "b": 1}


def test_the_last_seats_are_ranked_exactly_even_when_floats_collide() -> None:
    big = 2**53
    weights = {"a": big, "b": big + 1, "c": 1}
    placed = {"a": 0, "b": 0, "c": 0}
    assert _by_next_average(["a", "b", "c"], placed, weights) == ["b", "a", "c"]
    assert _by_next_average(["c", "b", "a"], placed, {"a": 2, "b": 2, "c": 3}) == ["c", "a", "b"]
