"""Nodes that never become candidates, with Karpenter's `DisruptionBlocked` reasons."""

from __future__ import annotations

from ballast.internal.consolidation import CANDIDATES, NO_OP, Move, Plan, plan

from .builders import catalogue, node, pdb, pod

POOLS = {"general": {"consolidationPolicy": "Balanced", "budgets": [{"nodes": "100%"}]}}
WEB = {"app": "web"}


def move_of(result: Plan, name: str) -> Move:
    return next(m for m in result.moves if m.nodes == (name,))


def blocked(result: Plan, name: str) -> str:
    move = move_of(result, name)
    assert (move.method, move.decision, move.approved) == (CANDIDATES, NO_OP, False)
    return move.reason


def test_do_not_disrupt_on_a_pod_blocks_its_node() -> None:
    pods = [pod("p", "a", annotations={"karpenter.sh/do-not-disrupt": "true"}), pod("q", "b")]
    result = plan([node("a"), node("b")], pods, POOLS, catalogue())
    assert blocked(result, "a") == 'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod=default/p)'
    assert "a" not in result.freed.nodes
    assert result.freed.nodes == ("b",)  # b's pod moves onto a, which stays


def test_do_not_disrupt_as_a_duration_blocks_and_a_bad_value_does_not() -> None:
    nodes = [node("a"), node("b")]
    for value, is_blocked in (("10m", True), ("soon", False), ("0s", False)):
        pods = [pod("p", "a", annotations={"karpenter.sh/do-not-disrupt": value}), pod("q", "b")]
        assert (move_of(plan(nodes, pods, POOLS, catalogue()), "a").method == CANDIDATES) is is_blocked


def test_do_not_disrupt_on_the_node_blocks_it() -> None:
    result = plan(
        [node("a", annotations={"karpenter.sh/do-not-disrupt": "true"}), node("b")],
        [pod("p", "a"), pod("q", "b")],
        POOLS,
        catalogue(),
    )
    assert blocked(result, "a") == 'Disruption is blocked through the "karpenter.sh/do-not-disrupt" annotation'


def test_a_pdb_allowing_no_disruption_blocks_the_node() -> None:
    pods = [pod("p", "a", labels=WEB), pod("q", "b")]
    result = plan([node("a"), node("b")], pods, POOLS, catalogue(), pdbs=[pdb("web", WEB, 0)])
    assert blocked(result, "a") == "Pdb prevents pod evictions (PodDisruptionBudget=[default/web])"
    allowed = plan([node("a"), node("b")], pods, POOLS, catalogue(), pdbs=[pdb("web", WEB, 1)])
    assert move_of(allowed, "a").method != CANDIDATES


def test_a_pod_under_two_pdbs_blocks_the_node() -> None:
    pods = [pod("p", "a", labels=WEB), pod("q", "b")]
    two = [pdb("web", WEB, 1), pdb("web-too", WEB, 1)]
    result = plan([node("a"), node("b")], pods, POOLS, catalogue(), pdbs=two)
    assert blocked(result, "a") == (
        "Eviction does not support multiple PDBs (PodDisruptionBudget(s)=[default/web default/web-too])"
    )


def test_a_pdb_in_another_namespace_or_an_unready_pod_under_always_allow_does_not_block() -> None:
    pods = [pod("p", "a", labels=WEB), pod("q", "b")]
    other = plan([node("a"), node("b")], pods, POOLS, catalogue(), pdbs=[pdb("web", WEB, 0, namespace="shop")])
    assert move_of(other, "a").method != CANDIDATES
    sick = pod("p", "a", labels=WEB)
    sick["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    budget = pdb("web", WEB, 0, unhealthyPodEvictionPolicy="AlwaysAllow")
    lenient = plan([node("a"), node("b")], [sick, pod("q", "b")], POOLS, catalogue(), pdbs=[budget])
    assert move_of(lenient, "a").method != CANDIDATES


def test_node_state_blocks() -> None:
    result = plan(
        [node("gone", deleting=True), node("new", ready=False), node("b"), node("loose", pool=None, labels={})],
        [pod("q", "b")],
        POOLS,
        catalogue(),
    )
    assert blocked(result, "gone") == "Node is deleting or marked for deletion"
    assert blocked(result, "new") == "Node isn't initialized"
    # Without karpenter.sh/nodepool the pool is the fallback label, here the instance type.
    assert move_of(result, "loose").pools == ("m.xlarge",)
