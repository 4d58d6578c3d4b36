"""One consolidation command, computed as Karpenter's `computeConsolidation` computes it: simulate the candidates
gone, then DELETE when every pod fits on what is left, REPLACE when exactly one new node is needed and some
offering for it is strictly cheaper than the candidates, a no-op (with Karpenter's reason) otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .catalogue import CAPACITY_TYPES, ON_DEMAND, SPOT, Catalogue, Offering
from .cluster import Node, Pdb, Pod
from .cost import savings_ratio
from .pools import BALANCED, Pool
from .score import ScoreResult, score_result
from .simulate import NewNode, Simulation, World, simulate

DELETE = "delete"
REPLACE = "replace"
NO_OP = "no-op"
MIN_SPOT_TO_SPOT_OPTIONS = 15
"""Karpenter's `MinInstanceTypesForSpotToSpotConsolidation`."""
_MAX_LISTED_ERRORS = 5


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node that may be disrupted: its pool, the pods it would reschedule, what disrupting it costs."""

    node: Node
    pool: Pool
    reschedulable: tuple[Pod, ...]
    disruption_cost: float

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def price(self) -> float:
        return self.node.price

    @property
    def ratio(self) -> float:
        return savings_ratio(self.node.price, self.disruption_cost)

    @property
    def empty(self) -> bool:
        """Karpenter's `IsEmpty`: nothing on it costs anything to move (pods whose cost clamps to 0 or less
        included)."""
        return self.disruption_cost <= 1.0


@dataclass(frozen=True, slots=True)
class Replacement:
    """The one node a REPLACE launches: its pool, the instance types it may be (cheapest first), and the offering
    the advisor prices it at (the cheapest offering of the first type, as Karpenter estimates savings)."""

    name: str
    pool: str
    instance_types: tuple[str, ...]
    offerings: tuple[Offering, ...]
    launch: Offering | None

    @property
    def price(self) -> float:
        return self.launch.price if self.launch is not None else 0.0


@dataclass(frozen=True, slots=True)
class Command:
    """What `compute_command` found: the decision, the reason for a no-op, the replacement, where the pods go."""

    candidates: tuple[Candidate, ...]
    decision: str
    reason: str = ""
    replacement: Replacement | None = None
    simulation: Simulation = field(default_factory=Simulation)

    @property
    def source_cost(self) -> float:
        return sum((c.price for c in self.candidates), 0.0)

    @property
    def savings(self) -> float:
        """Karpenter's `EstimatedSavings`: the candidates' prices, less the replacement's."""
        if self.replacement is None:
            return self.source_cost
        return self.source_cost - self.replacement.price


def scheduling_errors(errors: Mapping[str, str]) -> str:
    """Karpenter's `NonPendingPodSchedulingErrors`, sentence-cased, in key order (Go's map order is random)."""
    keys = sorted(errors)
    text = "Not all pods would schedule, " + " ".join(f"{key} => {errors[key]}" for key in keys[:_MAX_LISTED_ERRORS])
    if len(keys) >= _MAX_LISTED_ERRORS:  # Karpenter says "and 0 other(s)" after exactly five, too
        text += f"  and {len(keys) - _MAX_LISTED_ERRORS} other(s)"
    return text


def _by_type(offerings: Sequence[Offering]) -> dict[str, list[Offering]]:
    grouped: dict[str, list[Offering]] = {}
    for offering in offerings:
        grouped.setdefault(offering.instance_type, []).append(offering)
    return grouped


def worst_launch_price(offerings: Sequence[Offering]) -> float:
    """The most a launch of one instance type could cost: the dearest offering of the first capacity type that
    has any, in the order reserved, spot, on-demand (Karpenter's `WorstLaunchPrice`); +inf when none."""
    for capacity_type in CAPACITY_TYPES:
        prices = [o.price for o in offerings if o.capacity_type == capacity_type]
        if prices:
            return max(prices)
    return math.inf


