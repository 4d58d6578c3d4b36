"""A Balancer's spec as the arguments of `place`: the upstream examples place as the proposal says."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.api.balancer.v1alpha1 import Balancer
from ballast.internal.balancer import PlacementInputError, Target, place, request_from_spec
from tests.unit.api.balancer_samples import balancer


def _spec(example: str) -> dict[str, Any]:
    spec: dict[str, Any] = balancer(example)["spec"]
    return spec


@pytest.mark.parametrize(
    ("example", "placement"),
    [
        ("nginx-priority", {"nginx-1": 4, "nginx-2": 1}),
        ("nginx-proportional", {"nginx-1": 5, "nginx-2": 5}),
    ],
)
def test_the_upstream_examples_place_as_the_proposal_says(example: str, placement: dict[str, int]) -> None:
    request = request_from_spec(_spec(example))
    assert request.targets == (Target("nginx-1", 1, 7), Target("nginx-2", 1, None))
    assert request.startup_timeout_seconds == 180
    assert place(request.replicas, request.targets, request.policy).placement == placement


def test_the_model_is_accepted_and_a_spec_without_fallback_has_no_timeout() -> None:
    wire = _spec("nginx-priority")
    del wire["policy"]["fallback"]
    model = Balancer.model_validate({"metadata": {"name": "nginx"}, "spec": wire}).spec
    request = request_from_spec(model)
    assert request.policy == {"name": "priority", "target_order": ["nginx-1", "nginx-2"]}
    assert request.startup_timeout_seconds is None


@pytest.mark.parametrize(
    ("name", "missing"), [("priority", "priorities"), ("proportional", "proportions")]
)  # fmt: skip
def test_a_policy_without_its_settings_raises_upstreams_message(name: str, missing: str) -> None:
    wire = _spec("nginx-priority")
    wire["policy"] = {"policyName": name}
    with pytest.raises(PlacementInputError) as caught:
        request_from_spec(wire)
    assert caught.value.path == f"spec.policy.{missing}"
    assert caught.value.message == f"incomplete policy definition: missing {missing}"


def test_an_unknown_policy_name_is_left_for_place_to_refuse() -> None:
    wire = _spec("nginx-priority")
    wire["policy"]["policyName"] = "random"
    request = request_from_spec(wire)
    with pytest.raises(PlacementInputError, match="policy not supported: 'random'"):
        place(request.replicas, request.targets, request.policy)
