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

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from .analysis import analyse
from .blockers import Pdbs
from .catalogue import Catalogue, parse_catalogue
from .cluster import Node, Pdb, Pod, node_from_wire, pdb_from_wire, pod_from_wire
from .cost import is_terminal, pod_key
from .errors import ConsolidationInputError
from .freed import freed_set, pool_costs
from .pools import BALANCED, INSTANCE_TYPE_LABEL, POLICIES, Pool, pool_from_mapping, pool_from_nodepool
from .results import Plan, PoolFigures
from .score import BALANCED_K, check_k
from .state import Round, Settings, State


def _pools(
    pools: Mapping[str, Pool | Mapping[str, Any]] | Sequence[Pool | Mapping[str, Any]], now: datetime | None
) -> dict[str, Pool]:
    result: dict[str, Pool] = {}
    items: Iterable[tuple[str | None, Any]]
    items = pools.items() if isinstance(pools, Mapping) else ((None, value) for value in pools)
    for index, (name, value) in enumerate(items):
        if isinstance(value, Pool):
            pool = value
        elif isinstance(value, Mapping) and "spec" in value:
            pool = pool_from_nodepool(value, now=now)
        elif isinstance(value, Mapping) and name is not None:
            pool = pool_from_mapping(str(name), value, now=now)
        elif isinstance(value, Mapping) and isinstance(value.get("name"), str):
            pool = pool_from_mapping(value["name"], value, now=now)
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
    now: datetime | None = None,
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
    - `now`: when the plan is for, deciding which scheduled budgets of NodePools and pool mappings apply (None:
      every one, the cautious reading); `Pool`s come with theirs decided.

    Raises `ConsolidationInputError` naming the value for input it will not guess about (a request that is not a
    quantity, an unknown policy, a k that is not a positive integer); a bad catalogue entry only becomes a problem.
    """
    check_k(k)
    if default_policy not in POLICIES:
        raise ConsolidationInputError("default_policy", f"{default_policy!r} is not one of {', '.join(POLICIES)}")
    parsed_catalogue = catalogue if isinstance(catalogue, Catalogue) else parse_catalogue(catalogue)
    problems = list(parsed_catalogue.problems)
    settings = Settings(
        pools=_pools(pools, now),
        default_pool=Pool("", policy=default_policy),
        catalogue=parsed_catalogue,
        pdbs=Pdbs(p if isinstance(p, Pdb) else pdb_from_wire(p) for p in pdbs),
        k=k,
        spot_to_spot=spot_to_spot,
    )
    node_list = [_as_node(value, parsed_catalogue, pool_label) for value in nodes]
    state = State({node.name: node for node in node_list}, {node.name: [] for node in node_list})
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
    round_ = Round(state, settings)
    moves, emptiness, multi, first = analyse(round_, full=True)
    freed, after = freed_set(round_, first)
    before, later = pool_costs(state), pool_costs(after)
    gone = Counter(node.pool for name, node in state.nodes.items() if name not in after.nodes)
    new = Counter(node.pool for name, node in after.nodes.items() if name not in state.nodes)
    figures = {
        name: PoolFigures(
            name,
            settings.pool(name).policy,
            count,
            cost,
            round_.totals[name].disruption_cost,
            later.get(name, (0, 0.0))[0],
            later.get(name, (0, 0.0))[1],
            freed=gone[name],
            launched=new[name],
        )
        for name, (count, cost) in sorted(before.items())
    }
    for name, (count, cost) in sorted(later.items()):
        if name not in figures:  # a pool that only gets a replacement
            figures[name] = PoolFigures(
                name, settings.pool(name).policy, 0, 0.0, 0.0, count, cost, freed=0, launched=new[name]
            )
    return Plan(figures, tuple(moves), emptiness, multi, first, freed, tuple(problems))


def _key(value: Pod | Mapping[str, Any]) -> str:
    return value.key if isinstance(value, Pod) else pod_key(value)


def _finished(value: Pod | Mapping[str, Any]) -> bool:
    return False if isinstance(value, Pod) else is_terminal(value)
