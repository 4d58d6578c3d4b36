"""What `plan` returns: the moves (one decision about one or more nodes), each pool's figures, the freed set and
the plan as a whole; all frozen values."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from .commands import Replacement
from .score import ScoreResult

EMPTINESS = "emptiness"
MULTI_NODE = "multi-node"
SINGLE_NODE = "single-node"
CANDIDATES = "candidates"
"""The `method` of a node's move when it never became a candidate (blocked, or not in any pool)."""
HOURS_PER_MONTH = 730


@dataclass(frozen=True, slots=True)
class Move:
    """One decision about one or more nodes.

    `decision` is `delete`, `replace` or `no-op`; `approved` whether the move would be taken (for a Balanced pool,
    whether every Balanced pool's score reaches its threshold). `reason` is Karpenter's text where Karpenter has
    one (`Can't replace with a cheaper node`, `Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=ns/name)`),
    the score line otherwise. `savings` is per hour; `scores` has one entry per Balanced pool scored;
    `placements` says where each moved pod goes (a replacement by its name).
    """

    method: str
    nodes: tuple[str, ...]
    pools: tuple[str, ...]
    decision: str
    approved: bool
    reason: str = ""
    savings: float = 0.0
    disruption_cost: float = 0.0
    scores: Mapping[str, ScoreResult] = field(default_factory=dict)
    replacement: Replacement | None = None
    placements: Mapping[str, str] = field(default_factory=dict)

    @property
    def score(self) -> float | None:
        """The lowest score among the Balanced pools (the one that decides), None when no pool was scored."""
        return min((result.score for result in self.scores.values()), default=None)


@dataclass(frozen=True, slots=True)
class PoolFigures:
    """One pool now and after the freed set: nodes, cost per hour, and (now) the Balanced denominators."""

    name: str
    policy: str
    nodes: int
    cost_per_hour: float
    total_disruption_cost: float
    nodes_after: int
    cost_per_hour_after: float
    freed: int = 0
    """Of today's nodes, how many are gone once the freed set has run: the one meaning of "freed"."""
    launched: int = 0
    """Replacements launched into the pool on the way (`nodes_after == nodes - freed + launched`)."""

    @property
    def cost_per_month(self) -> float:
        return self.cost_per_hour * HOURS_PER_MONTH

    @property
    def savings_per_month(self) -> float:
        return (self.cost_per_hour - self.cost_per_hour_after) * HOURS_PER_MONTH


@dataclass(frozen=True, slots=True)
class Freed:
    """The freed set: the commands in the order they would run, each on the state the previous left, the
    original nodes gone at the end, the replacements launched (`name: pool/instance type/capacity type`), the
    saving per hour, and the pods an Emptiness deletion left without a node (their cost clamps to 0 or less)."""

    steps: tuple[Move, ...] = ()
    nodes: tuple[str, ...] = ()
    launched: Mapping[str, str] = field(default_factory=dict)
    savings_per_hour: float = 0.0
    unplaced: tuple[str, ...] = ()

    @property
    def savings_per_month(self) -> float:
        return self.savings_per_hour * HOURS_PER_MONTH


@dataclass(frozen=True, slots=True)
class Plan:
    """The whole advice.

    - `pools`: per pool, nodes, cost and disruption totals, now and after the freed set.
    - `moves`: the first round, one move per node: single-node decisions in Karpenter's order, then the nodes
      left to Emptiness, then those that never became candidates.
    - `emptiness`, `multi_node`: the first round's commands of those methods (None when there is none; a
      rejected multi-node move is kept, `approved` False).
    - `first`: what Karpenter would do first (Emptiness, else multi-node, else the first approved single-node).
    - `freed`: the freed set. `problems`: catalogue entries skipped and inputs ignored, by name.
    """

    pools: Mapping[str, PoolFigures]
    moves: tuple[Move, ...]
    emptiness: Move | None
    multi_node: Move | None
    first: Move | None
    freed: Freed
    problems: tuple[str, ...] = ()