def _cheapest(offerings: Sequence[Offering]) -> Offering | None:
    return min(offerings, key=lambda o: (o.price, o.instance_type, o.capacity_type, o.zone or ""), default=None)


@dataclass(slots=True)
class _Options:
    """A new node's instance types, cheapest first, each with the offerings its requirements allow."""

    types: list[tuple[str, list[Offering]]]

    @classmethod
    def of(cls, new_node: NewNode) -> _Options:
        grouped = _by_type(new_node.offerings)
        order = sorted(grouped, key=lambda name: (min(o.price for o in grouped[name]), name))
        return cls([(name, grouped[name]) for name in order])

    def cheaper_than(self, price: float) -> _Options:
        return _Options([(name, offerings) for name, offerings in self.types if worst_launch_price(offerings) < price])

    def only(self, capacity_type: str) -> _Options:
        kept = [(name, [o for o in offerings if o.capacity_type == capacity_type]) for name, offerings in self.types]
        return _Options([(name, offerings) for name, offerings in kept if offerings])

    def pinned(self, capacity_type: str) -> _Options:
        """The same types, each offered only as `capacity_type` (a type without such an offering stays, with none:
        Karpenter pins the requirement, not the list)."""
        return _Options(
            [(name, [o for o in offerings if o.capacity_type == capacity_type]) for name, offerings in self.types]
        )

    def capacity_types(self) -> set[str]:
        return {o.capacity_type for _, offerings in self.types for o in offerings}

    def replacement(self, new_node: NewNode) -> Replacement:
        launch = _cheapest(self.types[0][1]) if self.types else None
        return Replacement(
            new_node.name,
            new_node.pool,
            tuple(name for name, _ in self.types),
            tuple(o for _, offerings in self.types for o in offerings),
            launch,
        )


def movers(candidates: Sequence[Candidate], deleting_pods: Sequence[Pod], pdbs: Sequence[Pdb]) -> list[Pod]:
    """The pods a simulation must place: the candidates' reschedulable pods, less any that a fully blocking PDB
    (maxUnavailable 0, minAvailable 100%) would keep forever, plus the pods still on nodes being deleted."""
    pods = [pod for c in candidates for pod in c.reschedulable]
    pods += deleting_pods
    return [pod for pod in pods if not any(p.fully_blocking and p.covers(pod) for p in pdbs)]


def compute_command(
    world: World,
    candidates: Sequence[Candidate],
    pods_to_place: Sequence[Pod],
    *,
    spot_to_spot: bool = False,
    decision_only: bool = False,
) -> Command:
    """The command for removing `candidates` together (Karpenter's `computeConsolidation`). With `decision_only`,
    a no-op's reason may name fewer unschedulable pods than there are (the simulation gives up early)."""
    batch = tuple(candidates)
    simulation = simulate(world, {c.name for c in batch}, pods_to_place, give_up=decision_only)
    if not simulation.all_scheduled:
        return Command(batch, NO_OP, scheduling_errors(simulation.errors), simulation=simulation)
    if not simulation.new_nodes:
        return Command(batch, DELETE, simulation=simulation)
    if len(simulation.new_nodes) > 1:
        return Command(
            batch, NO_OP, f"Can't remove without creating {len(simulation.new_nodes)} candidates", simulation=simulation
        )
    new_node = simulation.new_nodes[0]
    options = _Options.of(new_node)
    candidate_price = sum((c.price for c in batch), 0.0)
    if all(c.node.capacity_type == SPOT for c in batch) and SPOT in options.capacity_types():
        return _spot_to_spot(batch, options, new_node, candidate_price, simulation, enabled=spot_to_spot)
    options = options.cheaper_than(candidate_price)
    if not options.types:
        return Command(batch, NO_OP, "Can't replace with a cheaper node", simulation=simulation)
    if {SPOT, ON_DEMAND} <= options.capacity_types():
        # Priced as spot, so launched as spot: short of spot capacity, the launch fails rather than costing more.
        options = options.pinned(SPOT)
    return Command(batch, REPLACE, replacement=options.replacement(new_node), simulation=simulation)


