"""Why a node is no candidate at all (Karpenter's `DisruptionBlocked` texts), and why a candidate may not be
consolidated (its `Unconsolidatable` texts, and what the simulation does not model)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from .catalogue import Catalogue
from .cluster import Node, Pdb, Pod
from .commands import Candidate
from .cost import PER_NODE_BASE_DISRUPTION_COST
from .pools import NODEPOOL_LABEL, WHEN_EMPTY


def node_blocked(node: Node) -> str | None:
    if node.pool is None:
        return f"Node doesn't have required label (label={NODEPOOL_LABEL})"
    if node.deleting:
        return "Node is deleting or marked for deletion"
    if not node.ready:
        return "Node isn't initialized"
    if node.do_not_disrupt:
        return 'Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation'
    return None


class Pdbs:
    """The PodDisruptionBudgets, remembering which cover a pod by its namespace and labels: a pod is looked up
    once per round, and its labels do not change when a command moves it."""

    def __init__(self, pdbs: Iterable[Pdb]) -> None:
        self.all = tuple(pdbs)
        self.fully_blocking = tuple(pdb for pdb in self.all if pdb.fully_blocking)
        self._covering: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[Pdb, ...]] = {}
        self._by_pod: dict[int, tuple[Pod, tuple[Pdb, ...]]] = {}
        self._verdicts: dict[int, tuple[Pod, str | None]] = {}

    def covering(self, pod: Pod) -> tuple[Pdb, ...]:
        known = self._by_pod.get(id(pod))
        if known is not None:
            return known[1]
        key = (pod.namespace, tuple(pod.labels.items()))
        found = self._covering.get(key)
        if found is None:
            found = self._covering[key] = tuple(pdb for pdb in self.all if pdb.covers(pod))
        self._by_pod[id(pod)] = (pod, found)  # the pod is held, so its id names it
        return found

    def eviction_blocked(self, pod: Pod) -> str | None:
        """Why evicting `pod` would fail because of its PDBs (two of them, or one allowing no disruption), or None
        (also for a pod the eviction API is not asked about)."""
        known = self._verdicts.get(id(pod))
        if known is not None:
            return known[1]
        reason = None
        if pod.evictable:
            covering = self.covering(pod)
            if len(covering) > 1:
                keys = " ".join(pdb.key for pdb in covering)
                reason = f"Eviction does not support multiple PDBs (PodDisruptionBudget(s)=[{keys}])"
            for pdb in covering if reason is None else ():
                if pdb.disruptions_allowed == 0 and not (pdb.evicts_unhealthy and pod.not_ready):
                    reason = f"Pdb prevents pod evictions (PodDisruptionBudget=[{pdb.key}])"
                    break
        self._verdicts[id(pod)] = (pod, reason)
        return reason


def pods_blocked(pods: Sequence[Pod], pdbs: Pdbs) -> str | None:
    for pod in pods:
        if pod.do_not_disrupt:
            return f'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod={pod.key})'
    for pod in pods:
        reason = pdbs.eviction_blocked(pod)
        if reason is not None:
            return reason
    return None


def why_blocked(node: Node, pods: Sequence[Pod], pdbs: Pdbs) -> str | None:
    """Why Karpenter would not make `node` a candidate at all (its `DisruptionBlocked` text), or None: the node's
    state first, then a do-not-disrupt pod (DaemonSet and mirror pods included), then a PDB."""
    return node_blocked(node) or pods_blocked(pods, pdbs)


def unconsolidatable(candidate: Candidate, catalogue: Catalogue) -> str | None:
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


def non_candidate_cost(pods: Iterable[Pod]) -> float:
    """Karpenter's `StateNode.DisruptionCost()`: 1.0 plus the positive costs of every pod but DaemonSet pods
    (mirror pods included, unlike a candidate's cost)."""
    return PER_NODE_BASE_DISRUPTION_COST + sum((max(0.0, p.eviction_cost) for p in pods if not p.daemonset), 0.0)
