"""`plan`: which nodes the pods' requests free, what that saves, and whether each move is worth its disruption.

One round is what Karpenter's disruption loop does once: build the candidates and the pools' totals, then try
Emptiness (every empty candidate, within the `Empty` budget), multi-node consolidation (a binary search over the
longest prefix of the candidates, by savings per disruption, that goes as one DELETE or one REPLACE) and
single-node consolidation (each candidate alone, pools interleaved), in that order; the first method with a
command wins. The plan reports the first round in full — every node's single-node decision with its reason — and
then plays rounds on the state each command leaves until none is found: the nodes gone at the end are the freed
set. Independent single-node alternatives are never added up, since two of them may count on the same room.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .catalogue import Catalogue, Offering, parse_catalogue
from .cluster import Node, Pdb, Pod, Resources, node_from_wire, pdb_from_wire, pod_from_wire, tolerates
from .commands import (
    DELETE,
    NO_OP,
    REPLACE,
    Candidate,
    Command,
    Replacement,
    Totals,
    compute_command,
    evaluate,
    movers,
    without_same_instance_type,
)
from .cost import PER_NODE_BASE_DISRUPTION_COST, is_terminal, pod_key, reschedule_disruption_cost
from .errors import ConsolidationInputError
from .pools import (
    BALANCED,
    CAPACITY_TYPE_LABEL,
    EMPTY,
    HOSTNAME_LABEL,
    INSTANCE_TYPE_LABEL,
    NODEPOOL_LABEL,
    POLICIES,
    UNDERUTILIZED,
    WHEN_EMPTY,
    ZONE_LABEL,
    Pool,
    pool_from_mapping,
    pool_from_nodepool,
)
from .score import BALANCED_K, ScoreResult, check_k
from .simulate import Host, Simulation, World, matches_node, simulate

EMPTINESS = "emptiness"
MULTI_NODE = "multi-node"
SINGLE_NODE = "single-node"
CANDIDATES = "candidates"
"""The `method` of a node's move when it never became a candidate (blocked, or not in any pool)."""
MAX_MULTI_NODE_BATCH = 100
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


@dataclass(frozen=True, slots=True)
class _Settings:
    pools: Mapping[str, Pool]
    default_pool: Pool
    catalogue: Catalogue
    pdbs: tuple[Pdb, ...]
    k: float
    spot_to_spot: bool

    def pool(self, name: str) -> Pool:
        return self.pools.get(name) or replace(self.default_pool, name=name)


@dataclass(slots=True)
class _State:
    nodes: dict[str, Node]
    pods_on: dict[str, list[Pod]]
    launched: int = 0


def _node_blocked(node: Node) -> str | None:
    if node.pool is None:
        return f"Node doesn't have required label (label={NODEPOOL_LABEL})"
    if node.deleting:
        return "Node is deleting or marked for deletion"
    if not node.ready:
        return "Node isn't initialized"
    if node.do_not_disrupt:
        return 'Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation'
    return None


def _pods_blocked(pods: Sequence[Pod], pdbs: Sequence[Pdb]) -> str | None:
    for pod in pods:
        if pod.do_not_disrupt:
            return f'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod={pod.key})'
    for pod in pods:
        if not pod.evictable:
            continue
        covering = [pdb for pdb in pdbs if pdb.covers(pod)]
        if len(covering) > 1:
            keys = " ".join(pdb.key for pdb in covering)
            return f"Eviction does not support multiple PDBs (PodDisruptionBudget(s)=[{keys}])"
        for pdb in covering:
            if pdb.disruptions_allowed == 0 and not (pdb.evicts_unhealthy and pod.not_ready):
                return f"Pdb prevents pod evictions (PodDisruptionBudget=[{pdb.key}])"
    return None


def _blocked(node: Node, pods: Sequence[Pod], pdbs: Sequence[Pdb]) -> str | None:
    """Why Karpenter would not make `node` a candidate at all (its `DisruptionBlocked` text), or None: the node's
    state first, then a do-not-disrupt pod (DaemonSet and mirror pods included), then a PDB."""
    return _node_blocked(node) or _pods_blocked(pods, pdbs)


