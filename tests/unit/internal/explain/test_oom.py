"""`ballast explain` on a container whose profile holds OOM kills: the floor, its end and where the kills were."""

from __future__ import annotations

from ballast.api.ballast.v1 import ContainerOOMKills
from ballast.internal.explain.report import oom_lines


def test_the_floor_and_the_namespaces_that_set_it_are_shown() -> None:
    entry = ContainerOOMKills.model_validate(
        {"container": "app", "count": 2, "lastLimit": "500Mi", "floor": "600Mi", "floorUntil": "2026-03-02T12:00:00Z",
         "namespaces": ["canary", "shop"]}
    )  # fmt: skip
    assert oom_lines(entry) == [
        "  OOM kills: 2 in the window (in canary, shop), the last at 500Mi",
        "    memory limit floor 600Mi until 2026-03-02T12:00:00Z: admission and resize give no less",
    ]


def test_repeated_kills_say_raising_stopped() -> None:
    entry = ContainerOOMKills(container="app", count=4, floor="1Gi", repeated=True, namespaces=["shop"])
    assert oom_lines(entry)[-1] == (
        "    raising stopped: killed again at the raised limit (OOMKillsRepeated; memory keeps growing)"
    )


def test_no_kills_no_lines() -> None:
    assert oom_lines(None) == []
