"""Scheduled disruption budgets: a cron window in UTC decides whether a budget applies at the plan's time; a
malformed schedule or duration is named; without a time, every scheduled budget counts (the cautious reading).
Agreement with Karpenter's own `Budget.IsActive` is test_against_karpenter.py's."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from ballast.internal.consolidation import ConsolidationInputError, plan, pool_from_mapping, pool_from_nodepool
from ballast.internal.consolidation.schedule import budget_window_active, cron_expression, parse_budget_duration

from .builders import catalogue, node, pod

MONDAY_9 = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)
BUSINESS_HOURS_FREEZE = {"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"}


@pytest.mark.parametrize(
    ("at", "active"),
    [
        (MONDAY_9, True),
        (MONDAY_9 + timedelta(hours=7, minutes=59, seconds=59), True),
        (MONDAY_9 + timedelta(hours=8), False),  # the window is [09:00, 17:00)
        (MONDAY_9 - timedelta(seconds=1), False),
        (MONDAY_9 + timedelta(days=5, hours=1), False),  # Saturday
        (datetime(2026, 11, 30, 11, 0, tzinfo=timezone(timedelta(hours=2))), True),  # 09:00 UTC
    ],
)
def test_a_window_opens_at_each_hit_for_its_duration_in_utc(at: datetime, active: bool) -> None:
    assert budget_window_active("0 9 * * mon-fri", "8h", at) is active


def test_macros_every_and_robfig_spellings() -> None:
    assert cron_expression("@daily") == cron_expression("@midnight") == "0 0 * * *"
    assert cron_expression(" 0 9 ? * */1 ") == "0 9 * * *"  # ? and a step of 1 are unrestricted
    assert budget_window_active("@every 30m", "1h", MONDAY_9)  # a hit every 30 minutes: always inside an hour
    assert not budget_window_active("@every 2h", "1h", MONDAY_9)
    assert budget_window_active("0 0 31 2 *", "1h", MONDAY_9)  # never fires: robfig's zero time counts as a hit


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ("0 9 * * 7", r"weekdays are 0 \(Sunday\) to 6"),
        ("0 0 * * * *", "of five fields"),
        ("0 17-9 * * *", "range 17-9 runs backwards"),
        ("0 9 L * *", "of five fields"),
        ("@Daily", "macros:"),
        ("61 * * * *", "a field is out of range"),
        ("@every soon", "@every needs a Go duration"),
    ],
)
def test_what_karpenters_parser_refuses_is_refused_with_the_reason(schedule: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        budget_window_active(schedule, "1h", MONDAY_9)


def test_durations_are_the_nodepools_hours_and_minutes() -> None:
    assert parse_budget_duration("1h30m") == timedelta(minutes=90)
    assert parse_budget_duration("2h0m0s") == timedelta(hours=2)  # as Go writes it back
    for text in ("90s", "1d", "", "0s", "1.5h"):
        with pytest.raises(ValueError, match="is not a duration"):
            parse_budget_duration(text)


def test_a_malformed_budget_is_named_by_its_field() -> None:
    bad_schedule = {"budgets": [{"nodes": "1", "schedule": "daily", "duration": "1h"}]}
    with pytest.raises(ConsolidationInputError, match=r"budgets\[0\]\.schedule: 'daily' is not a cron schedule"):
        pool_from_mapping("general", bad_schedule)
    with pytest.raises(ConsolidationInputError, match=r"budgets\[0\]\.duration: '1d' is not a duration"):
        pool_from_mapping("general", {"budgets": [{"nodes": "1", "schedule": "@daily", "duration": "1d"}]})
    with pytest.raises(ConsolidationInputError, match="schedule and duration must be set together"):
        pool_from_mapping("general", {"budgets": [{"nodes": "1", "schedule": "@daily"}]})


def test_a_freeze_in_business_hours_blocks_consolidation_only_then() -> None:
    nodepool = {"metadata": {"name": "general"},
                "spec": {"disruption": {"consolidationPolicy": "Balanced",
                                        "budgets": [{"nodes": "100%"}, BUSINESS_HOURS_FREEZE]}}}  # fmt: skip
    nodes, pods = [node("a"), node("b")], [pod("p1", "a"), pod("p2", "b")]
    during = plan(nodes, pods, [nodepool], catalogue(), now=MONDAY_9 + timedelta(hours=3))
    assert {m.reason for m in during.moves} == {
        "No allowed disruptions for disruption reason Underutilized due to blocking budget"
    }
    assert during.freed.nodes == ()
    evening = plan(nodes, pods, [nodepool], catalogue(), now=MONDAY_9 + timedelta(hours=9))
    assert evening.freed.nodes != ()
    # No time given: the freeze is assumed in force.
    assert plan(nodes, pods, [nodepool], catalogue()).freed.nodes == ()
    assert pool_from_nodepool(nodepool, now=MONDAY_9 + timedelta(hours=9)).budgets[1].active is False
