"""The per-pod decision: annotations that hold a pod back (or do not), and the kubelet's outcome."""

from __future__ import annotations

import datetime

import pytest

from ballast.internal.enrollment import LAST_RESIZE, RESIZE_BLOCKED_AT
from ballast.internal.resize import ResizeSettings, decide
from tests.unit.controllers.resize.builders import container, pod

NOW = datetime.datetime(2026, 3, 1, 12, tzinfo=datetime.UTC)
SETTINGS = ResizeSettings()


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
