"""`validate_scheduling_policy`: every check of a whole policy, each refusal naming its exact field path in the API
server's wording; kupid's own sample policies pass."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ballast.internal.scheduling.fielderrors import (
    dns1123_subdomain_problems,
    label_value_problems,
    qualified_name_problems,
)
from ballast.internal.scheduling.validation import validate_scheduling_policy

from .builders import PREFERRED, REQUIRED
from .kupid_samples import all_samples

JSON = dict[str, Any]
SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    r"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation "
    "is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
NODE_TERMS = f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms"
POD_TERMS = f"spec.affinity.podAffinity.{REQUIRED}"


def policy(kind: str = "PodSchedulingPolicy", name: str = "spot", **spec: Any) -> JSON:
    metadata: JSON = {"name": name}
    if kind == "PodSchedulingPolicy":
        metadata["namespace"] = "team-a"
    return {"apiVersion": "kupid.gardener.cloud/v1alpha1", "kind": kind, "metadata": metadata, "spec": spec}


def cluster(**spec: Any) -> JSON:
    return policy("ClusterPodSchedulingPolicy", "etcd", **spec)


def node_terms(*terms: JSON) -> JSON:
    return {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": list(terms)}}}


def expression(key: str, operator: str, *values: str) -> JSON:
    requirement: JSON = {"key": key, "operator": operator}
    if values:
        requirement["values"] = list(values)
    return requirement


def pod_term(**fields: Any) -> JSON:
    return {"labelSelector": {"matchLabels": {"app": "etcd"}}, "topologyKey": "kubernetes.io/hostname", **fields}


# ------------------------------------------------------------------------------------------------- accepted


@pytest.mark.parametrize("sample", all_samples(), ids=lambda sample: sample["metadata"]["name"])
def test_kupids_sample_policies_are_valid(sample: JSON) -> None:
    assert validate_scheduling_policy(sample) == []


def test_a_policy_using_every_field_is_valid() -> None:
    spec: JSON = {
        "podSelector": {"matchExpressions": [expression("tier", "Exists")], "matchLabels": {"app": "etcd"}},
        "namespaceSelector": {"matchExpressions": [expression("gardener.cloud/role", "In", "shoot")]},
        "nodeSelector": {"kubernetes.io/os": "linux"},
        "nodeName": "node-a.example.com",
        "schedulerName": "bin-packing",
        "affinity": {
            **node_terms(
                {"matchExpressions": [expression("cpu", "Gt", "4"), expression("spot", "DoesNotExist")]},
                {"matchFields": [expression("metadata.name", "NotIn", "node-b")]},
            ),
            "podAntiAffinity": {
                REQUIRED: [pod_term(namespaces=["team-a"], matchLabelKeys=["pod-template-hash"])],
                PREFERRED: [{"weight": 1, "podAffinityTerm": pod_term(namespaceSelector={})}],
            },
        },
        "tolerations": [
            {"operator": "Exists"},
            {"key": "dedicated", "value": "etcd", "effect": "NoExecute", "tolerationSeconds": 60},
            {"key": "spot", "operator": "Exists", "effect": "PreferNoSchedule"},
            {"key": "example.com/empty", "operator": "Equal", "value": ""},
        ],
    }
    assert validate_scheduling_policy(cluster(**spec)) == []


def test_a_policy_without_spec_is_valid() -> None:
    body = policy()
    del body["spec"]
    assert validate_scheduling_policy(body) == []


# ------------------------------------------------------------------------------------------------- metadata


@pytest.mark.parametrize(
    ("metadata", "kind", "problems"),
    [
        ({"name": "Bad_Name", "namespace": "a"}, "PodSchedulingPolicy",
         [f'metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN}']),
        ({"name": "x" * 254}, "ClusterPodSchedulingPolicy",
         [f'metadata.name: Invalid value: "{"x" * 254}": must be no more than 253 characters']),
        ({"namespace": "a"}, "PodSchedulingPolicy",
         ["metadata.name: Required value: name or generateName is required"]),
        ({"name": "spot"}, "PodSchedulingPolicy", ["metadata.namespace: Required value"]),
        ({"name": "etcd", "namespace": "garden"}, "ClusterPodSchedulingPolicy",
         ["metadata.namespace: Forbidden: not allowed on this type"]),
        ({"name": "etcd", "finalizers": ["example.com/keep", "/keep"]}, "ClusterPodSchedulingPolicy",
         ['metadata.finalizers[1]: Invalid value: "/keep": prefix part must be non-empty']),
    ],
    ids=["name-not-subdomain", "name-too-long", "name-missing", "namespace-missing", "namespace-forbidden",
         "finalizer-not-qualified"],
)  # fmt: skip
def test_metadata_is_checked(metadata: JSON, kind: str, problems: list[str]) -> None:
    body = {"kind": kind, "metadata": metadata, "spec": {}}
    assert validate_scheduling_policy(body) == problems


def test_another_kind_is_refused() -> None:
    assert validate_scheduling_policy({"kind": "Pod", "metadata": {"name": "a"}}) == [
        'kind: Unsupported value: "Pod": supported values: "ClusterPodSchedulingPolicy", "PodSchedulingPolicy"'
    ]


def test_a_spec_that_is_not_an_object_is_refused() -> None:
    body = policy()
    body["spec"] = ["a"]
    assert validate_scheduling_policy(body) == ['spec: Invalid value: ["a"]: must be an object']


# ------------------------------------------------------------------------------------------------- selectors


@pytest.mark.parametrize(
    ("selector", "problem"),
    [
        ({"matchLabels": {"bad key": "x"}}, f'.matchLabels: Invalid value: "bad key": {NAME_PART}'),
        ({"matchLabels": {"app": "not a value"}}, f'.matchLabels: Invalid value: "not a value": {LABEL_VALUE}'),
        ({"matchExpressions": [expression("a", "In")]},
         ".matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"),
        ({"matchExpressions": [expression("a", "Exists"), expression("b", "NotIn")]},
         ".matchExpressions[1].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"),
        ({"matchExpressions": [expression("a", "DoesNotExist", "x")]},
         ".matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"),
        ({"matchExpressions": [expression("a", "Gt", "1")]},
         '.matchExpressions[0].operator: Invalid value: "Gt": not a valid selector operator'),
        ({"matchExpressions": [expression("-a", "Exists")]},
         f'.matchExpressions[0].key: Invalid value: "-a": {NAME_PART}'),
        ({"matchExpressions": [expression("a", "In", "ok", "no way")]},
         f'.matchExpressions[0].values[1]: Invalid value: "no way": {LABEL_VALUE}'),
    ],
    ids=["label-key", "label-value", "in-without-values", "notin-without-values", "doesnotexist-with-values",
         "unknown-operator", "expression-key", "expression-value"],
)  # fmt: skip
@pytest.mark.parametrize("field", ["podSelector", "namespaceSelector"])
def test_label_selectors_are_checked(field: str, selector: JSON, problem: str) -> None:
    assert validate_scheduling_policy(cluster(**{field: selector})) == [f"spec.{field}{problem}"]


def test_the_namespace_selector_of_a_namespaced_policy_is_not_read() -> None:
    # the namespaced kind has no such field: the API server prunes it before the webhook sees the policy
    assert validate_scheduling_policy(policy(namespaceSelector={"matchExpressions": [expression("a", "In")]})) == []


@pytest.mark.parametrize(
    ("node_selector", "problem"),
    [
        ({"a/b/c": "x"}, 'spec.nodeSelector: Invalid value: "a/b/c": a qualified name must consist of alphanumeric '
         "characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or "
         "'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an "
         "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"),
        ({"Example.com/pool": "x"}, f'spec.nodeSelector: Invalid value: "Example.com/pool": prefix part {SUBDOMAIN}'),
        ({"pool": "x" * 64}, f'spec.nodeSelector: Invalid value: "{"x" * 64}": must be no more than 63 characters'),
    ],
    ids=["two-slashes", "prefix-upper-case", "value-too-long"],
)  # fmt: skip
def test_the_node_selector_is_a_label_map(node_selector: JSON, problem: str) -> None:
    assert validate_scheduling_policy(policy(nodeSelector=node_selector)) == [problem]


@pytest.mark.parametrize("field", ["nodeName", "schedulerName"])
def test_node_and_scheduler_names_are_subdomains(field: str) -> None:
    assert validate_scheduling_policy(policy(**{field: "Node_1"})) == [
        f'spec.{field}: Invalid value: "Node_1": {SUBDOMAIN}'
    ]
    assert validate_scheduling_policy(policy(**{field: ""})) == []


# ------------------------------------------------------------------------------------------------- node affinity


@pytest.mark.parametrize(
    ("requirement", "problems"),
    [
        (expression("a", "In"), [".values: Required value: must be specified when `operator` is 'In' or 'NotIn'"]),
        (expression("a", "Exists", "x"),
         [".values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"]),
        (expression("a", "Gt"),
         [".values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"]),
        (expression("a", "Lt", "1", "2"),
         [".values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"]),
        (expression("a", "Gt", "four"), ['.values[0]: Invalid value: "four": must be an integer when `operator` is '
                                         "'Lt' or 'Gt'"]),
        (expression("a", "Near", "x"), ['.operator: Invalid value: "Near": not a valid selector operator']),
        (expression("", "Exists"), ['.key: Invalid value: "": name part must be non-empty',
                                    f'.key: Invalid value: "": {NAME_PART}']),
    ],
    ids=["in-without-values", "exists-with-values", "gt-without-value", "lt-with-two", "gt-not-integer",
         "unknown-operator", "empty-key"],
)  # fmt: skip
def test_required_node_expressions_are_checked(requirement: JSON, problems: list[str]) -> None:
    spec: JSON = {"affinity": node_terms({"matchExpressions": [expression("ok", "Exists"), requirement]})}
    path = f"{NODE_TERMS}[0].matchExpressions[1]"
    assert validate_scheduling_policy(policy(**spec)) == [f"{path}{problem}" for problem in problems]


@pytest.mark.parametrize(
    ("requirement", "problems"),
    [
        (expression("metadata.name", "In", "a", "b"),
         [".values: Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field "
          "selector"]),
        (expression("metadata.name", "Exists"), ['.operator: Invalid value: "Exists": not a valid selector operator']),
        (expression("spec.unschedulable", "In", "true"),
         ['.key: Invalid value: "spec.unschedulable": not a valid field selector key']),
        (expression("metadata.name", "NotIn", "Node_1"), [f'.values[0]: Invalid value: "Node_1": {SUBDOMAIN}']),
    ],
    ids=["two-values", "exists", "other-field", "not-a-node-name"],
)  # fmt: skip
def test_required_node_fields_are_checked(requirement: JSON, problems: list[str]) -> None:
    spec: JSON = {"affinity": node_terms({"matchFields": [requirement]})}
    path = f"{NODE_TERMS}[0].matchFields[0]"
    assert validate_scheduling_policy(policy(**spec)) == [f"{path}{problem}" for problem in problems]


def test_a_required_node_selector_needs_a_term() -> None:
    assert validate_scheduling_policy(policy(affinity=node_terms())) == [
        f"{NODE_TERMS}: Required value: must have at least one node selector term"
    ]


def test_preferred_node_terms_have_a_weight_and_a_well_formed_preference() -> None:
    preferred = [
        {"weight": 100, "preference": {"matchExpressions": [expression("a", "Exists")]}},
        {"weight": 0, "preference": {"matchExpressions": [expression("a", "In")]}},
        {"weight": 101, "preference": {}},
    ]
    path = f"spec.affinity.nodeAffinity.{PREFERRED}"
    assert validate_scheduling_policy(policy(affinity={"nodeAffinity": {PREFERRED: preferred}})) == [
        f"{path}[1].weight: Invalid value: 0: must be in the range 1-100",
        f"{path}[1].preference.matchExpressions[0].values: Required value: must be specified when `operator` is "
        "'In' or 'NotIn'",
        f"{path}[2].weight: Invalid value: 101: must be in the range 1-100",
    ]


# ------------------------------------------------------------------------------------------------- pod affinity


@pytest.mark.parametrize(
    ("term", "problems"),
    [
        ({"labelSelector": {}}, [".topologyKey: Required value: can not be empty"]),
        (pod_term(topologyKey="a/b/c"), ['.topologyKey: Invalid value: "a/b/c": a qualified name must consist of '
         "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
         "'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
         "[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]),
        (pod_term(labelSelector={"matchExpressions": [expression("app", "Gt", "1")]}),
         ['.labelSelector.matchExpressions[0].operator: Invalid value: "Gt": not a valid selector operator']),
        (pod_term(namespaceSelector={"matchLabels": {"bad key": "x"}}),
         [f'.namespaceSelector.matchLabels: Invalid value: "bad key": {NAME_PART}']),
        (pod_term(namespaces=["team-a", "Team_B"]),
         ['.namespaces[1]: Invalid value: "Team_B": a lowercase RFC 1123 label must consist of lower case '
          "alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  "
          "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"]),
        (pod_term(matchLabelKeys=["bad key"]), [f'.matchLabelKeys[0]: Invalid value: "bad key": {NAME_PART}']),
        (pod_term(matchLabelKeys=["a"], mismatchLabelKeys=["b", "a"]),
         ['.mismatchLabelKeys[1]: Invalid value: "a": exists in both matchLabelKeys and mismatchLabelKeys']),
        ({"topologyKey": "zone", "matchLabelKeys": ["a"]},
         [".matchLabelKeys: Forbidden: must not be specified when labelSelector is not set"]),
    ],
    ids=["topology-key-missing", "topology-key-not-qualified", "label-selector", "namespace-selector", "namespaces",
         "match-label-keys", "keys-in-both", "keys-without-selector"],
)  # fmt: skip
def test_required_pod_affinity_terms_are_checked(term: JSON, problems: list[str]) -> None:
    spec: JSON = {"affinity": {"podAffinity": {REQUIRED: [pod_term(), term]}}}
    assert validate_scheduling_policy(policy(**spec)) == [f"{POD_TERMS}[1]{problem}" for problem in problems]


def test_preferred_pod_anti_affinity_terms_have_a_weight_and_a_well_formed_term() -> None:
    preferred = [{"weight": 0, "podAffinityTerm": pod_term(topologyKey="")}]
    path = f"spec.affinity.podAntiAffinity.{PREFERRED}[0]"
    assert validate_scheduling_policy(policy(affinity={"podAntiAffinity": {PREFERRED: preferred}})) == [
        f"{path}.weight: Invalid value: 0: must be in the range 1-100",
        f"{path}.podAffinityTerm.topologyKey: Required value: can not be empty",
    ]


# ------------------------------------------------------------------------------------------------- tolerations


@pytest.mark.parametrize(
    ("toleration", "problems"),
    [
        ({"operator": "Equal", "value": "x"},
         ['.operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means "match all '
          'values and all keys"']),
        ({}, ['.operator: Invalid value: "": operator must be Exists when `key` is empty, which means "match all '
              'values and all keys"']),
        ({"key": "bad key", "operator": "Exists"}, [f'.key: Invalid value: "bad key": {NAME_PART}']),
        ({"key": "k", "value": "v", "effect": "NoSchedule", "tolerationSeconds": 30},
         [".effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set"]),
        ({"key": "k", "tolerationSeconds": 30},
         [".effect: Invalid value: \"\": effect must be 'NoExecute' when `tolerationSeconds` is set"]),
        ({"key": "k", "operator": "Equal", "value": "not a value"},
         [f'.value: Invalid value: "not a value": {LABEL_VALUE}']),
        ({"key": "k", "value": "x" * 64}, [f'.value: Invalid value: "{"x" * 64}": must be no more than 63 characters']),
        ({"key": "k", "operator": "Exists", "value": "v"},
         ['.value: Invalid value: "v": value must be empty when `operator` is \'Exists\'']),
        ({"key": "k", "operator": "Matches"},
         ['.operator: Unsupported value: "Matches": supported values: "Equal", "Exists"']),
        ({"key": "k", "effect": "Sometimes"},
         ['.effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"']),
    ],
    ids=["empty-key-equal", "empty-key-default", "key-not-qualified", "seconds-without-noexecute", "seconds-no-effect",
         "equal-bad-value", "equal-value-too-long", "exists-with-value", "unknown-operator", "unknown-effect"],
)  # fmt: skip
def test_tolerations_are_checked(toleration: JSON, problems: list[str]) -> None:
    spec: JSON = {"tolerations": [{"operator": "Exists"}, toleration]}
    assert validate_scheduling_policy(policy(**spec)) == [f"spec.tolerations[1]{problem}" for problem in problems]


def test_every_problem_is_listed_in_field_order() -> None:
    body = policy(
        name="Spot",
        podSelector={"matchLabels": {"a": "b c"}},
        affinity={"podAffinity": {REQUIRED: [{"labelSelector": {}}]}},
        tolerations=[{"key": "k"}, {"key": "k", "effect": "Sometimes"}],
    )
    assert [problem.partition(": ")[0] for problem in validate_scheduling_policy(body)] == [
        "metadata.name",
        "spec.podSelector.matchLabels",
        f"{POD_TERMS}[0].topologyKey",
        "spec.tolerations[1].effect",
    ]


# ------------------------------------------------------------------------------------------------- type problems


def test_type_problems_are_added_once() -> None:
    # the CRD schema refuses these first; a policy stored before it did still gets them named, once each
    body = policy(nodeName=5, tolerations=[{"key": "k", "effect": "NoExecute", "tolerationSeconds": "5m"}])
    problems = validate_scheduling_policy(body)
    assert problems == [
        "spec.nodeName: Input should be a valid string",
        "spec.tolerations[0].tolerationSeconds: Input should be a valid integer",
    ]


def test_a_problem_the_merge_also_sees_is_named_once_in_api_server_words() -> None:
    # `policy_problems` refuses the same term in its own words, at `values`; ours (at `values[0]`) is kept alone
    spec: JSON = {"affinity": node_terms({"matchExpressions": [expression("cpu", "Gt", "four")]})}
    assert validate_scheduling_policy(policy(**spec)) == [
        f'{NODE_TERMS}[0].matchExpressions[0].values[0]: Invalid value: "four": must be an integer when `operator` is '
        "'Lt' or 'Gt'"
    ]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 200) | st.sampled_from(["", "a", "In", "Exists", "Gt", "x y", "1"]),
    lambda children: (
        st.lists(children, max_size=3)
        | st.dictionaries(st.sampled_from(["key", "operator", "values", "weight"]), children, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_any_shape_gives_problems_never_an_exception(data: st.DataObject) -> None:
    sample = copy.deepcopy(all_samples()[data.draw(st.integers(0, len(all_samples()) - 1))])
    paths = [
        ("spec", "podSelector"), ("spec", "nodeSelector"), ("spec", "tolerations"), ("spec", "affinity"),
        ("spec", "affinity", "nodeAffinity"), ("spec", "affinity", "podAffinity"), ("metadata", "finalizers"),
    ]  # fmt: skip
    path = data.draw(st.sampled_from(paths))
    target = sample
    for part in path[:-1]:
        target = target.setdefault(part, {})
    target[path[-1]] = data.draw(_JSON)
    problems = validate_scheduling_policy(sample)
    assert all(isinstance(problem, str) and ": " in problem for problem in problems)


# ------------------------------------------------------------------------------------------------- name checks


@pytest.mark.parametrize("name", ["app", "app.kubernetes.io/name", "example.com/Tier_1", "a" * 63, f"{'a' * 253}/b"])
def test_qualified_names_that_are_fine(name: str) -> None:
    assert qualified_name_problems(name) == []


def test_qualified_name_limits() -> None:
    assert qualified_name_problems("a" * 64) == ["name part must be no more than 63 characters"]
    assert qualified_name_problems(f"{'a' * 254}/b") == ["prefix part must be no more than 253 characters"]
    assert label_value_problems("") == []
    assert dns1123_subdomain_problems("a.b-c") == []
