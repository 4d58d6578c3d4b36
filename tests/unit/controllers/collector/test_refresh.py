"""When a cycle recomputes a series' statistics and when it reuses them (benchmarks/RESULTS.md; `collection.refresh`):
recomputed as soon as readiness may flip, after enough new samples, after the staleness bound, on a policy change
and for a fresh leader; reused otherwise, with no read and no status write; readiness flips at the exact cycle."""

from __future__ import annotations

import datetime
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ballast.api.ballast.v1 import ClusterResourcePolicy
from ballast.internal.collection import RefreshPolicy
from ballast.internal.metricsources import SOURCE_TYPES
from tests.unit.controllers.collector.support import API_VERSION, World

CPU_P95 = {"resource": "cpu", "field": "request", "source": "metrics", "aggregation": "p95"}
QUICK = {"minDataPoints": 3, "minTimeSpan": "2m"}
HALF = RefreshPolicy(min_new_fraction=0.5, max_age=datetime.timedelta(minutes=10), stagger=False)
"""Recompute once half as many samples as the series had are new, or after 10 minutes; exact thresholds."""


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    created = World(tmp_path, refresh=HALF)
    yield created
    created.close()


def measured(world: World, readiness: dict[str, Any] = QUICK, containers: tuple[str, ...] = ("app",)) -> str:
    world.config()
    world.source("metrics")
    world.policy("default", [CPU_P95], readiness)
    profile = world.profile("api")
    world.pod("api-1", "api", profile, containers=containers)
    world.pod_metrics("api-1", "api", {c: {"cpu": "200m"} for c in containers})
    return profile


def reads(world: World) -> list[tuple[str, str, bool]]:
    """The series read so far as (container, resource, with times), then forgotten."""
    found = [(key.container, key.resource, with_times) for key, with_times in world.store.read_keys]
    world.store.read_keys.clear()
    return found


def status_writes(world: World) -> int:
    return sum(1 for method, path in world.api.requests if method == "PATCH" and path.endswith("/status"))


def minute(world: World) -> None:
    world.clock.advance(60)
    world.cycle()


def ready_cycle(world: World) -> str:
    """Accrue to readiness (3 samples over 2 minutes) and return the profile; reads are forgotten."""
    profile = measured(world)
    world.cycle()
    minute(world)
    minute(world)
    assert world.status(profile)["meetsThreshold"] is True
    reads(world)
    return profile


def test_an_accruing_series_is_recomputed_while_small_and_readiness_flips_at_the_exact_cycle(world: World) -> None:
    profile = measured(world)

    world.cycle()
    assert reads(world) == [("app", "cpu", False)]  # new
    assert world.status(profile)["meetsThreshold"] is False
    minute(world)
    assert reads(world) == [("app", "cpu", False)]  # 1 new sample of 1: half is new
    assert world.status(profile)["meetsThreshold"] is False
    minute(world)  # the 3rd sample, 2 minutes after the first: both gates open now

    assert reads(world) == [("app", "cpu", False)]
    assert world.status(profile)["meetsThreshold"] is True
    assert world.usage(profile, "app", "cpu")["samples"] == 3


def test_an_accruing_series_is_reused_until_its_gates_may_open_then_recomputed_at_once(tmp_path: Path) -> None:
    doubling = RefreshPolicy(min_new_fraction=1, max_age=datetime.timedelta(hours=1), stagger=False)
    world = World(tmp_path, refresh=doubling)  # recompute when the series doubled: at 2, 4, 8 samples
    try:
        profile = measured(world, {"minDataPoints": 3, "minTimeSpan": "5m"})
        world.cycle()  # 12:00, 1 sample: new
        computed, writes = [bool(reads(world))], [status_writes(world)]
        ready = [world.status(profile)["meetsThreshold"]]
        for _ in range(5):  # 12:01 … 12:05
            minute(world)
            computed.append(bool(reads(world)))
            writes.append(status_writes(world))
            ready.append(world.status(profile)["meetsThreshold"])

        # 12:01 and 12:03: doubled; 12:02 and 12:04: the count gate is open but not the time gate, and the series
        # has not doubled — reused, no read and no status write; 12:05: the time gate opens — recomputed though
        # the series has not doubled (6 of 8 samples)
        assert computed == [True, True, False, True, False, True]
        assert [later - earlier for earlier, later in itertools.pairwise(writes)] == [1, 0, 1, 0, 1]
        assert ready == [False, False, False, False, False, True]
        assert world.usage(profile, "app", "cpu")["samples"] == 6
        assert world.usage(profile, "app", "cpu")["lastUpdated"] == "2026-03-01T12:05:00Z"
    finally:
        world.close()


