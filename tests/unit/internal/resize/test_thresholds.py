from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from ballast.internal.resize import (
    DEFAULT_MAX_CHANGE_PCT,
    DEFAULT_THRESHOLD_PCT,
    parse_percent,
    resolve_max_change,
    resolve_threshold,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("20%", Decimal(20)),
        ("20", Decimal(20)),
        ("12.5%", Decimal("12.5")),
        (" 5 % ", Decimal(5)),
        ("100%", Decimal(100)),
        ("0.000001", Decimal("0.000001")),
        ("150%", None),  # above 100 % (docs/design.md, difference 25)
        ("100.000001%", None),
        ("12.0000001%", None),  # 7 decimal places
        ("1e-400", None),
        ("0%", None),
        ("-5%", None),
        ("", None),
        ("%", None),
        ("ten", None),
        ("20%%", None),
        (None, None),
    ],
)
def test_parse_percent_reads_percentages_above_0_to_100(text: str | None, value: Decimal | None) -> None:
    assert parse_percent(text) == value


CPU_FIVE = {"cpu": {"request": "5%", "limit": ""}}


@pytest.mark.parametrize(
    ("resource", "field", "levels", "threshold"),
    [
        ("cpu", "request", {"resource_thresholds": CPU_FIVE, "resize_default": "15%", "default": "20%"}, Decimal(5)),
        # a blank per-resource level falls through
        ("cpu", "limit", {"resource_thresholds": CPU_FIVE, "resize_default": "15%", "default": "20%"}, Decimal(15)),
        ("memory", "request", {"resource_thresholds": CPU_FIVE, "resize_default": "15%"}, Decimal(15)),
        ("memory", "request", {"resource_thresholds": CPU_FIVE, "default": "20%"}, Decimal(20)),
        ("memory", "request", {"resize_default": "", "default": "20"}, Decimal(20)),
        ("memory", "request", {}, DEFAULT_THRESHOLD_PCT),
        # a threshold above 100 % does not count either
        ("cpu", "request", {"resource_thresholds": {"cpu": {"request": "101%"}}, "default": "20%"}, Decimal(20)),
        # no level counts: zero, unparseable, negative
        (
            "cpu",
            "request",
            {"resource_thresholds": {"cpu": {"request": "0%"}}, "resize_default": "bad", "default": "-3"},
            10,
        ),
        ("cpu", "request", {"resource_thresholds": {"cpu": {}}, "resize_default": "7%"}, Decimal(7)),
    ],
)
def test_threshold_resolution_order(resource: str, field: str, levels: dict[str, Any], threshold: Decimal) -> None:
    assert resolve_threshold(resource, field, **levels) == threshold


def test_an_unknown_field_is_named() -> None:
    with pytest.raises(ValueError, match="threshold field must be one of request, limit, got 'requests'"):
        resolve_threshold("cpu", "requests")


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("50%", Decimal(50)),
        ("25", Decimal(25)),
        ("100%", Decimal(100)),
        ("150%", DEFAULT_MAX_CHANGE_PCT),  # would step past the recommendation
        ("0%", DEFAULT_MAX_CHANGE_PCT),
        (None, 50),
    ],
)
def test_max_change_defaults_to_fifty(text: str | None, value: Decimal) -> None:
    assert resolve_max_change(text) == value
