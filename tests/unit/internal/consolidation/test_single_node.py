"""Single-node decisions: DELETE when the pods fit elsewhere, REPLACE by one strictly cheaper node, otherwise a
no-op with Karpenter's reason."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.internal.consolidation import DELETE, NO_OP, REPLACE, SINGLE_NODE, Move, Plan, plan

from .builders import BALANCED_POOL, FAMILY, catalogue, node, offering, pod

EVERYTHING = [{"nodes": "100%"}]


def pools(policy: str = "Balanced", **extra: Any) -> dict[str, dict[str, Any]]:
    return {"general": {"consolidationPolicy": policy, "budgets": EVERYTHING, **extra}}


def move_of(result: Plan, name: str) -> Move:
    return next(m for m in result.moves if m.nodes == (name,))


def test_a_node_whose_pods_fit_elsewhere_is_deleted() -> None:
    result = plan([node("a"), node("b")], [pod("p1", "a", "1"), pod("p2", "b", "2")], BALANCED_POOL, catalogue())
    move = move_of(result, "a")
    assert (move.method, move.decision, move.approved) == (SINGLE_NODE, DELETE, True)
    assert move.placements == {"default/p1": "b"}
    assert move.savings == 0.2
    # a single-node delete in a pool of two like nodes: half the cost for half the disruption.
    assert move.score == 1.0
    assert move.reason == "score 1.00 >= threshold 0.50 (k: 2, savings 50.0%, disruption 50.0%)"


def test_an_oversized_node_is_replaced_by_the_cheapest_type_that_holds_its_pods() -> None:
    result = plan([node("big", "m.2xlarge", cpu="8", memory="32Gi")], [pod("p", "big", "1")], pools(), catalogue())
    move = move_of(result, "big")
    assert (move.decision, move.approved) == (REPLACE, True)
    assert move.replacement is not None
    assert move.replacement.instance_types == ("m.large", "m.xlarge")  # strictly cheaper than 0.40, cheapest first
    assert move.replacement.price == 0.10
    assert move.savings == pytest.approx(0.30)
    assert move.score == pytest.approx(0.75)  # saves 75 % of the pool for all of its disruption


def test_the_cheapest_node_cannot_be_replaced() -> None:
    result = plan([node("small", "m.large", cpu="2", memory="8Gi")], [pod("p", "small", "1500m")], pools(), catalogue())
    move = move_of(result, "small")
    assert (move.decision, move.approved, move.reason) == (NO_OP, False, "Can't replace with a cheaper node")


def test_a_node_whose_pods_need_two_new_nodes_stays() -> None:
    big = offering("m.4xlarge", 1.0, "16", "64Gi")
    result = plan(
        [node("huge", "m.4xlarge", cpu="16", memory="64Gi")],
        [pod("p1", "huge", "7"), pod("p2", "huge", "7")],
        pools(instanceTypes=["m.large", "m.xlarge", "m.2xlarge"]),
        catalogue(*FAMILY, big),
    )
    assert move_of(result, "huge").reason == "Can't remove without creating 2 candidates"


def test_a_pod_that_fits_nowhere_keeps_its_node_with_the_scheduling_error() -> None:
    result = plan(
        [node("a"), node("b")],
        [pod("p1", "a", "1", nodeSelector={"disk": "ssd"}), pod("p2", "b", "1")],
        pools(),
        catalogue(),
    )
    assert move_of(result, "a").reason == (
        "Not all pods would schedule, default/p1 => fits no remaining node and no offering any pool may launch"
    )


@pytest.mark.parametrize(
    ("settings", "reason"),
    [
        (
            {"consolidationPolicy": "WhenEmpty"},
            'NodePool "general" has consolidation policy WhenEmpty, but node is not empty',
        ),
        (
            {"consolidationPolicy": "Balanced", "consolidateAfter": "Never"},
            'NodePool "general" has consolidation disabled',
        ),
    ],
)
def test_pool_settings_that_forbid_consolidation(settings: dict[str, Any], reason: str) -> None:
    result = plan([node("a"), node("b")], [pod("p1", "a"), pod("p2", "b")], {"general": settings}, catalogue())
    assert [(m.decision, m.reason) for m in result.moves] == [(NO_OP, reason), (NO_OP, reason)]
    assert result.freed.nodes == ()


def test_an_instance_type_the_catalogue_does_not_know() -> None:
    result = plan([node("a", "x.odd"), node("b")], [pod("p1", "a"), pod("p2", "b")], pools(), catalogue())
    assert move_of(result, "a").reason == 'Instance Type "x.odd" not found'


def test_a_balanced_candidate_that_cannot_pass_even_as_a_delete_is_not_simulated() -> None:
    # x: 8 small pods (disruption 9) on 0.20; y: one pod of 7 cpu (disruption 2) on 0.40. Deleting x scores
    # (0.2 / 0.6) / (9 / 11) = 0.41 < 0.5.
    nodes = [node("x"), node("y", "m.2xlarge", cpu="8", memory="32Gi")]
    pods = [pod(f"small-{i}", "x", "250m", "256Mi") for i in range(8)] + [pod("large", "y", "7")]
    result = plan(nodes, pods, pools(), catalogue())
    x = move_of(result, "x")
    assert (x.decision, x.approved) == (NO_OP, False)
    assert x.reason == "score 0.41 < threshold 0.50 (k: 2), even as a delete"
    assert x.placements == {}
    assert move_of(result, "y").reason == "Can't replace with a cheaper node"


def test_the_same_marginal_replace_is_taken_by_when_empty_or_underutilized_and_rejected_by_balanced() -> None:
    nodes = [node("x"), node("y", "m.2xlarge", cpu="8", memory="32Gi")]
    pods = [pod(f"small-{i}", "x", "250m", "256Mi") for i in range(8)] + [pod("large", "y", "7")]
    taken = move_of(plan(nodes, pods, pools("WhenEmptyOrUnderutilized"), catalogue()), "x")
    assert (taken.decision, taken.approved, taken.score) == (REPLACE, True, None)
    at_three = move_of(plan(nodes, pods, pools(), catalogue(), k=3), "x")
    assert (at_three.decision, at_three.approved) == (REPLACE, False)
    assert at_three.score == pytest.approx((0.1 / 0.6) / (9 / 11))
    assert at_three.reason == "score 0.20 < threshold 0.33 (k: 3)"


def test_a_uniform_pool_replace_at_exactly_one_half_is_approved_at_k_2_and_rejected_at_k_1() -> None:
    # x hosts 1 cpu on a 4-cpu node; y is full. Replacing x by a 2-cpu node saves 0.1 of 0.4 (25 %) for half the
    # pool's disruption: 0.5.
    nodes = [node("x"), node("y")]
    pods = [pod("p", "x", "1"), pod("full", "y", "4")]
    approved = move_of(plan(nodes, pods, pools(), catalogue()), "x")
    assert (approved.decision, approved.score, approved.approved) == (REPLACE, 0.5, True)
    rejected = move_of(plan(nodes, pods, pools(), catalogue(), k=1), "x")
    assert (rejected.score, rejected.approved) == (0.5, False)


def test_spot_to_spot_replacement_is_off_by_default() -> None:
    spot = [
        offering(o["instanceType"], o["pricePerHour"] / 3, o["cpu"], o["memory"], capacity_type="spot") for o in FAMILY
    ]
    nodes = [node("s", "m.2xlarge", cpu="8", memory="32Gi", capacity_type="spot")]
    result = plan(nodes, [pod("p", "s", "1")], pools(), catalogue(*spot))
    assert (
        move_of(result, "s").reason == "SpotToSpotConsolidation is disabled, can't replace a spot node with a spot node"
    )
    enabled = plan(nodes, [pod("p", "s", "1")], pools(), catalogue(*spot), spot_to_spot=True)
    assert move_of(enabled, "s").reason == (
        "SpotToSpotConsolidation requires 15 cheaper instance type options than the current candidate to "
        "consolidate, got 2"
    )


def test_spot_to_spot_with_fifteen_cheaper_types_launches_only_the_fifteen_cheapest() -> None:
    spot = [offering(f"t{i:02}", 0.01 * (i + 1), "4", "16Gi", capacity_type="spot") for i in range(20)]
    nodes = [node("s", "t19", capacity_type="spot")]
    move = move_of(plan(nodes, [pod("p", "s", "1")], pools(), catalogue(*spot), spot_to_spot=True), "s")
    assert move.decision == REPLACE
    assert move.replacement is not None
    assert move.replacement.instance_types == tuple(f"t{i:02}" for i in range(15))


def test_an_on_demand_node_replaced_where_spot_is_allowed_is_priced_and_pinned_as_spot() -> None:
    spot = [
        offering(o["instanceType"], o["pricePerHour"] / 4, o["cpu"], o["memory"], capacity_type="spot") for o in FAMILY
    ]
    nodes = [node("od", "m.xlarge")]
    move = move_of(plan(nodes, [pod("p", "od", "3")], pools(), catalogue(*FAMILY, *spot)), "od")
    assert move.decision == REPLACE
    assert move.replacement is not None
    assert move.replacement.launch is not None
    assert (move.replacement.launch.instance_type, move.replacement.launch.capacity_type) == ("m.xlarge", "spot")
    assert move.savings == pytest.approx(0.15)


def test_single_node_candidates_are_tried_by_savings_per_disruption_pools_interleaved() -> None:
    nodes = [
        node("a1", pool="a"),
        node("a2", "m.2xlarge", pool="a", cpu="8", memory="32Gi"),
        node("b1", pool="b"),
    ]
    pods = [pod("p1", "a1", "4"), pod("p2", "a2", "8"), pod("p3", "b1", "4"), pod("p4", "b1", "0")]
    result = plan(nodes, pods, {"a": pools()["general"], "b": pools()["general"]}, catalogue())
    # ratios: a2 0.40/2, a1 0.20/2, b1 0.20/3: a's best, b's best, then a's second.
    assert [m.nodes for m in result.moves if m.method == SINGLE_NODE] == [("a2",), ("b1",), ("a1",)]


def test_no_budget_left_is_karpenters_blocking_budget_reason() -> None:
    result = plan(
        [node("a"), node("b")],
        [pod("p1", "a"), pod("p2", "b")],
        {"general": {"consolidationPolicy": "Balanced", "budgets": [{"nodes": "0"}]}},
        catalogue(),
    )
    assert {m.reason for m in result.moves} == {
        "No allowed disruptions for disruption reason Underutilized due to blocking budget"
    }


def test_a_budget_for_other_reasons_does_not_limit_consolidation() -> None:
    result = plan(
        [node("a"), node("b")],
        [pod("p1", "a"), pod("p2", "b")],
        {"general": {"consolidationPolicy": "Balanced", "budgets": [{"nodes": "0", "reasons": ["Drifted"]}]}},
        catalogue(),
    )
    assert move_of(result, "a").approved
