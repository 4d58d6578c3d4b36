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
        ("150%", Decimal(150)),
        ("0%", None),
        ("-5%", None),
        ("", None),
        ("%", None),
        ("ten", None),
        ("20%%", None),
        (None, None),
    ],
)
def test_parse_percent_reads_positive_percentages(text: str | None, value: Decimal | None) -> None:
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
    [("50%", Decimal(50)), ("25", Decimal(25)), ("150%", Decimal(150)), ("0%", DEFAULT_MAX_CHANGE_PCT), (None, 50)],
)
def test_max_change_defaults_to_fifty(text: str | None, value: Decimal) -> None:
    assert resolve_max_change(text) == value
