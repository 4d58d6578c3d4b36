from __future__ import annotations

from decimal import ROUND_UP, Decimal
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kubernetes.utils import parse_quantity as kubernetes_parse_quantity

from ballast.internal.quantity import INT64_MAX, QuantityError, parse_quantity, to_units

NANO = Decimal("1e-9")


def kubernetes_value(text: str) -> Decimal:
    """The official Python client's reading of a quantity (untyped upstream)."""
    return cast(Decimal, kubernetes_parse_quantity(text))  # type: ignore[no-untyped-call]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("287m", Decimal("0.287")),
        ("1", Decimal(1)),
        ("1500m", Decimal("1.5")),
        ("0", Decimal(0)),
        ("192Mi", Decimal(192 * 2**20)),
        ("330", Decimal(330)),
        ("1Ki", Decimal(1024)),
        ("1Gi", Decimal(2**30)),
        ("1Ei", Decimal(2**60)),
        ("1k", Decimal(1000)),
        ("1M", Decimal(10**6)),
        ("1E", Decimal(10**18)),
        ("1e3", Decimal(1000)),
        ("1E3", Decimal(1000)),
        ("1e+3", Decimal(1000)),
        ("25e-1", Decimal("2.5")),
        ("100n", Decimal("1e-7")),
        ("5u", Decimal("5e-6")),
        ("1.5Gi", Decimal(3 * 2**29)),
        ("0.5", Decimal("0.5")),
        (".5", Decimal("0.5")),
        ("1.", Decimal(1)),
        ("+2", Decimal(2)),
        ("-1Ki", Decimal(-1024)),
        ("007", Decimal(7)),
        ("0.1n", NANO),  # apimachinery rounds anything finer than 1n up to 1n
        ("-0.5n", -NANO),
        ("1e-20", NANO),
        ("9223372036854775807", Decimal(INT64_MAX)),
    ],
)
def test_parse_quantity_returns_the_exact_value_in_base_units(text: str, expected: Decimal) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        " 1",
        "1 ",
        "K",
        "1K",
        "1ki",
        "1KI",
        "1Mb",
        "1e",
        "1e3i",
        "Ki",
        ".",
        "-",
        "m",
        "1.2.3",
        "1_000",
        "0x10",
        "1,5",
    ],
)
def test_a_string_that_is_not_a_quantity_is_refused_by_name(text: str) -> None:
    with pytest.raises(QuantityError, match=r"is not a Kubernetes quantity"):
        parse_quantity(text)


@pytest.mark.parametrize("text", ["8Ei", "10E", "9223372036854775808", "1e2147483647"])
def test_a_quantity_beyond_int64_base_units_is_refused(text: str) -> None:
    with pytest.raises(QuantityError, match="out of range"):
        parse_quantity(text)


def test_an_exponent_beyond_int32_is_refused() -> None:
    with pytest.raises(QuantityError, match="exponent 2147483648 is out of range"):
        parse_quantity("1e2147483648")


@pytest.mark.parametrize("value", [1, 1.5, None, b"1"])
def test_parse_quantity_takes_only_strings(value: object) -> None:
    with pytest.raises(TypeError, match="a quantity must be a str"):
        parse_quantity(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "text",
    ["287m", "1", "1500m", "192Mi", "330", "1e3", "1E", "100n", "5u", "1.5Gi", ".5", "1.", "+2", "-1Ki", "2Ei"],
)
def test_parse_quantity_agrees_with_the_kubernetes_client(text: str) -> None:
    assert parse_quantity(text) == kubernetes_value(text)


_SUFFIXES = ["", "n", "u", "m", "k", "M", "G", "Ki", "Mi", "Gi", "Ti", "e3", "E-2", "e+1"]


@given(
    sign=st.sampled_from(["", "+", "-"]),
    whole=st.integers(min_value=0, max_value=10**6),
    fraction=st.none() | st.text(alphabet="0123456789", max_size=6),
    suffix=st.sampled_from(_SUFFIXES),
)
def test_generated_quantities_match_the_kubernetes_client_up_to_nano_rounding(
    sign: str, whole: int, fraction: str | None, suffix: str
) -> None:
    text = f"{sign}{whole}" + ("" if fraction is None else f".{fraction}") + suffix
    theirs = kubernetes_value(text)
    # The Python client keeps sub-nano digits; apimachinery (and we) round them up, away from zero.
    assert parse_quantity(text) == theirs.quantize(NANO, rounding=ROUND_UP)


@pytest.mark.parametrize(
    ("quantity", "resource", "units"),
    [
        ("287m", "cpu", 287),
        ("1", "cpu", 1000),
        ("1.5", "cpu", 1500),
        ("0.5m", "cpu", 1),  # Go's MilliValue rounds up
        ("100n", "cpu", 1),
        ("-0.5m", "cpu", -1),  # away from zero
        ("192Mi", "memory", 201326592),
        ("1.5", "memory", 2),
        ("2Mi", "ephemeral-storage", 2097152),
        ("1k", "nvidia.com/gpu", 1000),
        (287, "cpu", 287),  # ints are units already
        (1024, "memory", 1024),
    ],
)
def test_to_units_gives_millicores_for_cpu_and_bytes_otherwise(quantity: str | int, resource: str, units: int) -> None:
    assert to_units(quantity, resource) == units


def test_to_units_refuses_cpu_beyond_int64_millicores() -> None:
    with pytest.raises(QuantityError, match=r"cpu quantity '9223372036854776' is out of range .* millicores"):
        to_units("9223372036854776", "cpu")


@pytest.mark.parametrize(("quantity", "error"), [(True, TypeError), (1.5, TypeError), ("1 Gi", QuantityError)])
def test_to_units_names_a_bad_value(quantity: object, error: type[Exception]) -> None:
    with pytest.raises(error, match=r"memory quantity|not a Kubernetes quantity"):
        to_units(quantity, "memory")  # type: ignore[arg-type]


def test_to_units_needs_a_resource_name() -> None:
    with pytest.raises(ValueError, match="resource name must not be empty"):
        to_units("1", "")
