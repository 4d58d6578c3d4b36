"""The scheduling simulation: where would these pods go if those nodes were gone?

Pods are placed one at a time, the largest first (cpu, then memory, then key, as Karpenter's queue orders them),
each on the first existing node that takes it (Ready nodes first, then by name), else on a node this simulation
already decided to launch (the emptiest first), else on a new node of the first pool that can launch one
(highest weight first, then by name). A node takes a pod when the pod tolerates its `NoSchedule`/`NoExecute`
taints, its nodeSelector and required node affinity match the node's labels, its requests fit the room left
(cpu, memory, pod count), no required pod anti-affinity, its own or a resident's, is broken within the same
topology domain, and every `DoNotSchedule` topology spread constraint keeps its skew. A new node may be any
offering that holds all its pods (plus the pool's DaemonSet pods) and matches their requirements; a topology
domain that depends on which offering is launched (its zone, when the offerings are in several) is unknown, and
a constraint on an unknown domain is not guessed: the new node does not take the pod.

The caller leaves out what is not modelled (`Pod.unsupported`: host ports, volumes with zones, required pod
affinity, …); what is simulated is simulated fully.

A plan runs thousands of simulations of one world, so the world is indexed once (`World.index`): its nodes in
the order pods try them, their room as plain lists, per nodeSelector/affinity/tolerations the nodes that accept
such a pod (in blocks, with an upper bound of each block's room, so the first-fit scan skips full blocks), the
residents' anti-affinity terms and spread counts. A simulation copies the room lists and keeps what it places
to itself; the index never changes.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .catalogue import Catalogue, Offering
from .cluster import Node, Pod, Resources, Spread, tolerates
from .pools import HOSTNAME_LABEL, NODEPOOL_LABEL, Pool
from .targets import UNKNOWN_DOMAIN, Target, matches_node, offering_labels
from .world_index import BLOCK, UNCOMPARABLE, Group, Guard, WorldIndex

NEW_NODE_PREFIX = "new-node-"


@dataclass(frozen=True, slots=True)
class Host:
    """An existing node and what already runs on it (every pod that is not finished, DaemonSet pods included)."""

    node: Node
    pods: tuple[Pod, ...] = ()

    @property
    def used(self) -> Resources:
        total = Resources()
        for pod in self.pods:
            total += pod.requests
        return total


@dataclass(frozen=True, slots=True)
class World:
    """What a simulation starts from: the hosts by name, the pools by name, the catalogue, and one pod per
    DaemonSet (its largest), which every new node whose labels and taints it accepts will also run."""

    hosts: Mapping[str, Host]
    pools: Mapping[str, Pool]
    catalogue: Catalogue
    daemons: tuple[Pod, ...] = ()
    _index: WorldIndex | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def index(self) -> WorldIndex:
        """What every simulation of this world starts from, worked out by the first one."""
        if self._index is None:
            object.__setattr__(self, "_index", WorldIndex(self))
        assert self._index is not None
        return self._index


@dataclass(frozen=True, slots=True)
class NewNode:
    """A node the simulation had to launch: its pool, its pods and the offerings that could be it."""

    name: str
    pool: str
    pods: tuple[str, ...]
    requests: Resources
    offerings: tuple[Offering, ...]


@dataclass(frozen=True, slots=True)
class Simulation:
    """Where each pod went (`placements`: pod key → node name, a new node's name included), the nodes launched,
    and why each pod that went nowhere did (`errors`)."""

    placements: Mapping[str, str] = field(default_factory=dict)
    new_nodes: tuple[NewNode, ...] = ()
    errors: Mapping[str, str] = field(default_factory=dict)

    @property
    def all_scheduled(self) -> bool:
        return not self.errors


def _launch_order(pools: Mapping[str, Pool]) -> list[Pool]:
    return sorted(pools.values(), key=lambda pool: (-pool.weight, pool.name))


def _daemon_overhead(world: World, labels: Mapping[str, str], taints: Sequence[Mapping[str, Any]]) -> Resources:
    total = Resources()
    for daemon in world.daemons:
        if tolerates(daemon, taints) is None and matches_node(daemon, labels):
            total += daemon.requests
    return total


class _Placer:
    def __init__(self, world: World, removed: Collection[str]) -> None:
        self.world = world
        index = world.index
        self.index = index
        self.cpu, self.memory, self.pods = list(index.cpu), list(index.memory), list(index.pods)
        for name in removed:  # a removed node takes nothing, not even a pod that requests nothing
            position = index.position.get(name)
            if position is not None:
                self.cpu[position] = self.memory[position] = self.pods[position] = -1
        self.blocks: dict[object, tuple[Group, list[int], list[int]]] = {}  # the groups' largest rooms by block
        self.removed = removed
        self._existing: list[Target] | None = None
        self.new: list[Target] = []
        self.added: dict[Target, list[Pod]] = {}
        self.guarded: list[tuple[Pod, Target]] = []  # placed by this simulation, with anti-affinity
        self._guarding: tuple[Pod, list[Guard]] | None = None

    def _blocks(self, signature: object, group: Group) -> tuple[list[int], list[int]]:
        """The group's largest room per block: an upper bound (exact once a block is touched), which is all the
        scan needs to skip a block."""
        known = self.blocks.get(signature)
        if known is None:
            known = self.blocks[signature] = (group, list(group.block_cpu), list(group.block_memory))
            for name in self.removed:
                slot = group.slot.get(self.index.position.get(name, -1))
                if slot is not None:
                    self._reblock(group, known[1], known[2], slot // BLOCK)
        return known[1], known[2]

    def _reblock(self, group: Group, block_cpu: list[int], block_memory: list[int], block: int) -> None:
        chunk = group.members[block * BLOCK : (block + 1) * BLOCK]
        block_cpu[block] = max(self.cpu[i] for i in chunk)
        block_memory[block] = max(self.memory[i] for i in chunk)

    def _took(self, position: int) -> None:
        """Every group's block holding `position` gets its largest room again."""
        for group, block_cpu, block_memory in self.blocks.values():
            slot = group.slot.get(position)
            if slot is not None:
                self._reblock(group, block_cpu, block_memory, slot // BLOCK)

    @property
    def existing(self) -> list[Target]:
        if self._existing is None:
            self._existing = [target for target in self.index.targets if target.name not in self.removed]
        return self._existing

    def targets(self) -> Iterable[Target]:
        yield from self.existing
        yield from self.new

    def pods_on(self, target: Target) -> Iterable[Pod]:
        yield from target.pods
        yield from self.added.get(target, ())

    # -- constraints over pods already placed ---------------------------------------------------------------

    def _residents(self, target: Target, key: str) -> Iterable[Pod]:
        """The pods in `target`'s `key` domain (just its own for the hostname)."""
        if key == HOSTNAME_LABEL:
            yield from self.pods_on(target)
            return
        domain = target.domain(key)
        for other in self.targets():
            if other is target or other.domain(key) == domain:
                yield from self.pods_on(other)

    def _guards(self, pod: Pod) -> list[Guard]:
        """The residents' anti-affinity terms that select `pod`; the same for every target it tries, so worked out
        once per pod (nothing is placed while a pod tries its targets)."""
        if self._guarding is not None and self._guarding[0] is pod:
            return self._guarding[1]
        guards = [guard for guard in self.index.guards(pod) if guard[1].name not in self.removed]
        guards += [
            (resident, home, term)
            for resident, home in self.guarded
            for term in resident.anti_affinity
            if resident.key != pod.key and term.matches(pod)
        ]
        self._guarding = (pod, guards)
        return guards

    def _anti_affinity_ok(self, pod: Pod, target: Target) -> bool:
        for term in pod.anti_affinity:
            domain = target.domain(term.topology_key)
            if domain is UNKNOWN_DOMAIN:
                return False
            if domain is not None and any(
                other.key != pod.key and term.matches(other) for other in self._residents(target, term.topology_key)
            ):
                return False
        # A resident's own anti-affinity keeps `pod` out of its domain just as well (the scheduler checks both).
        guards = self._guards(pod)
        for _, home, term in guards:
            if home is target:
                return False
            domain, home_domain = target.domain(term.topology_key), home.domain(term.topology_key)
            if domain is UNKNOWN_DOMAIN or home_domain is UNKNOWN_DOMAIN:
                return False
            if domain is not None and domain == home_domain:
                return False
        return True

    def _commit(self, pod: Pod, target: Target) -> Target:
        self._guarding = None
        self.added.setdefault(target, []).append(pod)
        if pod.anti_affinity:
            self.guarded.append((pod, target))
        return target

    def _selected(self, pod: Pod, spread: Spread, pods: Iterable[Pod]) -> int:
        return sum(1 for p in pods if p.namespace == pod.namespace and spread.selector.matches(p.labels))

    def _spread_ok(self, pod: Pod, target: Target) -> bool:
        for number, spread in enumerate(pod.spread):
            domain = target.domain(spread.topology_key)
            if domain is None or domain is UNKNOWN_DOMAIN:
                return False
            base = self.index.spread_counts(pod, number)
            by_domain = dict(base.by_domain)
            for name in self.removed:  # few: the candidates
                entry = base.by_target.get(name)
                if entry is not None:
                    nodes, pods = by_domain[entry[1]]
                    if nodes == 1:
                        del by_domain[entry[1]]
                    else:
                        by_domain[entry[1]] = (nodes - 1, pods - entry[2])
            counts = {known: pods for known, (_, pods) in by_domain.items()}
            for other, added in self.added.items():
                entry = base.by_target.get(other.name) if other.offerings is None else None
                if entry is not None and entry[0] is other:
                    counts[entry[1]] += self._selected(pod, spread, added)
            for other in self.new:
                other_domain = domain if other is target else other.domain(spread.topology_key)
                if other_domain is None or other_domain is UNKNOWN_DOMAIN or not matches_node(pod, other.labels):
                    continue
                counts[other_domain] = counts.get(other_domain, 0) + self._selected(pod, spread, self.pods_on(other))
            counts.setdefault(domain, 0)
            own = 1 if spread.selector.matches(pod.labels) else 0
            if counts[domain] + own - min(counts.values()) > spread.max_skew:
                return False
        return True

    def _constraints_ok(self, pod: Pod, target: Target) -> bool:
        return self._anti_affinity_ok(pod, target) and self._spread_ok(pod, target)

    # -- the three kinds of target ------------------------------------------------------------------------

    def _try_existing(self, pod: Pod) -> Target | None:
        cpu, memory, count = pod.requests.cpu, pod.requests.memory, pod.requests.pods
        rooms_cpu, rooms_memory, rooms_pods, targets = self.cpu, self.memory, self.pods, self.index.targets
        signature, group = self.index.group(pod)
        block_cpus, block_memories = self._blocks(signature, group)
        checked = signature is not UNCOMPARABLE  # the group's labels and taints accept the pod
        for block, (block_cpu, block_memory) in enumerate(zip(block_cpus, block_memories, strict=True)):
            if cpu > block_cpu or memory > block_memory:
                continue
            for i in group.members[block * BLOCK : (block + 1) * BLOCK]:
                if cpu > rooms_cpu[i] or memory > rooms_memory[i] or count > rooms_pods[i]:
                    continue
                target = targets[i]
                if (
                    checked or (matches_node(pod, target.labels) and tolerates(pod, target.taints) is None)
                ) and self._constraints_ok(pod, target):
                    rooms_cpu[i] -= cpu
                    rooms_memory[i] -= memory
                    rooms_pods[i] -= count
                    self._took(i)
                    return self._commit(pod, target)
        return None

    def _fitting(self, pod: Pod, target: Target, offerings: Iterable[Offering]) -> list[Offering]:
        need = target.requests + pod.requests
        anywhere = not pod.node_selector and pod.node_terms is None
        signature = None if anywhere else self.index.signature(pod)
        return [
            o
            for o in offerings
            if need.cpu <= o.cpu
            and need.memory <= o.memory
            and need.pods <= o.pods
            and (anywhere or self._accepts(pod, signature, target, o))
        ]

    def _accepts(self, pod: Pod, signature: object, target: Target, offering: Offering) -> bool:
        """Whether `pod`'s node constraints accept `target` launched as `offering`; the same for every pod of one
        signature, so asked once per new node."""
        if signature is UNCOMPARABLE:
            return matches_node(pod, {**target.labels, **offering_labels(offering)})
        key = (signature, offering.key)
        known = target.accepts.get(key)
        if known is None:
            known = target.accepts[key] = matches_node(pod, {**target.labels, **offering_labels(offering)})
        return known

    def _try_inflight(self, pod: Pod) -> Target | None:
        new = self.new if len(self.new) < 2 else sorted(self.new, key=lambda t: len(self.added.get(t, ())))
        for target in new:
            assert target.offerings is not None
            if tolerates(pod, target.taints) is not None:
                continue
            fitting = self._fitting(pod, target, target.offerings)
            if not fitting:
                continue
            kept, target.offerings = target.offerings, fitting
            if self._constraints_ok(pod, target):
                target.requests += pod.requests
                return self._commit(pod, target)
            target.offerings = kept
        return None

    def _launchable(self, pool: Pool) -> list[Offering]:
        offerings = self.index.launchable.get(pool.name)
        if offerings is None:
            offerings = [
                o
                for o in self.world.catalogue.launchable(pool.name, pool.instance_types)
                if (pool.capacity_types is None or o.capacity_type in pool.capacity_types)
                and (pool.zones is None or o.zone in pool.zones)
            ]
            self.index.launchable[pool.name] = offerings
        return offerings

    def _try_launch(self, pod: Pod) -> Target | None:
        for pool in _launch_order(self.world.pools):
            if tolerates(pod, pool.taints) is not None:
                continue
            name = f"{NEW_NODE_PREFIX}{len(self.new) + 1}"
            labels = {**pool.labels, NODEPOOL_LABEL: pool.name, HOSTNAME_LABEL: name}
            offerings = self._launchable(pool)
            target = Target(name, labels, pool.taints, pool=pool.name, offerings=offerings)
            target.requests = _daemon_overhead(self.world, labels, pool.taints)
            fitting = self._fitting(pod, target, offerings)
            if not fitting:
                continue
            target.offerings = fitting
            self.new.append(target)
            if self._constraints_ok(pod, target):
                target.requests += pod.requests
                return self._commit(pod, target)
            self.new.pop()
        return None

    def place(self, pod: Pod) -> Target | None:
        return self._try_existing(pod) or self._try_inflight(pod) or self._try_launch(pod)


def placement_order(pods: Iterable[Pod]) -> list[Pod]:
    """Largest first: cpu, then memory, descending; the key breaks ties (Karpenter uses creation time, then UID)."""
    return sorted(pods, key=lambda pod: (-pod.requests.cpu, -pod.requests.memory, pod.key))


def simulate(world: World, removed: Collection[str], movers: Sequence[Pod], *, give_up: bool = False) -> Simulation:
    """Place `movers` on the world without the nodes named in `removed` (and without deleting nodes).

    A pod that lands on a node that is not Ready is an error, as Karpenter refuses to decide on a node that has
    not initialised (`would schedule against uninitialized node/<name>`). With `give_up`, the simulation stops at
    the first error or the second new node: enough for a caller that only needs to know whether the removal can
    be one DELETE or one REPLACE (the placements and errors are then partial).
    """
    placer = _Placer(world, set(removed))
    placements: dict[str, str] = {}
    errors: dict[str, str] = {}
    for pod in placement_order(movers):
        target = placer.place(pod)
        if target is None:
            errors[pod.key] = "fits no remaining node and no offering any pool may launch"
        elif not target.ready:
            errors[pod.key] = f"would schedule against uninitialized node/{target.name}"
        else:
            placements[pod.key] = target.name
        if give_up and (errors or len(placer.new) > 1):
            break
    new_nodes = tuple(
        NewNode(t.name, t.pool, tuple(p.key for p in placer.added.get(t, ())), t.requests, tuple(t.offerings or ()))
        for t in placer.new
    )
    return Simulation(placements, new_nodes, errors)
