"""What the simulation checks before a pod may land on a node, and what it refuses to simulate."""

from __future__ import annotations

from typing import Any

from ballast.internal.consolidation import DELETE, NO_OP, REPLACE, Move, Plan, plan

from .builders import catalogue, daemon, node, pod

POOLS = {"general": {"consolidationPolicy": "Balanced", "budgets": [{"nodes": "100%"}]}}
ETCD = {"app": "etcd"}


def move_of(result: Plan, name: str) -> Move:
    return next(m for m in result.moves if m.nodes == (name,))


def etcd_anti_affinity() -> dict[str, Any]:
    # What a scheduling policy injects for etcd: no two replicas on one host.
    term = {"labelSelector": {"matchLabels": ETCD}, "topologyKey": "kubernetes.io/hostname"}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def small_nodes(*names: str) -> list[dict[str, Any]]:
    return [node(name, "m.large", cpu="2", memory="8Gi") for name in names]


def test_without_anti_affinity_one_of_two_half_empty_nodes_is_deleted() -> None:
    result = plan(small_nodes("a", "b"), [pod("e1", "a", labels=ETCD), pod("e2", "b", labels=ETCD)], POOLS, catalogue())
    assert move_of(result, "a").decision == DELETE
    assert result.freed.nodes == ("a",)


def test_required_anti_affinity_on_the_hostname_stops_a_delete_that_would_co_locate_replicas() -> None:
    pods = [pod(n, on, labels=ETCD, affinity=etcd_anti_affinity()) for n, on in (("e1", "a"), ("e2", "b"))]
    result = plan(small_nodes("a", "b"), pods, POOLS, catalogue())
    # Elsewhere only on a new node, and none is cheaper than the cheapest.
    assert [(m.decision, m.reason) for m in result.moves] == [(NO_OP, "Can't replace with a cheaper node")] * 2
    assert result.freed.nodes == ()


def test_a_residents_anti_affinity_keeps_the_pod_out_too() -> None:
    pods = [pod("e1", "a", labels=ETCD), pod("e2", "b", labels=ETCD, affinity=etcd_anti_affinity())]
    result = plan(small_nodes("a", "b"), pods, POOLS, catalogue())
    assert move_of(result, "a").decision == NO_OP


def test_anti_affinity_lets_a_replica_move_to_a_new_cheaper_node() -> None:
    nodes = [node("a"), node("b")]
    pods = [pod(n, on, labels=ETCD, affinity=etcd_anti_affinity()) for n, on in (("e1", "a"), ("e2", "b"))]
    move = move_of(plan(nodes, pods, POOLS, catalogue()), "a")
    assert move.decision == REPLACE  # the new node is another host


def test_do_not_schedule_spread_stops_a_delete_that_would_skew_the_zones() -> None:
    spread = [
        {
            "maxSkew": 1,
            "topologyKey": "topology.kubernetes.io/zone",
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": {"app": "web"}},
        }
    ]
    nodes = [node("a1", zone="a"), node("a2", zone="a"), node("b1", "m.2xlarge", cpu="8", memory="32Gi", zone="b")]
    web = {"app": "web"}
    pods = [
        pod("w1", "a1", labels=web, topologySpreadConstraints=spread),
        pod("filler", "a2", "4"),
        pod("w2", "b1", labels=web, topologySpreadConstraints=spread),
        pod("w3", "b1", labels=web, topologySpreadConstraints=spread),
    ]
    result = plan(nodes, pods, POOLS, catalogue())
    # a2 is full, so w1 could only go to zone b (3 against 0) or to a new node whose zone is not known.
    assert move_of(result, "a1").reason.startswith("Not all pods would schedule, default/w1 => ")
    unconstrained = [pod("w1", "a1"), pod("filler", "a2", "4"), pod("w2", "b1"), pod("w3", "b1")]
    assert move_of(plan(nodes, unconstrained, POOLS, catalogue()), "a1").decision == DELETE


