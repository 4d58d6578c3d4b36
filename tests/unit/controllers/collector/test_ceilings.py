"""Recommendations that are never applied (docs/design.md, difference 25): a value of 0, or one above the largest
allocatable of the Nodes the profile's pods ran on, is left out of the status — which admission and in-place
resize read — and the `Ready` message says why."""

from __future__ import annotations

from typing import Any

from ballast.api.ballast.v1 import WorkloadProfile
from ballast.internal.stats.applicable import ready_recommendations
from ballast.runtime import MERGE, NotFoundError
from tests.unit.controllers.collector.support import World

CPU_AVG = {"resource": "cpu", "field": "request", "source": "metrics", "aggregation": "avg", "headroom": "1.25"}
MEMORY_MAX = {"resource": "memory", "field": "request", "source": "metrics", "aggregation": "max", "headroom": "2"}
QUICK = {"minDataPoints": 3, "minTimeSpan": "2m"}
NOT_APPLIED = "; recommendations not applied: "


def setup_profile(world: World) -> str:
    world.config()
    world.source("metrics")
    world.policy("default", [CPU_AVG, MEMORY_MAX], QUICK)
    return world.profile("api")


def node(world: World, name: str, memory: str) -> None:
    """A Node whose kubelet reports `memory` allocatable (and 4 cores)."""
    body: dict[str, Any] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}}
    allocatable = {"status": {"allocatable": {"cpu": "4", "memory": memory, "pods": "110"}}}
    try:
        current = world.client.get("v1/Node", name)
    except NotFoundError:
        current = world.client.create(body)
    world.client.status().patch(current, allocatable, patch_type=MERGE)


def ready_after_three_cycles(world: World, profile: str) -> None:
    for _ in range(3):
        world.cycle()
        world.clock.advance(60)
    assert world.status(profile)["meetsThreshold"] is True


def applied(world: World, profile: str) -> dict[str, Any]:
    """What admission and in-place resize would apply: the ready containers' recommendations."""
    status = world.client.get(WorkloadProfile, profile).status
    return {c: {r: v.to_wire() for r, v in rs.items()} for c, rs in ready_recommendations(status).items()}


def test_a_recommendation_of_0_is_not_written_and_ready_says_why(world: World) -> None:
    profile = setup_profile(world)
    world.pod("api-1", "api", profile, containers=["app", "idle"])
    world.pod_metrics("api-1", "api", {"app": {"cpu": "200m", "memory": "64Mi"}, "idle": {"cpu": "0", "memory": "1Mi"}})

    ready_after_three_cycles(world, profile)

    assert world.container(profile, "idle")["recommendations"] == {"memory": {"request": "2Mi"}}  # no cpu "0"
    assert applied(world, profile) == {
        "app": {"cpu": {"request": "250m"}, "memory": {"request": "128Mi"}},
        "idle": {"memory": {"request": "2Mi"}},
    }
    ready = world.ready(profile)
    assert (ready["status"], ready["reason"]) == ("True", "SamplesCollected")
    assert ready["message"].endswith(f"{NOT_APPLIED}idle cpu request 0 is 0")


def test_a_recommendation_above_the_largest_node_waits_for_a_larger_one(world: World) -> None:
    profile = setup_profile(world)
    node(world, "node-a", "1Gi")
    world.pod("api-1", "api", profile, node="node-a")
    world.pod_metrics("api-1", "api", {"app": {"cpu": "200m", "memory": "600Mi"}})  # × 2 = 1200Mi > 1Gi

    ready_after_three_cycles(world, profile)

    assert world.container(profile, "app")["recommendations"] == {"cpu": {"request": "250m"}}
    assert applied(world, profile) == {"app": {"cpu": {"request": "250m"}}}
    assert world.ready(profile)["message"].endswith(
        f"{NOT_APPLIED}app memory request 1200Mi is above 1Gi, the largest allocatable memory of the nodes its "
        "pods ran on"
    )

    node(world, "node-a", "2Gi")  # read again only after 10 minutes
    world.cycle()
    assert "memory" not in world.container(profile, "app")["recommendations"]
    world.clock.advance(10 * 60)
    world.cycle()
    assert world.container(profile, "app")["recommendations"]["memory"] == {"request": "1200Mi"}
    assert world.ready(profile)["message"] == "All policy resources produced samples in the latest collection cycle"


def test_the_largest_node_the_pods_ran_on_counts(world: World) -> None:
    profile = setup_profile(world)
    node(world, "small", "1Gi")
    node(world, "large", "8Gi")
    world.pod("api-1", "api", profile, node="large")
    world.pod_metrics("api-1", "api", {"app": {"cpu": "200m", "memory": "600Mi"}})
    world.cycle()
    world.client.delete(world.client.get("v1/Pod", "api-1", "shop"))
    world.pod("api-2", "api", profile, node="small")  # the pod moved to a smaller node
    world.pod_metrics("api-2", "api", {"app": {"cpu": "200m", "memory": "600Mi"}})

    world.clock.advance(60)
    world.cycle()
    world.clock.advance(60)
    world.cycle()

    assert world.container(profile, "app")["recommendations"]["memory"] == {"request": "1200Mi"}  # ≤ 8Gi
    world.pod_metrics("api-2", "api", {"app": {"cpu": "200m", "memory": "5Gi"}})  # max × 2 = 10Gi > 8Gi
    world.clock.advance(60)
    world.cycle()
    assert "memory" not in world.container(profile, "app")["recommendations"]
    assert world.ready(profile)["message"].endswith("app memory request 10Gi is above 8Gi, the largest allocatable "
                                                    "memory of the nodes its pods ran on")  # fmt: skip


def test_pods_on_an_unknown_node_have_no_node_ceiling(world: World) -> None:
    profile = setup_profile(world)
    world.pod("api-1", "api", profile, node="gone")  # no such Node: only the zero check applies
    world.pod_metrics("api-1", "api", {"app": {"cpu": "200m", "memory": "600Mi"}})

    ready_after_three_cycles(world, profile)

    assert world.container(profile, "app")["recommendations"]["memory"] == {"request": "1200Mi"}
    assert world.ready(profile)["status"] == "True"