def _spot_to_spot(
    batch: tuple[Candidate, ...],
    options: _Options,
    new_node: NewNode,
    candidate_price: float,
    simulation: Simulation,
    *,
    enabled: bool,
) -> Command:
    """Karpenter's spot-to-spot replacement: behind its feature gate, and for one node only when at least 15
    cheaper types exist (the launch then offers just the 15 cheapest, so the node it gets is not replaced again)."""
    if not enabled:
        reason = "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"
        return Command(batch, NO_OP, reason, simulation=simulation)
    options = options.only(SPOT).cheaper_than(candidate_price)
    if not options.types:
        return Command(batch, NO_OP, "Can't replace with a cheaper node", simulation=simulation)
    if len(batch) == 1:
        if len(options.types) < MIN_SPOT_TO_SPOT_OPTIONS:
            reason = (
                f"SpotToSpotConsolidation requires {MIN_SPOT_TO_SPOT_OPTIONS} cheaper instance type options than "
                f"the current candidate to consolidate, got {len(options.types)}"
            )
            return Command(batch, NO_OP, reason, simulation=simulation)
        options = _Options(options.types[:MIN_SPOT_TO_SPOT_OPTIONS])
    return Command(batch, REPLACE, replacement=options.replacement(new_node), simulation=simulation)


def without_same_instance_type(command: Command, catalogue: Catalogue) -> Command | None:
    """Karpenter's `filterOutSameInstanceType` for a multi-node REPLACE: when the replacement could be a type
    being removed, only options cheaper than the cheapest such node remain (else deleting the others is the same
    move with less disruption). None when no option remains."""
    assert command.replacement is not None
    prices: dict[str, float] = {}
    for candidate in command.candidates:
        node = candidate.node
        own = catalogue.offering(node.instance_type, node.capacity_type or "", node.zone)
        if node.instance_type is not None and own is not None:
            prices[node.instance_type] = min(prices.get(node.instance_type, math.inf), own.price)
    limit = min((prices[name] for name in command.replacement.instance_types if name in prices), default=math.inf)
    replacement = command.replacement
    grouped = _by_type(replacement.offerings)
    kept = _Options([(name, grouped.get(name, [])) for name in replacement.instance_types]).cheaper_than(limit)
    if not kept.types:
        return None
    new_node = NewNode(replacement.name, replacement.pool, (), command.simulation.new_nodes[0].requests, ())
    return Command(command.candidates, REPLACE, replacement=kept.replacement(new_node), simulation=command.simulation)


@dataclass(frozen=True, slots=True)
class Totals:
    """A pool's Balanced denominators: its cost per hour and the disruption cost of all its nodes."""

    cost: float
    disruption_cost: float


def evaluate(
    candidates: Sequence[Candidate], savings: float, totals: Mapping[str, Totals], k: float
) -> tuple[bool, dict[str, ScoreResult]]:
    """Karpenter's `EvaluateBalancedMove`: each Balanced pool among the candidates scores its share of the move
    (savings split by the candidates' prices when the move spans pools) against its own totals; the move is
    approved when every Balanced pool approves. Other policies are not scored."""
    if not candidates:
        return False, {}
    by_pool: dict[str, list[Candidate]] = {}
    for candidate in candidates:
        by_pool.setdefault(candidate.pool.name, []).append(candidate)
    source_cost = sum((c.price for c in candidates), 0.0)
    results: dict[str, ScoreResult] = {}
    for name, members in by_pool.items():
        if members[0].pool.policy != BALANCED:
            continue
        pool_cost = sum((c.price for c in members), 0.0)
        pool_savings = savings * (pool_cost / source_cost) if source_cost > 0 and len(by_pool) > 1 else savings
        disruption = sum((c.disruption_cost for c in members), 0.0)
        pool_totals = totals.get(name, Totals(0.0, 0.0))
        results[name] = score_result(pool_savings, disruption, pool_totals.cost, pool_totals.disruption_cost, k)
    return all(result.approved for result in results.values()), results
