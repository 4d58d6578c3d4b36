from __future__ import annotations

from collections.abc import Mapping

import pytest

from ballast.internal.stats import (
    Readiness,
    Stats,
    compute_stats,
    container_ready,
    evaluate_readiness,
    meets_threshold,
    ready_containers,
)

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS
NOW_MS = 1_800_000_000_000
STEADY = compute_stats([100] * 500)  # cv 0
ANCHOR = compute_stats([2, 4, 4, 4, 5, 5, 7, 9] * 100)  # mean 5, cv exactly 0.4
NOISY = compute_stats([1000, 1] * 300)  # mean 500.5m, cv ≈ 0.998
SPIKY = compute_stats([0] * 99 + [1000] * 1 + [0] * 400)  # mean 2m, cv ≈ 22


def _ready(stats: Stats, readiness: Readiness, *, age_ms: int = DAY_MS, resource: str = "cpu") -> bool:
    return evaluate_readiness(stats, NOW_MS - age_ms, NOW_MS, resource, readiness)


@pytest.mark.parametrize(
    ("stats", "readiness", "ready"),
    [
        (compute_stats([100] * 499), Readiness(), False),
        (STEADY, Readiness(), True),
        (compute_stats([100] * 9), Readiness(min_data_points=10), False),
        (compute_stats([100] * 10), Readiness(min_data_points=10), True),
        (compute_stats([100] * 499), Readiness(min_data_points=0), False),  # ≤ 0 means 500
        (compute_stats([100] * 499), Readiness(min_data_points=None), False),
    ],
)
def test_the_sample_count_gate(stats: Stats, readiness: Readiness, ready: bool) -> None:
    assert _ready(stats, readiness) is ready


@pytest.mark.parametrize(
    ("age_ms", "min_time_span", "ready"),
    [
        (DAY_MS - 1, "24h", False),
        (DAY_MS, "24h", True),
        (59_999, "1m", False),
        (60_000, "1m", True),
        (HOUR_MS, "1h0m0s", True),
        (HOUR_MS, "1.5h", False),
        (DAY_MS - 1, "garbage", False),  # an invalid span means 24h
        (DAY_MS, "garbage", True),
        (DAY_MS - 1, "-1h", False),  # ≤ 0 means 24h
        (DAY_MS - 1, "", False),
        (DAY_MS - 1, None, False),
        (NOW_MS, "24h", True),  # first_seen 0 (unknown) passes
    ],
)
def test_the_time_span_gate_measures_from_first_seen_to_now(
    age_ms: int, min_time_span: str | None, ready: bool
) -> None:
    assert _ready(STEADY, Readiness(min_time_span=min_time_span), age_ms=age_ms) is ready


@pytest.mark.parametrize(
    ("max_cv", "ready"),
    [
        ("0.4", True),  # inclusive, compared exactly
        ("0.39999", False),
        ("0.5", True),
        ("1e-1", False),
        ("0", False),
        (" 0.4 ", True),
        ("-1", True),  # negative means 1.5
        ("abc", True),  # invalid means 1.5
        (None, True),
    ],
)
def test_the_cv_gate_is_cv_at_most_max_cv(max_cv: str | None, ready: bool) -> None:
    settings = Readiness(min_data_points=1, max_cv=max_cv, cv_mean_floor={})
    assert _ready(ANCHOR, settings) is ready


def test_an_invalid_max_cv_falls_back_to_one_and_a_half() -> None:
    settings = Readiness(min_data_points=1, max_cv="nope", cv_mean_floor={})
    assert _ready(compute_stats([3, 0]), settings)  # cv 1.0
    assert not _ready(compute_stats([1, 0, 0, 0, 0, 0]), settings)  # cv ≈ 2.24


@pytest.mark.parametrize(
    ("max_cv", "ready"),
    [
        ("100", True),  # the largest maxCV: cv ≈ 22 passes
        ("100.5", False),  # above 100: 1.5 applies
        ("1e3", False),
        ("22.5000001", False),  # 7 decimal places: 1.5 applies
    ],
)
def test_a_max_cv_outside_0_to_100_with_6_places_means_one_and_a_half(max_cv: str, ready: bool) -> None:
    settings = Readiness(min_data_points=1, max_cv=max_cv, cv_mean_floor={})
    assert _ready(SPIKY, settings) is ready


def test_a_cv_mean_floor_beyond_2_63_units_counts_as_none() -> None:
    beyond = Readiness(min_data_points=1, max_cv="0.5", cv_mean_floor={"cpu": "9300000000000000"})  # > 2**63 − 1 m
    largest = Readiness(min_data_points=1, max_cv="0.5", cv_mean_floor={"cpu": "9223372036854775807m"})
    assert not _ready(SPIKY, beyond)  # no floor: the CV gate applies (cv ≈ 22)
    assert _ready(SPIKY, largest)


