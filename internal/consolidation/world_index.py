"""The index of a world: what every simulation of it starts from, worked out once (`World.index`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .catalogue import Offering
from .cluster import Pod, PodTerm, tolerates
from .targets import Target, matches_node

if TYPE_CHECKING:
    from .simulate import World

UNCOMPARABLE = object()
"""The signature of a pod whose constraints hold something unhashable: its group is every node, checked one by one."""
BLOCK = 32
"""Targets per block of the first-fit scan: a block whose largest room cannot hold a pod is skipped whole."""
Guard = tuple[Pod, Target, PodTerm]


@dataclass(frozen=True, slots=True)
class Group:
    """The existing targets that accept pods of one signature."""

    members: list[int]  # positions in the index's targets, in order
    slot: dict[int, int]  # position: where it is in `members`
    block_cpu: list[int]  # the largest room of each block of members, before any simulation
    block_memory: list[int]


def signature_of(pod: Pod) -> object:
    """What decides which nodes' labels and taints accept `pod`; `UNCOMPARABLE` when it holds something unhashable."""
    try:
        signature = (
            tuple(pod.node_selector.items()),
            pod.node_terms,
            tuple(tuple(toleration.items()) for toleration in pod.tolerations),
        )
        hash(signature)
    except TypeError:
        return UNCOMPARABLE
    return signature


@dataclass(frozen=True, slots=True)
class SpreadCounts:
    """One spread constraint's residents counted over the existing targets, before any simulation."""

    by_domain: dict[object, tuple[int, int]]  # domain: (targets, selected residents)
    by_target: dict[str, tuple[Target, object, int]]  # target name: (target, domain, selected residents)


class WorldIndex:
    """What every simulation of one world starts from, worked out once: the existing targets in the order pods try
    them, the room each has left (cpu, memory and pod count as plain lists, for the first-fit scan), the residents
    with anti-affinity, and per spread constraint the matching residents counted by target."""

    def __init__(self, world: World) -> None:
        hosts = [host for host in world.hosts.values() if not host.node.deleting]
        hosts.sort(key=lambda host: (not host.node.ready, host.node.name))
        self.targets = [Target(h.node.name, h.node.labels, h.node.taints, h.pods, ready=h.node.ready) for h in hosts]
        self.cpu: list[int] = []
        self.memory: list[int] = []
        self.pods: list[int] = []
        for host in hosts:
            room = host.node.allocatable
            cpu, memory, pods = room.cpu, room.memory, room.pods
            for resident in host.pods:
                requests = resident.requests
                cpu, memory, pods = cpu - requests.cpu, memory - requests.memory, pods - requests.pods
            self.cpu.append(cpu)
            self.memory.append(memory)
            self.pods.append(pods)
        self.position = {target.name: i for i, target in enumerate(self.targets)}
        self._groups: dict[object, Group] = {}
        self._signatures: dict[int, tuple[Pod, object]] = {}
        self.guarded = [(pod, target) for target in self.targets for pod in target.pods if pod.anti_affinity]
        self.launchable: dict[str, list[Offering]] = {}
        self._spreads: dict[object, tuple[Pod, SpreadCounts]] = {}
        self._by_term: dict[PodTerm, list[tuple[Pod, Target]]] = {}
        for resident, home in self.guarded:
            for term in resident.anti_affinity:
                self._by_term.setdefault(term, []).append((resident, home))
        self._guards: dict[tuple[str, tuple[tuple[str, str], ...]], list[Guard]] = {}

    def group(self, pod: Pod) -> tuple[object, Group]:
        """The targets whose labels and taints accept `pod`, shared by every pod with the same nodeSelector, node
        affinity and tolerations (when those cannot be compared, every target, checked one by one)."""
        known = self._signatures.get(id(pod))
        if known is None:
            known = self._signatures[id(pod)] = (pod, signature_of(pod))  # the pod is held, so its id names it
        signature = known[1]
        group = self._groups.get(signature)
        if group is None:
            if signature is UNCOMPARABLE:
                members = list(range(len(self.targets)))
            else:
                members = [
                    i
                    for i, target in enumerate(self.targets)
                    if matches_node(pod, target.labels) and tolerates(pod, target.taints) is None
                ]
            chunks = [members[start : start + BLOCK] for start in range(0, len(members), BLOCK)]
            group = self._groups[signature] = Group(
                members,
                {i: n for n, i in enumerate(members)},
                [max(self.cpu[i] for i in chunk) for chunk in chunks],
                [max(self.memory[i] for i in chunk) for chunk in chunks],
            )
        return signature, group

    def signature(self, pod: Pod) -> object:
        """What `pod` shares with every pod whose node constraints and tolerations are the same."""
        return self.group(pod)[0]

    def guards(self, pod: Pod) -> list[Guard]:
        """The residents whose own anti-affinity terms select `pod`, with their targets and those terms (a pod's
        own term excluded). Terms are compared by value, so one Deployment's replicas are matched once."""
        if not self._by_term:
            return []
        key = (pod.namespace, tuple(pod.labels.items()))
        found = self._guards.get(key)
        if found is None:
            found = self._guards[key] = [
                (resident, home, term)
                for term, residents in self._by_term.items()
                if term.matches(pod)
                for resident, home in residents
            ]
        return [guard for guard in found if guard[0].key != pod.key] if found else found

    def spread_counts(self, pod: Pod, index: int) -> SpreadCounts:
        """For `pod`'s `index`-th spread constraint, over the existing targets its node affinity accepts and whose
        domain is known: per domain, how many such targets and how many residents the constraint selects; per
        target, its domain and its count."""
        spread = pod.spread[index]
        signature = self.signature(pod)
        # Replicas share the answer: it depends only on the namespace, the constraint and the node affinity.
        key: object = (id(pod), index) if signature is UNCOMPARABLE else (pod.namespace, spread, signature)
        cached = self._spreads.get(key)
        if cached is None:
            counts = SpreadCounts({}, {})
            for target in self.targets:
                domain = target.domain(spread.topology_key)
                if domain is None or not matches_node(pod, target.labels):
                    continue
                selected = sum(
                    1 for p in target.pods if p.namespace == pod.namespace and spread.selector.matches(p.labels)
                )
                counts.by_target[target.name] = (target, domain, selected)
                nodes, pods = counts.by_domain.get(domain, (0, 0))
                counts.by_domain[domain] = (nodes + 1, pods + selected)
            cached = (pod, counts)  # the pod is held, so its id names it as long as this index lives
            self._spreads[key] = cached
        return cached[1]
