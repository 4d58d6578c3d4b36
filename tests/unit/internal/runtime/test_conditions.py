"""Status conditions with meta.SetStatusCondition semantics: the transition time moves only when status flips —
on dicts and on typed models, read-modify-write and server-side apply alike; and `rfc3339`, the form times take."""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from ballast.api.meta import Condition
from ballast.runtime import rfc3339
from ballast.runtime.conditions import (
    FALSE,
    TRUE,
    UNKNOWN,
    condition,
    find_status_condition,
    is_status_condition_true,
    kept_transition_time,
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


@dataclass
class Typed:
    """A typed condition that is not the API model: the helpers go by attribute names only."""

    type: str
    status: str
    last_transition_time: datetime.datetime
    reason: str = "Measured"
    message: str = "ok"
    observed_generation: int | None = None


def _model(status: str, at: datetime.datetime = T0, **extra: Any) -> Condition:
    return Condition.model_validate(
        {"type": "Ready", "status": status, "reason": "Measured", "message": "ok", "lastTransitionTime": at, **extra}
    )


# ----------------------------------------------------------------------------------------- condition (SSA)


def test_an_applied_condition_keeps_a_dicts_transition_time_while_the_status_holds() -> None:
    previous = {"type": "Ready", "status": TRUE, "lastTransitionTime": "2025-06-01T00:00:00Z"}

    written = condition("Ready", TRUE, "Again", "still ok", previous=previous, now=T1)

    assert written == {
        "type": "Ready", "status": TRUE, "reason": "Again", "message": "still ok",
        "lastTransitionTime": "2025-06-01T00:00:00Z",
    }  # fmt: skip


@pytest.mark.parametrize(
    "previous",
    [None, {"type": "Ready", "status": FALSE, "lastTransitionTime": T0_TEXT}, {"type": "Ready", "status": TRUE}],
    ids=["none", "flipped", "no-time-to-keep"],
)
def test_an_applied_condition_is_stamped_now_when_the_status_flips_or_nothing_is_kept(
    previous: dict[str, Any] | None,
) -> None:
    written = condition("Ready", TRUE, "Measured", "ok", previous=previous, now=T1)

    assert written["lastTransitionTime"] == T1_TEXT


@pytest.mark.parametrize("make", [_model, lambda status: Typed("Ready", status, T0)], ids=["model", "duck"])
def test_an_applied_condition_keeps_a_typed_transition_time_and_moves_it_on_a_flip(make: Any) -> None:
    kept = condition("Ready", TRUE, "Measured", "ok", previous=make(TRUE), now=T1)
    moved = condition("Ready", FALSE, "Broken", "down", previous=make(TRUE), now=T1)

    assert kept["lastTransitionTime"] == T0_TEXT
    assert moved["lastTransitionTime"] == T1_TEXT
    assert moved["status"] == FALSE


def test_now_may_be_given_as_text_and_is_written_as_is() -> None:
    written = condition("Ready", TRUE, "Measured", "ok", previous=_model(FALSE), now="2026-03-01T12:00:00Z")

    assert written["lastTransitionTime"] == "2026-03-01T12:00:00Z"


def test_observed_generation_is_written_only_when_given() -> None:
    assert "observedGeneration" not in condition("Ready", TRUE, "Measured", "ok", previous=None, now=T0)
    assert condition("Ready", TRUE, "Measured", "ok", previous=None, now=T0, observed_generation=0) == {
        **_ready(TRUE), "lastTransitionTime": T0_TEXT, "observedGeneration": 0,
    }  # fmt: skip
    kept = condition("Ready", TRUE, "Measured", "ok", previous=_model(TRUE), now=T1, observed_generation=7)
    assert (kept["lastTransitionTime"], kept["observedGeneration"]) == (T0_TEXT, 7)


def test_an_applied_condition_is_in_wire_shape_and_validates_as_the_model() -> None:
    written = condition("Ready", FALSE, "Broken", "down", previous=None, now=T0, observed_generation=2)

    assert list(written) == ["type", "status", "reason", "message", "lastTransitionTime", "observedGeneration"]
    assert Condition.model_validate(written).to_wire() == written


@pytest.mark.parametrize(("type_", "status"), [("", TRUE), ("Ready", "true")])
def test_an_applied_condition_refuses_a_bad_type_or_status(type_: str, status: str) -> None:
    with pytest.raises(ValueError, match="a condition needs a type and a status of True/False/Unknown"):
        condition(type_, status, "Measured", "ok", previous=None, now=T0)


def test_kept_transition_time_gives_the_previous_time_in_its_own_form() -> None:
    assert kept_transition_time({"status": TRUE, "lastTransitionTime": T0_TEXT}, TRUE) == T0_TEXT
    assert kept_transition_time({"status": TRUE, "lastTransitionTime": ""}, TRUE) is None
    assert kept_transition_time(_model(TRUE), TRUE) == T0
    assert kept_transition_time(_model(TRUE), FALSE) is None
    assert kept_transition_time(None, TRUE) is None


# ----------------------------------------------------------------------------------------- typed lists


def test_typed_conditions_keep_their_time_while_the_status_holds_and_take_the_new_one_on_a_flip() -> None:
    conditions = [Typed("Synced", TRUE, T0), Typed("Ready", TRUE, T0)]

    assert set_status_condition(conditions, Typed("Ready", TRUE, T1, message="still ok"))
    assert conditions[1] == Typed("Ready", TRUE, T0, message="still ok")
    assert not set_status_condition(conditions, Typed("Ready", TRUE, T1, message="still ok"))
    assert set_status_condition(conditions, Typed("Ready", FALSE, T1, observed_generation=3))
    assert conditions[1] == Typed("Ready", FALSE, T1, observed_generation=3)
    assert conditions[0] == Typed("Synced", TRUE, T0)


def test_a_new_typed_condition_is_appended_as_a_copy_and_found_and_removed_by_type() -> None:
    conditions: list[Typed] = []
    new = Typed("Ready", TRUE, T0)

    assert set_status_condition(conditions, new)
    assert conditions == [new]
    assert conditions[0] is not new
    assert find_status_condition(conditions, "Ready") is conditions[0]
    assert is_status_condition_true(conditions, "Ready")
    assert remove_status_condition(conditions, "Ready")
    assert conditions == []


# ----------------------------------------------------------------------------------------- rfc3339


@pytest.fixture
def tokyo_local_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "JST-9")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize(
    ("moment", "text"),
    [
        (datetime.datetime(2026, 1, 2, 3, 4, 5, tzinfo=datetime.UTC), "2026-01-02T03:04:05Z"),
        (datetime.datetime(2026, 1, 2, 12, 4, 5, tzinfo=datetime.timezone(datetime.timedelta(hours=9))),
         "2026-01-02T03:04:05Z"),
        (datetime.datetime(2026, 1, 1, 23, 59, 59, 999999, tzinfo=datetime.UTC), "2026-01-01T23:59:59Z"),
    ],
    ids=["utc", "aware-offset", "sub-seconds-dropped"],
)  # fmt: skip
def test_rfc3339_writes_utc_whole_seconds_with_a_z(moment: datetime.datetime, text: str) -> None:
    assert rfc3339(moment) == text


@pytest.mark.usefixtures("tokyo_local_time")
def test_rfc3339_takes_a_naive_moment_as_local_time() -> None:
    assert rfc3339(datetime.datetime(2026, 1, 2, 12, 4, 5)) == "2026-01-02T03:04:05Z"
