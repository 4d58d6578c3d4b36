"""A profile's status from its series: statistics with the Go operator's numbers, readiness per container, stale
entries, and the Ready condition (docs/compatibility.md)."""

from __future__ import annotations

from typing import Any

from ballast.api.ballast.v1.policyspec import ResourcePolicySpec
from ballast.internal.collection import (
    PolicyView,
    ResourceStatus,
    is_stale,
    previously_missing,
    profile_status,
    ready_condition,
    resource_status,
    series_to_read,
    state_from_status,
)
from ballast.internal.history import Series, SeriesKey

HASH = "0123456789abcdef"
NOW_MS = 1_772_366_400_000
NOW = "2026-03-01T12:00:00Z"


def policy(*metrics: dict[str, str], **readiness: object) -> PolicyView:
    return PolicyView.from_spec(ResourcePolicySpec.model_validate({"metrics": list(metrics), "readiness": readiness}))


CPU = {"resource": "cpu", "field": "request", "source": "metrics", "aggregation": "p95", "headroom": "1.25"}
CPU_LIMIT = {"resource": "cpu", "field": "limit", "source": "metrics", "aggregation": "avg"}
MEMORY = {"resource": "memory", "field": "request", "source": "metrics", "aggregation": "max"}
STORAGE = {"resource": "ephemeral-storage", "field": "request", "source": "kubelet", "aggregation": "max"}


def series(resource: str, values: list[int], first_seen_ms: int | None, times: list[int] | None = None) -> Series:
    return Series(SeriesKey(HASH, "app", resource), tuple(values), first_seen_ms, tuple(times) if times else None)


def test_policy_view_owners_and_sources() -> None:
    view = policy(CPU, {**CPU_LIMIT, "source": "other"}, MEMORY, STORAGE)

    assert view.resources == ("cpu", "memory", "ephemeral-storage")
    assert view.owners == {"cpu": "metrics", "memory": "metrics", "ephemeral-storage": "kubelet"}
    assert view.fed_by("other") == frozenset({"cpu"})
    assert view.owned_by("other") == frozenset()
    assert view.owned_by("metrics") == frozenset({"cpu", "memory"})
    assert view.readiness.min_data_points == 500
    assert view.min_time_span_ms == 24 * 3600 * 1000


def test_statistics_and_recommendation_match_the_anchor() -> None:
    view = policy(CPU, CPU_LIMIT, minDataPoints=20, minTimeSpan="1h")
    day_ago = NOW_MS - 24 * 3600 * 1000

    status = resource_status(series("cpu", list(range(1, 21)), day_ago), view, NOW_MS, NOW)

    assert status.ready
    assert dict(status.usage) == {
        "resource": "cpu", "source": "metrics", "samples": 20, "timeSpan": "24h0m0s", "p50": "10m", "p75": "15m",
        "p90": "18m", "p95": "19m", "p99": "20m", "mean": "10m", "stdDev": "5m", "cv": "0.549",
        "lastUpdated": NOW,
    }  # fmt: skip
    assert dict(status.recommendation) == {"request": "23m", "limit": "10m"}  # 19 × 1.25 = 23.75 → 23m


def test_a_resource_not_ready_has_no_recommendation() -> None:
    status = resource_status(series("cpu", [200] * 10, NOW_MS - 60_000), policy(CPU), NOW_MS, NOW)

    assert not status.ready
    assert status.recommendation == {}


def test_series_to_read_splits_fresh_and_quiet_pairs_of_owned_resources() -> None:
    usage = ResourceStatus({"resource": "cpu"}, True, {})
    state = {"app": {"cpu": usage, "ephemeral-storage": usage}, "old": {"cpu": usage}}

    fresh, quiet = series_to_read(state, [("app", "cpu"), ("new", "cpu"), ("app", "memory")], frozenset({"cpu"}))

    assert fresh == [("app", "cpu"), ("new", "cpu")]
    assert quiet == [("old", "cpu")]


def test_a_quiet_series_is_stale_after_min_time_span_without_samples() -> None:
    view = policy(CPU, minTimeSpan="10m")
    now_s = NOW_MS // 1000

    assert not is_stale(series("cpu", [1, 2], 0, [now_s - 600, now_s - 600]), NOW_MS, view)
    assert is_stale(series("cpu", [1, 2], 0, [now_s - 700, now_s - 601]), NOW_MS, view)
    assert is_stale(series("cpu", [], None), NOW_MS, view)


