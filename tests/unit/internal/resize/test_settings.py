"""A policy's resize behaviour: interval, step cap and drift thresholds, defaults applied."""

from __future__ import annotations

from decimal import Decimal

import pytest

from ballast.api.ballast.v1 import ResourcePolicySpec
from ballast.internal.resize import ResizeSettings, parse_interval


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
