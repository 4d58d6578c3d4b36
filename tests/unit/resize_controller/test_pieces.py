"""The resize lane's pure pieces: the predicate, version and interval parsing, truncation, planning."""

from __future__ import annotations

import datetime
from decimal import Decimal
from typing import Any

import pytest

from ballast.api.ballast.v1 import ResourcePolicySpec
from ballast.controllers.resize import (
    NAME,
    ResizeSettings,
    decide,
    parse_interval,
    parse_server_version,
    plan_resize,
    profile_predicate,
    truncate_utf8,
)
from ballast.internal.enrollment import LAST_RESIZE, RESIZE_BLOCKED_AT
from ballast.internal.runtime.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
from tests.unit.resize_controller.builders import container, pod
from tests.unit.resize_controller.conftest import Harness

NOW = datetime.datetime(2026, 3, 1, 12, tzinfo=datetime.UTC)
SETTINGS = ResizeSettings()


def _profile(generation: int, meets: bool | None) -> dict[str, Any]:
    status = {} if meets is None else {"meetsThreshold": meets}
    return {"metadata": {"name": "p", "generation": generation}, "status": status}


@pytest.mark.parametrize(
    ("old", "new", "passes"),
    [
        (_profile(1, False), _profile(1, True), True),
        (_profile(1, True), _profile(1, False), True),
        (_profile(1, None), _profile(1, True), True),
        (_profile(1, True), _profile(2, True), True),
        (_profile(1, True), _profile(1, True), False),
        (_profile(1, None), _profile(1, False), False),
    ],
)
def test_the_predicate_passes_generation_changes_and_meets_threshold_flips(
    old: dict[str, Any], new: dict[str, Any], passes: bool
) -> None:
    assert profile_predicate().update(UpdateEvent(old, new)) is passes


def test_the_predicate_passes_create_delete_and_generic() -> None:
    predicate, profile = profile_predicate(), _profile(1, False)
    assert predicate.create(CreateEvent(profile))
    assert predicate.delete(DeleteEvent(profile))
    assert predicate.generic(GenericEvent(profile))


@pytest.mark.parametrize(
    ("text", "parsed"),
    [("v1.37.2", (1, 37)), ("v1.34.3-eks-adc7111", (1, 34)), ("v1.28+", (1, 28)), ("1.35", (1, 35)),
     ("v0.0.0-master+$Format:%H$", None), ("", None), ("garbage", None)],
)  # fmt: skip
def test_server_versions_are_parsed_leniently(text: str, parsed: tuple[int, int] | None) -> None:
    assert parse_server_version(text) == parsed


@pytest.mark.parametrize(
    ("text", "seconds"), [("15m", 900), ("1h30m", 5400), ("2s", 2), ("", 900), ("bad", 900), ("-1m", 900)]
)
def test_intervals_fall_back_to_15_minutes(text: str, seconds: float) -> None:
    assert parse_interval(text) == seconds


def test_blocked_messages_are_cut_at_256_bytes_between_characters() -> None:
    cut = truncate_utf8("ab" + "€" * 100)  # 2 + 84 × 3 = 254 bytes; the 85th € would end at byte 257
    assert cut == "ab" + "€" * 84
    assert truncate_utf8("short") == "short"


def test_settings_read_thresholds_and_pace_from_the_policy() -> None:
    spec = ResourcePolicySpec.model_validate({"behaviors": {
        "thresholds": {"default": "20%", "resize": {"resourceThresholds": {"memory": {"limit": "5%"}}}},
        "resize": {"maxChangePerCycle": "25%", "interval": "10m"},
    }})  # fmt: skip
    settings = ResizeSettings.from_spec(spec)
    assert (settings.interval, settings.max_change) == (600, Decimal(25))
    assert settings.threshold("memory", "limit") == Decimal(5)
    assert settings.threshold("memory", "request") == Decimal(20)
    assert ResizeSettings.from_spec(ResourcePolicySpec()).threshold("cpu", "request") == Decimal(10)


def test_a_plan_names_only_changed_containers_and_fields() -> None:
    subject = pod("p", "shop", "prof", [container("a", {"cpu": "1", "memory": "1Gi"}), container("b", {"cpu": "1"})])
    plan = plan_resize(subject, {"a": {"cpu": ("1", None), "memory": ("2Gi", "4Gi")}}, SETTINGS)
    assert plan.patch() == {"spec": {"containers": [
        {"name": "a", "resources": {"requests": {"memory": "1536Mi"}, "limits": {"memory": "4Gi"}}}]}}  # fmt: skip


def test_unparseable_recommendations_are_ignored() -> None:
    subject = pod("p", "shop", "prof", [container("a", {"cpu": "1"})])
    assert plan_resize(subject, {"a": {"cpu": ("lots", "")}}, SETTINGS).changes == ()


def test_a_legacy_blocked_annotation_without_a_time_is_retried() -> None:
    subject = pod("p", "shop", "prof", [container("a", {"cpu": "1"})],
                  annotations={"ballast.tightlinesoftware.com/resize-blocked": "true"})  # fmt: skip
    assert decide(subject, {"a": {"cpu": ("500m", None)}}, SETTINGS, NOW).action == "resize"


@pytest.mark.parametrize("stamp", ["not a time", "2026-03-01T11:59:00", "2026-03-01T11:44:59Z"])
def test_unparseable_or_old_timestamps_do_not_hold_a_pod_back(stamp: str) -> None:
    subject = pod("p", "shop", "prof", [container("a", {"cpu": "1"})],
                  annotations={LAST_RESIZE: stamp, RESIZE_BLOCKED_AT: stamp})  # fmt: skip
    assert decide(subject, {"a": {"cpu": ("500m", None)}}, SETTINGS, NOW).action == "resize"


def test_recent_timestamps_with_an_offset_hold_a_pod_back() -> None:
    subject = pod("p", "shop", "prof", [container("a", {"cpu": "1"})],
                  annotations={LAST_RESIZE: "2026-03-01T13:00:00+01:00"})  # fmt: skip
    assert decide(subject, {"a": {"cpu": ("500m", None)}}, SETTINGS, NOW).reason == "cooldown"


def test_setup_registers_the_resourceadjuster_controller(harness: Harness) -> None:
    assert harness.controller.name == NAME == "resourceadjuster"
    assert NAME in harness.manager.controller_names


def test_a_failed_version_read_is_retried_on_the_next_reconcile() -> None:
    harness = Harness()
    calls: list[int] = []

    def flaky() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise ConnectionError("apiserver unreachable")
        return "v1.37.0"

    try:
        reconciler: Any = harness.controller.reconciler
        reconciler._read_version = flaky
        with pytest.raises(ConnectionError):
            reconciler.server_version()
        assert reconciler.server_version() == ("v1.37.0", True)
        assert reconciler.server_version() == ("v1.37.0", True)
        assert len(calls) == 2
    finally:
        harness.close()
