"""One round of Karpenter's loop: Emptiness, then multi-node, then single-node consolidation; the first method
with a command wins."""

from __future__ import annotations

from .blockers import unconsolidatable
from .commands import DELETE, NO_OP, Candidate
from .emptiness import emptiness_command
from .moves import no_op
from .multi_node import multi_node_move
from .results import CANDIDATES, EMPTINESS, SINGLE_NODE, Move
from .single_node import single_node_moves
from .state import Round, ordered


def consolidatable(round_: Round) -> tuple[list[Candidate], list[Candidate], dict[str, str]]:
    """The candidates consolidation may try, the empty ones (left to Emptiness), and why the others may not."""
    settings = round_.settings
    tried, empty, refused = [], [], {}
    for candidate in round_.candidates:
        if candidate.empty:
            if candidate.pool.consolidation_disabled:
                refused[candidate.name] = f'NodePool "{candidate.pool.name}" has consolidation disabled'
            else:
                empty.append(candidate)
            continue
        reason = unconsolidatable(candidate, settings.catalogue)
        if reason is None:
            tried.append(candidate)
        else:
            refused[candidate.name] = reason
    return tried, empty, refused


def analyse(round_: Round, *, full: bool) -> tuple[list[Move], Move | None, Move | None, Move | None]:
    """One round: every node's move (when `full`), the Emptiness and multi-node commands, and the first command."""
    state = round_.state
    tried, empty, refused = consolidatable(round_)
    emptiness, left_empty = emptiness_command(round_, empty)
    if not full and emptiness is not None:
        return [], emptiness, None, emptiness
    multi = multi_node_move(round_, tried)
    if not full and multi is not None and multi.approved:
        return [], emptiness, multi, multi
    singles = single_node_moves(round_, tried, stop_at_first=not full)
    first = emptiness or (multi if multi is not None and multi.approved else None)
    first = first or next((move for move in singles if move.approved), None)
    moves = list(singles)
    for candidate in ordered(c for c in round_.candidates if c.name in refused):
        moves.append(no_op(SINGLE_NODE, candidate, refused[candidate.name]))
    chosen = set(emptiness.nodes) if emptiness else set()
    for candidate in ordered(empty):
        if candidate.name in chosen:
            moves.append(
                Move(
                    EMPTINESS,
                    (candidate.name,),
                    (candidate.pool.name,),
                    DELETE,
                    True,
                    "",
                    candidate.price,
                    candidate.disruption_cost,
                )
            )
        else:
            moves.append(no_op(EMPTINESS, candidate, left_empty[candidate.name]))
    for name, reason in round_.blocked.items():
        node = state.nodes[name]
        pool = (node.pool,) if node.pool else ()
        moves.append(Move(CANDIDATES, (name,), pool, NO_OP, False, reason))
    return moves, emptiness, multi, first
