"""Pod summaries: Running and Pending count, Pending is late strictly after the startup timeout, nothing else
counts, and no timeout means never late."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from ballast.internal.balancer import PlacementInputError, PodState, PodSummary, summarize_pods, summarize_targets

NOW = datetime.datetime(2026, 12, 2, 12, 0, 0, tzinfo=datetime.UTC)


def pod(phase: str | None, age_seconds: float | None = 0, **metadata: Any) -> dict[str, Any]:
    meta: dict[str, Any] = dict(metadata)
    if age_seconds is not None:
        created = NOW - datetime.timedelta(seconds=age_seconds)
        meta["creationTimestamp"] = created.strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"metadata": meta, "status": {} if phase is None else {"phase": phase}}


def test_running_pods_count_in_total_and_running() -> None:
    assert summarize_pods([pod("Running", 9999), pod("Running")], NOW, 60) == PodSummary(2, 2, 0)


def test_pending_pods_count_in_total_and_are_late_strictly_after_the_timeout() -> None:
    pending = [pod("Pending", 10), pod("Pending", 60), pod("Pending", 61)]
    assert summarize_pods(pending, NOW, 60) == PodSummary(3, 0, 1)  # created exactly 60 s ago: not yet late
    assert summarize_pods([pod("Pending", 1)], NOW, 0) == PodSummary(1, 0, 1)
    assert summarize_pods([pod("Pending", 0)], NOW, 0) == PodSummary(1, 0, 0)


@pytest.mark.parametrize("phase", ["Succeeded", "Failed", "Unknown", None, ""])
def test_other_phases_are_ignored(phase: str | None) -> None:
    assert summarize_pods([pod(phase, 9999)], NOW, 60) == PodSummary(0, 0, 0)


def test_without_fallback_no_pod_is_ever_late() -> None:
    # Upstream's 50-year deadline would make this 60-year-old pod late (docs/design.md, difference 41).
    old = NOW - datetime.timedelta(days=365 * 60)
    ancient = {"metadata": {"creationTimestamp": old.isoformat()}, "status": {"phase": "Pending"}}
    assert summarize_pods([ancient, pod("Pending", 10**6)], NOW, None) == PodSummary(2, 0, 0)


def test_a_terminating_pod_counts_by_its_phase() -> None:
    terminating = pod("Pending", 120, deletionTimestamp="2026-12-02T11:59:00Z")
    assert summarize_pods([terminating, pod("Running", deletionTimestamp="x")], NOW, 60) == PodSummary(2, 1, 1)


def test_a_pending_pod_without_a_creation_time_is_not_late() -> None:
    assert summarize_pods([pod("Pending", None), {"status": {"phase": "Pending"}}], NOW, 0) == PodSummary(2, 0, 0)


def test_projections_and_datetime_stamps_are_accepted() -> None:
    states = [PodState("Pending", NOW - datetime.timedelta(minutes=5)), PodState("Running"), PodState("Failed")]
    wire = {"metadata": {"creationTimestamp": NOW - datetime.timedelta(hours=1)}, "status": {"phase": "Pending"}}
    assert summarize_pods([*states, wire], NOW, 180) == PodSummary(3, 1, 2)


@pytest.mark.parametrize(
    ("pods", "now", "timeout", "path", "message"),
    [
        ([], NOW, -1, "startup_timeout_seconds", "must not be negative"),
        ([], NOW, "60", "startup_timeout_seconds", "must be a number of seconds"),
        ([], NOW.replace(tzinfo=None), 60, "now", "needs a time zone"),
        ([pod("Running"), {"metadata": {"creationTimestamp": "yesterday"}}], NOW, 60,
         "pods[1].metadata.creationTimestamp", "is not an RFC 3339 time"),
        ([{"metadata": {"creationTimestamp": "2026-12-02T11:00:00"}}], NOW, 60,
         "pods[0].metadata.creationTimestamp", "needs a time zone"),
        ([PodState("Pending", datetime.datetime(2026, 1, 1))], NOW, 60, "pods[0].created", "needs a time zone"),
    ],
)  # fmt: skip
def test_bad_input_raises_naming_the_value(
    pods: Any, now: datetime.datetime, timeout: Any, path: str, message: str
) -> None:
    with pytest.raises(PlacementInputError) as caught:
        summarize_pods(pods, now, timeout)
    assert (caught.value.path, message in caught.value.message) == (path, True)


def test_summarize_targets_sorts_by_name_and_names_the_target_in_errors() -> None:
    summaries = summarize_targets({"b": [pod("Running")], "a": [pod("Pending", 100)]}, NOW, 30)
    assert list(summaries.items()) == [("a", PodSummary(1, 0, 1)), ("b", PodSummary(1, 1, 0))]
    with pytest.raises(PlacementInputError) as caught:
        summarize_targets({"zone-a": [{"metadata": {"creationTimestamp": "?"}}]}, NOW, 30)
    assert caught.value.path == "pods_by_target['zone-a'][0].metadata.creationTimestamp"


def test_a_summary_is_what_place_accepts() -> None:
    assert PodSummary(3, 1, 2).as_dict() == {"total": 3, "running": 1, "not_started": 2}