def test_readiness_is_per_container_and_meets_threshold_needs_them_all() -> None:
    view = policy(CPU, MEMORY)
    ready = ResourceStatus({"resource": "cpu"}, True, {"request": "1"})
    accruing = ResourceStatus({"resource": "cpu"}, False, {})
    state = {
        "sidecar": {"cpu": accruing},
        "app": {"cpu": ready, "memory": ResourceStatus({"resource": "memory"}, True, {"request": "1Mi"})},
        "gone": {},
        "unlisted": {"ephemeral-storage": ready},  # a resource the policy dropped
    }

    status = profile_status(state, view)

    assert [c["name"] for c in status.containers] == ["app", "sidecar"]
    assert status.containers[0]["recommendations"] == {"cpu": {"request": "1"}, "memory": {"request": "1Mi"}}
    assert "recommendations" not in status.containers[1]
    assert status.ready == {("app", "cpu"): True, ("app", "memory"): True, ("sidecar", "cpu"): False}
    assert (status.meets_threshold, status.state) == (False, "Accruing")
    assert profile_status({"app": state["app"]}, view).state == "Sufficient"


def test_state_from_status_keeps_policy_resources_and_infers_readiness() -> None:
    containers: list[dict[str, Any]] = [
        {"name": "app", "usageStats": [{"resource": "cpu", "samples": 3}, {"resource": "gpu"}],
         "recommendations": {"cpu": {"request": "5m"}}},
        {"name": "logs", "usageStats": [{"resource": "cpu", "samples": 1}]},
    ]  # fmt: skip

    state = state_from_status(containers, policy(CPU))

    assert state["app"]["cpu"] == ResourceStatus({"resource": "cpu", "samples": 3}, True, {"request": "5m"})
    assert list(state["app"]) == ["cpu"]
    assert state["logs"]["cpu"].ready is False


def test_ready_condition_lists_missing_resources_sorted_and_keeps_its_transition_time() -> None:
    view = policy(CPU, MEMORY, STORAGE)
    before = {"type": "Ready", "status": "False", "lastTransitionTime": "2026-01-01T00:00:00Z"}

    condition = ready_condition(view, lambda r: r == "cpu", before, NOW)

    assert condition == {
        "type": "Ready", "status": "False", "reason": "MissingSamples",
        "message": "No samples in the latest collection cycle for: ephemeral-storage, memory",
        "lastTransitionTime": "2026-01-01T00:00:00Z",
    }  # fmt: skip
    flipped = ready_condition(view, lambda r: True, condition, NOW)
    assert flipped == {
        "type": "Ready", "status": "True", "reason": "SamplesCollected",
        "message": "All policy resources produced samples in the latest collection cycle", "lastTransitionTime": NOW,
    }  # fmt: skip


def test_previously_missing_reads_the_condition_back() -> None:
    view = policy(CPU, MEMORY, STORAGE)
    condition = ready_condition(view, lambda r: r == "cpu", None, NOW)

    assert previously_missing(condition) == frozenset({"memory", "ephemeral-storage"})
    assert previously_missing({"status": "True"}) == frozenset()
    assert previously_missing({"status": "False", "message": "something else"}) is None
    assert previously_missing(None) is None


def test_a_recommendation_of_0_or_above_the_nodes_is_left_out_and_named() -> None:
    view = policy(CPU, CPU_LIMIT, MEMORY)
    state = {
        "app": {
            "cpu": ResourceStatus({"resource": "cpu"}, True, {"request": "0", "limit": "2"}),
            "memory": ResourceStatus({"resource": "memory"}, True, {"request": "300Gi"}),
        },
        "logs": {"cpu": ResourceStatus({"resource": "cpu"}, True, {"request": "5m"})},
    }

    status = profile_status(state, view, {"cpu": 4000, "memory": 64 * 2**30})

    assert status.containers[0]["recommendations"] == {"cpu": {"limit": "2"}}  # memory lost its only value
    assert status.containers[1]["recommendations"] == {"cpu": {"request": "5m"}}
    assert [str(n) for n in status.not_applied] == [
        "app cpu request 0 is 0",
        "app memory request 300Gi is above 64Gi, the largest allocatable memory of the nodes its pods ran on",
    ]
    assert (status.meets_threshold, status.state) == (True, "Sufficient")  # readiness is the statistics'
    assert profile_status(state, view).containers[0]["recommendations"] == {
        "cpu": {"limit": "2"}, "memory": {"request": "300Gi"},
    }  # fmt: skip  # no known node: only the zero is left out


def test_ready_names_what_was_not_applied_and_still_reads_back_what_was_missing() -> None:
    view = policy(CPU, MEMORY)
    state = {"app": {"cpu": ResourceStatus({"resource": "cpu"}, True, {"request": "0"})}}
    not_applied = profile_status(state, view).not_applied

    collected = ready_condition(view, lambda r: True, None, NOW, not_applied)
    missing = ready_condition(view, lambda r: r == "cpu", None, NOW, not_applied)

    assert (collected["status"], collected["reason"]) == ("True", "SamplesCollected")
    assert collected["message"] == (
        "All policy resources produced samples in the latest collection cycle; recommendations not applied: "
        "app cpu request 0 is 0"
    )
    assert missing["message"] == (
        "No samples in the latest collection cycle for: memory; recommendations not applied: app cpu request 0 is 0"
    )
    assert previously_missing(missing) == frozenset({"memory"})
