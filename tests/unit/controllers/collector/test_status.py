"""The status a cycle writes: readiness per container (docs/design.md, difference 5), containers leaving after
minTimeSpan unobserved (item 6), `Ready` judged per resource by its own source's latest cycle (item 19), and the
state a fresh leader starts from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ballast.controllers.collector import MetricsCollector
from ballast.internal.metricsources import SOURCE_TYPES, FetchResult, UsageSample
from ballast.internal.telemetry import PROFILES, PROFILES_THRESHOLD_MET
from ballast.runtime import APIStatusError
from tests.unit.controllers.collector.support import API_VERSION, World

CPU_P95 = {"resource": "cpu", "field": "request", "source": "metrics", "aggregation": "p95"}
CPU_LIMIT = {"resource": "cpu", "field": "limit", "source": "metrics", "aggregation": "max", "headroom": "2"}
MEMORY_MAX = {"resource": "memory", "field": "request", "source": "metrics", "aggregation": "max"}
STORAGE = {"resource": "ephemeral-storage", "field": "request", "source": "kubelet", "aggregation": "max"}
QUICK = {"minDataPoints": 3, "minTimeSpan": "2m"}


def setup_profile(world: World, metrics: list[dict[str, Any]], readiness: dict[str, Any] = QUICK) -> str:
    world.config()
    world.source("metrics")
    world.policy("default", metrics, readiness)
    return world.profile("api")


def storage(pod: str, container: str, value: int) -> UsageSample:
    return UsageSample("shop", pod, container, "ephemeral-storage", value, 0)


def test_a_profile_becomes_sufficient_once_every_container_is_ready(world: World) -> None:
    profile = setup_profile(world, [CPU_P95, CPU_LIMIT, MEMORY_MAX])
    world.pod("api-1", "api", profile)
    world.pod_metrics("api-1", "api", {"app": {"cpu": "200m", "memory": "64Mi"}})
    met = {"profile": profile, "app": "api", "policy": "default"}
    before = PROFILES_THRESHOLD_MET.value(**met)

    for _ in range(2):
        world.cycle()
        assert world.status(profile)["meetsThreshold"] is False  # 1, then 2 samples: too few, too short
        world.clock.advance(60)
    world.cycle()  # 3 samples over 2 minutes

    status = world.status(profile)
    assert status["meetsThreshold"] is True
    assert status["state"] == "Sufficient"
    assert world.container(profile, "app")["recommendations"] == {
        "cpu": {"request": "200m", "limit": "400m"},
        "memory": {"request": "64Mi"},
    }
    assert world.usage(profile, "app", "cpu")["timeSpan"] == "2m0s"
    assert PROFILES_THRESHOLD_MET.value(**met) - before == 1
    world.clock.advance(60)
    world.cycle()
    assert PROFILES_THRESHOLD_MET.value(**met) - before == 1  # counted on the flip only
    assert PROFILES.value(app="api", state="ready") == 1


def test_a_ready_container_gets_recommendations_while_a_sparse_sidecar_accrues(world: World) -> None:
    profile = setup_profile(world, [CPU_P95])
    world.pod("api-1", "api", profile, sidecars=["logs"])
    for minute in range(4):
        usage = {"app": {"cpu": "200m"}}
        if minute in (0, 2):
            usage["logs"] = {"cpu": "3m"}  # a sidecar seen now and then
        world.pod_metrics("api-1", "api", usage)
        world.cycle()
        world.clock.advance(60)

    status = world.status(profile)
    assert world.container(profile, "app")["recommendations"] == {"cpu": {"request": "200m"}}
    assert "recommendations" not in world.container(profile, "logs")
    assert world.usage(profile, "logs", "cpu")["samples"] == 2
    assert status["meetsThreshold"] is False
    assert status["state"] == "Accruing"


def test_a_container_not_observed_for_min_time_span_leaves_the_status(world: World) -> None:
    profile = setup_profile(world, [CPU_P95], {"minDataPoints": 3, "minTimeSpan": "10m"})
    world.pod("api-1", "api", profile, containers=["app", "old"])
    world.pod_metrics("api-1", "api", {"app": {"cpu": "200m"}, "old": {"cpu": "5m"}})
    world.cycle()
    world.pod_metrics("api-1", "api", {"app": {"cpu": "200m"}})

    world.clock.advance(9 * 60)
    world.cycle()
    assert [c["name"] for c in world.status(profile)["containers"]] == ["app", "old"]
    assert world.usage(profile, "old", "cpu")["samples"] == 1  # still reported

    world.clock.advance(2 * 60)
    world.cycle()
    assert [c["name"] for c in world.status(profile)["containers"]] == ["app"]
    assert world.ready(profile)["status"] == "True"


def test_ready_judges_each_resource_by_the_latest_cycle_of_its_own_source(world: World) -> None:
    profile = setup_profile(world, [CPU_P95, STORAGE])
    world.source("kubelet", type_="kubeletSummary", poll="300s")  # not due when the metrics source is, a minute on
    world.pod("api-1", "api", profile)
    world.pod_metrics("api-1", "api", {"app": {"cpu": "200m"}})

    world.cycle("metrics")  # the kubelet source has not been polled yet: its resource has no samples
    assert world.ready(profile)["status"] == "False"
    assert world.ready(profile)["message"] == "No samples in the latest collection cycle for: ephemeral-storage"

    world.kubelet.answers.append(FetchResult([storage("api-1", "app", 4096)]))
    world.cycle("kubelet")
    ready = world.ready(profile)
    assert (ready["status"], ready["reason"]) == ("True", "SamplesCollected")
    assert [u["resource"] for u in world.container(profile, "app")["usageStats"]] == ["cpu", "ephemeral-storage"]
    assert world.usage(profile, "app", "ephemeral-storage")["source"] == "kubelet"

    world.pod_metrics("api-1", "api", {"app": {"memory": "1Mi"}})  # no cpu this time
    world.clock.advance(60)
    world.cycle("metrics")
    ready = world.ready(profile)
    assert (ready["status"], ready["reason"]) == ("False", "MissingSamples")
    assert ready["message"] == "No samples in the latest collection cycle for: cpu"
    # the kubelet source's entry is carried over by the metrics cycle, not dropped or recomputed
    assert world.usage(profile, "app", "ephemeral-storage")["lastUpdated"] == "2026-03-01T12:00:00Z"
    assert world.usage(profile, "app", "cpu")["lastUpdated"] == "2026-03-01T12:00:00Z"  # accruing, gates shut


def test_ready_keeps_its_transition_time_while_unchanged(world: World) -> None:
    profile = setup_profile(world, [CPU_P95])
    world.pod("api-1", "api", profile)
    world.pod_metrics("api-1", "api", {"app": {"cpu": "200m"}})
    world.cycle()
    world.clock.advance(60)
    world.cycle()

    assert world.ready(profile)["lastTransitionTime"] == "2026-03-01T12:00:00Z"


def test_a_fresh_leader_starts_from_the_status_and_rebuilds_within_one_cycle(world: World) -> None:
    profile = setup_profile(world, [CPU_P95, STORAGE])
    world.source("kubelet", type_="kubeletSummary")
    world.pod("api-1", "api", profile)
    world.pod_metrics("api-1", "api", {"app": {"cpu": "200m"}})
    world.kubelet.answers.append(FetchResult([storage("api-1", "app", 4096)]))
    world.cycle("kubelet")
    world.cycle("metrics")
    assert world.ready(profile)["status"] == "True"

    plugins = {**SOURCE_TYPES, "kubeletSummary": lambda _: world.kubelet}
    successor = MetricsCollector(world.manager, world.store, world.kill_switch, world.options, plugins=plugins)
    world.collector = successor
    world.clock.advance(60)
    world.cycle("metrics")

    # the kubelet source's resource is judged by what the status said until the kubelet is polled again
    assert world.ready(profile)["status"] == "True"
    assert world.usage(profile, "app", "ephemeral-storage")["samples"] == 1
    world.kubelet.answers.append(FetchResult([]))
    world.cycle("kubelet")
    assert world.ready(profile)["message"] == "No samples in the latest collection cycle for: ephemeral-storage"


def test_a_policy_resource_whose_source_does_not_exist_is_missing(world: World) -> None:
    profile = setup_profile(world, [CPU_P95, {**STORAGE, "source": "nowhere"}])
    world.pod("api-1", "api", profile)
    world.pod_metrics("api-1", "api", {"app": {"cpu": "200m"}})

    world.cycle()

    assert world.ready(profile)["message"] == "No samples in the latest collection cycle for: ephemeral-storage"


def test_the_profiles_gauge_counts_profiles_by_identity_and_state(world: World) -> None:
    setup_profile(world, [CPU_P95])
    world.profile("web")
    world.profile("db", policy=None)

    world.cycle()

    assert PROFILES.value(app="api", state="accruing") == 1
    assert PROFILES.value(app="web", state="accruing") == 1
    assert PROFILES.value(app="db", state="accruing") == 1


def test_status_writes_go_through_server_side_apply_as_the_collector(world: World) -> None:
    profile = setup_profile(world, [CPU_P95])
    world.pod("api-1", "api", profile)
    world.pod_metrics("api-1", "api", {"app": {"cpu": "200m"}})
    seen: list[tuple[str, dict[str, Any]]] = []
    patch = world.manager.client.status().patch

    class SpyStatus:
        @staticmethod
        def patch(obj: Any, body: dict[str, Any], **options: Any) -> Any:
            return spy(obj, body, **options)

    def spy(obj: Any, body: dict[str, Any], **options: Any) -> Any:
        seen.append((str(options.get("field_manager")), body))
        assert options.get("patch_type") == "apply"
        assert options.get("force") is True
        return patch(obj, body, **options)

    world.manager.client.writer.status = SpyStatus  # type: ignore[method-assign,assignment]
    world.cycle()

    [(manager, body)] = seen
    assert manager == "ballast-collector"
    assert set(body["status"]) == {"containers", "meetsThreshold", "state", "conditions"}
    assert [c["type"] for c in body["status"]["conditions"]] == ["Ready"]


def test_statuses_applied_in_the_cycles_thread_are_the_writer_threads_and_a_failed_one_is_not_fatal(
    world: World, tmp_path: Path
) -> None:
    (tmp_path / "inline").mkdir()
    inline = World(tmp_path / "inline", status_writers=0)  # as the fleet simulator runs it
    try:
        written: dict[str, list[dict[str, Any]]] = {}
        for name, each in (("writers", world), ("inline", inline)):
            api = setup_profile(each, [CPU_P95, MEMORY_MAX])
            web = each.profile("web")
            each.pod("api-1", "api", api)
            each.pod("web-1", "web", web)
            each.pod_metrics("api-1", "api", {"app": {"cpu": "200m", "memory": "64Mi"}})
            each.pod_metrics("web-1", "web", {"app": {"cpu": "300m", "memory": "96Mi"}})
            for _ in range(3):
                each.cycle()
                each.clock.advance(60)
            written[name] = [each.status(api), each.status(web)]
        assert written["inline"] == written["writers"]
        assert written["inline"][0]["meetsThreshold"] is True

        failing = inline.collector._apply

        def refuse_api(body: dict[str, Any]) -> None:
            if body["metadata"]["name"] == api:
                raise APIStatusError(500, "InternalError", "etcd is slow")
            failing(body)

        inline.collector._apply = refuse_api  # type: ignore[method-assign]
        inline.pod_metrics("api-1", "api", {"app": {"cpu": "900m", "memory": "64Mi"}})
        inline.pod_metrics("web-1", "web", {"app": {"cpu": "900m", "memory": "96Mi"}})
        inline.cycle()  # completes: the refused status is logged, the other applied
        assert inline.usage(web, "app", "cpu")["samples"] == 4
        assert inline.usage(api, "app", "cpu")["samples"] == 3  # its 4th sample is stored, its status refused
        inline.collector._apply = failing  # type: ignore[method-assign]
        inline.clock.advance(60)
        inline.cycle()
        assert inline.usage(api, "app", "cpu")["samples"] == 5
    finally:
        inline.close()


def two_sources_aligned(world: World) -> str:
    """A profile fed by the metrics source (cpu) and the kubelet one (ephemeral-storage), both every 60 s, each
    polled once on its own at 12:00; returns the profile."""
    profile = setup_profile(world, [CPU_P95, STORAGE])
    world.source("kubelet", type_="kubeletSummary")
    world.pod("api-1", "api", profile)
    world.pod_metrics("api-1", "api", {"app": {"cpu": "200m"}})
    world.cycle("metrics")
    world.kubelet.answers.append(FetchResult([storage("api-1", "app", 4096)]))
    world.cycle("kubelet")  # each source's first cycle is its own
    return profile


def spy_status_writes(world: World) -> list[str]:
    """The names of the profiles whose status is applied from now on, in order."""
    applied: list[str] = []
    patch = world.manager.client.status().patch

    class SpyStatus:
        @staticmethod
        def patch(obj: Any, body: dict[str, Any], **options: Any) -> Any:
            applied.append(body["metadata"]["name"])
            return patch(obj, body, **options)

    world.manager.client.writer.status = SpyStatus  # type: ignore[method-assign,assignment]
    return applied


def test_sources_due_together_are_collected_in_one_cycle_with_one_status_write_per_profile(world: World) -> None:
    profile = two_sources_aligned(world)
    applied = spy_status_writes(world)
    world.clock.advance(60)
    world.kubelet.answers.append(FetchResult([storage("api-1", "app", 8192)]))
    result = world.cycle("metrics")  # the kubelet source is due too: taken with this cycle

    assert result is not None
    assert result.requeue_after == 60
    assert applied == [profile]  # one status for both sources' samples
    assert [cycle.cycle_id.split("/")[0] for cycle in world.store.cycles[-2:]] == ["metrics", "kubelet"]
    assert world.usage(profile, "app", "ephemeral-storage")["lastUpdated"] == "2026-03-01T12:01:00Z"
    assert world.usage(profile, "app", "cpu")["lastUpdated"] == "2026-03-01T12:01:00Z"
    assert world.ready(profile)["status"] == "True"

    calls = len(world.kubelet.calls)
    world.clock.advance(0.01)  # the kubelet source's own reconcile, a moment later: nothing left to do
    result = world.cycle("kubelet")
    assert result is not None
    assert result.requeue_after == 59.99
    assert (len(world.kubelet.calls), applied) == (calls, [profile])

    source = world.client.get(f"{API_VERSION}/MetricsSource", "kubelet")
    world.client.patch(source, {"spec": {"config": {"reservoirSize": 5_000}}})  # a spec change: polled at once
    cached = world.manager.client
    world.synced(lambda: cached.get(f"{API_VERSION}/MetricsSource", "kubelet")["metadata"]["generation"] == 2,
                 "the new generation cached")  # fmt: skip
    world.kubelet.answers.append(FetchResult([storage("api-1", "app", 8192)]))
    world.cycle("kubelet")
    assert len(world.kubelet.calls) == calls + 1


def test_a_source_taken_with_a_cycle_is_judged_by_what_it_delivered_then(world: World) -> None:
    profile = two_sources_aligned(world)
    world.clock.advance(60)
    world.cycle("metrics")  # the kubelet source is taken, and delivers nothing this time

    ready = world.ready(profile)
    assert (ready["status"], ready["reason"]) == ("False", "MissingSamples")
    assert ready["message"] == "No samples in the latest collection cycle for: ephemeral-storage"


def test_a_refused_cycle_of_a_taken_source_leaves_the_others_status_and_an_outage_holds_both(world: World) -> None:
    profile = two_sources_aligned(world)
    applied = spy_status_writes(world)
    world.store.refused_sources = {"kubelet"}
    world.clock.advance(60)
    world.kubelet.answers.append(FetchResult([storage("api-1", "app", 8192)]))
    world.cycle("metrics")

    assert applied == [profile]  # the metrics source's samples still make a status
    assert world.usage(profile, "app", "cpu")["lastUpdated"] == "2026-03-01T12:01:00Z"
    assert world.usage(profile, "app", "ephemeral-storage")["lastUpdated"] == "2026-03-01T12:00:00Z"

    world.store.refused_sources = set()
    world.store.down = True
    world.clock.advance(60)
    world.kubelet.answers.append(FetchResult([storage("api-1", "app", 8192)]))
    world.cycle("metrics")
    assert applied == [profile]  # no status while the store is away
    assert world.collector.pending.cycles == 2  # each source's cycle held, to be written in order


def test_a_taken_source_that_fails_costs_the_running_one_nothing_and_is_polled_on_its_own(world: World) -> None:
    profile = two_sources_aligned(world)
    applied = spy_status_writes(world)
    world.clock.advance(60)
    world.kubelet.answers.append(RuntimeError("a bug in the plugin (test)"))
    world.cycle("metrics")  # the kubelet source is taken, and its fetch fails

    assert applied == [profile]  # the metrics source's cycle went on
    assert world.usage(profile, "app", "cpu")["lastUpdated"] == "2026-03-01T12:01:00Z"
    calls = len(world.kubelet.calls)
    world.kubelet.answers.append(FetchResult([storage("api-1", "app", 8192)]))
    world.clock.advance(0.01)
    world.cycle("kubelet")  # not recorded as polled: its own reconcile polls it
    assert len(world.kubelet.calls) == calls + 1
    assert world.usage(profile, "app", "ephemeral-storage")["lastUpdated"] == "2026-03-01T12:01:00Z"

    world.store.broken_sources = {"kubelet"}  # now its write fails, with an error no store raises on purpose
    world.clock.advance(60 - 0.01)
    world.kubelet.answers.append(FetchResult([storage("api-1", "app", 8192)]))
    world.cycle("metrics")
    assert world.usage(profile, "app", "cpu")["lastUpdated"] == "2026-03-01T12:02:00Z"
    world.store.broken_sources = set()
    world.kubelet.answers.append(FetchResult([storage("api-1", "app", 8192)]))
    world.clock.advance(0.01)
    world.cycle("kubelet")
    assert world.usage(profile, "app", "ephemeral-storage")["lastUpdated"] == "2026-03-01T12:02:00Z"
