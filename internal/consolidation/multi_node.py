"""Multi-node consolidation: Karpenter's binary search for the longest prefix of the candidates that goes as one
command."""

from __future__ import annotations

from collections.abc import Sequence

from .commands import DELETE, REPLACE, Candidate, Command, evaluate, without_same_instance_type
from .moves import move_of
from .pools import UNDERUTILIZED
from .results import MULTI_NODE, Move
from .state import Round, ordered

MAX_MULTI_NODE_BATCH = 100


def multi_node_move(round_: Round, tried: Sequence[Candidate]) -> Move | None:
    """Karpenter's binary search: the longest ratio-ordered prefix (of up to 101 candidates: the search's upper
    bound is the 100th index) that goes as one valid, approved command."""
    settings = round_.settings
    budgets = round_.budgets(UNDERUTILIZED)
    batch: list[Candidate] = []
    for candidate in ordered(tried):
        if budgets.get(candidate.pool.name, 0) == 0:
            continue
        batch.append(candidate)
        budgets[candidate.pool.name] -= 1
    if len(batch) < 2:
        return None
    low, high = 1, min(MAX_MULTI_NODE_BATCH, len(batch) - 1)
    saved: Move | None = None
    rejected: Move | None = None
    while low <= high:
        middle = (low + high) // 2
        command = round_.command(batch[: middle + 1], decision_only=True)  # a no-op's reason is not kept
        valid: Command | None = command if command.decision == DELETE else None
        if command.decision == REPLACE:
            valid = without_same_instance_type(command, settings.catalogue)
        move = None
        if valid is not None:
            approved, scores = evaluate(valid.candidates, valid.savings, round_.totals, settings.k)
            move = move_of(MULTI_NODE, valid, approved, scores)
            if not approved:
                rejected, move = move, None
        if move is not None:
            saved = move
            low = middle + 1
        else:
            high = middle - 1
    return saved or rejected
