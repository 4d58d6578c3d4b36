"""A Balancer's spec judged by the CRD's rules after it was stored, the placement's errors in the spec's words,
and counts near int32 (docs/design.md, differences 58 and 59)."""

from __future__ import annotations

import copy
import datetime
from typing import Any

import pydantic
import pytest

from ballast.api.balancer.v1alpha1 import BalancerSpec, TargetStatus
from ballast.internal.balancer import PlacementInputError, place
from ballast.internal.balancer.balance import balance
from ballast.internal.balancer.stored import in_spec_terms, spec_problems
from ballast.internal.balancer.summary import PodState

from .builders import pods, priority, proportional, target

INT32_MAX = 2**31 - 1
NOW = datetime.datetime(2026, 12, 6, tzinfo=datetime.UTC)


def _spec(**changes: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": 0,
        "selector": {"matchLabels": {"srv": "x"}},
        "targets": [
            {"name": "a", "minReplicas": INT32_MAX, "scaleTargetRef": {"kind": "Deployment", "name": "a"}},
            {"name": "b", "minReplicas": 1, "scaleTargetRef": {"kind": "Deployment", "name": "b"}},
        ],
        "policy": {"policyName": "priority", "priorities": {"targetOrder": ["a", "b"]}},
    }
    spec.update(changes)
    return spec


def test_without_max_replicas_a_target_takes_every_replica() -> None:
    # Difference 58, issue 30's example: upstream places 1,000,000,000 and overflows 500,000,000.
    placed = place(1_500_000_000, [target("a"), target("b", 0, 0)], priority("a", "b"), None)

    assert placed.placement == {"a": 1_500_000_000, "b": 0}
    assert placed.overflow == 0


def test_minimums_past_int32_are_computed_exactly() -> None:
    # Difference 59, issue 30's example: upstream's int32 sum wraps (missing -2147483648).
    placed = place(0, [target("a", INT32_MAX), target("b", 1)], priority("a", "b"), None)

    assert placed.placement == {"a": INT32_MAX, "b": 1}
    assert placed.missing == 2_147_483_648


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (PlacementInputError("policy.target_proportions['b']", "must not be negative, is -1"),
         "spec.policy.proportions.targetProportions[b]: must not be negative, is -1"),
        (PlacementInputError("targets[0].min_replicas", "3 is more than max_replicas 2"),
         "spec.targets[0].minReplicas: 3 is more than maxReplicas 2"),
        (PlacementInputError("policy.target_order[1]", "'c' is not the name of a target"),
         "spec.policy.priorities.targetOrder[1]: 'c' is not the name of a target"),
        (PlacementInputError("policy.target_order", "missing (the priority policy needs it)"),
         "spec.policy.priorities.targetOrder: missing (the priority policy needs it)"),
        (PlacementInputError("policy.name", "policy not supported: 'random'"),
         "spec.policy.policyName: policy not supported: 'random'"),
        (PlacementInputError("replicas", "must not be negative, is -1"), "spec.replicas: must not be negative, is -1"),
        (PlacementInputError("summaries['a']", "running 2 and not_started 1 add up to more than total 2"),
         "summaries['a']: running 2 and not_started 1 add up to more than total 2"),
    ],
)  # fmt: skip
def test_placement_errors_are_said_in_the_specs_wire_names(error: PlacementInputError, said: str) -> None:
    assert in_spec_terms(error) == said


def test_every_placement_refusal_names_no_python_field() -> None:
    refusals = [
        (1, [target("a"), target("b")], proportional(a=1, b=-1)),
        (1, [target("a", 3, 2), target("b")], priority("a", "b")),
        (1, [target("a"), target("b")], priority("a", "c")),
    ]
    for replicas, targets, policy in refusals:
        with pytest.raises(PlacementInputError) as refused:
            place(replicas, targets, policy, None)
        said = in_spec_terms(refused.value)
        assert said.startswith("spec.")
        assert not any(word in said for word in ("_replicas", "target_order", "target_proportions"))


def test_a_spec_that_keeps_the_rules_has_no_problems() -> None:
    spec = BalancerSpec.model_validate(_spec())
    spec.targets[0].min_replicas = INT32_MAX - 1

    assert spec_problems(spec) == []


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({}, "spec.targets: the targets' minReplicas add up to 2147483648, more than 2147483647"),
        ({"policy": {"policyName": "proportional", "proportions": {"targetProportions": {"a": 1, "b": -1}}}},
         "spec.policy.proportions.targetProportions[b]: -1 is negative"),
        ({"policy": {"policyName": "priority", "priorities": {"targetOrder": ["a", "c"]}}},
         "spec.policy.priorities.targetOrder: 'c' is not the name of a target"),
        ({"policy": {"policyName": "priority"}}, 'spec.policy.priorities: needed when policyName is "priority"'),
        ({"policy": {"policyName": "proportional"}},
         'spec.policy.proportions: needed when policyName is "proportional"'),
    ],
)  # fmt: skip
def test_each_rule_of_the_crd_is_named_by_its_wire_path(change: dict[str, Any], problem: str) -> None:
    assert problem in spec_problems(BalancerSpec.model_validate(_spec(**change)))


def test_target_rules_are_named_by_their_wire_paths() -> None:
    spec = _spec()
    spec["targets"][0].update(minReplicas=3, maxReplicas=2, name="n" * 64)
    spec["targets"][1]["name"] = "n" * 64
    spec["policy"]["priorities"]["targetOrder"] = ["n" * 64, "n" * 64]

    problems = spec_problems(BalancerSpec.model_validate(spec))

    assert problems == [
        "spec.targets[0].name: longer than 63 characters",
        "spec.targets[0]: minReplicas 3 is greater than maxReplicas 2",
        f"spec.targets[1].name: {'n' * 64!r} names a second target",
        "spec.targets[1].name: longer than 63 characters",
    ]


def _late_pod() -> PodState:
    return PodState(phase="Pending", created=NOW - datetime.timedelta(hours=1))


def test_a_placement_no_replicas_field_can_hold_is_refused_not_written() -> None:
    # The minimums add up past int32 (stored before the rule); a late pod of `a` passes its replicas on to `b`.
    spec = BalancerSpec.model_validate(_spec(policy={
        "policyName": "priority", "priorities": {"targetOrder": ["a", "b"]}, "fallback": {"startupTimeoutSeconds": 0},
    }))  # fmt: skip
    assert (
        place(0, [target("a", INT32_MAX), target("b", 1)], priority("a", "b"), {"a": pods(1, 0, 1)}).placement["b"]
        == 2**31
    )
    with pytest.raises(pydantic.ValidationError):  # what writing it into the status would do
        TargetStatus(name="b", desired=2**31)

    balanced = balance(spec, {"a": [_late_pod()], "b": []}, NOW)

    assert balanced.placement is None
    assert balanced.refused == "placement for b is 2147483648, more than 2147483647"
    assert balanced.observed == 1
    calm = balance(copy.deepcopy(spec), {"a": [], "b": []}, NOW)
    assert calm.placement is not None
    assert calm.placement.placement == {"a": INT32_MAX, "b": 1}
