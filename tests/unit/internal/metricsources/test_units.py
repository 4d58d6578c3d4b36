"""Usage quantities in integer units: the fast path gives exactly what the exact parser gives."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.internal.metricsources import usage_units
from ballast.internal.quantity import QuantityError, to_units

SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]


@pytest.mark.parametrize(
    ("quantity", "resource", "units"),
    [
        ("2290178n", "cpu", 3),  # nanocores round up to the next millicore, as Go's MilliValue()
        ("1000000n", "cpu", 1),
        ("0", "cpu", 0),
        ("250m", "cpu", 250),
        ("2", "cpu", 2000),
        ("12345Ki", "memory", 12345 * 1024),
        ("1500m", "memory", 2),  # a fractional byte rounds up
        ("1.5Gi", "memory", 1536 << 20),  # not a fast-path form: the exact parser
        ("1e3", "ephemeral-storage", 1000),
    ],
)
def test_usage_units(quantity: str, resource: str, units: int) -> None:
    assert usage_units(quantity, resource) == units


@given(
    st.integers(min_value=0, max_value=10**20),
    st.sampled_from(SUFFIXES),
    st.sampled_from(["cpu", "memory", "ephemeral-storage"]),
)
def test_the_fast_path_agrees_with_the_exact_parser(mantissa: int, suffix: str, resource: str) -> None:
    quantity = f"{mantissa}{suffix}"
    try:
        expected = to_units(quantity, resource)
    except QuantityError:
        with pytest.raises(QuantityError):
            usage_units(quantity, resource)
        return
    assert usage_units(quantity, resource) == expected


@pytest.mark.parametrize("quantity", ["", "abc", "12q", "-"])
def test_garbage_is_refused(quantity: str) -> None:
    with pytest.raises(QuantityError):
        usage_units(quantity, "cpu")
