"""Emptiness: every empty candidate, within each pool's `Empty` budget, goes as one DELETE."""

from __future__ import annotations

from collections.abc import Sequence

from .commands import DELETE, Candidate, Command
from .moves import BLOCKING_BUDGET, move_of
from .pools import EMPTY
from .results import EMPTINESS, Move
from .state import Round, ordered


def emptiness_command(round_: Round, empty: Sequence[Candidate]) -> tuple[Move | None, dict[str, str]]:
    """The Emptiness command (None when no empty candidate is within its budget), and why each one left out was."""
    budgets = round_.budgets(EMPTY)
    chosen: list[Candidate] = []
    left: dict[str, str] = {}
    for candidate in ordered(empty):
        if budgets.get(candidate.pool.name, 0) == 0:
            left[candidate.name] = BLOCKING_BUDGET.format(EMPTY)
            continue
        chosen.append(candidate)
        budgets[candidate.pool.name] -= 1
    if not chosen:
        return None, left
    return move_of(EMPTINESS, Command(tuple(chosen), DELETE), True, {}), left
