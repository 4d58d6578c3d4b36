"""The consolidation advisor's pure core: which nodes the pods' requests free, what that saves, and whether each
move is worth the pods it disturbs — Karpenter v1.15.0's consolidation and its Balanced score, without deleting
anything.

    result = plan(nodes, pods, nodepools, catalogue, pdbs=pdbs)                 # the current requests
    after = plan(nodes, pods, nodepools, catalogue, pdbs=pdbs, what_if=recommended, k=2)
    after.freed.nodes              # ("node-b", "node-c"): gone once every command has run, each on the last's state
    after.freed.savings_per_month  # 730 h a month
    after.first                    # the command Karpenter would run first (a Move)
    [(m.nodes, m.decision, m.approved, m.score, m.reason) for m in after.moves]   # every node, with its reason
    after.pools["general"]         # PoolFigures: nodes, cost per hour, disruption total, and after the freed set

Inputs are Kubernetes JSON, as the API server lists them: Nodes (labels, taints, `status.allocatable`,
conditions), Pods (bound by `spec.nodeName`), PodDisruptionBudgets with their status, Karpenter NodePools (or
`{"general": {"consolidationPolicy": "Balanced"}}`, or `Pool`s). The catalogue is a document:

    {"offerings": [{"instanceType": "m5.large", "capacityType": "on-demand", "cpu": "1930m",
                    "memory": "7Gi", "pods": 29, "pricePerHour": 0.096}],
     "pools": {"general": ["m5.large", "m5.xlarge"]}}

`what_if` maps `namespace/name` to container requests (`{"web-0": {"app": {"cpu": "250m", "memory": "256Mi"}}}`
keyed by pod, then container), computed by the caller (from the pods' WorkloadProfiles) so this stays pure.

The pieces are public too: `eviction_cost(pod)` and `reschedule_disruption_cost(costs)` (Karpenter's
`EvictionCost` and node cost), `score_move(savings, disruption, total_cost, total_disruption)` and
`approves(score, k)`, `parse_catalogue(document)`, `simulate(world, removed, pods)`.

Input it will not guess about raises `ConsolidationInputError` (a `ValueError`) naming the value; a malformed
catalogue entry is named in `Catalogue.problems` (and `Plan.problems`) and skipped. Nothing here reads the cluster.
"""

from __future__ import annotations

from .catalogue import CAPACITY_TYPES, ON_DEMAND, RESERVED, SPOT, Catalogue, Offering, parse_catalogue
from .cluster import Node, Pdb, Pod, Resources, node_from_wire, pdb_from_wire, pod_from_wire
from .commands import DELETE, MIN_SPOT_TO_SPOT_OPTIONS, NO_OP, REPLACE, Replacement, worst_launch_price
from .cost import (
    DISRUPTION_COST_ANNOTATION,
    PER_NODE_BASE_DISRUPTION_COST,
    POD_DELETION_COST_ANNOTATION,
    eviction_cost,
    is_reschedulable,
    parse_int32,
    reschedule_disruption_cost,
    savings_ratio,
)
from .errors import ConsolidationInputError
from .multi_node import MAX_MULTI_NODE_BATCH
from .plan import plan
from .pools import (
    BALANCED,
    POLICIES,
    WHEN_EMPTY,
    WHEN_EMPTY_OR_UNDERUTILIZED,
    Budget,
    Pool,
    pool_from_mapping,
    pool_from_nodepool,
)
from .results import CANDIDATES, EMPTINESS, HOURS_PER_MONTH, MULTI_NODE, SINGLE_NODE, Freed, Move, Plan, PoolFigures
from .score import BALANCED_K, K_MAX, ScoreResult, approves, check_k, score_move, score_result
from .simulate import Host, NewNode, Simulation, World, simulate

__all__ = [
    "BALANCED",
    "BALANCED_K",
    "CANDIDATES",
    "CAPACITY_TYPES",
    "DELETE",
    "DISRUPTION_COST_ANNOTATION",
    "EMPTINESS",
    "HOURS_PER_MONTH",
    "K_MAX",
    "MAX_MULTI_NODE_BATCH",
    "MIN_SPOT_TO_SPOT_OPTIONS",
    "MULTI_NODE",
    "NO_OP",
    "ON_DEMAND",
    "PER_NODE_BASE_DISRUPTION_COST",
    "POD_DELETION_COST_ANNOTATION",
    "POLICIES",
    "REPLACE",
    "RESERVED",
    "SINGLE_NODE",
    "SPOT",
    "WHEN_EMPTY",
    "WHEN_EMPTY_OR_UNDERUTILIZED",
    "Budget",
    "Catalogue",
    "ConsolidationInputError",
    "Freed",
    "Host",
    "Move",
    "NewNode",
    "Node",
    "Offering",
    "Pdb",
    "Plan",
    "Pod",
    "Pool",
    "PoolFigures",
    "Replacement",
    "Resources",
    "ScoreResult",
    "Simulation",
    "World",
    "approves",
    "check_k",
    "eviction_cost",
    "is_reschedulable",
    "node_from_wire",
    "parse_catalogue",
    "parse_int32",
    "pdb_from_wire",
    "plan",
    "pod_from_wire",
    "pool_from_mapping",
    "pool_from_nodepool",
    "reschedule_disruption_cost",
    "savings_ratio",
    "score_move",
    "score_result",
    "simulate",
    "worst_launch_price",
]