def _unconsolidatable(candidate: Candidate, catalogue: Catalogue) -> str | None:
    """Karpenter's consolidation `ShouldDisrupt`, for a non-empty candidate: its `Unconsolidatable` text, or
    None; then what the simulation does not model (`not simulated: …`)."""
    node, pool = candidate.node, candidate.pool
    if not catalogue.knows(node.instance_type):
        return f'Instance Type "{node.instance_type or ""}" not found'
    if pool.consolidation_disabled:
        return f'NodePool "{pool.name}" has consolidation disabled'
    if pool.policy == WHEN_EMPTY:
        return f'NodePool "{pool.name}" has consolidation policy WhenEmpty, but node is not empty'
    for pod in candidate.reschedulable:
        if pod.unsupported:
            return f"not simulated: {pod.unsupported} (Pod={pod.key})"
    return None


def _non_candidate_cost(pods: Iterable[Pod]) -> float:
    """Karpenter's `StateNode.DisruptionCost()`: 1.0 plus the positive costs of every pod but DaemonSet pods
    (mirror pods included, unlike a candidate's cost)."""
    return PER_NODE_BASE_DISRUPTION_COST + sum((max(0.0, p.eviction_cost) for p in pods if not p.daemonset), 0.0)


@dataclass(slots=True)
class _Round:
    """One pass of Karpenter's loop over a state."""

    state: _State
    settings: _Settings
    candidates: list[Candidate] = field(default_factory=list)
    blocked: dict[str, str] = field(default_factory=dict)
    totals: dict[str, Totals] = field(default_factory=dict)
    world: World | None = None

    def __post_init__(self) -> None:
        settings = self.settings
        for name in sorted(self.state.nodes):
            node = self.state.nodes[name]
            pods = self.state.pods_on.get(name, [])
            reason = _blocked(node, pods, settings.pdbs)
            if reason is not None:
                self.blocked[name] = reason
                continue
            assert node.pool is not None
            reschedulable = tuple(p for p in pods if p.reschedulable)
            node_cost = reschedule_disruption_cost(p.eviction_cost for p in reschedulable)
            self.candidates.append(Candidate(node, settings.pool(node.pool), reschedulable, node_cost))
        by_name = {c.name: c for c in self.candidates}
        cost: dict[str, float] = {}
        disruption: dict[str, float] = {}
        for name, node in self.state.nodes.items():
            if node.pool is None:
                continue
            cost[node.pool] = cost.get(node.pool, 0.0) + node.price
            candidate = by_name.get(name)
            node_cost = (
                candidate.disruption_cost if candidate else _non_candidate_cost(self.state.pods_on.get(name, []))
            )
            disruption[node.pool] = disruption.get(node.pool, 0.0) + node_cost
        self.totals = {pool: Totals(cost[pool], disruption[pool]) for pool in cost}
        hosts = {name: Host(node, tuple(self.state.pods_on.get(name, ()))) for name, node in self.state.nodes.items()}
        daemons: dict[str, Pod] = {}
        for pods in self.state.pods_on.values():
            for pod in pods:
                if pod.daemonset and pod.owner is not None:
                    known = daemons.get(pod.owner)
                    if known is None or (pod.requests.cpu, pod.requests.memory) > (
                        known.requests.cpu,
                        known.requests.memory,
                    ):
                        daemons[pod.owner] = pod
        pools = {
            name: settings.pool(name)
            for name in {*settings.pools, *(n.pool for n in self.state.nodes.values() if n.pool)}
        }
        self.world = World(hosts, pools, settings.catalogue, tuple(daemons[k] for k in sorted(daemons)))

    def budgets(self, reason: str) -> dict[str, int]:
        """Disruptions each pool allows now for `reason`: its budgets over its live nodes, less those already
        disrupting (not Ready or being deleted)."""
        counts: dict[str, tuple[int, int]] = {}
        for node in self.state.nodes.values():
            if node.pool is None:
                continue
            live, disrupting = counts.get(node.pool, (0, 0))
            if node.ready and not node.deleting:
                live += 1
            else:
                disrupting += 1
            counts[node.pool] = (live, disrupting)
        return {
            pool: max(self.settings.pool(pool).allowed_disruptions(live, reason) - disrupting, 0)
            for pool, (live, disrupting) in counts.items()
        }

    def deleting_pods(self) -> list[Pod]:
        pods = []
        for name, node in self.state.nodes.items():
            if node.deleting:
                pods += [p for p in self.state.pods_on.get(name, []) if p.reschedulable and not p.do_not_disrupt]
        return pods

    def command(self, batch: Sequence[Candidate]) -> Command:
        assert self.world is not None
        pods = movers(batch, self.deleting_pods(), self.settings.pdbs)
        return compute_command(self.world, batch, pods, spot_to_spot=self.settings.spot_to_spot)


