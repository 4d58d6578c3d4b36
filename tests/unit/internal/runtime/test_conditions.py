"""Status conditions with meta.SetStatusCondition semantics: the transition time moves only when status flips."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from ballast.internal.runtime.conditions import (
    FALSE,
    TRUE,
    UNKNOWN,
    find_status_condition,
    is_status_condition_true,
    remove_status_condition,
    set_status_condition,
)

T0 = datetime.datetime(2026, 1, 1, 12, 0, 0, tzinfo=datetime.UTC)
T1 = T0 + datetime.timedelta(minutes=5)
T0_TEXT = "2026-01-01T12:00:00Z"
T1_TEXT = "2026-01-01T12:05:00Z"


def _ready(status: str, reason: str = "Measured", message: str = "ok", **extra: Any) -> dict[str, Any]:
    return {"type": "Ready", "status": status, "reason": reason, "message": message, **extra}


def test_a_new_condition_is_appended_with_now_as_its_transition_time() -> None:
    conditions: list[dict[str, Any]] = []
    assert set_status_condition(conditions, _ready(TRUE), T0)
    assert conditions == [{**_ready(TRUE), "lastTransitionTime": T0_TEXT}]


def test_a_given_transition_time_is_kept_for_a_new_condition() -> None:
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, _ready(TRUE, lastTransitionTime="2025-01-01T00:00:00Z"), T0)
    assert conditions[0]["lastTransitionTime"] == "2025-01-01T00:00:00Z"


@pytest.mark.parametrize("zero", [None, ""])
def test_a_zero_transition_time_means_now(zero: str | None) -> None:
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, _ready(TRUE, lastTransitionTime=zero), T0)
    assert conditions[0]["lastTransitionTime"] == T0_TEXT
    set_status_condition(conditions, _ready(FALSE, lastTransitionTime=zero), T1)
    assert conditions[0]["lastTransitionTime"] == T1_TEXT


def test_same_status_keeps_the_transition_time_but_updates_reason_and_message() -> None:
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, _ready(TRUE), T0)
    assert set_status_condition(conditions, _ready(TRUE, reason="Again", message="still ok"), T1)
    assert conditions == [{**_ready(TRUE, reason="Again", message="still ok"), "lastTransitionTime": T0_TEXT}]


def test_an_identical_condition_changes_nothing() -> None:
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, _ready(TRUE, observedGeneration=3), T0)
    assert not set_status_condition(conditions, _ready(TRUE, observedGeneration=3), T1)
    assert conditions[0]["lastTransitionTime"] == T0_TEXT


@pytest.mark.parametrize(("before", "after"), [(TRUE, FALSE), (FALSE, UNKNOWN), (UNKNOWN, TRUE)])
def test_a_status_change_moves_the_transition_time(before: str, after: str) -> None:
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, _ready(before), T0)
    assert set_status_condition(conditions, _ready(after, reason="Flipped"), T1)
    assert conditions[0]["status"] == after
    assert conditions[0]["reason"] == "Flipped"
    assert conditions[0]["lastTransitionTime"] == T1_TEXT


def test_a_status_change_uses_a_given_transition_time() -> None:
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, _ready(TRUE), T0)
    set_status_condition(conditions, _ready(FALSE, lastTransitionTime="2026-02-02T00:00:00Z"), T1)
    assert conditions[0]["lastTransitionTime"] == "2026-02-02T00:00:00Z"


def test_observed_generation_updates_in_place_and_other_types_are_untouched() -> None:
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, {"type": "Synced", "status": TRUE}, T0)
    set_status_condition(conditions, _ready(TRUE, observedGeneration=1), T0)
    assert set_status_condition(conditions, _ready(TRUE, observedGeneration=2), T1)
    assert [c["type"] for c in conditions] == ["Synced", "Ready"]
    assert conditions[1]["observedGeneration"] == 2
    assert conditions[0] == {"type": "Synced", "status": TRUE, "lastTransitionTime": T0_TEXT}


def test_times_are_written_in_utc() -> None:
    conditions: list[dict[str, Any]] = []
    tokyo = datetime.timezone(datetime.timedelta(hours=9))
    set_status_condition(conditions, _ready(TRUE), datetime.datetime(2026, 1, 1, 21, 0, tzinfo=tokyo))
    assert conditions[0]["lastTransitionTime"] == "2026-01-01T12:00:00Z"


@pytest.mark.parametrize(
    "condition",
    [{"status": TRUE}, {"type": "", "status": TRUE}, {"type": "Ready"}, {"type": "Ready", "status": "true"}],
)
def test_invalid_conditions_are_refused(condition: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="a condition needs a type and a status of True/False/Unknown"):
        set_status_condition([], condition, T0)


def test_find_is_true_and_remove() -> None:
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, _ready(TRUE), T0)
    set_status_condition(conditions, {"type": "Degraded", "status": FALSE}, T0)
    assert find_status_condition(conditions, "Ready") == conditions[0]
    assert find_status_condition(conditions, "Missing") is None
    assert find_status_condition(None, "Ready") is None
    assert is_status_condition_true(conditions, "Ready")
    assert not is_status_condition_true(conditions, "Degraded")
    assert not is_status_condition_true(conditions, "Missing")
    assert remove_status_condition(conditions, "Ready")
    assert not remove_status_condition(conditions, "Ready")
    assert [c["type"] for c in conditions] == ["Degraded"]
