"""The freed set: the first command, then the first command of each round on the state the previous one left,
until no round finds one."""

from __future__ import annotations

from dataclasses import replace

from .analysis import analyse
from .catalogue import Offering
from .cluster import Node, Resources, tolerates
from .pools import CAPACITY_TYPE_LABEL, HOSTNAME_LABEL, INSTANCE_TYPE_LABEL, NODEPOOL_LABEL, ZONE_LABEL
from .results import EMPTINESS, Freed, Move
from .simulate import Simulation, World, simulate
from .state import Round, Settings, State
from .targets import matches_node


def launched_node(state: State, settings: Settings, pool_name: str, offering: Offering) -> Node:
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


def apply_move(state: State, settings: Settings, move: Move, world: World) -> list[str]:
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
        node = launched_node(state, settings, move.replacement.pool, move.replacement.launch)
        renamed[move.replacement.name] = node.name
        state.nodes[node.name] = node
    for new_node in simulation.new_nodes if simulation else ():
        cheapest = min(new_node.offerings, key=lambda o: (o.price, o.instance_type, o.capacity_type, o.zone or ""))
        node = launched_node(state, settings, new_node.pool, cheapest)
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


def pool_costs(state: State) -> dict[str, tuple[int, float]]:
    figures: dict[str, tuple[int, float]] = {}
    for node in state.nodes.values():
        if node.pool is not None:
            count, cost = figures.get(node.pool, (0, 0.0))
            figures[node.pool] = (count + 1, cost + node.price)
    return figures


def copy_state(state: State) -> State:
    return State(dict(state.nodes), {name: list(pods) for name, pods in state.pods_on.items()}, state.launched)


def freed_set(first_round: Round, first: Move | None) -> tuple[Freed, State]:
    """The freed set from the round that found `first`, and the state at its end."""
    state, settings = first_round.state, first_round.settings
    current = copy_state(state)
    steps: list[Move] = []
    unplaced: list[str] = []
    round_, move = first_round, first
    for _ in range(4 * len(state.nodes) + 8):  # every command lowers the cost, so this bound is never the limit
        if move is None:
            break
        assert round_.world is not None
        steps.append(move)
        unplaced += apply_move(current, settings, move, round_.world)
        round_ = Round(current, settings)
        _, _, _, move = analyse(round_, full=False)
    before = sum((n.price for n in state.nodes.values()), 0.0)
    after = sum((n.price for n in current.nodes.values()), 0.0)
    launched = {
        name: f"{node.pool}/{node.instance_type}/{node.capacity_type}"
        for name, node in sorted(current.nodes.items())
        if name not in state.nodes
    }
    gone = tuple(sorted(set(state.nodes) - set(current.nodes)))
    return Freed(tuple(steps), gone, launched, before - after, tuple(sorted(unplaced))), current
