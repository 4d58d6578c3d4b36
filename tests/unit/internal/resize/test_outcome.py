"""The kubelet's verdict on the last resize, from pod conditions, and how the per-pod decision follows it."""

from __future__ import annotations

import datetime
from typing import Any

from ballast.internal.enrollment import LAST_RESIZE, RESIZE_BLOCKED
from ballast.internal.resize import ResizeOutcome, ResizeSettings, decide, resize_outcome, still_ours
from tests.unit.controllers.resize.builders import container, pod

NOW = datetime.datetime(2026, 3, 1, 12, tzinfo=datetime.UTC)
RECENT = "2026-03-01T11:58:00Z"
WANTED = {"a": {"cpu": ("500m", None)}}


def with_conditions(
    *conditions: dict[str, Any], generation: int = 1, annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    subject = pod("p", "shop", "prof", [container("a", {"cpu": "1"})], annotations=annotations)
    subject["metadata"]["generation"] = generation
    subject["status"] = {"conditions": list(conditions)}
    return subject


def pending(reason: str, observed: int = 0, message: str = "") -> dict[str, Any]:
    condition = {"type": "PodResizePending", "status": "True", "reason": reason, "message": message}
    return condition | ({"observedGeneration": observed} if observed else {})


def test_the_outcome_reads_true_conditions_only() -> None:
    assert resize_outcome(with_conditions()) == ResizeOutcome()
    assert resize_outcome(with_conditions({"type": "PodResizeInProgress", "status": "True"})).in_progress
    assert not resize_outcome(with_conditions({"type": "PodResizeInProgress", "status": "False"})).in_progress
    infeasible = resize_outcome(with_conditions(pending("Infeasible", message="node too small")))
    assert (infeasible.infeasible, infeasible.deferred, infeasible.pending_message) == (True, False, "node too small")
    assert resize_outcome(with_conditions(pending("Deferred"))).deferred


def test_an_error_in_progress_is_a_failure_not_a_resize_being_actuated() -> None:
    """`PodResizeInProgress` with reason `Error` (docs/design.md, difference 74)."""
    message = "cannot decrease memory limits: attempting to set container memory limit below current usage"
    error = {"type": "PodResizeInProgress", "status": "True", "reason": "Error", "message": message}
    failed = resize_outcome(with_conditions(error))
    assert (failed.in_progress, failed.failed, failed.error_message) == (False, True, message)
    assert resize_outcome(with_conditions(error | {"message": ""})).error_message == "Error"
    stale = resize_outcome(with_conditions(error | {"observedGeneration": 1}, generation=2))
    assert (stale.in_progress, stale.failed) == (False, False)  # about an older spec: neither
    assert not resize_outcome(with_conditions({"type": "PodResizeInProgress", "status": "True"})).failed
    settings = ResizeSettings()
    decision = decide(with_conditions(error), WANTED, settings, NOW)
    assert (decision.action, decision.reason, decision.message) == ("mark_blocked", "kubelet_error", message)
    marked = with_conditions(error, annotations={RESIZE_BLOCKED: message})
    assert decide(marked, WANTED, settings, NOW).action == "resize"  # reported once; then the planner decides
    cooling = with_conditions(error, annotations={RESIZE_BLOCKED: message, LAST_RESIZE: RECENT})
    assert decide(cooling, WANTED, settings, NOW).reason == "cooldown"


def test_a_pending_verdict_about_an_older_spec_no_longer_counts() -> None:
    assert resize_outcome(with_conditions(pending("Infeasible", observed=1), generation=2)) == ResizeOutcome()
    assert resize_outcome(with_conditions(pending("Infeasible", observed=2), generation=2)).infeasible


def test_the_decision_follows_the_kubelet() -> None:
    settings = ResizeSettings()
    in_progress = with_conditions({"type": "PodResizeInProgress", "status": "True"})
    assert decide(in_progress, WANTED, settings, NOW).reason == "in_progress"
    infeasible = decide(with_conditions(pending("Infeasible")), WANTED, settings, NOW)
    assert (infeasible.action, infeasible.message, infeasible.writes) == ("mark_blocked", "Infeasible", True)
    marked = with_conditions(pending("Infeasible"), annotations={RESIZE_BLOCKED: "Infeasible"})
    assert decide(marked, WANTED, settings, NOW).action == "resize"  # reported once; then the interval decides
    deferred = with_conditions(pending("Deferred"), annotations={LAST_RESIZE: RECENT})
    assert decide(deferred, WANTED, settings, NOW).reason == "deferred"
    assert decide(with_conditions(pending("Deferred")), WANTED, settings, NOW).action == "resize"


def test_a_live_pod_stays_ours_while_in_resize_mode_of_the_profile_and_not_terminating() -> None:
    subject = with_conditions()
    assert still_ours(subject, "prof")
    assert not still_ours(subject, "other")
    assert not still_ours(pod("p", "shop", "prof", [container("a")], mode="measure"), "prof")
    subject["metadata"]["deletionTimestamp"] = "2026-03-01T12:00:00Z"
    assert not still_ours(subject, "prof")
