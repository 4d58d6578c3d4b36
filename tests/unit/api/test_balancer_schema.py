"""The Balancer's generated CRD schema says what it can without a webhook: target names unique (a list-map keyed
by `name`), 2 to 100 targets, names of at most 63 characters, `minReplicas ≤ maxReplicas` on each target, every
`targetOrder` entry a target and the policy's block present (CEL, naming the field), bounds on every list and
map a rule walks; the status is `replicas`, `selector`, conditions by `type` and `targets` by `name`. The rules are
the schema's only: the model still reads a Balancer that breaks them (one stored before them). Their effect on
the API server is tests/integration/api/test_balancer_validation.py's."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from ballast.api.balancer.v1alpha1 import (
    APPLYING_BALANCER_POLICY,
    BALANCING,
    COMPLETED,
    CONDITION_TYPES,
    MAX_TARGETS,
    PHASES,
    POD_LABELS_CHECKING,
    POD_LISTING,
    REPLICA_COUNT_SETTING,
    REPLICAS_MISSING,
    REPLICAS_OVERFLOW,
    SCALE_SUBRESOURCE_POLLING,
    STORED_SPEC_INVALID,
    TARGET_CONFLICT,
    TARGET_NAME_MAX_LENGTH,
    UNKNOWN_PROPORTION_TARGETS,
    VALID,
    Balancer,
    TargetStatus,
)
from ballast.api.meta import CONDITION_REASON_PATTERN, CONDITION_TYPE_PATTERN
from ballast.api.schema import Schema, check_structural
from ballast.internal.manifests.ballast_crds import crd_for

from .balancer_samples import EXAMPLES, balancer
from .samples import STATUSES, sample

VALIDATIONS = "x-kubernetes-validations"


def _version() -> Schema:
    [version] = crd_for(Balancer)["spec"]["versions"]
    return dict(version)


def _at(path: str) -> Schema:
    """The node at a dotted path of the Balancer's schema; `[]` steps into array items, `*` into map values."""
    node: Schema = _version()["schema"]["openAPIV3Schema"]
    for part in path.split(".") if path else ():
        node = (
            node["items"] if part == "[]" else node["additionalProperties"] if part == "*" else node["properties"][part]
        )
    return node


def _rules(path: str) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = _at(path).get(VALIDATIONS, [])
    return rules


def test_the_schema_is_structural() -> None:
    check_structural(_version()["schema"]["openAPIV3Schema"])


@pytest.mark.parametrize(("path", "keys"), [("spec.targets", ["name"]), ("status.targets", ["name"]),
                                            ("status.conditions", ["type"])])  # fmt: skip
def test_keyed_lists_are_list_maps(path: str, keys: list[str]) -> None:
    node = _at(path)

    assert node["x-kubernetes-list-type"] == "map"
    assert node["x-kubernetes-list-map-keys"] == keys
    assert set(keys) <= set(node["items"]["required"])  # the API server wants list-map keys required


@pytest.mark.parametrize(
    ("path", "bounds"),
    [
        ("spec.targets", {"minItems": 2, "maxItems": 100}),
        ("spec.targets.[].name", {"minLength": 1, "maxLength": 63}),
        ("spec.policy.priorities.targetOrder", {"minItems": 2, "maxItems": 100}),
        ("spec.policy.priorities.targetOrder.[]", {"maxLength": 63}),
        ("spec.policy.proportions.targetProportions", {"minProperties": 2, "maxProperties": 100}),
    ],
)
def test_every_list_and_map_a_rule_walks_is_bounded(path: str, bounds: dict[str, int]) -> None:
    node = _at(path)

    assert {key: node[key] for key in bounds if key in node} == bounds
    assert (MAX_TARGETS, TARGET_NAME_MAX_LENGTH) == (100, 63)  # the constants say what the schema has


def test_proportion_names_are_not_checked() -> None:
    # upstream ignores a proportion whose name is no target; the CRD accepts it too
    assert VALIDATIONS not in _at("spec.policy.proportions")
    assert VALIDATIONS not in _at("spec.policy.proportions.targetProportions")
    assert not any("targetProportions" in rule["rule"] for rule in _rules("spec") + _rules("spec.policy"))


def test_each_target_keeps_its_minimum_at_most_its_maximum() -> None:
    assert _rules("spec.targets.[]") == [
        {
            "rule": "!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",
            "message": "minReplicas must not be greater than maxReplicas",
        }
    ]


def test_the_targets_minimums_add_up_to_at_most_int32() -> None:
    # docs/design.md, difference 59; CEL's int is 64-bit, so 100 int32 minimums cannot overflow the sum. There is
    # no rule on `replicas` against the maxima: an overflow is a result (difference 38).
    rule = _rules("spec")[0]

    assert rule == {
        "rule": "self.targets.map(t, has(t.minReplicas) ? t.minReplicas : 0).sum() <= 2147483647",
        "message": "the targets' minReplicas must not add up to more than 2147483647",
        "fieldPath": ".targets",
    }
    assert not any("maxReplicas" in r["rule"] for r in _rules("spec"))


def test_proportions_are_not_negative() -> None:
    assert _at("spec.policy.proportions.targetProportions.*")["minimum"] == 0


