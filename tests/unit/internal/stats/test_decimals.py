"""Policy decimals: exact parsing, decimal places, and the ranges of docs/design.md, difference 25."""

from __future__ import annotations

from decimal import Decimal

import pytest

from ballast.internal.stats import HEADROOM_RANGE, MAX_CV_RANGE, PERCENT_RANGE, decimal_places, parse_decimal


@pytest.mark.parametrize(
    ("text", "places"),
    [("1", 0), ("1.25", 2), ("1.250000", 2), ("0.000001", 6), ("1e-400", 400), ("1e3", 0), ("100.0", 0), ("0", 0)],
)
def test_decimal_places_ignore_trailing_zeros_and_never_round(text: str, places: int) -> None:
    assert decimal_places(Decimal(text)) == places


def test_decimal_places_of_nan_is_an_error() -> None:
    with pytest.raises(ValueError, match="NaN has no decimal places"):
        decimal_places(Decimal("NaN"))


@pytest.mark.parametrize(
    ("text", "inside"),
    [
        ("0.000001", True),  # the smallest: 6 decimal places
        ("100", True),  # the largest, inclusive
        ("1.25", True),
        ("0", False),
        ("100.000001", False),
        ("1.0000001", False),  # 7 decimal places
        ("1e-400", False),  # the headroom that admitted pods with memory "0"
        ("1e400", False),
        ("1e26", False),  # the headroom that put a 400-digit CPU in the view
        ("-1", False),
    ],
)
def test_the_headroom_range_is_above_0_to_100_with_6_places(text: str, inside: bool) -> None:
    assert (parse_decimal(text) in HEADROOM_RANGE) is inside


@pytest.mark.parametrize(("text", "inside"), [("0", True), ("100", True), ("100.5", False), ("-0.1", False)])
def test_the_max_cv_range_includes_0(text: str, inside: bool) -> None:
    assert (Decimal(text) in MAX_CV_RANGE) is inside


@pytest.mark.parametrize(("text", "inside"), [("0", False), ("0.000001", True), ("100", True), ("150", False)])
def test_the_percent_range_is_above_0_to_100(text: str, inside: bool) -> None:
    assert (Decimal(text) in PERCENT_RANGE) is inside


def test_only_finite_decimals_are_in_a_range() -> None:
    assert Decimal("Infinity") not in HEADROOM_RANGE
    assert Decimal("NaN") not in MAX_CV_RANGE
    assert 1 not in PERCENT_RANGE  # an int is not a policy decimal


def test_a_range_describes_itself() -> None:
    assert HEADROOM_RANGE.describe("headroom") == "0 < headroom ≤ 100 with at most 6 decimal places"
    assert MAX_CV_RANGE.describe("maxCV") == "0 ≤ maxCV ≤ 100 with at most 6 decimal places"
