"""The scheduling webhook's matchConditions as rendered: their shape, what each policy adds, when there are none,
and the CEL string literals. Whether the expression, evaluated, agrees with `policy_matches` is asked of the
API server (tests/integration/controllers/test_schedulingpolicy.py: no Python CEL evaluator is installed)."""

from __future__ import annotations

import codecs
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.api.kupid.v1alpha1 import PodSchedulingPolicy
from ballast.internal.scheduling import ENFORCE_ANNOTATION, TARGETS, Policy
from ballast.internal.scheduling.match_conditions import (
    CONDITION_NAME,
    ENFORCED,
    LABELS,
    MAX_CONDITIONS,
    MAX_EXPRESSION_LENGTH,
    MAX_RECORD_LENGTH,
    RENDERED,
    TOO_LONG,
    TOO_MANY,
    UNRENDERABLE,
    cel_string,
    render_match_conditions,
    rendered_record,
)

from .builders import cluster, namespaced

WEB = {"matchLabels": {"app": "web"}}
PREFIX = f"object != null && [{LABELS}].exists(labels, "


def expression(*policies: Policy, reserved: int = 0) -> str:
    rendering = render_match_conditions(policies, reserved=reserved)
    assert rendering.reason == RENDERED, rendering.message
    assert rendering.conditions is not None
    (condition,) = rendering.conditions
    assert condition["name"] == CONDITION_NAME
    return condition["expression"]


def body(*policies: dict[str, Any]) -> str:
    """The OR inside `exists`, without the part every expression shares."""
    text = expression(*policies)
    assert text.startswith(PREFIX)
    assert text.endswith(")")
    return text[len(PREFIX) : -1]


def test_the_labels_are_read_where_each_kind_keeps_its_pod_template() -> None:
    assert LABELS == (
        '(request.kind.kind == "Pod" ? object.?metadata.?labels : '
        'request.kind.kind == "CronJob" ? object.?spec.?jobTemplate.?spec.?template.?metadata.?labels : '
        "object.?spec.?template.?metadata.?labels).orValue({})"
    )
    for target in TARGETS:  # every path of TARGETS is there, each step optional
        assert "object" + "".join(f".?{part}" for part in target.labels_path) in LABELS


def test_a_namespaced_policy_selects_in_its_namespace_only() -> None:
    policy = namespaced("team-a", "web", podSelector=WEB)
    assert body(policy) == '(request.namespace == "team-a" && ("app" in labels && labels["app"] == "web"))'


def test_every_operator_guards_the_absent_key() -> None:
    selector = {
        "matchLabels": {"app": "web"},
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["db", "cache"]},
            {"key": "zone", "operator": "NotIn", "values": ["a"]},
            {"key": "example.com/gpu", "operator": "Exists"},
            {"key": "legacy", "operator": "DoesNotExist"},
        ],
    }
    assert body(cluster("c", namespaceSelector={}, podSelector=selector)) == (
        '(("app" in labels && labels["app"] == "web") && ("tier" in labels && labels["tier"] in ["cache", "db"]) '
        '&& !("zone" in labels && labels["zone"] == "a") && "example.com/gpu" in labels && !("legacy" in labels))'
    )


def test_policies_are_ored_deduplicated_and_grouped_by_namespace() -> None:
    policies = [
        namespaced("b", "one", podSelector=WEB),
        cluster("c", namespaceSelector={"matchLabels": {"env": "prod"}}, podSelector={"matchLabels": {"tier": "db"}}),
        namespaced("a", "two", podSelector={"matchLabels": {"app": "api"}}),
        namespaced("b", "three", podSelector=WEB),
        namespaced("b", "four", podSelector={"matchLabels": {"app": "api"}}),
    ]
    assert body(*policies) == (
        '("tier" in labels && labels["tier"] == "db") || '
        '(request.namespace == "a" && ("app" in labels && labels["app"] == "api")) || '
        '(request.namespace == "b" && (("app" in labels && labels["app"] == "api") || '
        '("app" in labels && labels["app"] == "web")))'
    )
    assert render_match_conditions(policies).terms == 4


@given(st.permutations(range(5)))
def test_the_order_of_the_policies_changes_nothing(order: list[int]) -> None:
    policies = [
        namespaced("b", "one", podSelector=WEB),
        namespaced("a", "two", podSelector={"matchExpressions": [{"key": "x", "operator": "Exists"}]}),
        cluster("c", namespaceSelector={}, podSelector={"matchLabels": {"tier": "db"}}),
        cluster("d", namespaceSelector={}),
        namespaced("a", "three", podSelector={}),
    ]
    assert expression(*(policies[i] for i in order)) == expression(*policies)


def test_what_selects_nothing_adds_nothing_and_nothing_is_false() -> None:
    assert expression() == "false"
    assert expression(namespaced("a", "no-selector"), cluster("inert", podSelector=WEB)) == "false"
    assert render_match_conditions([]).message == "0 selectors in 5 characters"


