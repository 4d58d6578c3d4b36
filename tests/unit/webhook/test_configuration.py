"""`/validate-ballast-configuration`: BallastConfigs and MetricsSources that the lanes could not use are refused at
write time, each problem named by its field path, in the shape of a Kubernetes validation error."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.runtime import AdmissionResponse
from ballast.webhook.configuration import invalid_message, validate_configuration_request

from .support import JSON, review

GROUP = "ballast.tightlinesoftware.com"


def source(name: str = "kubernetes-metrics", **spec: Any) -> JSON:
    return {"apiVersion": f"{GROUP}/v1", "kind": "MetricsSource", "metadata": {"name": name}, "spec": spec}


def config(**spec: Any) -> JSON:
    return {"apiVersion": f"{GROUP}/v1", "kind": "BallastConfig", "metadata": {"name": "ballast"}, "spec": spec}


def admit(obj: JSON | None, *, kind: str, operation: str = "CREATE", old: JSON | None = None) -> AdmissionResponse:
    return validate_configuration_request(review(obj, operation=operation, old=old, kind=kind, namespace=""))


@pytest.mark.parametrize(
    ("poll", "problem"),
    [
        ("banana", 'invalid duration "banana": must be a Go duration such as "60s", "15m" or "1h30m"'),
        ("-5s", 'invalid duration "-5s": must be longer than 0, such as "60s"'),
    ],
)
def test_a_source_polled_at_a_bad_interval_is_refused_naming_the_field(poll: str, problem: str) -> None:
    response = admit(source(type="kubernetesMetrics", config={"pollInterval": poll}), kind="MetricsSource")
    assert (response.allowed, response.code, response.reason) == (False, 422, "Invalid")
    assert response.message == (
        f'MetricsSource.{GROUP} "kubernetes-metrics" is invalid: spec.config.pollInterval: {problem}'
    )


def test_a_source_of_an_unknown_type_is_refused_naming_the_field() -> None:
    response = admit(source(type="bogus"), kind="MetricsSource")
    assert (response.allowed, response.code) == (False, 422)
    assert response.message == (
        f'MetricsSource.{GROUP} "kubernetes-metrics" is invalid: '
        'spec.type: unknown type "bogus": must be one of kubernetesMetrics, kubeletSummary'
    )


def test_a_valid_source_and_a_valid_config_are_allowed() -> None:
    assert admit(source(type="kubeletSummary", config={"pollInterval": "5s"}), kind="MetricsSource").allowed
    body = config(identityLabels=["app.kubernetes.io/name", "app.kubernetes.io/component"], orphanTTL="2s")
    assert admit(body, kind="BallastConfig").allowed


def test_a_config_with_a_bad_key_a_repeated_key_and_bad_durations_lists_every_problem() -> None:
    body = config(identityLabels=["not a label!!", "app", "app"], orphanTTL="banana", retentionWindow="banana")
    response = admit(body, kind="BallastConfig")
    assert (response.allowed, response.code, response.reason) == (False, 422, "Invalid")
    assert response.message.startswith(f'BallastConfig.{GROUP} "ballast" is invalid: [spec.identityLabels[0]: ')
    for fragment in (
        'spec.identityLabels[0]: invalid label key "not a label!!"',
        'spec.identityLabels[2]: label key "app" appears more than once (first at spec.identityLabels[1])',
        'spec.orphanTTL: invalid duration "banana"',
        'spec.retentionWindow: invalid duration "banana"',
    ):
        assert fragment in response.message


def test_an_update_that_breaks_the_spec_is_refused_and_one_that_keeps_it_is_allowed() -> None:
    stored = source(type="kubernetesMetrics", config={"pollInterval": "banana"})
    broken = admit(stored, kind="MetricsSource", operation="UPDATE", old=source(type="kubernetesMetrics"))
    assert (broken.allowed, broken.code) == (False, 422)
    edited = {**stored, "metadata": {**stored["metadata"], "labels": {"owner": "sre"}}}
    kept = admit(edited, kind="MetricsSource", operation="UPDATE", old=stored)
    assert (kept.allowed, kept.message) == (True, "spec unchanged")


def test_a_spec_that_does_not_fit_the_schema_is_refused_naming_the_field() -> None:
    response = admit(config(identityLabels="app"), kind="BallastConfig")
    assert (response.allowed, response.code) == (False, 422)
    assert "spec.identityLabels: Input should be a valid list" in response.message


@pytest.mark.parametrize(
    ("obj", "kind", "message"),
    [
        (None, "MetricsSource", "the request has no object"),
        (source(), "ClusterResourcePolicy", "expected a BallastConfig or MetricsSource, got ClusterResourcePolicy"),
        ({"metadata": {"name": "x"}, "spec": ["a"]}, "BallastConfig", "spec must be an object, got list"),
    ],
)
def test_a_request_that_is_not_one_of_these_kinds_is_errored_400(obj: JSON | None, kind: str, message: str) -> None:
    response = admit(obj, kind=kind)
    assert (response.allowed, response.code, response.message) == (False, 400, message)


def test_the_message_has_kubernetes_invalid_shape() -> None:
    assert invalid_message("MetricsSource", "m", ["x: y"]) == f'MetricsSource.{GROUP} "m" is invalid: x: y'
    assert (
        invalid_message("MetricsSource", "m", ["x: y", "z: w"]) == f'MetricsSource.{GROUP} "m" is invalid: [x: y, z: w]'
    )