def _ordered(candidates: Iterable[Candidate]) -> list[Candidate]:
    """By savings per disruption, highest first; the name breaks ties (Karpenter's sort is not stable)."""
    return sorted(candidates, key=lambda c: (-c.ratio, c.name))


def _interleaved(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Single-node order: round-robin over the pools (by name), each pool's candidates in ratio order."""
    by_pool: dict[str, list[Candidate]] = {}
    for candidate in _ordered(candidates):
        by_pool.setdefault(candidate.pool.name, []).append(candidate)
    pools = sorted(by_pool)
    longest = max((len(members) for members in by_pool.values()), default=0)
    return [by_pool[pool][i] for i in range(longest) for pool in pools if i < len(by_pool[pool])]


def _k_text(k: float) -> str:
    return "inf" if k == math.inf else str(int(k))


def _score_reason(scores: Mapping[str, ScoreResult], approved: bool) -> str:
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


def _move(method: str, command: Command, approved: bool, scores: Mapping[str, ScoreResult], reason: str = "") -> Move:
    candidates = command.candidates
    return Move(
        method=method,
        nodes=tuple(c.name for c in candidates),
        pools=tuple(sorted({c.pool.name for c in candidates})),
        decision=command.decision,
        approved=approved,
        reason=reason or command.reason or _score_reason(scores, approved),
        savings=command.savings if command.decision != NO_OP else 0.0,
        disruption_cost=sum((c.disruption_cost for c in candidates), 0.0),
        scores=dict(scores),
        replacement=command.replacement,
        placements=dict(command.simulation.placements),
    )


def _consolidatable(round_: _Round) -> tuple[list[Candidate], list[Candidate], dict[str, str]]:
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
        reason = _unconsolidatable(candidate, settings.catalogue)
        if reason is None:
            tried.append(candidate)
        else:
            refused[candidate.name] = reason
    return tried, empty, refused


_BLOCKING_BUDGET = "No allowed disruptions for disruption reason {} due to blocking budget"


def _emptiness(round_: _Round, empty: Sequence[Candidate]) -> tuple[Move | None, dict[str, str]]:
    budgets = round_.budgets(EMPTY)
    chosen: list[Candidate] = []
    left: dict[str, str] = {}
    for candidate in _ordered(empty):
        if budgets.get(candidate.pool.name, 0) == 0:
            left[candidate.name] = _BLOCKING_BUDGET.format(EMPTY)
            continue
        chosen.append(candidate)
        budgets[candidate.pool.name] -= 1
    if not chosen:
        return None, left
    return _move(EMPTINESS, Command(tuple(chosen), DELETE), True, {}), left


def _single_node(round_: _Round, tried: Sequence[Candidate], *, stop_at_first: bool) -> list[Move]:
    settings = round_.settings
    budgets = round_.budgets(UNDERUTILIZED)
    moves: list[Move] = []
    for candidate in _interleaved(tried):
        pool = candidate.pool
        if budgets.get(pool.name, 0) == 0:
            moves.append(_no_op(SINGLE_NODE, candidate, _BLOCKING_BUDGET.format(UNDERUTILIZED)))
            continue
        totals = round_.totals.get(pool.name)
        if pool.policy == BALANCED and totals is not None and totals.cost > 0:
            best, scores = evaluate([candidate], candidate.price, round_.totals, settings.k)
            if not best:
                reason = _score_reason(scores, False) + ", even as a delete"
                moves.append(replace(_no_op(SINGLE_NODE, candidate, reason), scores=scores))
                continue
        command = round_.command([candidate])
        if command.decision == NO_OP:
            moves.append(_move(SINGLE_NODE, command, False, {}))
            continue
        approved, scores = evaluate([candidate], command.savings, round_.totals, settings.k)
        moves.append(_move(SINGLE_NODE, command, approved or pool.policy != BALANCED, scores))
        if stop_at_first and moves[-1].approved:
            break
    return moves


def _no_op(method: str, candidate: Candidate, reason: str) -> Move:
    return Move(method, (candidate.name,), (candidate.pool.name,), NO_OP, False, reason, 0.0, candidate.disruption_cost)


def _multi_node(round_: _Round, tried: Sequence[Candidate]) -> Move | None:
    """Karpenter's binary search: the longest ratio-ordered prefix (of up to 101 candidates: the search's upper
    bound is the 100th index) that goes as one valid, approved command."""
    settings = round_.settings
    budgets = round_.budgets(UNDERUTILIZED)
    batch: list[Candidate] = []
    for candidate in _ordered(tried):
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
        command = round_.command(batch[: middle + 1])
        valid: Command | None = command if command.decision == DELETE else None
        if command.decision == REPLACE:
            valid = without_same_instance_type(command, settings.catalogue)
        move = None
        if valid is not None:
            approved, scores = evaluate(valid.candidates, valid.savings, round_.totals, settings.k)
            move = _move(MULTI_NODE, valid, approved, scores)
            if not approved:
                rejected, move = move, None
        if move is not None:
            saved = move
            low = middle + 1
        else:
            high = middle - 1
    return saved or rejected


def _analyse(
    state: _State, settings: _Settings, *, full: bool
) -> tuple[list[Move], Move | None, Move | None, Move | None]:
    """One round: every node's move (when `full`), the Emptiness and multi-node commands, and the first command."""
    round_ = _Round(state, settings)
    tried, empty, refused = _consolidatable(round_)
    emptiness, left_empty = _emptiness(round_, empty)
    if not full and emptiness is not None:
        return [], emptiness, None, emptiness
    multi = _multi_node(round_, tried)
    if not full and multi is not None and multi.approved:
        return [], emptiness, multi, multi
    singles = _single_node(round_, tried, stop_at_first=not full)
    first = emptiness or (multi if multi is not None and multi.approved else None)
    first = first or next((move for move in singles if move.approved), None)
    moves = list(singles)
    for candidate in _ordered(c for c in round_.candidates if c.name in refused):
        moves.append(_no_op(SINGLE_NODE, candidate, refused[candidate.name]))
    chosen = set(emptiness.nodes) if emptiness else set()
    for candidate in _ordered(empty):
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
            moves.append(_no_op(EMPTINESS, candidate, left_empty[candidate.name]))
    for name, reason in round_.blocked.items():
        node = state.nodes[name]
        pool = (node.pool,) if node.pool else ()
        moves.append(Move(CANDIDATES, (name,), pool, NO_OP, False, reason))
    return moves, emptiness, multi, first


def _launched_node(state: _State, settings: _Settings, pool_name: str, offering: Offering) -> Node:
    state.launched += 1
    name = f"{pool_name}-replacement-{state.launched}"
    pool = settings.pool(pool_name)
    labels = {
        **pool.labels,
        NODEPOOL_LABEL: pool_name,
        HOSTNAME_LABEL: name,
        INSTANCE_TYPE_LABEL: offering.instance_type,
    }
    labels[CAPACITY_TYPE_LABEL] = offering.capacity_type
    if offering.zone is not None:
        labels[ZONE_LABEL] = offering.zone
    return Node(
        name=name,
        labels=labels,
        taints=pool.taints,
        allocatable=Resources(offering.cpu, offering.memory, offering.pods),
        pool=pool_name,
        instance_type=offering.instance_type,
        capacity_type=offering.capacity_type,
        zone=offering.zone,
        price=offering.price,
    )


def _apply(state: _State, settings: _Settings, move: Move, world: World) -> list[str]:
    """The state after `move`: its nodes gone, its pods where the simulation put them (an Emptiness deletion's
    pods are placed now), a replacement (or what Emptiness's pods need) launched. Returns the pods placed nowhere."""
    gone = set(move.nodes)
    moved = [p for name in move.nodes for p in state.pods_on.get(name, []) if p.reschedulable]
    placements = dict(move.placements)
    simulation: Simulation | None = None
    if move.method == EMPTINESS:
        simulation = simulate(world, gone, moved)
        placements = dict(simulation.placements)
    renamed: dict[str, str] = {}
    if move.replacement is not None and move.replacement.launch is not None:
        node = _launched_node(state, settings, move.replacement.pool, move.replacement.launch)
        renamed[move.replacement.name] = node.name
        state.nodes[node.name] = node
    for new_node in simulation.new_nodes if simulation else ():
        cheapest = min(new_node.offerings, key=lambda o: (o.price, o.instance_type, o.capacity_type, o.zone or ""))
        node = _launched_node(state, settings, new_node.pool, cheapest)
        renamed[new_node.name] = node.name
        state.nodes[node.name] = node
    for name in renamed.values():
        node = state.nodes[name]
        state.pods_on[name] = [
            d for d in world.daemons if tolerates(d, node.taints) is None and matches_node(d, node.labels)
        ]
    for name in gone:
        state.nodes.pop(name, None)
        state.pods_on.pop(name, None)
    unplaced = []
    for pod in moved:
        target = placements.get(pod.key)
        target = renamed.get(target, target) if target is not None else None
        if target is None or target not in state.nodes:
            unplaced.append(pod.key)
            continue
        state.pods_on.setdefault(target, []).append(replace(pod, node_name=target))
    return unplaced


def _pool_costs(state: _State) -> dict[str, tuple[int, float]]:
    figures: dict[str, tuple[int, float]] = {}
    for node in state.nodes.values():
        if node.pool is not None:
            count, cost = figures.get(node.pool, (0, 0.0))
            figures[node.pool] = (count + 1, cost + node.price)
    return figures


def _copy(state: _State) -> _State:
    return _State(dict(state.nodes), {name: list(pods) for name, pods in state.pods_on.items()}, state.launched)


def _freed(state: _State, settings: _Settings, first: Move | None) -> tuple[Freed, _State]:
    current = _copy(state)
    steps: list[Move] = []
    unplaced: list[str] = []
    move = first
    for _ in range(4 * len(state.nodes) + 8):  # every command lowers the cost, so this bound is never the limit
        if move is None:
            break
        world = _Round(current, settings).world
        assert world is not None
        steps.append(move)
        unplaced += _apply(current, settings, move, world)
        _, _, _, move = _analyse(current, settings, full=False)
    before = sum((n.price for n in state.nodes.values()), 0.0)
    after = sum((n.price for n in current.nodes.values()), 0.0)
    launched = {
        name: f"{node.pool}/{node.instance_type}/{node.capacity_type}"
        for name, node in sorted(current.nodes.items())
        if name not in state.nodes
    }
    gone = tuple(sorted(set(state.nodes) - set(current.nodes)))
    return Freed(tuple(steps), gone, launched, before - after, tuple(sorted(unplaced))), current


def _pools(pools: Mapping[str, Pool | Mapping[str, Any]] | Sequence[Pool | Mapping[str, Any]]) -> dict[str, Pool]:
    result: dict[str, Pool] = {}
    items: Iterable[tuple[str | None, Any]]
    items = pools.items() if isinstance(pools, Mapping) else ((None, value) for value in pools)
    for index, (name, value) in enumerate(items):
        if isinstance(value, Pool):
            pool = value
        elif isinstance(value, Mapping) and "spec" in value:
            pool = pool_from_nodepool(value)
        elif isinstance(value, Mapping) and name is not None:
            pool = pool_from_mapping(str(name), value)
        elif isinstance(value, Mapping) and isinstance(value.get("name"), str):
            pool = pool_from_mapping(value["name"], value)
        else:
            raise ConsolidationInputError(f"pools[{name or index!r}]", "is not a Pool, a NodePool or a pool mapping")
        result[pool.name] = pool
    return result


def _as_node(value: Node | Mapping[str, Any], catalogue: Catalogue, pool_label: str) -> Node:
    return value if isinstance(value, Node) else node_from_wire(value, catalogue, pool_label)


def plan(
    nodes: Iterable[Node | Mapping[str, Any]],
    pods: Iterable[Pod | Mapping[str, Any]],
    pools: Mapping[str, Pool | Mapping[str, Any]] | Sequence[Pool | Mapping[str, Any]],
    catalogue: Catalogue | Mapping[str, Any],
    *,
    what_if: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None,
    k: float = BALANCED_K,
    pdbs: Iterable[Pdb | Mapping[str, Any]] = (),
    default_policy: str = BALANCED,
    pool_label: str = INSTANCE_TYPE_LABEL,
    spot_to_spot: bool = False,
) -> Plan:
    """Advise on consolidating `nodes` running `pods`, as Karpenter v1.15.0 would consolidate them.

    - `nodes`, `pods`, `pdbs`: Kubernetes JSON (or the values `node_from_wire`, `pod_from_wire`, `pdb_from_wire`
      make). Pods bound to no listed node are left out (pending pods are not placed); finished pods count nowhere.
    - `pools`: Karpenter NodePools, `Pool`s, or mappings by pool name (`pool_from_mapping`); a pool met on a node
      but not described gets `default_policy` with Karpenter's defaults.
    - `catalogue`: a `Catalogue` or its document (`parse_catalogue`).
    - `what_if`: pod key (`namespace/name`) → container name → `{"cpu", "memory"}` requests to plan with
      instead of the current ones (the other containers and pods keep theirs).
    - `k`: the Balanced threshold is 1/k (Karpenter's is 2). `spot_to_spot`: Karpenter's `SpotToSpotConsolidation`.
    - `pool_label`: which label names the pool of a node without `karpenter.sh/nodepool`.

    Raises `ConsolidationInputError` naming the value for input it will not guess about (a request that is not a
    quantity, an unknown policy, a k that is not a positive integer); a bad catalogue entry only becomes a problem.
    """
    check_k(k)
    if default_policy not in POLICIES:
        raise ConsolidationInputError("default_policy", f"{default_policy!r} is not one of {', '.join(POLICIES)}")
    parsed_catalogue = catalogue if isinstance(catalogue, Catalogue) else parse_catalogue(catalogue)
    problems = list(parsed_catalogue.problems)
    settings = _Settings(
        pools=_pools(pools),
        default_pool=Pool("", policy=default_policy),
        catalogue=parsed_catalogue,
        pdbs=tuple(p if isinstance(p, Pdb) else pdb_from_wire(p) for p in pdbs),
        k=k,
        spot_to_spot=spot_to_spot,
    )
    node_list = [_as_node(value, parsed_catalogue, pool_label) for value in nodes]
    state = _State({node.name: node for node in node_list}, {node.name: [] for node in node_list})
    what_if = what_if or {}
    for value in pods:
        pod = value if isinstance(value, Pod) else pod_from_wire(value, what_if.get(_key(value)))
        if pod.node_name is None or pod.requests.pods == 0:
            continue
        if pod.node_name not in state.nodes:
            problems.append(f"pod {pod.key}: bound to node {pod.node_name!r}, which is not listed; left out")
            continue
        if not _finished(value):
            state.pods_on[pod.node_name].append(pod)
    moves, emptiness, multi, first = _analyse(state, settings, full=True)
    freed, after = _freed(state, settings, first)
    round_ = _Round(state, settings)
    now, later = _pool_costs(state), _pool_costs(after)
    figures = {
        name: PoolFigures(
            name,
            settings.pool(name).policy,
            count,
            cost,
            round_.totals[name].disruption_cost,
            later.get(name, (0, 0.0))[0],
            later.get(name, (0, 0.0))[1],
        )
        for name, (count, cost) in sorted(now.items())
    }
    for name, (count, cost) in sorted(later.items()):
        if name not in figures:  # a pool that only gets a replacement
            figures[name] = PoolFigures(name, settings.pool(name).policy, 0, 0.0, 0.0, count, cost)
    return Plan(figures, tuple(moves), emptiness, multi, first, freed, tuple(problems))


def _key(value: Pod | Mapping[str, Any]) -> str:
    return value.key if isinstance(value, Pod) else pod_key(value)


def _finished(value: Pod | Mapping[str, Any]) -> bool:
    return False if isinstance(value, Pod) else is_terminal(value)
