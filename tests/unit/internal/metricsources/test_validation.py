"""`validate_metrics_source`: what makes a MetricsSource unusable, each problem named by its field path (the issue's
`pollInterval: banana`, `-5s` and `type: bogus`)."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.api.ballast.v1 import MetricsSourceSpec
from ballast.api.ballast.v1.metricssource import SOURCE_TYPE_NAMES
from ballast.internal.metricsources import SOURCE_TYPES, validate_metrics_source


def spec(type_: str = "kubernetesMetrics", poll: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"type": type_}
    if poll is not None:
        body["config"] = {"pollInterval": poll}
    return body


@pytest.mark.parametrize("poll", [None, "5s", "60s", "1m30s", "1.5h", "+15s", "1s", "1000ms"])
@pytest.mark.parametrize("type_", ["kubernetesMetrics", "kubeletSummary"])
def test_a_known_type_polled_at_a_positive_duration_is_valid(type_: str, poll: str | None) -> None:
    assert validate_metrics_source(spec(type_, poll)) == []
    assert validate_metrics_source(MetricsSourceSpec.model_validate(spec(type_, poll))) == []


@pytest.mark.parametrize(
    ("poll", "problem"),
    [
        ("banana", 'invalid duration "banana": must be a Go duration such as "60s", "15m" or "1h30m"'),
        ("60", 'invalid duration "60": must be a Go duration such as "60s", "15m" or "1h30m"'),
        ("", 'invalid duration "": must be a Go duration such as "60s", "15m" or "1h30m"'),
        ("-5s", 'invalid duration "-5s": must be longer than 0, such as "60s"'),
        ("0s", 'invalid duration "0s": must be longer than 0, such as "60s"'),
        ("0", 'invalid duration "0": must be longer than 0, such as "60s"'),
        ("0.1ns", 'invalid duration "0.1ns": must be longer than 0, such as "60s"'),
        ("3000000h", 'invalid duration "3000000h": out of range (at most 2562047h)'),
    ],
)
def test_a_poll_interval_that_is_not_a_positive_duration_is_named(poll: str, problem: str) -> None:
    assert validate_metrics_source(spec(poll=poll)) == [f"spec.config.pollInterval: {problem}"]


def test_an_unknown_type_is_named_with_the_types_that_exist() -> None:
    assert validate_metrics_source(spec("bogus", "banana")) == [
        'spec.type: unknown type "bogus": must be one of kubernetesMetrics, kubeletSummary',
        'spec.config.pollInterval: invalid duration "banana": must be a Go duration such as "60s", "15m" or "1h30m"',
    ]
    assert validate_metrics_source(spec("custom"), types=["custom"]) == []
    assert validate_metrics_source(spec("kubernetesMetrics"), types=["custom"]) == [
        'spec.type: unknown type "kubernetesMetrics": must be one of custom'
    ]


def test_json_that_does_not_fit_the_model_gives_the_models_problems() -> None:
    assert validate_metrics_source({"config": {"reservoirSize": "many"}}) == [
        "spec.type: Field required",
        "spec.config.reservoirSize: Input should be a valid integer",
    ]
    with pytest.raises(TypeError, match="expected a MetricsSourceSpec or a mapping, got list"):
        validate_metrics_source([])  # type: ignore[arg-type]


def test_the_crds_types_are_the_plugins_that_exist() -> None:
    assert list(SOURCE_TYPES) == list(SOURCE_TYPE_NAMES)
