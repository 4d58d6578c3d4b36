"""The one-step raise of a memory limit below its OOM floor (docs/design.md, difference 64)."""

from __future__ import annotations

import datetime

from ballast.internal.enrollment import LAST_RESIZE, RESIZE_BLOCKED_AT
from ballast.internal.resize import OOM_RAISE, ResizeSettings, decide, plan_oom_raise
from tests.unit.controllers.resize.builders import container, pod

NOW = datetime.datetime(2026, 3, 1, 12, tzinfo=datetime.UTC)
MI = 2**20
RECENT = "2026-03-01T11:59:00Z"
RECS = {"a": {"memory": ("256Mi", "600Mi")}}


def burstable(**annotations: str) -> dict[str, object]:
    return pod("p", "shop", "prof", [container("a", {"memory": "256Mi"}, {"memory": "500Mi"})],
               annotations=annotations)  # fmt: skip


def test_the_raise_goes_to_the_floor_in_one_step_inside_the_cooldown() -> None:
    decision = decide(burstable(**{LAST_RESIZE: RECENT}), RECS, ResizeSettings(), NOW, {"a": 600 * MI})
    assert (decision.action, decision.reason) == ("resize", OOM_RAISE)
    raised = {"name": "a", "resources": {"limits": {"memory": "600Mi"}}}
    assert decision.plan.patch() == {"spec": {"containers": [raised]}}


def test_without_a_floor_the_cooldown_holds() -> None:
    assert decide(burstable(**{LAST_RESIZE: RECENT}), RECS, ResizeSettings(), NOW).reason == "cooldown"


def test_a_limit_at_or_above_the_floor_is_not_raised_again() -> None:
    decision = decide(burstable(**{LAST_RESIZE: RECENT}), RECS, ResizeSettings(), NOW, {"a": 500 * MI})
    assert decision.reason == "cooldown"


def test_the_backoff_after_a_block_holds_the_raise_back() -> None:
    decision = decide(burstable(**{RESIZE_BLOCKED_AT: RECENT}), RECS, ResizeSettings(), NOW, {"a": 600 * MI})
    assert decision.reason == "blocked"


def test_a_guaranteed_pod_moves_request_with_limit() -> None:
    both = {"memory": "500Mi", "cpu": "1"}
    subject = pod("p", "shop", "prof", [container("a", dict(both), dict(both))])
    plan = plan_oom_raise(subject, {"a": 600 * MI})
    assert plan.patch()["spec"]["containers"][0]["resources"] == {"requests": {"memory": "600Mi"},
                                                                   "limits": {"memory": "600Mi"}}  # fmt: skip


def test_a_container_without_a_memory_limit_is_left_alone() -> None:
    subject = pod("p", "shop", "prof", [container("a", {"memory": "256Mi"})])
    assert plan_oom_raise(subject, {"a": 600 * MI}).changes == ()
