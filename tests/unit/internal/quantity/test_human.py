"""Byte counts as views show them: always a binary suffix, exact when whole, two decimals at most otherwise."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.internal.quantity import format_bytes, human_bytes, human_quantity, parse_quantity


@pytest.mark.parametrize(
    ("count", "text"),
    [
        (201326592, "192Mi"),
        (258534604, "246.56Mi"),  # canonically `258534604`: not a whole number of KiB
        (202688512, "193.3Mi"),  # metrics-server's `197938Ki`
        (1610612736, "1.5Gi"),
        (1024, "1Ki"),
        (1536, "1.5Ki"),
        (512, "512"),
        (0, "0"),
        ((1 << 30) - 1, "1Gi"),  # rounds up into the next unit
        (-(1 << 21), "-2Mi"),
    ],
)
def test_byte_counts_read_with_a_binary_suffix(count: int, text: str) -> None:
    assert human_bytes(count) == text


def test_quantity_strings_of_any_form_come_out_alike() -> None:
    shown = {human_quantity(q, "memory") for q in ("258534604", "252475.19921875Ki", "258534604000m")}
    assert shown == {"246.56Mi"}
    assert [human_quantity(q, "cpu") for q in ("1500m", "1", "0.25")] == ["1500m", "1", "250m"]
    assert human_quantity("197938Ki", "ephemeral-storage") == "193.3Mi"
    assert human_quantity("not-a-quantity", "memory") == "not-a-quantity"


def test_a_non_int_is_refused() -> None:
    with pytest.raises(TypeError, match="must be an int"):
        human_bytes(1.5)  # type: ignore[arg-type]


@given(st.integers(min_value=1024, max_value=2**62))
def test_the_shown_value_is_within_half_a_hundredth_of_its_unit(count: int) -> None:
    shown = human_bytes(count)
    value = parse_quantity(shown)
    unit = 1 << (10 * ("KMGTPE".index(shown[-2]) + 1))
    assert abs(value - count) <= unit / 200
    if count % 1024 == 0 and format_bytes(count)[-1] == "i" and shown == format_bytes(count):
        assert value == count  # exact whole units are printed as the canonical form
