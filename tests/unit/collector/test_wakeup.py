"""An idle MetricsSource (its latest cycle fed nobody) polls early when its first profile appears, once."""

from __future__ import annotations

from typing import Any

from ballast.internal.runtime import Request
from tests.unit.collector.support import API_VERSION, World

CPU_P95 = {"resource": "cpu", "field": "request", "source": "metrics", "aggregation": "p95"}


def _cached(world: World, name: str) -> Any:
    world.settle()
    (profile,) = [
        p for p in world.manager.client.list(f"{API_VERSION}/WorkloadProfile") if p["metadata"]["name"] == name
    ]
    return profile


def test_the_first_fed_profile_wakes_an_idle_source_once(world: World) -> None:
    world.config()
    world.source("metrics")
    world.policy("default", [CPU_P95])
    world.cycle()  # nobody to feed yet: the source is idle until its next poll
    profile = _cached(world, world.profile("api"))
    assert world.collector.sources_awaiting(profile) == [Request("", "metrics")]
    assert world.collector.sources_awaiting(profile) == []  # once per idle spell: status writes wake nothing
    world.cycle()  # the early cycle feeds the profile: the source is busy again
    assert world.collector.sources_awaiting(_cached(world, world.profile("web"))) == []


def test_profiles_a_source_does_not_feed_leave_it_idle(world: World) -> None:
    world.config()
    world.source("metrics")
    world.source("elsewhere")
    world.policy("default", [CPU_P95])
    world.policy("other", [{**CPU_P95, "source": "elsewhere"}])
    world.cycle()
    assert world.collector.sources_awaiting(_cached(world, world.profile("lonely", policy=None))) == []
    assert world.collector.sources_awaiting(_cached(world, world.profile("web", policy="other"))) == []
    unmeasurable = _cached(world, world.profile("new", measurementHash=""))  # no identity yet
    assert world.collector.sources_awaiting(unmeasurable) == []
    assert world.collector.sources_awaiting(_cached(world, world.profile("api"))) == [Request("", "metrics")]


def test_a_busy_source_is_never_woken(world: World) -> None:
    world.config()
    world.source("metrics")
    world.policy("default", [CPU_P95])
    world.profile("api")
    world.cycle()  # fed: keeps its cadence
    assert world.collector.sources_awaiting(_cached(world, world.profile("web"))) == []