def test_taints_need_tolerations() -> None:
    taint = {"key": "dedicated", "value": "db", "effect": "NoSchedule"}
    nodes = [*small_nodes("a"), node("b", "m.large", cpu="2", memory="8Gi", taints=[taint])]
    result = plan(nodes, [pod("p", "a")], POOLS, catalogue())
    assert move_of(result, "a").decision == NO_OP
    tolerant = pod("p", "a", tolerations=[{"key": "dedicated", "operator": "Equal", "value": "db"}])
    assert move_of(plan(nodes, [tolerant], POOLS, catalogue()), "a").decision == DELETE
    prefer = {**taint, "effect": "PreferNoSchedule"}
    soft = [*small_nodes("a"), node("b", "m.large", cpu="2", memory="8Gi", taints=[prefer])]
    assert move_of(plan(soft, [pod("p", "a")], POOLS, catalogue()), "a").decision == DELETE


def test_node_selector_and_required_node_affinity_match_labels() -> None:
    nodes = [*small_nodes("a"), node("b", "m.large", cpu="2", memory="8Gi", labels={"disk": "ssd"})]
    affinity = {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]
            }
        }
    }
    assert move_of(plan(nodes, [pod("p", "a", affinity=affinity)], POOLS, catalogue()), "a").decision == DELETE
    hdd = pod("p", "a", nodeSelector={"disk": "hdd"})
    assert move_of(plan(nodes, [hdd], POOLS, catalogue()), "a").decision == NO_OP


def test_the_pod_count_is_a_resource() -> None:
    nodes = [*small_nodes("a"), node("b", "m.large", cpu="2", memory="8Gi", pods=1)]
    result = plan(nodes, [pod("p", "a", "100m"), pod("q", "b", "100m")], POOLS, catalogue())
    assert move_of(result, "a").decision == NO_OP


def test_daemonset_and_mirror_pods_stay_and_count_against_their_node() -> None:
    nodes = small_nodes("a", "b")
    pods = [pod("p", "a", "1"), daemon("agent-a", "a", "500m"), daemon("agent-b", "b", "500m"), pod("q", "b", "500m")]
    move = move_of(plan(nodes, pods, POOLS, catalogue()), "a")
    assert (move.decision, move.placements) == (DELETE, {"default/p": "b"})
    crowded = [*pods[:3], pod("q", "b", "600m")]  # b has 2 - 0.5 - 0.6 = 0.9 cpu left: p does not fit
    assert move_of(plan(nodes, crowded, POOLS, catalogue()), "a").decision == NO_OP


def test_constraints_it_does_not_simulate_are_said_never_guessed() -> None:
    volume = {"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data-db-0"}}]}
    port = {"containers": [{"name": "app", "ports": [{"containerPort": 80, "hostPort": 8080}]}]}
    affinity = {
        "affinity": {
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "kubernetes.io/hostname"}
                ]
            }
        }
    }
    expected: dict[str, dict[str, Any]] = {
        "not simulated: persistentVolumeClaim 'data-db-0' (volume zones) (Pod=default/p)": volume,
        "not simulated: hostPort 8080 (Pod=default/p)": port,
        "not simulated: required pod affinity (Pod=default/p)": affinity,
    }
    for reason, spec in expected.items():
        result = plan(small_nodes("a", "b"), [pod("p", "a", **spec)], POOLS, catalogue())
        assert (move_of(result, "a").decision, move_of(result, "a").reason) == (NO_OP, reason)
        assert "a" not in result.freed.nodes
    gpu = pod("p", "a")
    gpu["spec"]["containers"][0]["resources"]["requests"]["nvidia.com/gpu"] = "1"
    assert move_of(plan(small_nodes("a", "b"), [gpu], POOLS, catalogue()), "a").reason == (
        "not simulated: requests for nvidia.com/gpu (Pod=default/p)"
    )


def test_a_pod_landing_on_a_node_that_is_not_ready_is_an_error() -> None:
    nodes = [*small_nodes("a"), node("b", "m.large", cpu="2", memory="8Gi", ready=False)]
    # A node that is not Ready counts as disrupting against the budget: "100%" of one live node would leave 0.
    pools = {"general": {"consolidationPolicy": "Balanced", "budgets": [{"nodes": "5"}]}}
    reason = move_of(plan(nodes, [pod("p", "a")], pools, catalogue()), "a").reason
    assert reason == "Not all pods would schedule, default/p => would schedule against uninitialized node/b"
