"""Whether the API server resizes in place: its version, parsed leniently, and the InPlaceResize condition."""

from __future__ import annotations

import datetime

import pytest

from ballast.api.meta import Condition
from ballast.internal.resize import (
    condition_differs,
    condition_patch,
    parse_server_version,
    supports_in_place,
    unsupported_condition,
    wanted_condition,
)

NOW = datetime.datetime(2026, 3, 1, 12, tzinfo=datetime.UTC)


@pytest.mark.parametrize(
    ("text", "parsed"),
    [("v1.37.2", (1, 37)), ("v1.34.3-eks-adc7111", (1, 34)), ("v1.28+", (1, 28)), ("1.35", (1, 35)),
     ("v0.0.0-master+$Format:%H$", None), ("", None), ("garbage", None)],
)  # fmt: skip
def test_server_versions_are_parsed_leniently(text: str, parsed: tuple[int, int] | None) -> None:
    assert parse_server_version(text) == parsed


@pytest.mark.parametrize(
    ("text", "supported"),
    [("v1.35.0", True), ("v1.37.2", True), ("v2.0.0", True), ("v1.34.9", False), ("v0.0.0-master", True),
     ("", True)],
)  # fmt: skip
def test_in_place_resize_needs_1_35_and_unknown_versions_get_the_benefit_of_the_doubt(
    text: str, supported: bool
) -> None:
    assert supports_in_place(text) is supported


def test_the_condition_is_wanted_only_on_an_old_server_with_pods_in_resize_mode() -> None:
    assert wanted_condition("v1.34.0", True, True, None, NOW) is None
    assert wanted_condition("v1.34.0", False, False, None, NOW) is None
    wanted = wanted_condition("v1.34.0", False, True, None, NOW)
    assert wanted is not None
    assert (wanted["type"], wanted["status"], wanted["reason"]) == ("InPlaceResize", "False", "Unsupported")
    assert wanted["lastTransitionTime"] == "2026-03-01T12:00:00Z"
    assert "v1.34.0" in wanted["message"]


def test_an_unchanged_condition_keeps_its_transition_time_and_is_not_rewritten() -> None:
    first = unsupported_condition("v1.34.0", None, NOW)
    current = Condition.model_validate(first)
    later = unsupported_condition("v1.34.0", current, NOW + datetime.timedelta(hours=1))
    assert later["lastTransitionTime"] == first["lastTransitionTime"]
    assert not condition_differs(current, later)
    assert condition_differs(current, None)
    assert condition_differs(None, later)
    assert not condition_differs(None, None)
    assert condition_differs(current, {**later, "message": "another server"})


def test_the_condition_is_applied_alone_and_removed_by_applying_nothing() -> None:
    wanted = wanted_condition("v1.34.0", False, True, None, NOW)
    assert condition_patch("api--default", wanted) == {
        "apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "WorkloadProfile",
        "metadata": {"name": "api--default"}, "status": {"conditions": [wanted]},
    }  # fmt: skip
    assert condition_patch("api--default", None)["status"] == {}
