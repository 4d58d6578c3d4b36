from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.internal.resize import exceeds_drift
from ballast.internal.resize.drift import drifts


@pytest.mark.parametrize(
    ("current", "recommended", "threshold", "drifts"),
    [
        ("100m", "110m", 10, False),  # exactly 10 % is not beyond: strict
        ("100m", "111m", 10, True),
        ("100m", "90m", 10, False),
        ("100m", "89m", 10, True),
        ("110m", "100m", 10, False),  # denominator is the current value: 10/110 < 10 %
        ("100m", "100m", 0, False),
        ("100m", "101m", 0, True),
        ("0", "1m", 10, True),  # current 0 always drifts toward a positive value
        ("0", "0", 10, False),
        ("1", "1000m", 10, False),  # units do not matter, values do
        ("1Gi", "1152Mi", Decimal("12.5"), False),
        ("1Gi", "1153Mi", Decimal("12.5"), True),
        (1000, 1101, 10, True),
        (0, 5, 50, True),
        (288, 310, 10, False),
    ],
)
def test_drift_is_strictly_beyond_the_threshold_of_the_current_value(
    current: str | int, recommended: str | int, threshold: Decimal | int, drifts: bool
) -> None:
    assert exceeds_drift(current, recommended, threshold) is drifts


@pytest.mark.parametrize(
    ("current", "recommended", "threshold", "error", "message"),
    [
        ("100m", 100, 10, TypeError, "both as quantity strings or both as int units"),
        (1.5, 1, 10, TypeError, "current must be a quantity string or int"),
        ("-1", "1", 10, ValueError, "current quantity must not be negative"),
        ("1", "1", -1, ValueError, "threshold_pct must be ≥ 0"),
        ("1", "1", 10.0, TypeError, "threshold_pct must be a Decimal or int"),
        ("1", "1", Decimal("NaN"), ValueError, "threshold_pct must be finite"),
        ("1", "lots", 10, ValueError, "'lots' is not a Kubernetes quantity"),
    ],
)
def test_bad_arguments_are_named(
    current: object, recommended: object, threshold: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        exceeds_drift(current, recommended, threshold)  # type: ignore[arg-type]


@given(st.integers(1, 10**15), st.integers(0, 10**15), st.integers(0, 200))
def test_drift_is_the_exact_relative_change(current: int, recommended: int, threshold: int) -> None:
    assert exceeds_drift(current, recommended, threshold) is (abs(recommended - current) * 100 > threshold * current)
    assert exceeds_drift(f"{current}m", f"{recommended}m", threshold) is exceeds_drift(current, recommended, threshold)


@given(
    st.fractions(min_value=0, max_value=10**12),
    st.fractions(min_value=0, max_value=10**12),
    st.fractions(min_value=0, max_value=500),
)
def test_the_drift_rule_on_fractions_is_the_exact_inequality(
    current: Fraction, recommended: Fraction, threshold: Fraction
) -> None:
    expected = recommended > 0 if current == 0 else abs(recommended - current) * 100 > threshold * current
    assert drifts(current, recommended, threshold) is expected


def test_thresholds_with_fractional_percentages_and_milli_quantities_compare_exactly() -> None:
    assert exceeds_drift("1000m", "1100m", Decimal("9.99")) is True
    assert exceeds_drift("1000m", "1100m", Decimal("10")) is False  # exactly 10 %: not beyond
    assert exceeds_drift("3", "3334m", Decimal("11.1")) is True  # 11.133… % of 3 cores
    assert exceeds_drift("3", "3333m", Decimal("11.1")) is False  # 11.1 % exactly
