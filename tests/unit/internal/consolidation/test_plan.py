"""The plan as a whole: multi-node binary search, Emptiness, the what-if, the freed set and the pools' figures."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.internal.consolidation import (
    DELETE,
    EMPTINESS,
    MULTI_NODE,
    SINGLE_NODE,
    ConsolidationInputError,
    Pool,
    plan,
)
from ballast.internal.consolidation.cluster import Node, Resources
from ballast.internal.consolidation.commands import Candidate, Totals, evaluate

from .builders import catalogue, node, offering, pod

EVERYTHING = [{"nodes": "100%"}]


def pools(policy: str = "Balanced", **extra: Any) -> dict[str, dict[str, Any]]:
    return {"general": {"consolidationPolicy": policy, "budgets": EVERYTHING, **extra}}


def test_multi_node_finds_the_longest_prefix_that_goes_as_one_delete() -> None:
    # Four 4-cpu nodes with 1 cpu each: three pods fit on the fourth; all four would need a 4-cpu replacement of
    # a type being removed, which filterOutSameInstanceType refuses.
    nodes = [node(name) for name in "abcd"]
    pods = [pod(f"p-{name}", name, "1") for name in "abcd"]
    result = plan(nodes, pods, pools(), catalogue())
    assert result.multi_node is not None
    assert (result.multi_node.method, result.multi_node.nodes, result.multi_node.decision) == (
        MULTI_NODE,
        ("a", "b", "c"),
        DELETE,
    )
    assert result.multi_node.savings == pytest.approx(0.6)
    assert result.multi_node.score == pytest.approx(1.0)
    assert result.first == result.multi_node
    assert result.freed.nodes == ("a", "b", "c")
    assert result.freed.savings_per_hour == pytest.approx(0.6)
    assert result.freed.savings_per_month == pytest.approx(438.0)


def test_multi_node_replaces_several_nodes_by_one_cheaper_of_another_type() -> None:
    nodes = [node(name, "m.2xlarge", cpu="8", memory="32Gi") for name in "ab"]
    pods = [pod("p-a", "a", "1"), pod("p-b", "b", "1")]
    result = plan(nodes, pods, pools("WhenEmptyOrUnderutilized"), catalogue())
    assert result.multi_node is not None
    assert (result.multi_node.nodes, result.multi_node.decision) == (("a", "b"), "replace")
    assert result.multi_node.replacement is not None
    assert result.multi_node.replacement.instance_types == ("m.large", "m.xlarge")
    assert result.freed.nodes == ("a", "b")
    assert list(result.freed.launched.values()) == ["general/m.large/on-demand"]
    assert result.freed.savings_per_hour == pytest.approx(0.7)


def test_a_replacement_a_later_command_consolidates_again_is_not_among_the_launched() -> None:
    """Found by test_properties: the first command replaces n4, n5, n0 by one m.xlarge; the second replaces that
    node with n1-n3 by another. The freed set is the six nodes there were, and only the second launch remains."""
    sizes = {"m.large": "2", "m.2xlarge": "8"}
    kinds = ["m.2xlarge", "m.large", "m.large", "m.large", "m.2xlarge", "m.2xlarge"]
    nodes = [node(f"n{i}", kind, cpu=sizes[kind], memory="64Gi") for i, kind in enumerate(kinds)]
    requests = {"n0": ["100m", "100m"], "n1": ["100m"], "n2": ["100m"], "n3": ["100m", "100m", "100m", "1201m"],
                "n4": ["1901m"], "n5": ["100m"]}  # fmt: skip
    pods = [pod(f"{n}-{i}", n, cpu, "128Mi") for n, cpus in requests.items() for i, cpu in enumerate(cpus)]
    result = plan(nodes, pods, {"general": {"consolidationPolicy": "WhenEmptyOrUnderutilized",
                                            "budgets": [{"nodes": "100%"}]}}, catalogue())  # fmt: skip
    assert [step.nodes for step in result.freed.steps] == [
        ("n4", "n5", "n0"),
        ("general-replacement-1", "n2", "n1", "n3"),
    ]
    assert result.freed.nodes == ("n0", "n1", "n2", "n3", "n4", "n5")
    assert result.freed.launched == {"general-replacement-2": "general/m.xlarge/on-demand"}
    assert result.freed.unplaced == ()


def test_the_default_budget_of_ten_percent_lets_one_node_go_at_a_time() -> None:
    nodes = [node(name) for name in "abcd"]
    pods = [pod(f"p-{name}", name, "1") for name in "abcd"]
    result = plan(nodes, pods, {"general": {"consolidationPolicy": "Balanced"}}, catalogue())
    assert result.multi_node is None  # one candidate allowed: nothing to search
    assert result.first is not None
    assert result.first.method == SINGLE_NODE
    # One at a time, each on the state the last left: a's pod lands on b, which then costs more to disrupt than c.
    assert [step.nodes for step in result.freed.steps] == [("a",), ("c",), ("d",)]
    assert result.freed.nodes == ("a", "c", "d")


def test_what_if_requests_free_a_node_the_current_requests_do_not() -> None:
    nodes = [node(name, "m.large", cpu="2", memory="8Gi") for name in "ab"]
    pods = [pod("p1", "a", "1500m"), pod("p2", "b", "1500m")]
    now = plan(nodes, pods, pools(), catalogue())
    assert now.freed.nodes == ()
    assert {m.reason for m in now.moves} == {"Can't replace with a cheaper node"}
    recommended = {"default/p1": {"app": {"cpu": "500m"}}, "default/p2": {"app": {"cpu": "500m", "memory": "512Mi"}}}
    after = plan(nodes, pods, pools(), catalogue(), what_if=recommended)
    assert after.freed.nodes == ("a",)
    assert after.freed.savings_per_month == pytest.approx(73.0)
    assert after.pools["general"].nodes_after == 1
    assert after.pools["general"].savings_per_month == pytest.approx(73.0)


def test_emptiness_deletes_empty_nodes_before_any_consolidation() -> None:
    nodes = [node("empty"), node("low"), node("busy")]
    pods = [pod("low-priority", "low", "100m", priority=-(2**31)), pod("p", "busy", "3")]
    result = plan(nodes, pods, pools("WhenEmpty"), catalogue())
    assert result.emptiness is not None
    # A pod whose cost clamps to 0 or less leaves its node empty, as Karpenter counts it.
    assert (result.emptiness.method, result.emptiness.nodes) == (EMPTINESS, ("empty", "low"))
    assert result.first == result.emptiness
    assert result.freed.nodes == ("empty", "low")
    assert result.freed.unplaced == ()  # the low-priority pod found room on busy


def test_the_pools_figures() -> None:
    nodes = [node("a"), node("b", "m.2xlarge", cpu="8", memory="32Gi"), node("c", pool="other")]
    pods = [pod("p", "a", priority=2**25), pod("q", "b"), pod("r", "c")]
    result = plan(nodes, pods, pools(), catalogue())
    general = result.pools["general"]
    assert (general.policy, general.nodes) == ("Balanced", 2)
    assert general.cost_per_hour == pytest.approx(0.6)
    assert general.total_disruption_cost == (1 + 2) + (1 + 1)
    assert general.cost_per_month == pytest.approx(438.0)
    assert result.pools["other"].policy == "Balanced"  # the default policy


def test_a_move_across_pools_splits_the_savings_by_source_cost_and_needs_every_balanced_pool() -> None:
    # Karpenter's scenario: five Balanced and five WhenEmptyOrUnderutilized nodes at 4.84, one pod each; one of
    # each deleted: the Balanced pool gets half the savings, a fifth of its cost for a fifth of its disruption.
    def candidate(name: str, pool: Pool) -> Candidate:
        labelled = Node(name, {}, (), Resources(), pool.name, "m7i.xlarge", "on-demand", None, 4.84)
        return Candidate(labelled, pool, (), 2.0)

    balanced, other = Pool("balanced", "Balanced"), Pool("other", "WhenEmptyOrUnderutilized")
    totals = {"balanced": Totals(5 * 4.84, 10.0), "other": Totals(5 * 4.84, 10.0)}
    approved, scores = evaluate([candidate("b0", balanced), candidate("o0", other)], 9.68, totals, 2)
    assert approved
    assert list(scores) == ["balanced"]  # only Balanced pools are scored
    assert scores["balanced"].savings_fraction == pytest.approx(0.2)
    assert scores["balanced"].score == pytest.approx(1.0)
    strict = Pool("strict", "Balanced")
    heavy = Candidate(Node("s0", {}, (), Resources(), "strict", "t", "on-demand", None, 1.0), strict, (), 21.0)
    totals["strict"] = Totals(4.0, 22.0)  # 1.0 of 4.0 saved (25 %) for 21 of 22 disrupted: 0.26
    approved, scores = evaluate([candidate("b0", balanced), heavy], 4.84 + 1.0, totals, 2)
    assert not approved  # the strict pool rejects, so the whole move is rejected
    assert scores["balanced"].approved
    assert not scores["strict"].approved


def test_a_replacement_pool_with_a_higher_weight_is_launched_first() -> None:
    spare = offering("m.medium", 0.05, "2", "8Gi")
    nodes = [node("a", "m.2xlarge", cpu="8", memory="32Gi")]
    result = plan(
        nodes,
        [pod("p", "a", "1")],
        {
            "general": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "budgets": EVERYTHING},
            "cheap": {"weight": 10, "instanceTypes": ["m.medium"]},
        },
        catalogue(*catalogue()["offerings"], spare),
    )
    move = next(m for m in result.moves if m.nodes == ("a",))
    assert move.replacement is not None
    assert (move.replacement.pool, move.replacement.instance_types) == ("cheap", ("m.medium",))


def test_karpenter_nodepools_are_read_as_pools() -> None:
    nodepool = {
        "metadata": {"name": "general"},
        "spec": {
            "disruption": {"consolidationPolicy": "WhenEmpty", "consolidateAfter": "30s", "budgets": [{"nodes": "3"}]},
            "template": {
                "spec": {"requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]}
            },
        },
    }
    result = plan([node("a"), node("b")], [pod("p", "a"), pod("q", "b")], [nodepool], catalogue())
    assert result.pools["general"].policy == "WhenEmpty"


def test_bad_input_is_refused_by_name() -> None:
    with pytest.raises(ConsolidationInputError, match=r"pools\['general'\]\.consolidationPolicy"):
        plan([node("a")], [], {"general": {"consolidationPolicy": "Sometimes"}}, catalogue())
    with pytest.raises(ConsolidationInputError, match=r"nodes\['a'\]\.status\.allocatable\.cpu"):
        plan([node("a", cpu="lots")], [], pools(), catalogue())
    with pytest.raises(ConsolidationInputError, match=r"pods\['default/p'\]\.spec\.containers\[0\]\.resources"):
        plan([node("a")], [pod("p", "a", "a lot")], pools(), catalogue())
    with pytest.raises(ConsolidationInputError, match=r"budgets\[0\]\.nodes"):
        plan([node("a")], [], {"general": {"budgets": [{"nodes": "ten"}]}}, catalogue())
    with pytest.raises(ConsolidationInputError, match=r"^k: "):
        plan([node("a")], [], pools(), catalogue(), k=0)


def test_catalogue_problems_and_unknown_nodes_are_reported_not_raised() -> None:
    bad = {**offering("m.large", 0.1, "2", "8Gi"), "pricePerHour": None}
    result = plan([node("a")], [pod("p", "elsewhere")], pools(), {"offerings": [bad]})
    assert result.problems == (
        "offerings[0] (m.large/on-demand): pricePerHour None is not a finite number ≥ 0; skipped",
        "pod default/p: bound to node 'elsewhere', which is not listed; left out",
    )
