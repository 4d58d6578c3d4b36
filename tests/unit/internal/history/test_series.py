"""Store values: validation with clear messages, and how a cycle groups its samples."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from ballast.internal.history import Cycle, Sample, SeriesKey

HASH = "8746f67fe9f3d343"
CPU = SeriesKey(HASH, "app", "cpu")
MEMORY = SeriesKey(HASH, "app", "memory")


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        (("8746f67fe9f3d34", "app", "cpu"), "measurement hash '8746f67fe9f3d34'"),
        ((HASH, "", "cpu"), "container ''"),
        ((HASH, "a:b", "cpu"), "container 'a:b'"),
        ((HASH, "app", "cpu time"), "resource 'cpu time'"),
        ((HASH, "app", ""), "resource ''"),
    ],
)
def test_series_key_validation(parts: tuple[str, str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SeriesKey(*parts)


@pytest.mark.parametrize("value", [-1, 1.5, True, "3"])
def test_sample_values_are_non_negative_ints(value: Any) -> None:
    with pytest.raises(ValueError, match="must be a non-negative int"):
        Sample(CPU, value)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"cycle_id": ""}, "cycle id ''"),
        ({"cycle_id": "a b"}, "cycle id 'a b'"),
        ({"at_ms": -1}, "at_ms -1"),
        ({"at_ms": 1.5}, "at_ms 1.5"),
        ({"reservoir_size": 0}, "reservoir_size 0"),
        ({"retention": timedelta(0)}, "retention 0:00:00"),
        ({"retention": timedelta(seconds=-5)}, "retention -1 day"),
    ],
)
def test_cycle_validation(options: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {"cycle_id": "c1", "at_ms": 1_000} | options
    with pytest.raises(ValueError, match=message):
        Cycle(**arguments)


def test_cycle_groups_samples_per_series_in_order() -> None:
    cycle = Cycle("c1", 1_732_900_000_999, [Sample(MEMORY, 5), Sample(CPU, 1), Sample(MEMORY, 6), Sample(CPU, 2)])
    assert cycle.by_series() == {MEMORY: [5, 6], CPU: [1, 2]}
    assert list(cycle.by_series()) == [MEMORY, CPU]
    assert cycle.at_s == 1_732_900_000
    assert isinstance(cycle.samples, tuple)


@pytest.mark.parametrize(
    ("retention", "cutoff"),
    [
        (None, None),
        (timedelta(days=7), 1_732_900_000_000 - 604_800_000),
        (timedelta(milliseconds=1), 1_732_899_999_999),
    ],
)
def test_cycle_cutoff(retention: timedelta | None, cutoff: int | None) -> None:
    assert Cycle("c1", 1_732_900_000_000, retention=retention).cutoff_ms == cutoff
