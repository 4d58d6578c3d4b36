"""Karpenter's Balanced score: is a move's share of the pool's cost worth its share of the pool's disruption?

    score = (savings / total_cost) / (disruption_cost / total_disruption_cost)
    approved ⇔ score ≥ 1/k            (k = 2: a move must save at least half as much, proportionally, as it disrupts)

Guards, as in Karpenter v1.15.0: totals of 0 (or less) give a score of 0; savings of 0 or less give 0; a move
that disrupts nothing but saves something scores +inf. `WhenEmptyOrUnderutilized` behaves as k = +inf (every move
that passes the price filter is taken); `k` must otherwise be an integer in [1, 2**31 - 1], as Karpenter's int32.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .errors import ConsolidationInputError

BALANCED_K = 2
"""Karpenter's `BalancedK`: the smallest k at which replacing a node by a smaller one of its family passes."""


K_MAX = 2**31 - 1
"""The largest k: Karpenter's k is an int32."""


def check_k(k: float) -> float:
    """`k` if it is an integer in [1, 2**31 - 1] or +inf; raises `ConsolidationInputError` otherwise."""
    if (
        isinstance(k, bool)
        or not isinstance(k, int | float)
        or not (k == math.inf or (1 <= k <= K_MAX and k == int(k)))
    ):
        raise ConsolidationInputError("k", f"{k!r} is not a positive int32 (or inf)")
    return k


@dataclass(frozen=True, slots=True)
class ScoreResult:
    """A move's two fractions and the k it is judged by (Karpenter's `ScoreResult`)."""

    savings_fraction: float = 0.0
    disruption_fraction: float = 0.0
    k: float = BALANCED_K

    @property
    def score(self) -> float:
        if self.savings_fraction <= 0:
            return 0.0
        if self.disruption_fraction == 0:
            return math.inf
        return self.savings_fraction / self.disruption_fraction

    @property
    def threshold(self) -> float:
        return 1.0 / self.k

    @property
    def approved(self) -> bool:
        return self.score >= self.threshold


def score_result(
    savings: float, disruption_cost: float, total_cost: float, total_disruption_cost: float, k: float = BALANCED_K
) -> ScoreResult:
    """The fractions of a move against its pool's totals; all zeros when either total is 0 or less."""
    check_k(k)
    if total_cost <= 0 or total_disruption_cost <= 0:
        return ScoreResult(k=k)
    return ScoreResult(savings / total_cost, disruption_cost / total_disruption_cost, k)


def score_move(savings: float, disruption_cost: float, total_cost: float, total_disruption_cost: float) -> float:
    """The Balanced score of a move saving `savings` (per hour) at `disruption_cost`, in a pool costing
    `total_cost` per hour whose nodes add up to `total_disruption_cost`.

    The same float Karpenter's `ScoreMove(...).Score()` returns, bit for bit: 0.0 for zero totals or no savings,
    +inf for a saving move that disrupts nothing.
    """
    return score_result(savings, disruption_cost, total_cost, total_disruption_cost).score


def approves(score: float, k: float = BALANCED_K) -> bool:
    """Whether a Balanced pool with this `k` takes a move with this `score`: `score ≥ 1/k`."""
    return score >= 1.0 / check_k(k)
