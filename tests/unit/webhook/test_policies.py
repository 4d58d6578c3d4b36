"""`/validate-ballast-policies`: policies with a bad regex, selector or quantity are refused at write time, each
problem named by its field path."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.runtime import AdmissionResponse
from ballast.webhook.policies import invalid_policy_message, validate_policy_request

from .support import JSON, review

BAD_REGEX = 'spec.selector.namespaces.include[0]: invalid regex "/(/": missing closing ): `(`'


def policy(kind: str = "ClusterResourcePolicy", name: str = "fleet", **spec: Any) -> JSON:
    metadata: JSON = {"name": name}
    if kind == "ResourcePolicy":
        metadata["namespace"] = "shop"
    return {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": kind, "metadata": metadata, "spec": spec}


def admit(
    obj: JSON | None, *, operation: str = "CREATE", old: JSON | None = None, kind: str = "ClusterResourcePolicy"
) -> AdmissionResponse:
    return validate_policy_request(review(obj, operation=operation, old=old, kind=kind, namespace=""))


@pytest.mark.parametrize("kind", ["ClusterResourcePolicy", "ResourcePolicy"])
def test_a_valid_policy_is_allowed(kind: str) -> None:
    metric = {"resource": "cpu", "field": "request", "source": "k", "aggregation": "p95", "headroom": "1.2"}
    body = policy(kind, priority=10, selector={"namespaces": {"include": ["/team-.*/"]}}, metrics=[metric])
    response = admit(body, kind=kind)
    assert (response.allowed, response.code) == (True, 200)


@pytest.mark.parametrize("kind", ["ClusterResourcePolicy", "ResourcePolicy"])
def test_a_bad_regex_is_refused_naming_the_field(kind: str) -> None:
    response = admit(policy(kind, selector={"namespaces": {"include": ["/(/"]}}), kind=kind)
    assert (response.allowed, response.code, response.reason) == (False, 422, "Invalid")
    assert response.message == f'{kind}.ballast.tightlinesoftware.com "fleet" is invalid: {BAD_REGEX}'


def test_every_problem_is_listed() -> None:
    body = policy(
        selector={"labelSelector": {"matchExpressions": [{"key": "tier", "operator": "Bogus"}]}},
        readiness={"cvMeanFloor": {"cpu": "lots"}, "minTimeSpan": "forever"},
        metrics=[{"resource": "cpu", "field": "request", "source": "k", "aggregation": "avg", "headroom": "-1"}],
    )
    response = admit(body)
    assert not response.allowed
    assert response.message.startswith('ClusterResourcePolicy.ballast.tightlinesoftware.com "fleet" is invalid: [')
    for path in (
        "spec.selector.labelSelector.matchExpressions[0]: operator 'Bogus'",
        'spec.readiness.cvMeanFloor[cpu]: invalid quantity "lots"',
        'spec.readiness.minTimeSpan: invalid duration "forever"',
        'spec.metrics[0].headroom: invalid headroom "-1"',
    ):
        assert path in response.message


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ({"metrics": [{"resource": "memory", "source": "k", "headroom": "1e-400"}]},
         'spec.metrics[0].headroom: invalid headroom "1e-400": must be a decimal number 0 < headroom ≤ 100'),
        ({"metrics": [{"resource": "cpu", "source": "k", "headroom": "1e26"}]},
         'spec.metrics[0].headroom: invalid headroom "1e26": must be a decimal number 0 < headroom ≤ 100'),
        ({"readiness": {"maxCV": "100.5"}},
         'spec.readiness.maxCV: invalid maxCV "100.5": must be a decimal number 0 ≤ maxCV ≤ 100'),
        ({"behaviors": {"thresholds": {"default": "100.5%"}}},
         'spec.behaviors.thresholds.default: invalid percentage "100.5%": must be a number 0 < p ≤ 100'),
        ({"behaviors": {"resize": {"maxChangePerCycle": "150%"}}},
         'spec.behaviors.resize.maxChangePerCycle: invalid percentage "150%": must be a number 0 < p ≤ 100'),
        ({"readiness": {"cvMeanFloor": {"memory": "8Ei"}}},
         'spec.readiness.cvMeanFloor[memory]: invalid quantity "8Ei": must be at most 9223372036854775807 bytes'),
    ],
)  # fmt: skip
def test_a_decimal_outside_its_range_is_refused_naming_the_field(spec: JSON, problem: str) -> None:
    response = admit(policy(**spec))
    assert (response.allowed, response.code, response.reason) == (False, 422, "Invalid")
    assert response.message.startswith(
        f'ClusterResourcePolicy.ballast.tightlinesoftware.com "fleet" is invalid: {problem}'
    )


def test_a_spec_that_does_not_fit_the_schema_is_refused_naming_the_field() -> None:
    response = admit(policy(priority="high"))
    assert not response.allowed
    assert "spec.priority: " in response.message


def test_an_update_that_makes_the_spec_invalid_is_refused() -> None:
    response = admit(policy(selector={"namespaces": {"exclude": ["/[/"]}}), operation="UPDATE", old=policy())
    assert (response.allowed, response.code) == (False, 422)
    assert "spec.selector.namespaces.exclude[0]: invalid regex" in response.message


def test_an_update_that_leaves_an_invalid_spec_unchanged_is_allowed() -> None:
    stored = policy(selector={"namespaces": {"include": ["/(/"]}})
    edited = {**stored, "metadata": {**stored["metadata"], "labels": {"owner": "sre"}}}
    response = admit(edited, operation="UPDATE", old=stored)
    assert (response.allowed, response.message) == (True, "spec unchanged")


def test_a_policy_without_spec_is_valid() -> None:
    body = policy()
    del body["spec"]
    assert admit(body).allowed


@pytest.mark.parametrize(
    ("obj", "kind", "fragment"),
    [
        (None, "ClusterResourcePolicy", "the request has no object"),
        (policy(), "WorkloadProfile", "expected a ClusterResourcePolicy or ResourcePolicy, got WorkloadProfile"),
        ({"metadata": {"name": "x"}, "spec": ["a"]}, "ClusterResourcePolicy", "spec must be an object, got list"),
    ],
)
def test_a_request_that_is_not_a_policy_is_errored_400(obj: JSON | None, kind: str, fragment: str) -> None:
    response = admit(obj, kind=kind)
    assert (response.allowed, response.code, response.message) == (False, 400, fragment)


def test_the_message_has_kubernetes_invalid_shape() -> None:
    assert invalid_policy_message("ResourcePolicy", "a", ["x: y"]) == (
        'ResourcePolicy.ballast.tightlinesoftware.com "a" is invalid: x: y'
    )
    assert invalid_policy_message("ResourcePolicy", "a", ["x: y", "z: w"]) == (
        'ResourcePolicy.ballast.tightlinesoftware.com "a" is invalid: [x: y, z: w]'
    )