@pytest.mark.parametrize(
    ("stats", "resource", "floors", "ready"),
    [
        (SPIKY, "cpu", None, True),  # mean 2m < default 25m: exempt from the CV gate
        (SPIKY, "cpu", {}, False),  # an explicit {} disables every floor
        (SPIKY, "cpu", {"memory": "25Mi"}, False),  # a missing key means the CV gate applies
        (SPIKY, "cpu", {"cpu": "0"}, False),
        (SPIKY, "cpu", {"cpu": "not-a-quantity"}, False),  # ignored
        (SPIKY, "cpu", {"cpu": "2m"}, False),  # strict: mean 2m is not below 2m
        (SPIKY, "cpu", {"cpu": "0.002001"}, True),
        (SPIKY, "memory", None, True),  # 2 bytes < 25Mi
        (compute_stats([0] * 99 + [3000 * 2**20]), "memory", None, False),  # mean 30Mi ≥ 25Mi, cv ≈ 9.9
        (compute_stats([0] * 99 + [3000 * 2**20]), "memory", {"memory": "1Gi"}, True),
        (compute_stats([0] * 499 + [3 * 2**20]), "ephemeral-storage", None, True),
        (NOISY, "cpu", {"cpu": "1"}, True),  # 500.5m < 1 core
    ],
)
def test_cv_mean_floor_exempts_near_idle_series(
    stats: Stats, resource: str, floors: Mapping[str, str] | None, ready: bool
) -> None:
    settings = Readiness(min_data_points=1, max_cv="0.5", cv_mean_floor=floors)
    assert _ready(stats, settings, resource=resource) is ready


def test_the_floor_does_not_exempt_from_count_or_span() -> None:
    assert not _ready(SPIKY, Readiness(min_data_points=501))
    assert not _ready(SPIKY, Readiness(), age_ms=HOUR_MS)


@pytest.mark.parametrize(
    "spec",
    [
        {"minDataPoints": 10, "minTimeSpan": "1m", "maxCV": "2.0", "cvMeanFloor": {}},
        {"min_data_points": 10, "min_time_span": "1m", "max_cv": "2.0", "cv_mean_floor": {}},
    ],
)
def test_readiness_may_be_a_mapping_keyed_on_the_wire_or_in_snake_case(spec: Mapping[str, object]) -> None:
    stats = compute_stats([1, 0] * 5)  # cv 1.0
    assert evaluate_readiness(stats, NOW_MS - 60_000, NOW_MS, "cpu", spec)
    assert Readiness.from_spec(spec) == Readiness(
        min_data_points=10, min_time_span="1m", max_cv="2.0", cv_mean_floor={}
    )


def test_omitted_mapping_keys_take_the_defaults() -> None:
    assert Readiness.from_spec({}) == Readiness()
    assert Readiness() == Readiness(min_data_points=500, min_time_span="24h", max_cv="1.5", cv_mean_floor=None)


def test_an_unknown_readiness_key_is_named() -> None:
    with pytest.raises(ValueError, match="unknown readiness setting 'minPoints'"):
        Readiness.from_spec({"minPoints": 3})


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"min_data_points": "500"}, "minDataPoints must be an int"),
        ({"min_data_points": True}, "minDataPoints must be an int"),
        ({"max_cv": 1.5}, "max_cv must be a string"),
        ({"cv_mean_floor": ["cpu"]}, "cvMeanFloor must be a mapping"),
        ({"cv_mean_floor": {"cpu": 25}}, "cvMeanFloor entries must be strings"),
    ],
)
def test_a_setting_of_the_wrong_type_is_named(fields: dict[str, object], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        Readiness.from_spec(fields)


def test_bad_arguments_are_named() -> None:
    with pytest.raises(ValueError, match="resource name"):
        evaluate_readiness(STEADY, 0, NOW_MS, "", Readiness())
    with pytest.raises(TypeError, match="now_ms must be an int"):
        evaluate_readiness(STEADY, 0, 1.5, "cpu", Readiness())  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("containers", "ready", "meets"),
    [
        ({}, frozenset(), False),
        ({"app": {"cpu": True, "memory": True}}, {"app"}, True),
        ({"app": {"cpu": True, "memory": False}}, frozenset(), False),
        # a ready container is applied while its sparse sidecar accrues (docs/design.md, difference 5)
        ({"app": {"cpu": True, "memory": True}, "sidecar": {"cpu": False}}, {"app"}, False),
        ({"app": {"cpu": True}, "sidecar": {"cpu": True}}, {"app", "sidecar"}, True),
        ({"app": {}}, frozenset(), False),  # nothing judged is not ready
    ],
)
def test_readiness_is_per_container_and_meets_threshold_summarises(
    containers: dict[str, dict[str, bool]], ready: set[str], meets: bool
) -> None:
    assert ready_containers(containers) == ready
    assert meets_threshold(containers) is meets
    assert all(container_ready(containers[name]) for name in ready)
