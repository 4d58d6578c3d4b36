"""A `Move` from a command or a refusal, with the score line Karpenter logs."""

from __future__ import annotations

import math
from collections.abc import Mapping

from .commands import NO_OP, Candidate, Command
from .results import Move
from .score import ScoreResult


def _k_text(k: float) -> str:
    return "inf" if k == math.inf else str(int(k))


def score_reason(scores: Mapping[str, ScoreResult], approved: bool) -> str:
    if not scores:
        return ""
    deciding = min(scores.values(), key=lambda result: result.score)
    if approved:
        # Karpenter's ConsolidationApproved message.
        return (
            f"score {deciding.score:.2f} >= threshold {deciding.threshold:.2f} (k: {_k_text(deciding.k)}, savings "
            f"{deciding.savings_fraction * 100:.1f}%, disruption {deciding.disruption_fraction * 100:.1f}%)"
        )
    return f"score {deciding.score:.2f} < threshold {deciding.threshold:.2f} (k: {_k_text(deciding.k)})"


def move_of(method: str, command: Command, approved: bool, scores: Mapping[str, ScoreResult], reason: str = "") -> Move:
    candidates = command.candidates
    return Move(
        method=method,
        nodes=tuple(c.name for c in candidates),
        pools=tuple(sorted({c.pool.name for c in candidates})),
        decision=command.decision,
        approved=approved,
        reason=reason or command.reason or score_reason(scores, approved),
        savings=command.savings if command.decision != NO_OP else 0.0,
        disruption_cost=sum((c.disruption_cost for c in candidates), 0.0),
        scores=dict(scores),
        replacement=command.replacement,
        placements=dict(command.simulation.placements),
    )


BLOCKING_BUDGET = "No allowed disruptions for disruption reason {} due to blocking budget"


def no_op(method: str, candidate: Candidate, reason: str) -> Move:
    return Move(method, (candidate.name,), (candidate.pool.name,), NO_OP, False, reason, 0.0, candidate.disruption_cost)
