"""The synthetic usage model: a day-shaped curve, a stable per-pod offset, noise per metrics window."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.internal.dev.usage import (
    MEBIBYTE,
    MIN_FACTOR,
    POD_SPREAD,
    SyntheticUsage,
    Timeline,
    Usage,
    UsageProfile,
    diurnal_factor,
    pod_offset,
    unit_noise,
    usage_factor,
)
from ballast.internal.metricsources.units import usage_units

CHECKOUT = UsageProfile(cpu_millicores=230, memory_bytes=180 * MEBIBYTE)


@pytest.mark.parametrize(
    ("hour", "expected"),
    [(15.0, 1.35), (3.0, 0.65), (9.0, 1.0), (21.0, 1.0)],
)
def test_the_day_peaks_at_three_in_the_afternoon(hour: float, expected: float) -> None:
    assert diurnal_factor(hour, 0.35) == pytest.approx(expected)


def test_the_timeline_compresses_a_day_and_holds_one_value_per_window() -> None:
    timeline = Timeline(day_seconds=720, start_hour=9, window_seconds=15)
    assert timeline.window(0) == 0
    assert timeline.window(14.9) == 0
    assert timeline.window(15) == 1
    assert timeline.hour(0) == 9
    assert timeline.hour(14.9) == 9  # the hour of the window's start
    assert timeline.hour(180) == 15  # a quarter of the 12-minute day: six hours later
    assert timeline.hour(720) == 9  # a whole day later
    assert timeline.window(-3) == 0


def test_noise_and_offsets_are_deterministic_and_spread() -> None:
    assert unit_noise(7, "a") == unit_noise(7, "a")
    assert unit_noise(7, "a") != unit_noise(8, "a")
    deviates = [unit_noise(7, f"k{i}") for i in range(2000)]
    assert abs(statistics.mean(deviates)) < 0.1
    assert statistics.pstdev(deviates) == pytest.approx(1.0, abs=0.1)
    offsets = [pod_offset(7, f"ns/pod-{i}") for i in range(500)]
    assert all(1 - POD_SPREAD <= o <= 1 + POD_SPREAD for o in offsets)
    assert len(set(offsets)) == 500


def test_usage_never_falls_below_the_floor() -> None:
    assert usage_factor(0.5, 0.1, hour=3.0, offset=1.0, deviate=-50.0) == MIN_FACTOR
    assert usage_factor(0.0, 0.1, hour=3.0, offset=1.0, deviate=1.0) == pytest.approx(1.1)


def test_the_same_window_gives_the_same_usage_and_the_next_one_moves() -> None:
    usage = SyntheticUsage(seed=7)
    first = usage.usage(CHECKOUT, "dev-alice/checkout-0", "api", 1.0)
    assert usage.usage(CHECKOUT, "dev-alice/checkout-0", "api", 14.0) == first
    assert usage.usage(CHECKOUT, "dev-alice/checkout-0", "api", 16.0) != first
    assert usage.usage(CHECKOUT, "dev-bob/checkout-0", "api", 1.0) != first
    assert SyntheticUsage(seed=7).usage(CHECKOUT, "dev-alice/checkout-0", "api", 1.0) == first


def test_a_day_of_usage_averages_the_daily_mean() -> None:
    usage = SyntheticUsage(seed=3, timeline=Timeline(day_seconds=720))
    pods = [f"ns-{i}/checkout-0" for i in range(8)]
    cpu = [usage.usage(CHECKOUT, pod, "api", t).cpu_nanocores / 1e6 for pod in pods for t in range(0, 720, 15)]
    memory = [usage.usage(CHECKOUT, pod, "api", t).memory_bytes / MEBIBYTE for pod in pods for t in range(0, 720, 15)]
    assert statistics.mean(cpu) == pytest.approx(230, rel=0.05)
    assert statistics.mean(memory) == pytest.approx(180, rel=0.05)
    # The afternoon is busier than the night, by about the swing.
    day = [usage.usage(CHECKOUT, "ns/p", "api", t).cpu_nanocores for t in range(0, 720, 15)]
    assert max(day) / min(day) > 1.5
    cv = statistics.pstdev(cpu) / statistics.mean(cpu)
    assert cv < 2.0  # the local-testing preset's maxCV: profiles can become Sufficient


def test_quantities_are_what_metrics_server_writes_and_parse_back() -> None:
    usage = Usage(cpu_nanocores=231_456_789, memory_bytes=180 * MEBIBYTE + 700)
    assert usage.quantities() == {"cpu": "231456789n", "memory": "184320Ki"}
    assert usage_units(usage.quantities()["cpu"], "cpu") == 232  # rounded up, as Go's MilliValue()
    assert usage_units(usage.quantities()["memory"], "memory") == 180 * MEBIBYTE


@given(
    elapsed=st.floats(min_value=0, max_value=10 * 86400, allow_nan=False),
    seed=st.integers(min_value=0, max_value=2**32),
)
def test_usage_is_positive_and_bounded(elapsed: float, seed: int) -> None:
    result = SyntheticUsage(seed=seed).usage(CHECKOUT, "ns/pod", "api", elapsed)
    assert result.cpu_nanocores >= math.floor(230 * 1e6 * MIN_FACTOR)
    assert result.memory_bytes >= math.floor(180 * MEBIBYTE * MIN_FACTOR)
    assert result.cpu_nanocores < 230 * 1e6 * 3
