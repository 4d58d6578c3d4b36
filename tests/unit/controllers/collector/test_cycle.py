"""One collection cycle per MetricsSource poll: fetch once, attribute through the pod (fail closed), one store
write, then each fed profile's status (docs/compatibility.md, docs/design.md, differences 1, 6, 11, 12, 19)."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from ballast.internal.telemetry import SAMPLES_COLLECTED
from ballast.runtime import APPLY
from tests.unit.controllers.collector.support import API_VERSION, World

CPU_P95 = {"resource": "cpu", "field": "request", "source": "metrics", "aggregation": "p95"}
MEMORY_MAX = {"resource": "memory", "field": "request", "source": "metrics", "aggregation": "max"}


def basic(world: World, poll: str = "300s") -> str:
    world.config()
    world.source("metrics", poll=poll)
    world.policy("default", [CPU_P95, MEMORY_MAX])
    return world.profile("api")


def test_a_cycle_writes_managed_containers_once_and_reports_them(world: World) -> None:
    profile = basic(world)
    world.pod("api-1", "api", profile, sidecars=["proxy"], inits=["migrate"], ephemeral=["debug"])
    world.pod("api-2", "api", profile, sidecars=["proxy"])
    usage = {"app": {"cpu": "250m", "memory": "100Mi"}, "proxy": {"cpu": "10m", "memory": "20Mi"}}
    world.pod_metrics("api-1", "api", {**usage, "migrate": {"cpu": "1", "memory": "1Mi"},
                                       "debug": {"cpu": "1", "memory": "1Mi"}})  # fmt: skip
    world.pod_metrics("api-2", "api", {"app": {"cpu": "350m", "memory": "120Mi"}, "proxy": usage["proxy"]})

    result = world.cycle()

    assert result is not None
    assert result.requeue_after == 300.0
    [cycle] = world.store.cycles
    assert cycle.cycle_id == f"metrics/{int(world.clock.now().timestamp() * 1000)}"
    assert cycle.retention == datetime.timedelta(hours=168)
    assert cycle.reservoir_size == 10_000
    written: dict[tuple[str, str], list[int]] = {(s.key.container, s.key.resource): [] for s in cycle.samples}
    for sample in cycle.samples:
        written[(sample.key.container, sample.key.resource)].append(sample.value)
    # run-to-completion init and ephemeral containers are never measured; the sidecar is
    assert written == {
        ("app", "cpu"): [250, 350],
        ("app", "memory"): [100 << 20, 120 << 20],
        ("proxy", "cpu"): [10, 10],
        ("proxy", "memory"): [20 << 20, 20 << 20],
    }
    status = world.status(profile)
    assert [c["name"] for c in status["containers"]] == ["app", "proxy"]
    assert world.usage(profile, "app", "cpu") | {"lastUpdated": None} == {
        "resource": "cpu", "source": "metrics", "samples": 2, "timeSpan": "0s", "p50": "250m", "p75": "350m",
        "p90": "350m", "p95": "350m", "p99": "350m", "mean": "300m", "stdDev": "50m", "cv": "0.167",
        "lastUpdated": None,
    }  # fmt: skip
    assert status["meetsThreshold"] is False
    assert status["state"] == "Accruing"
    assert world.ready(profile)["status"] == "True"
    assert world.ready(profile)["reason"] == "SamplesCollected"
    # the other lanes' fields are untouched
    assert status["activeWorkloads"] == 1
    assert status["tupleLabels"] == {"app": "api"}


def test_every_fed_profile_goes_into_one_store_write(world: World) -> None:
    basic(world)
    for app in ("api", "web", "db"):
        profile = world.profile(app) if app != "api" else "api--default"
        for index in range(3):
            world.pod(f"{app}-{index}", app, profile)
            world.pod_metrics(f"{app}-{index}", app, {"app": {"cpu": f"{index + 1}m", "memory": "1Mi"}})

    world.cycle()

    [cycle] = world.store.cycles
    assert len(cycle.samples) == 3 * 3 * 2
    assert {s.key.measurement_hash for s in cycle.samples} == {
        world.status(f"{app}--default")["measurementHash"] for app in ("api", "web", "db")
    }


def test_a_collector_owning_some_profiles_measures_and_writes_the_statuses_of_those_only(tmp_path: Path) -> None:
    world = World(tmp_path, owns=lambda profile: profile != "web--default")
    try:
        basic(world)
        for app in ("api", "web"):
            profile = world.profile(app) if app != "api" else "api--default"
            world.pod(f"{app}-1", app, profile)
            world.pod_metrics(f"{app}-1", app, {"app": {"cpu": "5m", "memory": "1Mi"}})

        world.cycle()

        [cycle] = world.store.cycles
        assert {s.key.measurement_hash for s in cycle.samples} == {world.status("api--default")["measurementHash"]}
        assert world.status("api--default")["containers"][0]["name"] == "app"
        assert "containers" not in world.status("web--default")
    finally:
        world.close()


def test_samples_are_attributed_through_the_cached_pod_and_fail_closed(world: World) -> None:
    profile = basic(world)
    world.pod("api-1", "api", profile)
    world.pod("moved", "web", profile)  # labels no longer match the profile's selector labels
    world.pod("no-ref", "api", None)  # not yet stamped by the enrollment lane
    world.pod("invalid", "api", profile, mode="sometimes")  # an invalid mode does not enroll
    for pod in ("api-1", "no-ref", "invalid"):
        world.pod_metrics(pod, "api", {"app": {"cpu": "5m", "memory": "1Mi"}, "stranger": {"cpu": "1m"}})
    world.pod_metrics("moved", "web", {"app": {"cpu": "5m", "memory": "1Mi"}})
    world.pod_metrics("uncached", "api", {"app": {"cpu": "5m", "memory": "1Mi"}})  # pod not in the cache
    world.pod_metrics("unenrolled", "api", {"app": {"cpu": "5m"}}, mode=None)  # not even listed

    world.cycle()

    [cycle] = world.store.cycles
    assert sorted((s.key.container, s.key.resource) for s in cycle.samples) == [("app", "cpu"), ("app", "memory")]


def test_resources_are_written_only_from_the_source_the_policy_names(world: World) -> None:
    world.config()
    world.source("metrics")
    world.source("other")
    world.policy("default", [CPU_P95, {**MEMORY_MAX, "source": "other"}])
    profile = world.profile("api")
    world.pod("api-1", "api", profile)
    world.pod_metrics("api-1", "api", {"app": {"cpu": "5m", "memory": "1Mi"}})

    world.cycle("metrics")
    world.cycle("other")

    first, second = world.store.cycles
    assert [(s.key.resource, s.value) for s in first.samples] == [("cpu", 5)]
    assert [(s.key.resource, s.value) for s in second.samples] == [("memory", 1 << 20)]
    assert second.cycle_id.startswith("other/")


def test_profiles_without_a_policy_or_another_source_are_never_touched(world: World) -> None:
    basic(world)
    world.source("elsewhere")
    world.policy("other", [{**CPU_P95, "source": "elsewhere"}])
    orphan = world.profile("lonely", policy=None)
    foreign = world.profile("web", policy="other")
    world.pod("lonely-1", "lonely", orphan)
    world.pod("web-1", "web", foreign)
    world.pod_metrics("lonely-1", "lonely", {"app": {"cpu": "5m"}})
    world.pod_metrics("web-1", "web", {"app": {"cpu": "5m"}})

    world.cycle()

    assert world.store.cycles == []  # nothing to write: one cycle, no samples
    assert "containers" not in world.status(orphan)
    assert "containers" not in world.status(foreign)


def test_samples_collected_counts_each_written_sample_with_profile_attributes(world: World) -> None:
    profile = basic(world)
    world.pod("api-1", "api", profile)
    world.pod("api-2", "api", profile)
    world.pod_metrics("api-1", "api", {"app": {"cpu": "5m", "memory": "1Mi"}})
    world.pod_metrics("api-2", "api", {"app": {"cpu": "6m", "memory": "1Mi"}})
    labels = {"profile": profile, "app": "api", "source": "metrics", "resource": "cpu", "container": "app"}
    before = SAMPLES_COLLECTED.value(**labels)

    world.cycle()

    assert SAMPLES_COLLECTED.value(**labels) - before == 2


def test_the_requeue_keeps_the_cadence_when_a_cycle_takes_time(world: World) -> None:
    profile = basic(world, poll="120s")
    world.pod("api-1", "api", profile)
    world.pod_metrics("api-1", "api", {"app": {"cpu": "5m", "memory": "1Mi"}})
    fetch = world.collector._fetch

    def slow_fetch(*args: Any) -> Any:
        world.clock.advance(20)  # the fetch took 20 s of the interval
        return fetch(*args)

    world.collector._fetch = slow_fetch  # type: ignore[method-assign,assignment]
    result = world.cycle()

    assert result is not None
    assert result.requeue_after == 100.0


def test_a_deleted_source_ends_its_loop_and_an_unknown_type_is_skipped(world: World) -> None:
    world.source("mystery", type_="prometheus", poll="45s")
    world.settle()

    assert world.cycle("gone") is None
    result = world.cycle("mystery")

    assert result is not None
    assert result.requeue_after == 45.0
    assert world.store.cycles == []


def test_a_profile_being_deleted_is_not_measured(world: World) -> None:
    profile = basic(world)
    world.client.patch(
        {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "WorkloadProfile", "metadata": {"name": profile}},
        {"metadata": {"finalizers": ["ballast.tightlinesoftware.com/profile-cleanup"]}},
    )
    world.client.delete(
        {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "WorkloadProfile", "metadata": {"name": profile}}
    )
    world.pod("api-1", "api", profile)
    world.pod_metrics("api-1", "api", {"app": {"cpu": "5m", "memory": "1Mi"}})

    world.cycle()

    assert world.store.cycles == []  # history being purged: writing would leak keys (a Go operator bug)


def test_a_profile_the_cache_did_not_replace_keeps_its_typed_model_and_a_changed_one_is_read_again(
    world: World,
) -> None:
    world.config()
    world.source("metrics")
    world.policy("default", [CPU_P95])
    api, web = world.profile("api"), world.profile("web")
    world.settle()
    first = {profile.metadata.name: profile for profile in world.collector._profiles()}

    body = {"apiVersion": API_VERSION, "kind": "WorkloadProfile", "metadata": {"name": web}}
    world.client.status().patch(body, {**body, "status": {"activeWorkloads": 3}}, patch_type=APPLY,
                                field_manager="watcher")  # fmt: skip
    world.settle()
    second = {profile.metadata.name: profile for profile in world.collector._profiles()}

    assert second[api] is first[api]
    assert second[web] is not first[web]
    now, before = second[web].status, first[web].status
    assert now is not None
    assert now.active_workloads == 3
    assert before is not None
    assert before.active_workloads == 1
