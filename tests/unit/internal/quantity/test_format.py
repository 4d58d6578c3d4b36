from __future__ import annotations

from decimal import Decimal
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kubernetes.utils import parse_quantity as kubernetes_parse_quantity

from ballast.internal.quantity import (
    INT64_MAX,
    format_bytes,
    format_cpu_millis,
    format_units,
    parse_quantity,
    to_units,
)


def kubernetes_value(text: str) -> Decimal:
    """The official Python client's reading of a quantity (untyped upstream)."""
    return cast(Decimal, kubernetes_parse_quantity(text))  # type: ignore[no-untyped-call]


@pytest.mark.parametrize(
    ("millis", "text"),
    [
        (287, "287m"),
        (1000, "1"),
        (1500, "1500m"),
        (240, "240m"),
        (375, "375m"),
        (2000, "2"),
        (10, "10m"),
        (1, "1m"),
        (0, "0"),
        (-287, "-287m"),
        (12000, "12"),
        (1_000_000, "1k"),  # Go: NewMilliQuantity(1000000, DecimalSI).String()
        (1_500_000, "1500"),
        (10**21, "1E"),
        (10**24, "1e21"),  # no SI suffix beyond exa: the exponent form
    ],
)
def test_format_cpu_millis_is_the_canonical_decimal_form(millis: int, text: str) -> None:
    assert format_cpu_millis(millis) == text


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (201326592, "192Mi"),
        (330, "330"),
        (0, "0"),
        (1023, "1023"),
        (1000, "1k"),  # below 1024 Go prints the decimal form
        (1024, "1Ki"),
        (1536, "1536"),
        (2**30, "1Gi"),
        (3 * 2**29, "1536Mi"),
        (1024000, "1000Ki"),
        (2**60, "1Ei"),
        (2**70, "1024Ei"),  # no suffix beyond Ei
        (INT64_MAX, "9223372036854775807"),
        (-2048, "-2Ki"),
        (-1000, "-1k"),
    ],
)
def test_format_bytes_is_the_canonical_binary_form(count: int, text: str) -> None:
    assert format_bytes(count) == text


@pytest.mark.parametrize(("units", "resource", "text"), [(1500, "cpu", "1500m"), (1536, "memory", "1536")])
def test_format_units_picks_the_form_by_resource(units: int, resource: str, text: str) -> None:
    assert format_units(units, resource) == text


@pytest.mark.parametrize("value", [1.0, "1", True, Decimal(1)])
def test_formatting_takes_only_ints(value: object) -> None:
    with pytest.raises(TypeError, match="must be an int"):
        format_cpu_millis(value)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be an int"):
        format_bytes(value)  # type: ignore[arg-type]


_MILLIS = st.integers(min_value=-(2**62), max_value=2**62)
_BYTES = st.integers(min_value=-INT64_MAX, max_value=INT64_MAX) | st.builds(
    lambda m, p: m * 1024**p, st.integers(-(2**20), 2**20), st.integers(0, 4)
)


@given(_MILLIS)
def test_cpu_round_trip(millis: int) -> None:
    text = format_cpu_millis(millis)
    assert parse_quantity(text) == Decimal(millis) / 1000
    assert to_units(text, "cpu") == millis
    assert kubernetes_value(text) * 1000 == millis


@given(_BYTES)
def test_bytes_round_trip(count: int) -> None:
    text = format_bytes(count)
    assert parse_quantity(text) == count
    assert to_units(text, "memory") == count
    assert kubernetes_value(text) == count


@given(_MILLIS)
def test_canonical_cpu_strings_are_fixed_points(millis: int) -> None:
    text = format_cpu_millis(millis)
    assert format_cpu_millis(to_units(text, "cpu")) == text