def test_an_empty_selector_selects_everything_in_reach() -> None:
    assert expression(
        cluster("all", namespaceSelector={}, podSelector={}), namespaced("a", "web", podSelector=WEB)
    ) == ("true")
    assert body(namespaced("a", "all", podSelector={}), namespaced("a", "web", podSelector=WEB)) == (
        'request.namespace == "a"'
    )


def test_models_are_rendered_as_their_wire_form() -> None:
    model = PodSchedulingPolicy.model_validate(namespaced("team-a", "web", podSelector=WEB))
    assert expression(model) == expression(namespaced("team-a", "web", podSelector=WEB))


def test_an_enforced_policy_turns_the_conditions_off() -> None:
    enforced = namespaced("a", "strict", podSelector=WEB)
    enforced["metadata"]["annotations"] = {ENFORCE_ANNOTATION: "true"}
    rendering = render_match_conditions([cluster("c", namespaceSelector={}, podSelector=WEB), enforced])
    assert (rendering.conditions, rendering.reason, rendering.state) == (None, ENFORCED, "disabled")
    assert rendering.message == "PodSchedulingPolicy/a/strict is enforced: every request is sent"
    assert rendering.expression == ""
    enforced["metadata"]["annotations"] = {ENFORCE_ANNOTATION: "false"}
    assert render_match_conditions([enforced]).reason == RENDERED


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        (
            namespaced("a", "bad", podSelector={"matchLabels": {"not a key!": "x"}}),
            "PodSchedulingPolicy/a/bad: spec.podSelector.matchLabels: invalid label key 'not a key!'",
        ),
        (
            cluster("bad", podSelector={}, namespaceSelector={"matchExpressions": [{"key": "k", "operator": "In"}]}),
            "ClusterPodSchedulingPolicy/bad: spec.namespaceSelector.matchExpressions[0]: operator In needs values",
        ),
        ({"kind": "Other", "metadata": {"name": "x"}}, "Other/x: kind: 'Other' is neither"),
    ],
)
def test_a_policy_that_does_not_compile_turns_the_conditions_off(policy: dict[str, Any], message: str) -> None:
    rendering = render_match_conditions([namespaced("a", "good", podSelector=WEB), policy])
    assert (rendering.conditions, rendering.reason) == (None, UNRENDERABLE)
    assert rendering.message.startswith(message)
    assert rendering.message.endswith(": every request is sent")


def test_beyond_the_api_servers_limits_there_are_no_conditions() -> None:
    def many(count: int) -> list[dict[str, Any]]:
        return [
            namespaced("a", f"p{i}", podSelector={"matchLabels": {"app": f"service-{i:05d}"}}) for i in range(count)
        ]

    fits = next(count for count in range(100, 5000, 10) if render_match_conditions(many(count)).reason == TOO_LONG)
    largest = render_match_conditions(many(fits - 10))
    assert len(largest.expression) <= MAX_EXPRESSION_LENGTH
    too_long = render_match_conditions(many(fits))
    assert too_long.conditions is None
    assert too_long.message.startswith(f"the expression of {fits} selectors would be ")
    assert render_match_conditions(many(1), reserved=MAX_CONDITIONS - 1).reason == RENDERED
    too_many = render_match_conditions(many(1), reserved=MAX_CONDITIONS)
    assert (too_many.conditions, too_many.reason) == (None, TOO_MANY)


@given(st.text())
def test_a_cel_string_literal_reads_back_as_its_text(text: str) -> None:
    literal = cel_string(text)
    assert literal[0] == literal[-1] == '"'
    assert all(0x20 <= ord(char) < 0x7F for char in literal)
    inner = literal[1:-1]
    assert '"' not in inner.replace('\\"', "").replace("\\\\", "")  # no quote that ends the literal
    # CEL's \\ \" \uXXXX \UXXXXXXXX are Python's too.
    assert codecs.decode(inner, "unicode_escape") == text


def test_a_lone_surrogate_has_no_literal() -> None:
    with pytest.raises(ValueError, match="surrogate"):
        cel_string("\ud800")


def test_the_record_names_every_policy_version_in_order_and_hashes_when_long() -> None:
    one = namespaced("team-a", "spot", podSelector=WEB)
    one["metadata"]["resourceVersion"] = "907"
    other = cluster("etcd")
    other["metadata"]["resourceVersion"] = "812"
    assert (
        rendered_record([one, other])
        == rendered_record([other, one])
        == ("ClusterPodSchedulingPolicy/etcd=812,PodSchedulingPolicy/team-a/spot=907")
    )
    assert rendered_record([]) == ""
    many = [namespaced("a", f"policy-{i:04d}") for i in range(MAX_RECORD_LENGTH // 20)]
    record = rendered_record(many)
    assert record.startswith(f"{len(many)} policies sha256:")
    assert len(record) < 64
    assert rendered_record(list(reversed(many))) == record
