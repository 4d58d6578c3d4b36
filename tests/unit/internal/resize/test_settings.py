"""A policy's resize behaviour: interval, step cap and drift thresholds, defaults applied."""

from __future__ import annotations

from decimal import Decimal

import pytest

from ballast.api.ballast.v1 import ResourcePolicySpec
from ballast.internal.resize import ResizeSettings, parse_interval
from ballast.internal.resize.settings import REMEMBERED_MAX


@pytest.mark.parametrize(
    ("text", "seconds"), [("15m", 900), ("1h30m", 5400), ("2s", 2), ("", 900), ("bad", 900), ("-1m", 900)]
)
def test_intervals_fall_back_to_15_minutes(text: str, seconds: float) -> None:
    assert parse_interval(text) == seconds


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


def test_a_remembered_result_is_computed_once_per_arguments_and_settings() -> None:
    calls: list[tuple[object, ...]] = []

    def doubled(settings: ResizeSettings, value: int) -> int:
        calls.append((settings, value))
        return 2 * value * int(settings.max_change)

    settings = ResizeSettings()
    assert [settings.remembered(doubled, 1), settings.remembered(doubled, 1), settings.remembered(doubled, 2)] == [
        100, 100, 200,
    ]  # fmt: skip
    assert calls == [(settings, 1), (settings, 2)]
    other = ResizeSettings(max_change=Decimal(10))
    assert other.remembered(doubled, 1) == 20  # other settings: their own results
    for value in range(REMEMBERED_MAX + 1):  # bounded: past the bound it starts afresh
        settings.remembered(doubled, value)
    assert len(calls) == 3 + REMEMBERED_MAX + 1 - 2
    assert settings.remembered(doubled, 1) == 100
    assert calls[-1] == (settings, 1)  # computed again: forgotten when the bound was reached
