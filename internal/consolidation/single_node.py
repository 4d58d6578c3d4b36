"""Single-node consolidation: each candidate alone, pools interleaved, as one DELETE or REPLACE scored against its
pool's totals."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from .commands import NO_OP, Candidate, evaluate
from .moves import BLOCKING_BUDGET, move_of, no_op, score_reason
from .pools import BALANCED, UNDERUTILIZED
from .results import SINGLE_NODE, Move
from .state import Round, interleaved


def single_node_moves(round_: Round, tried: Sequence[Candidate], *, stop_at_first: bool) -> list[Move]:
    """Each candidate's single-node move, in Karpenter's order; with `stop_at_first`, up to the first approved."""
    settings = round_.settings
    budgets = round_.budgets(UNDERUTILIZED)
    moves: list[Move] = []
    for candidate in interleaved(tried):
        pool = candidate.pool
        if budgets.get(pool.name, 0) == 0:
            moves.append(no_op(SINGLE_NODE, candidate, BLOCKING_BUDGET.format(UNDERUTILIZED)))
            continue
        totals = round_.totals.get(pool.name)
        if pool.policy == BALANCED and totals is not None and totals.cost > 0:
            best, scores = evaluate([candidate], candidate.price, round_.totals, settings.k)
            if not best:
                reason = score_reason(scores, False) + ", even as a delete"
                moves.append(replace(no_op(SINGLE_NODE, candidate, reason), scores=scores))
                continue
        command = round_.command([candidate], decision_only=stop_at_first)  # only an approved move is kept
        if command.decision == NO_OP:
            moves.append(move_of(SINGLE_NODE, command, False, {}))
            continue
        approved, scores = evaluate([candidate], command.savings, round_.totals, settings.k)
        moves.append(move_of(SINGLE_NODE, command, approved or pool.policy != BALANCED, scores))
        if stop_at_first and moves[-1].approved:
            break
    return moves
