from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.internal.quantity import display_bytes, display_cpu, display_units, format_fixed

KI, MI, GI = 2**10, 2**20, 2**30


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (176 * MI, "176.00Mi"),
        (512 * KI, "512.00Ki"),
        (2 * GI, "2.00Gi"),
        (GI, "1.00Gi"),
        (GI - 1, "1024.00Mi"),  # below 1Gi stays in Mi, rounded
        (MI, "1.00Mi"),
        (0, "0.00Ki"),
        (100, "0.10Ki"),
        (Fraction(9, 8) * GI, "1.12Gi"),  # an exact tie rounds to even, as Go's %.2f does
        (Fraction(11, 8) * GI, "1.38Gi"),
        (Decimal("1572864.5"), "1.50Mi"),
    ],
)
def test_display_bytes_uses_two_decimals_in_the_largest_binary_unit(value: int | Fraction | Decimal, text: str) -> None:
    assert display_bytes(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [(85, "85m"), (Fraction(859, 10), "85m"), (1000, "1"), (Decimal("1500.99"), "1500m"), (Fraction(1, 2), "0")],
)
def test_display_cpu_truncates_to_a_canonical_millicore_quantity(value: int | Fraction | Decimal, text: str) -> None:
    assert display_cpu(value) == text


@pytest.mark.parametrize(("value", "resource", "text"), [(85, "cpu", "85m"), (176 * MI, "memory", "176.00Mi")])
def test_display_units_picks_the_form_by_resource(value: int, resource: str, text: str) -> None:
    assert display_units(value, resource) == text


@pytest.mark.parametrize(
    ("value", "places", "text"),
    [
        (Decimal("0.4"), 3, "0.400"),
        (Fraction(1, 16), 3, "0.062"),
        (Fraction(3, 16), 3, "0.188"),
        (Decimal("2.5"), 0, "2"),
        (Decimal("-0.0001"), 2, "-0.00"),
        (12, 1, "12.0"),
    ],
)
def test_format_fixed_matches_go_percent_f(value: int | Fraction | Decimal, places: int, text: str) -> None:
    assert format_fixed(value, places) == text


@pytest.mark.parametrize(("value", "places"), [(Decimal("NaN"), 2), (Decimal("Infinity"), 2), (1, -1)])
def test_format_fixed_refuses_what_it_cannot_print(value: Decimal | int, places: int) -> None:
    with pytest.raises(ValueError, match=r"non-finite|places"):
        format_fixed(value, places)


def _reference_fixed(value: Fraction, places: int) -> str:
    scaled = round(abs(value) * 10**places)  # Python rounds a Fraction half to even, on the exact value
    whole, fraction = divmod(scaled, 10**places)
    sign = "-" if value < 0 else ""
    return f"{sign}{whole}.{fraction:0{places}d}" if places else f"{sign}{whole}"


@given(
    st.one_of(
        st.integers(-(10**15), 10**15),
        st.fractions(max_denominator=10**6),
        st.decimals(allow_nan=False, allow_infinity=False, places=6),
        st.integers(0, 10**6).map(lambda n: Fraction(2 * n + 1, 2000)),  # ties at three places
    ),
    st.integers(0, 4),
)
def test_format_fixed_rounds_the_exact_value_half_to_even(value: int | Fraction | Decimal, places: int) -> None:
    assert format_fixed(value, places) == _reference_fixed(Fraction(value), places)


@given(st.integers(0, 2**45) | st.fractions(min_value=0, max_value=2**40, max_denominator=1000))
def test_display_bytes_is_the_exact_quotient_in_its_unit(count: int | Fraction) -> None:
    unit, suffix = next((u, s) for u, s in ((GI, "Gi"), (MI, "Mi"), (KI, "Ki")) if count >= u or u == KI)
    assert display_bytes(count) == _reference_fixed(Fraction(count) / unit, 2) + suffix
