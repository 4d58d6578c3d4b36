"""ObjectMeta, Time, LabelSelector and Condition, and the meta.SetStatusCondition-style helpers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from pydantic import ValidationError

from ballast.api.meta import (
    Condition,
    ConditionList,
    Conditions,
    LabelSelector,
    ObjectMeta,
    Time,
    find_status_condition,
    remove_status_condition,
    set_status_condition,
)
from ballast.api.wire import WireModel

T0 = datetime(2026, 11, 29, 12, 0, 0, tzinfo=UTC)
T1 = T0 + timedelta(minutes=5)


class Stamped(WireModel):
    at: Time | None = None
    conditions: Conditions = ConditionList()


@pytest.mark.parametrize(
    ("value", "expected", "wire"),
    [
        ("2026-11-29T12:00:00Z", T0, "2026-11-29T12:00:00Z"),
        ("2026-11-29T14:00:00+02:00", T0, "2026-11-29T12:00:00Z"),
        ("2026-11-29T12:00:00.987654Z", T0, "2026-11-29T12:00:00Z"),
        (datetime(2026, 11, 29, 12, 0, 0), T0, "2026-11-29T12:00:00Z"),
        (datetime(2026, 11, 29, 7, 0, 0, tzinfo=timezone(timedelta(hours=-5))), T0, "2026-11-29T12:00:00Z"),
    ],
    ids=["utc", "offset", "fraction", "naive", "aware-datetime"],
)
def test_time_is_utc_whole_seconds_and_written_as_rfc3339(value: Any, expected: datetime, wire: str) -> None:
    stamped = Stamped.model_validate({"at": value})

    assert stamped.at == expected
    assert stamped.at is not None
    assert stamped.at.tzinfo is not None
    assert stamped.to_wire() == {"at": wire}
    assert stamped.model_dump(by_alias=True, exclude_none=True) == {"at": wire}


@pytest.mark.parametrize("value", ["yesterday", "2026-13-01T00:00:00Z"])
def test_bad_time_fails_naming_the_field(value: str) -> None:
    with pytest.raises(ValidationError) as invalid:
        Stamped.model_validate({"at": value})
    assert invalid.value.errors()[0]["loc"] == ("at",)


def test_object_meta_keeps_server_fields_it_does_not_type() -> None:
    wire = {
        "name": "web",
        "namespace": "team-a",
        "uid": "6f1c",
        "resourceVersion": "42",
        "generation": 3,
        "creationTimestamp": "2026-11-29T12:00:00Z",
        "labels": {"app": "web"},
        "annotations": {"note": "x"},
        "finalizers": ["ballast.tightlinesoftware.com/profile-cleanup"],
        "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "u", "controller": True}
        ],
        "managedFields": [{"manager": "kubectl", "operation": "Apply", "time": "2026-11-29T12:00:00Z"}],
        "selfLink": "/legacy",
    }

    meta = ObjectMeta.model_validate(wire)

    assert meta.to_wire() == wire
    assert meta.creation_timestamp == T0
    assert meta.owner_references is not None
    assert meta.owner_references[0].controller is True
    assert meta.model_extra == {"managedFields": wire["managedFields"], "selfLink": "/legacy"}


def test_object_meta_accepts_a_null_creation_timestamp() -> None:
    # kubectl and client libraries send `creationTimestamp: null` in new objects
    assert ObjectMeta.model_validate({"name": "x", "creationTimestamp": None}).to_wire() == {"name": "x"}


def test_label_selector_empty_and_absent_stay_distinct() -> None:
    assert LabelSelector.model_validate({}).to_wire() == {}
    wire = {"matchLabels": {"a": "b"}, "matchExpressions": [{"key": "k", "operator": "Exists"}]}
    assert LabelSelector.model_validate(wire).to_wire() == wire


def condition(**changes: Any) -> Condition:
    wire: dict[str, Any] = {
        "type": "Valid",
        "status": "True",
        "reason": "Validated",
        "message": "ok",
        "lastTransitionTime": T0,
        **changes,
    }
    return Condition.model_validate(wire)


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"status": "Maybe"}, "status"),
        ({"reason": ""}, "reason"),
        ({"reason": "has spaces"}, "reason"),
        ({"reason": "9Starts"}, "reason"),
        ({"type": "not a type!"}, "type"),
        ({"type": "x" * 317}, "type"),
        ({"message": "m" * 32769}, "message"),
        ({"observedGeneration": -1}, "observedGeneration"),
    ],
)
def test_condition_rules_match_metav1(changes: dict[str, Any], field: str) -> None:
    with pytest.raises(ValidationError) as invalid:
        condition(**changes)
    assert invalid.value.errors()[0]["loc"][0] == field


def test_a_condition_built_in_code_may_leave_its_time_to_set_status_condition() -> None:
    # Go's metav1.Condition{...} without LastTransitionTime: meta.SetStatusCondition fills it.
    bare = condition(lastTransitionTime=None)
    conditions = ConditionList()
    set_status_condition(conditions, bare, T1)
    assert conditions[0].last_transition_time == T1
    assert bare.last_transition_time is None  # the caller's condition is left as it was


@pytest.mark.parametrize(
    "changes",
    [{"type": "example.com/Synced"}, {"reason": "A_b,c:D"}, {"message": ""}, {"observedGeneration": 0}],
)
def test_condition_accepts_what_metav1_accepts(changes: dict[str, Any]) -> None:
    assert condition(**changes).to_wire()["type"] == changes.get("type", "Valid")


def test_conditions_refuse_two_entries_of_one_type() -> None:
    with pytest.raises(ValidationError, match="two conditions of type 'Valid'"):
        Stamped.model_validate({"conditions": [condition().to_wire(), condition(status="False").to_wire()]})


@pytest.mark.parametrize(
    ("new", "changed", "expected_time", "expected_message"),
    [
        (condition(lastTransitionTime=T1), False, T0, "ok"),
        (condition(lastTransitionTime=T1, message="still ok"), True, T0, "still ok"),
        (condition(lastTransitionTime=T1, status="False", reason="Broken"), True, T1, "ok"),
        (condition(lastTransitionTime=T1, observedGeneration=4), True, T0, "ok"),
    ],
    ids=["same", "new-message", "status-flip", "new-generation"],
)
def test_set_status_condition_moves_the_transition_time_only_on_a_flip(
    new: Condition, changed: bool, expected_time: datetime, expected_message: str
) -> None:
    conditions = [condition(), condition(type="Ready")]

    assert set_status_condition(conditions, new) is changed

    current = find_status_condition(conditions, "Valid")
    assert current is not None
    assert current.last_transition_time == expected_time
    assert current.message == expected_message
    assert current.status == new.status
    assert current.observed_generation == new.observed_generation
    assert [c.type for c in conditions] == ["Valid", "Ready"]


def test_set_status_condition_appends_a_new_type_as_a_copy() -> None:
    conditions: list[Condition] = []
    new = condition()

    assert set_status_condition(conditions, new) is True
    assert conditions == [new]
    assert conditions[0] is not new


def test_find_and_remove_status_condition() -> None:
    conditions = [condition(), condition(type="Ready")]

    assert find_status_condition(None, "Valid") is None
    assert find_status_condition(conditions, "Orphaned") is None
    assert remove_status_condition(conditions, "Orphaned") is False
    assert remove_status_condition(conditions, "Valid") is True
    assert [c.type for c in conditions] == ["Ready"]
