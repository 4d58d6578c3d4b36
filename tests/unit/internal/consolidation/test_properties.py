"""Properties over random clusters: the freed set's pods fit on what is left, the freed set never saves more than
the nodes it removes cost, and the score grows with the savings."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ballast.internal.consolidation import approves, pod_from_wire, score_move
from ballast.internal.consolidation import plan as make_plan

from .builders import FAMILY, catalogue, node, pod

SIZES = {"m.large": ("2", 2000), "m.xlarge": ("4", 4000), "m.2xlarge": ("8", 8000)}
PRICES = {o["instanceType"]: o["pricePerHour"] for o in FAMILY}


@st.composite
def clusters(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    count = draw(st.integers(1, 6))
    nodes, pods = [], []
    for index in range(count):
        kind = draw(st.sampled_from(sorted(SIZES)))
        cpu, millis = SIZES[kind]
        name = f"n{index}"
        nodes.append(node(name, kind, cpu=cpu, memory="64Gi"))
        used = 0
        for number in range(draw(st.integers(0, 4))):
            request = draw(st.integers(100, 2000))
            if used + request > millis:
                break
            used += request
            pods.append(
                pod(f"{name}-{number}", name, f"{request}m", "128Mi", priority=draw(st.sampled_from([None, 0, 10**6])))
            )
    policy = draw(st.sampled_from(["Balanced", "WhenEmptyOrUnderutilized"]))
    pools = {"general": {"consolidationPolicy": policy, "budgets": [{"nodes": draw(st.sampled_from(["1", "100%"]))}]}}
    return nodes, pods, pools


@settings(max_examples=120, deadline=None)
@given(clusters())
def test_the_freed_sets_pods_fit_on_the_nodes_that_remain(cluster: tuple[Any, ...]) -> None:
    nodes, pods, pools = cluster
    result = make_plan(nodes, pods, pools, catalogue())
    gone = set(result.freed.nodes)
    remaining_room = {
        n["metadata"]["name"]: SIZES[n["metadata"]["labels"]["node.kubernetes.io/instance-type"]][1]
        for n in nodes
        if n["metadata"]["name"] not in gone
    }
    for name, kind in result.freed.launched.items():
        remaining_room[name] = SIZES[kind.split("/")[1]][1]
    # Replay the steps: every pod ends on a node that exists and holds it.
    where = {pod_from_wire(p).key: p["spec"]["nodeName"] for p in pods}
    renamed: dict[str, str] = {}
    launches = 0
    for step in result.freed.steps:
        if step.replacement is not None:
            # Launched nodes are numbered in launch order; a later step may consolidate one again, so only the
            # survivors are in `freed.launched`.
            launches += 1
            renamed[step.replacement.name] = f"{step.replacement.pool}-replacement-{launches}"
        for key, target in step.placements.items():
            where[key] = renamed.get(target, target)
    used: dict[str, int] = defaultdict(int)
    for p in pods:
        used[where[pod_from_wire(p).key]] += int(p["spec"]["containers"][0]["resources"]["requests"]["cpu"][:-1])
    assert result.freed.unplaced == ()
    for name, millis in used.items():
        assert name in remaining_room, f"{name} is gone but still holds pods"
        assert millis <= remaining_room[name]


@settings(max_examples=120, deadline=None)
@given(clusters())
def test_the_freed_set_saves_what_its_nodes_cost_less_what_it_launches(cluster: tuple[Any, ...]) -> None:
    nodes, pods, pools = cluster
    result = make_plan(nodes, pods, pools, catalogue())
    kinds = {n["metadata"]["name"]: n["metadata"]["labels"]["node.kubernetes.io/instance-type"] for n in nodes}
    removed = sum(PRICES[kinds[name]] for name in result.freed.nodes)
    added = sum(PRICES[kind.split("/")[1]] for kind in result.freed.launched.values())
    assert abs(result.freed.savings_per_hour - (removed - added)) < 1e-9
    assert result.freed.savings_per_hour >= 0
    assert len(result.freed.launched) <= len(result.freed.nodes)
    # Every step is an approved move; none is counted twice.
    steps = [name for step in result.freed.steps for name in step.nodes]
    assert all(step.approved for step in result.freed.steps)
    assert len(steps) == len(set(steps))


finite = st.floats(min_value=0.0, max_value=1e6, allow_nan=False)
positive = st.floats(min_value=1e-6, max_value=1e6, allow_nan=False)


@given(finite, finite, positive, positive, positive)
def test_the_score_grows_with_the_savings(
    savings: float, more: float, disruption: float, cost: float, total: float
) -> None:
    assert score_move(savings, disruption, cost, total) <= score_move(savings + more, disruption, cost, total)


@given(positive, positive, positive, positive, st.integers(1, 5))
def test_a_higher_k_approves_everything_a_lower_k_does(
    savings: float, disruption: float, cost: float, total: float, k: int
) -> None:
    score = score_move(savings, disruption, cost, total)
    if approves(score, k):
        assert approves(score, k + 1)
