from __future__ import annotations

import pytest

from ballast.internal.stats import UsageDisplay, compute_stats, display_usage

MI = 2**20


def test_cpu_usage_is_displayed_in_truncated_millicores() -> None:
    display = display_usage(compute_stats([2, 4, 4, 4, 5, 5, 7, 9]), "cpu", 0, 86_400_000)
    assert display == UsageDisplay(
        samples=8,
        time_span="24h0m0s",
        p50="4m",
        p75="5m",
        p90="9m",
        p95="9m",
        p99="9m",
        mean="5m",
        std_dev="2m",
        cv="0.400",
    )


def test_memory_usage_is_displayed_with_two_decimals() -> None:
    display = display_usage(compute_stats([176 * MI] * 3 + [2 * 1024 * MI]), "memory", 0, 59_000)
    assert (display.p50, display.p99, display.mean, display.std_dev, display.cv, display.time_span) == (
        "176.00Mi",
        "2.00Gi",
        "644.00Mi",
        "810.60Mi",  # √657072 Mi
        "1.259",
        "59s",
    )


def test_whole_cores_print_without_m() -> None:
    display = display_usage(compute_stats([1000, 1000, 3000]), "cpu", 0, 0)
    assert (display.p50, display.p99, display.mean) == ("1", "3", "1666m")


def test_as_status_uses_the_wire_keys() -> None:
    status = display_usage(compute_stats([85]), "cpu", 0, 1000).as_status()
    assert status == {
        "samples": 1,
        "timeSpan": "1s",
        "p50": "85m",
        "p75": "85m",
        "p90": "85m",
        "p95": "85m",
        "p99": "85m",
        "mean": "85m",
        "stdDev": "0",
        "cv": "0.000",
    }


def test_an_empty_resource_name_is_refused() -> None:
    with pytest.raises(ValueError, match="resource name"):
        display_usage(compute_stats([1]), "", 0, 0)
