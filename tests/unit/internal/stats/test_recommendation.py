from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.internal.stats import AGGREGATIONS, aggregate, compute_stats, parse_headroom, recommend, recommend_units

MI = 2**20


@pytest.mark.parametrize(
    ("values", "aggregation", "headroom", "resource", "expected"),
    [
        ([230] * 10, "avg", "1.25", "cpu", "287m"),  # 287.5 truncates (the Go operator README's 288m is wrong)
        ([200], "avg", "1.15", "cpu", "230m"),  # exact; Go's float gives 229m
        ([192], "avg", "1.25", "cpu", "240m"),
        ([300], "avg", "1.25", "cpu", "375m"),
        ([800], "avg", "1.25", "cpu", "1"),
        ([1200], "avg", "1.25", "cpu", "1500m"),
        ([1, 2], "avg", None, "cpu", "1m"),  # mean 1.5m truncates
        ([160 * MI], "p99", "1.2", "memory", "192Mi"),
        ([330], "max", "1.0", "memory", "330"),
        ([275], "p50", "1.2", "ephemeral-storage", "330"),
        ([100 * MI, 200 * MI], "p50", "", "memory", "100Mi"),
        (list(range(1, 21)), "p75", "1", "cpu", "15m"),
        (list(range(1, 21)), "p90", "2", "cpu", "36m"),
        (list(range(1, 21)), "p95", "1", "cpu", "19m"),
        (list(range(1, 21)), "max", "1", "cpu", "20m"),
        ([], "avg", "1.25", "cpu", "0"),
    ],
)
def test_recommend_is_the_aggregate_times_headroom_truncated(
    values: list[int], aggregation: str, headroom: str | None, resource: str, expected: str
) -> None:
    assert recommend(compute_stats(values), aggregation, headroom, resource) == expected


@pytest.mark.parametrize(
    ("headroom", "factor"),
    [
        ("1.25", Decimal("1.25")),
        (" 1.2 ", Decimal("1.2")),
        ("2", Decimal(2)),
        ("1e0", Decimal(1)),
        (Decimal("1.1"), Decimal("1.1")),
        (3, Decimal(3)),
        (None, Decimal(1)),
        ("", Decimal(1)),
        ("abc", Decimal(1)),
        ("0", Decimal(1)),
        ("-1.2", Decimal(1)),
        ("NaN", Decimal(1)),
        ("inf", Decimal(1)),
        (Decimal("Infinity"), Decimal(1)),
        (Decimal(0), Decimal(1)),
    ],
)
def test_headroom_falls_back_to_one(headroom: str | Decimal | int | None, factor: Decimal) -> None:
    assert parse_headroom(headroom) == factor


@pytest.mark.parametrize(
    ("headroom", "factor"),
    [
        ("1e-400", Decimal(1)),  # 400 decimal places: gave requests.memory "0" (issue 13)
        ("1e26", Decimal(1)),  # above 100: put a 400-digit CPU in the view (issue 13)
        ("1e400", Decimal(1)),
        ("100.000001", Decimal(1)),
        ("1.0000001", Decimal(1)),  # 7 decimal places
        ("100", Decimal(100)),
        ("0.000001", Decimal("0.000001")),
        (Decimal(101), Decimal(1)),
        (101, Decimal(1)),
    ],
)
def test_a_headroom_outside_its_range_counts_as_one(headroom: str | Decimal | int, factor: Decimal) -> None:
    assert parse_headroom(headroom) == factor


def test_an_out_of_range_headroom_gives_the_statistic_itself() -> None:
    assert recommend(compute_stats([230 * MI]), "avg", "1e-400", "memory") == "230Mi"  # not "0"
    assert recommend(compute_stats([230]), "avg", "1e26", "cpu") == "230m"  # not a 29-digit CPU


def test_headroom_refuses_a_bool() -> None:
    with pytest.raises(TypeError, match="headroom must be"):
        parse_headroom(True)


def test_an_unknown_aggregation_is_a_value_error_naming_it() -> None:
    with pytest.raises(ValueError, match=r"unknown aggregation 'p42' \(expected one of p50, p75, p90, p95, p99"):
        recommend(compute_stats([1]), "p42", "1", "cpu")


def test_every_aggregation_reads_its_statistic() -> None:
    stats = compute_stats(range(1, 101))
    assert {name: aggregate(stats, name) for name in AGGREGATIONS} == {
        "p50": 50,
        "p75": 75,
        "p90": 90,
        "p95": 95,
        "p99": 99,
        "max": 100,
        "avg": Fraction(101, 2),
    }


@given(
    st.lists(st.integers(0, 10**12), min_size=1, max_size=50),
    st.sampled_from(AGGREGATIONS),
    st.decimals(min_value=Decimal("0.01"), max_value=10, places=3),
)
def test_recommend_units_is_the_exact_truncated_product(values: list[int], aggregation: str, headroom: Decimal) -> None:
    stats = compute_stats(values)
    assert recommend_units(stats, aggregation, headroom) == math.floor(
        Fraction(aggregate(stats, aggregation)) * Fraction(headroom)
    )
    assert recommend_units(stats, aggregation, str(headroom)) == recommend_units(stats, aggregation, headroom)