def test_a_ready_series_is_reused_without_a_read_or_a_status_write_until_enough_samples_are_new(
    world: World,
) -> None:
    profile = ready_cycle(world)
    computed = world.usage(profile, "app", "cpu")
    writes = status_writes(world)

    minute(world)  # 1 new sample of 3: below half

    assert reads(world) == []
    assert status_writes(world) == writes
    assert world.usage(profile, "app", "cpu") == computed  # samples 3, lastUpdated of the computation
    assert world.series(profile, "app", "cpu").values == (200, 200, 200, 200)  # the sample was still written

    minute(world)  # 2 new samples of 3: recomputed

    assert reads(world) == [("app", "cpu", False)]
    assert status_writes(world) == writes + 1
    assert world.usage(profile, "app", "cpu")["samples"] == 5
    assert world.usage(profile, "app", "cpu")["lastUpdated"] == "2026-03-01T12:04:00Z"


def test_the_staleness_bound_recomputes_whatever_the_sample_rate(tmp_path: Path) -> None:
    world = World(tmp_path, refresh=RefreshPolicy(min_new_fraction=1, max_age=datetime.timedelta(minutes=3),
                                                  stagger=False))  # fmt: skip
    try:
        profile = ready_cycle(world)  # computed at 12:02 over 3 samples; 3 more needed
        minute(world)
        minute(world)
        assert reads(world) == []
        minute(world)  # 12:05: 3 minutes old (and 3 new samples: both rules agree here)
        assert reads(world) == [("app", "cpu", False)]
        assert world.usage(profile, "app", "cpu")["lastUpdated"] == "2026-03-01T12:05:00Z"
        minute(world)
        minute(world)
        assert reads(world) == []
        world.clock.advance(60)
        world.pod_metrics("api-1", "api", {"app": {"memory": "1Mi"}})  # no cpu sample this cycle
        world.cycle()
        assert reads(world) == [("app", "cpu", True)]  # 12:08, due by age alone: quiet, read with times
        assert world.usage(profile, "app", "cpu")["samples"] == 8
    finally:
        world.close()


def test_a_policy_change_recomputes_at_the_next_cycle(world: World) -> None:
    profile = ready_cycle(world)
    assert world.container(profile, "app")["recommendations"] == {"cpu": {"request": "200m"}}
    policy = {"apiVersion": API_VERSION, "kind": "ClusterResourcePolicy", "metadata": {"name": "default"}}
    world.client.patch(policy, {"spec": {"metrics": [{**CPU_P95, "headroom": "1.5"}]}})
    world.synced(lambda: world.manager.client.get(ClusterResourcePolicy, "default").metadata.generation == 2, "policy")

    minute(world)

    assert reads(world) == [("app", "cpu", False)]
    assert world.container(profile, "app")["recommendations"] == {"cpu": {"request": "300m"}}


def test_a_fresh_leader_recomputes_everything_at_its_first_cycle(world: World) -> None:
    profile = ready_cycle(world)
    minute(world)
    assert reads(world) == []
    plugins = {**SOURCE_TYPES, "kubeletSummary": lambda _: world.kubelet}
    world.collector = type(world.collector)(
        world.manager, world.store, world.kill_switch, world.options, plugins=plugins, refresh=HALF
    )

    minute(world)

    assert reads(world) == [("app", "cpu", False)]
    assert world.usage(profile, "app", "cpu")["samples"] == 5


def test_a_container_appearing_is_computed_at_once_while_its_sibling_is_reused(world: World) -> None:
    profile = ready_cycle(world)
    world.pod("api-2", "api", profile, containers=("extra",))
    world.pod_metrics("api-2", "api", {"extra": {"cpu": "5m"}})

    minute(world)

    assert reads(world) == [("extra", "cpu", False)]
    assert world.usage(profile, "extra", "cpu")["samples"] == 1
    assert world.usage(profile, "app", "cpu")["samples"] == 3


def test_a_quiet_series_leaves_the_status_after_min_time_span_without_being_read(world: World) -> None:
    profile = measured(world, {"minDataPoints": 1, "minTimeSpan": "2m"}, containers=("app", "old"))
    world.cycle()
    minute(world)
    minute(world)  # both ready at 12:02
    reads(world)
    world.pod_metrics("api-1", "api", {"app": {"cpu": "200m"}})  # "old" is not observed any more

    minute(world)
    minute(world)
    assert [c["name"] for c in world.status(profile)["containers"]] == ["app", "old"]  # 12:04: 2 minutes quiet
    minute(world)

    assert [c["name"] for c in world.status(profile)["containers"]] == ["app"]  # 12:05: stale
    assert all(container != "old" for container, _, _ in reads(world))
