"""`score_move` and `approves`: Karpenter's Balanced score with its guards, on the scenarios of Karpenter's own
tests (a ten-node pool of eight 4.84 and two 9.68 nodes, 80 default pods: totals 58.08 and 90)."""

from __future__ import annotations

import math

import pytest

from ballast.internal.consolidation import (
    BALANCED_K,
    ConsolidationInputError,
    ScoreResult,
    approves,
    score_move,
    score_result,
)


def test_a_marginal_replace_scores_five_twelfths_rejected_at_k_2_approved_at_k_3() -> None:
    score = score_move(2.42, 9.0, 58.08, 90.0)
    assert score == 0.41666666666666663
    assert not approves(score, 2)
    assert approves(score, 3)
    assert not approves(score, 1)


def test_a_uniform_pool_replace_scores_exactly_one_half_and_is_approved() -> None:
    score = score_move(2.42, 9.0, 48.40, 90.0)
    assert score == 0.5
    assert approves(score)


def test_a_single_node_pool_delete_scores_one() -> None:
    assert score_move(0.2, 3.0, 0.2, 3.0) == 1.0


def test_a_one_in_ten_delete_of_a_uniform_pool_scores_one() -> None:
    # Karpenter: ten m7i.xlarge nodes, one pod each; deleting one saves and disrupts a tenth.
    assert score_move(4.84, 2.0, 48.4, 20.0) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("savings", "disruption", "expected", "approved"),
    [
        (20.0, 5.0, 4.0, True),
        (10.0, 10.0, 1.0, True),
        (5.0, 50.0, 0.1, False),
        (0.0, 10.0, 0.0, False),
        (-5.0, 10.0, 0.0, False),
    ],
)
def test_karpenters_score_table(savings: float, disruption: float, expected: float, approved: bool) -> None:
    score = score_move(savings, disruption, 100.0, 100.0)
    assert score == pytest.approx(expected)
    assert approves(score) is approved


def test_no_disruption_with_savings_scores_infinity() -> None:
    assert score_move(4.84, 0.0, 58.08, 90.0) == math.inf
    assert approves(math.inf)
    assert score_move(0.0, 0.0, 58.08, 90.0) == 0.0


@pytest.mark.parametrize(("total_cost", "total_disruption"), [(0.0, 90.0), (58.08, 0.0), (-1.0, 90.0), (0.0, 0.0)])
def test_zero_totals_score_zero(total_cost: float, total_disruption: float) -> None:
    assert score_move(4.84, 5.0, total_cost, total_disruption) == 0.0
    assert score_result(4.84, 5.0, total_cost, total_disruption) == ScoreResult(0.0, 0.0, BALANCED_K)


def test_the_score_does_not_depend_on_the_pools_scale() -> None:
    assert score_move(7.26, 4.0, 58.08, 90.0) == pytest.approx(score_move(7.26, 4.0, 580.8, 900.0))


def test_the_result_has_the_fractions_and_the_threshold() -> None:
    result = score_result(4.84, 5.0, 58.08, 90.0, 3)
    assert result.savings_fraction == 4.84 / 58.08
    assert result.disruption_fraction == 5.0 / 90.0
    assert result.threshold == 1 / 3
    assert result.approved


def test_k_infinity_approves_any_score_of_zero_or_more() -> None:
    assert approves(0.0, math.inf)


@pytest.mark.parametrize("k", [0, -2, 1.5, True, "2", math.nan, 2**31, 1e10])
def test_a_k_that_is_not_a_positive_integer_is_refused(k: object) -> None:
    with pytest.raises(ConsolidationInputError, match=r"^k: "):
        approves(1.0, k)  # type: ignore[arg-type]
