"""policy_matches and select_policies: kupid's selector rules, and an invalid policy disabling only itself
(docs/design.md, difference 31)."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.api.kupid.v1alpha1 import ClusterPodSchedulingPolicy, PodSchedulingPolicy
from ballast.internal.scheduling import (
    ERROR,
    InvalidPolicyError,
    compile_policy,
    policy_matches,
    select_compiled,
    select_policies,
)

from .builders import cluster, namespaced

ETCD_NAMESPACE = {"role": "etcd"}
ETCD_POD = {"app": "etcd", "tier": "db"}


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        (None, ETCD_POD, False),  # absent: nothing
        (None, {}, False),
        ({}, ETCD_POD, True),  # {}: everything
        ({}, {}, True),
        ({"matchLabels": {"app": "etcd"}}, ETCD_POD, True),
        ({"matchLabels": {"app": "etcd"}}, {"app": "web"}, False),
        ({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["db", "cache"]}]}, ETCD_POD, True),
        ({"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]}, ETCD_POD, False),
        ({"matchExpressions": [{"key": "legacy", "operator": "DoesNotExist"}]}, ETCD_POD, True),
        ({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, {}, False),
        (  # matchLabels AND matchExpressions
            {"matchLabels": {"app": "etcd"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["x"]}]},
            ETCD_POD,
            False,
        ),
    ],
)
def test_an_absent_selector_matches_nothing_an_empty_one_everything_and_the_parts_are_anded(
    selector: dict[str, Any] | None, labels: dict[str, str], expected: bool
) -> None:
    spec = {} if selector is None else {"podSelector": selector}
    assert policy_matches(namespaced("team-a", "p", **spec), {}, labels) is expected
    assert policy_matches(cluster("p", namespaceSelector={}, **spec), {}, labels) is expected


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"namespaceSelector": {"matchLabels": ETCD_NAMESPACE}, "podSelector": {"matchLabels": {"app": "etcd"}}}, True),
        ({"namespaceSelector": {"matchLabels": {"role": "web"}}, "podSelector": {}}, False),
        ({"namespaceSelector": {}, "podSelector": {"matchLabels": {"app": "web"}}}, False),
        ({"podSelector": {}}, False),  # no namespaceSelector: inert
        ({"namespaceSelector": {}}, False),  # no podSelector: inert
        ({"namespaceSelector": {}, "podSelector": {}}, True),
    ],
)
def test_a_cluster_policy_needs_both_selectors(spec: dict[str, Any], expected: bool) -> None:
    assert policy_matches(cluster("etcd", **spec), ETCD_NAMESPACE, ETCD_POD) is expected


def test_a_namespaced_policy_reads_only_its_pod_selector() -> None:
    # A namespaceSelector is not a field of the namespaced kind; it is ignored if present.
    policy = namespaced("team-a", "p", podSelector={}, namespaceSelector={"matchLabels": {"role": "web"}})
    assert policy_matches(policy, ETCD_NAMESPACE, ETCD_POD)
    assert policy_matches(policy, None, None)


def test_models_and_wire_dicts_match_alike() -> None:
    wire = cluster("etcd", namespaceSelector={"matchLabels": ETCD_NAMESPACE}, podSelector={})
    assert policy_matches(ClusterPodSchedulingPolicy.model_validate(wire), ETCD_NAMESPACE, ETCD_POD)
    assert not policy_matches(ClusterPodSchedulingPolicy.model_validate(wire), {}, ETCD_POD)
    inert = PodSchedulingPolicy.model_validate(namespaced("team-a", "p"))
    assert not policy_matches(inert, {}, ETCD_POD)


@pytest.mark.parametrize(
    ("policy", "path"),
    [
        (
            namespaced("team-a", "bad", podSelector={"matchExpressions": [{"key": "app", "operator": "Near"}]}),
            "spec.podSelector.matchExpressions[0]",
        ),
        (
            cluster("bad", namespaceSelector={"matchLabels": {"role": "not a value!"}}, podSelector={}),
            "spec.namespaceSelector.matchLabels",
        ),
        (cluster("bad", namespaceSelector={}, podSelector="app=etcd"), "spec.podSelector"),
    ],
)
def test_an_invalid_selector_raises_naming_the_field_whatever_the_labels(policy: dict[str, Any], path: str) -> None:
    for namespace_labels, pod_labels in ((ETCD_NAMESPACE, ETCD_POD), ({}, {}), ({"role": "web"}, {})):
        with pytest.raises(InvalidPolicyError) as raised:
            policy_matches(policy, namespace_labels, pod_labels)
        assert raised.value.path == path
        assert raised.value.ref.endswith("/bad")


def test_select_policies_orders_the_matches_and_an_invalid_policy_disables_only_itself() -> None:
    policies = [
        namespaced("team-a", "spot", podSelector={"matchLabels": {"app": "etcd"}}),
        namespaced("team-a", "broken", podSelector={"matchExpressions": [{"key": "app", "operator": "In"}]}),
        cluster("etcd", namespaceSelector={"matchLabels": ETCD_NAMESPACE}, podSelector={}),
        cluster("web", namespaceSelector={}, podSelector={"matchLabels": {"app": "web"}}),
        {"kind": "Pod", "metadata": {"name": "stray"}},
    ]
    selection = select_policies(policies, ETCD_NAMESPACE, ETCD_POD)
    assert [p["metadata"]["name"] for p in selection.matched] == ["etcd", "spot"]
    assert [(o.ref, o.result) for o in selection.errors] == [
        ("PodSchedulingPolicy/team-a/broken", ERROR),
        ("Pod/stray", ERROR),
    ]
    assert selection.errors[0].message == "spec.podSelector.matchExpressions[0]: operator In needs values"
    assert "'Pod' is neither" in selection.errors[1].message


@pytest.mark.parametrize(
    ("namespace_labels", "pod_labels"),
    [(ETCD_NAMESPACE, ETCD_POD), ({}, {"app": "web"}), (None, None), (ETCD_NAMESPACE, {"app": "other"})],
)
def test_compiled_policies_select_exactly_as_select_policies(
    namespace_labels: dict[str, str] | None, pod_labels: dict[str, str] | None
) -> None:
    policies = [
        namespaced("team-a", "spot", podSelector={"matchLabels": {"app": "etcd"}}),
        namespaced("team-a", "broken", podSelector={"matchExpressions": [{"key": "app", "operator": "In"}]}),
        cluster("etcd", namespaceSelector={"matchLabels": ETCD_NAMESPACE}, podSelector={}),
        cluster("inert", podSelector={}),
        cluster("web", namespaceSelector={}, podSelector={"matchLabels": {"app": "web"}}),
        namespaced("team-a", "none"),
        {"kind": "Pod", "metadata": {"name": "stray"}},
    ]
    expected = select_policies(policies, namespace_labels, pod_labels)
    compiled = select_compiled([compile_policy(p) for p in policies], namespace_labels, pod_labels)
    assert compiled == expected