def test_every_target_order_entry_names_a_target() -> None:
    rule = _rules("spec")[1]

    assert rule["fieldPath"] == ".policy.priorities.targetOrder"
    assert rule["rule"] == (
        "!has(self.policy.priorities) || self.policy.priorities.targetOrder.all(n, self.targets.exists(t, t.name == n))"
    )
    assert rule["messageExpression"] == (
        "'\"' + self.policy.priorities.targetOrder.filter(n, !self.targets.exists(t, t.name == n))[0]"
        " + '\" is not the name of a target'"
    )


def test_the_policy_name_needs_its_block() -> None:
    assert _rules("spec.policy") == [
        {
            "rule": "self.policyName != 'priority' || has(self.priorities)",
            "message": 'needed when policyName is "priority"',
            "fieldPath": ".priorities",
            "reason": "FieldValueRequired",
        },
        {
            "rule": "self.policyName != 'proportional' || has(self.proportions)",
            "message": 'needed when policyName is "proportional"',
            "fieldPath": ".proportions",
            "reason": "FieldValueRequired",
        },
    ]


def test_every_field_path_is_a_field_of_the_schema() -> None:
    for path in ("spec", "spec.policy", "spec.targets.[]"):
        for rule in _rules(path):
            if "fieldPath" in rule:
                target = ".".join(filter(None, [path, *rule["fieldPath"].split(".")]))
                assert _at(target)["type"] in ("object", "array")


def test_the_status_has_replicas_selector_conditions_and_targets() -> None:
    status = _at("status")

    assert set(status["properties"]) == {"replicas", "selector", "conditions", "targets"}
    assert _at("status.targets.[]")["required"] == ["name"]
    assert {name: node["type"] for name, node in _at("status.targets.[]")["properties"].items()} == {
        "name": "string",
        "desired": "integer",
        "placed": "integer",
        "running": "integer",
        "notStarted": "integer",
    }
    assert {node.get("format") for node in _at("status.targets.[]")["properties"].values()} == {None, "int32"}


def test_printer_columns_show_replicas_policy_and_the_balancing_condition() -> None:
    assert _version()["additionalPrinterColumns"] == [
        {"name": "Replicas", "type": "integer", "jsonPath": ".status.replicas"},
        {"name": "Policy", "type": "string", "jsonPath": ".spec.policy.policyName"},
        {"name": "Balancing", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Balancing")].status'},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]


def test_condition_types_and_reasons() -> None:
    assert CONDITION_TYPES == (BALANCING, REPLICAS_MISSING, REPLICAS_OVERFLOW, TARGET_CONFLICT, VALID)
    assert CONDITION_TYPES == ("Balancing", "ReplicasMissing", "ReplicasOverflow", "TargetConflict", "Valid")
    assert PHASES == (SCALE_SUBRESOURCE_POLLING, POD_LISTING, POD_LABELS_CHECKING, APPLYING_BALANCER_POLICY,
                      REPLICA_COUNT_SETTING)  # fmt: skip
    assert PHASES == (
        "ScaleSubresourcePolling", "PodListing", "PodLabelsChecking", "ApplyingBalancerPolicy", "ReplicaCountSetting",
    )  # fmt: skip
    assert (COMPLETED, UNKNOWN_PROPORTION_TARGETS) == ("Completed", "UnknownProportionTargets")
    assert STORED_SPEC_INVALID == "StoredSpecInvalid"
    # every one fits metav1.Condition's patterns, which the API server checks
    assert all(re.fullmatch(CONDITION_TYPE_PATTERN, t) for t in CONDITION_TYPES)
    reasons = (*PHASES, COMPLETED, UNKNOWN_PROPORTION_TARGETS, STORED_SPEC_INVALID)
    assert all(re.fullmatch(CONDITION_REASON_PATTERN, r) for r in reasons)


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_the_upstream_examples_fit_the_model(example: str) -> None:
    body = balancer(example)

    assert Balancer.model_validate(body).to_wire() == {**body, "metadata": {"name": "nginx"}}


def _broken(change: str) -> dict[str, Any]:
    body = copy.deepcopy(sample(Balancer))
    spec = body["spec"]
    if change == "duplicate":
        spec["targets"][1]["name"] = spec["targets"][0]["name"]
    elif change == "min-above-max":
        spec["targets"][0]["minReplicas"] = 11
    elif change == "unknown-order":
        spec["policy"]["priorities"]["targetOrder"] = ["zone-a", "zone-c"]
    elif change == "no-block":
        del spec["policy"]["proportions"]
    elif change == "long-name":
        spec["targets"][0]["name"] = "n" * 64
    elif change == "minimums-past-int32":
        spec["targets"][0]["minReplicas"] = 2147483647
        spec["targets"][1]["minReplicas"] = 1
        for target in spec["targets"]:
            target.pop("maxReplicas", None)
    elif change == "negative-proportion":
        spec["policy"]["proportions"]["targetProportions"]["zone-a"] = -1
    return body


@pytest.mark.parametrize("change", ["duplicate", "min-above-max", "unknown-order", "no-block", "long-name",
                                    "minimums-past-int32", "negative-proportion"])  # fmt: skip
def test_the_model_still_reads_what_the_crd_refuses(change: str) -> None:
    body = _broken(change)

    assert Balancer.model_validate(body).to_wire()["spec"] == body["spec"]


def test_status_targets_read_by_name() -> None:
    status = Balancer.model_validate({**sample(Balancer), "status": STATUSES[Balancer]}).status
    assert status is not None

    assert status.targets == [
        TargetStatus(name="zone-a", desired=4, placed=4, running=3, not_started=1),
        TargetStatus(name="zone-b", desired=1, placed=1, running=1, not_started=0),
    ]
