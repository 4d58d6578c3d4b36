"""merge_policies / merge_detailed: kupid's merge rules, first writer wins, and the differences of
docs/design.md, differences 28–31 and 54–57."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from ballast.api.kupid.v1alpha1 import ClusterPodSchedulingPolicy
from ballast.internal.scheduling import (
    APPLIED,
    CONFLICT,
    ERROR,
    SCHEDULING_FIELDS,
    UNCHANGED,
    FieldConflict,
    merge_detailed,
    merge_policies,
)

from .builders import PREFERRED, REQUIRED, cluster, keys_of, namespaced, req, required, term, terms_of
from .pod_fields import full_pod_spec

TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "etcd", "effect": "NoSchedule"}
POD_AFFINITY_TERM = {"labelSelector": {"matchLabels": {"app": "etcd"}}, "topologyKey": "kubernetes.io/hostname"}


def test_node_name_is_set_only_when_empty_and_the_first_policy_wins() -> None:
    result = merge_detailed({}, [{"nodeName": "n1"}, {"nodeName": "n2"}, {"nodeName": "n1"}])
    assert result.spec == {"nodeName": "n1"}
    assert [o.result for o in result.outcomes] == [APPLIED, UNCHANGED, UNCHANGED]
    assert result.outcomes[1].conflicts == (FieldConflict("nodeName", "is 'n1', the policy's is 'n2'"),)
    assert result.outcomes[2].conflicts == ()
    assert merge_policies({"nodeName": "own"}, [{"nodeName": "n1"}]) == {"nodeName": "own"}
    assert merge_policies({"nodeName": ""}, [{"nodeName": "n1"}, {"nodeName": ""}]) == {"nodeName": "n1"}


@pytest.mark.parametrize(
    ("pod", "policies", "expected"),
    [
        ({}, ["s1", "s2"], "s1"),
        ({"schedulerName": "default-scheduler"}, ["s1"], "s1"),  # API-server defaulting looks like unset
        ({"schedulerName": "default-scheduler"}, ["default-scheduler", "s2"], "s2"),  # on either side
        ({"schedulerName": "own"}, ["s1"], "own"),
        ({"schedulerName": ""}, ["s1"], "s1"),
    ],
)
def test_default_scheduler_counts_as_an_unset_scheduler_name(
    pod: dict[str, Any], policies: list[str], expected: str
) -> None:
    assert merge_policies(pod, [{"schedulerName": name} for name in policies])["schedulerName"] == expected


def test_a_policys_default_scheduler_asks_for_nothing() -> None:
    result = merge_detailed({}, [{"schedulerName": "default-scheduler"}])
    assert result.spec == {}
    assert result.outcomes[0].result == UNCHANGED
    own = merge_detailed({"schedulerName": "own"}, [{"schedulerName": "default-scheduler"}, {"schedulerName": "s"}])
    assert own.outcomes[0].conflicts == ()
    assert own.outcomes[1].conflicts == (FieldConflict("schedulerName", "is 'own', the policy's is 's'"),)


def test_node_selector_keys_are_added_and_the_first_writer_of_each_key_wins() -> None:
    result = merge_detailed(
        {"nodeSelector": {"zone": "a"}},
        [{"nodeSelector": {"zone": "b", "pool": "etcd"}}, {"nodeSelector": {"pool": "spot", "disk": "ssd"}}],
    )
    assert result.spec == {"nodeSelector": {"zone": "a", "pool": "etcd", "disk": "ssd"}}
    assert result.outcomes[0].conflicts == (FieldConflict("nodeSelector[zone]", "is 'a', the policy's is 'b'"),)
    assert result.outcomes[1].conflicts == (FieldConflict("nodeSelector[pool]", "is 'etcd', the policy's is 'spot'"),)
    assert merge_policies({}, [{"nodeSelector": {}}]) == {}  # nothing to add creates nothing


def test_tolerations_are_a_union_in_order() -> None:
    other = {"key": "spot", "operator": "Exists"}
    spec = merge_policies(
        {"tolerations": [other]},
        [{"tolerations": [TOLERATION, other]}, {"tolerations": [{**TOLERATION, "tolerationSeconds": None}]}],
    )
    assert spec == {"tolerations": [other, TOLERATION]}
    # An omitted string and "" are the same toleration, as in Go.
    assert merge_policies(
        {"tolerations": [{"key": "a", "operator": "Exists"}]},
        [{"tolerations": [{"key": "a", "operator": "Exists", "value": ""}]}],
    ) == {"tolerations": [{"key": "a", "operator": "Exists"}]}


def test_the_required_node_affinity_terms_are_the_product_of_the_upstream_vector() -> None:
    name_f = req("metadata.name", "In", "F")
    pod = {"affinity": required(term(req("a"), req("b")), term(req("c")))}
    policy = {"affinity": required(term(req("d")), term(req("e"), fields=(name_f,)))}
    terms = terms_of(merge_policies(pod, [policy]))
    assert keys_of(terms) == [["d", "a", "b"], ["e", "a", "b"], ["d", "c"], ["e", "c"]]
    assert [t.get("matchFields") for t in terms] == [None, [name_f], None, [name_f]]


def test_the_policys_terms_are_taken_when_the_pod_has_none_and_empty_policy_terms_keep_the_pods() -> None:
    policy = {"affinity": required(term(req("d")), term(req("e")))}
    assert keys_of(terms_of(merge_policies({}, [policy]))) == [["d"], ["e"]]
    empty: dict[str, Any] = {"affinity": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": []}}}}
    assert keys_of(terms_of(merge_policies(empty, [policy]))) == [["d"], ["e"]]
    pod = {"affinity": required(term(req("a")))}
    assert merge_policies(pod, [empty]) == pod


def test_a_pod_without_affinity_gets_the_policys_whole_affinity() -> None:
    affinity = {
        **required(term(req("d"))),
        "podAntiAffinity": {REQUIRED: [POD_AFFINITY_TERM]},
    }
    affinity["nodeAffinity"][PREFERRED] = [{"weight": 10, "preference": term(req("p"))}]
    result = merge_detailed({"containers": [{"name": "c"}]}, [{"affinity": affinity}])
    assert result.spec == {"containers": [{"name": "c"}], "affinity": affinity}
    assert result.outcomes[0].changed == (
        f"affinity.nodeAffinity.{REQUIRED}",
        f"affinity.nodeAffinity.{PREFERRED}",
        f"affinity.podAntiAffinity.{REQUIRED}",
    )  # the first mutation of an empty affinity is reported too


def test_preferred_node_terms_and_pod_affinity_terms_are_unions() -> None:
    preferred = {"weight": 10, "preference": term(req("p"))}
    weighted = {"weight": 5, "podAffinityTerm": POD_AFFINITY_TERM}
    pod = {"affinity": {"nodeAffinity": {PREFERRED: [preferred]}, "podAffinity": {PREFERRED: [weighted]}}}
    policy = {
        "affinity": {
            "nodeAffinity": {PREFERRED: [preferred, {"weight": 20, "preference": term(req("q"))}]},
            "podAffinity": {REQUIRED: [POD_AFFINITY_TERM], PREFERRED: [weighted]},
            "podAntiAffinity": {PREFERRED: [weighted]},
        }
    }
    affinity = merge_policies(pod, [policy])["affinity"]
    assert affinity["nodeAffinity"][PREFERRED] == [preferred, {"weight": 20, "preference": term(req("q"))}]
    assert affinity["podAffinity"] == {PREFERRED: [weighted], REQUIRED: [POD_AFFINITY_TERM]}
    assert affinity["podAntiAffinity"] == {PREFERRED: [weighted]}


def test_merging_the_same_policy_twice_gives_the_same_terms() -> None:
    """Upstream multiplies the terms again on every pass ([DA, EA] becomes 4 terms)."""
    policy = {"affinity": required(term(req("d")), term(req("e")))}
    once = merge_policies({"affinity": required(term(req("a")))}, [policy])
    assert keys_of(terms_of(once)) == [["d", "a"], ["e", "a"]]
    again = merge_detailed(once, [policy])
    assert again.spec == once
    assert again.outcomes[0].result == UNCHANGED


def test_supersets_and_repeats_of_product_terms_are_dropped() -> None:
    # (a) OR (a AND b), times (a): [a, ab] → [a], not [a, ab].
    pod = {"affinity": required(term(req("a")), term(req("a"), req("b")))}
    assert keys_of(terms_of(merge_policies(pod, [{"affinity": required(term(req("a")))}]))) == [["a"]]
    # Terms equal as sets (values as sets, any order): the first is kept.
    pod = {"affinity": required(term(req("k", "In", "x", "y")), term(req("k", "In", "y", "x")))}
    terms = terms_of(merge_policies(pod, [{"affinity": required(term(req("d")))}]))
    assert terms == [term(req("d"), req("k", "In", "x", "y"))]


def test_unsatisfiable_product_terms_are_dropped() -> None:
    pod = {"affinity": required(term(req("zone", "In", "a")), term(req("zone", "In", "b")))}
    policy = {"affinity": required(term(req("zone", "In", "b", "c")))}
    result = merge_detailed(pod, [policy])
    assert terms_of(result.spec) == [term(req("zone", "In", "b", "c"), req("zone", "In", "b"))]
    assert result.outcomes[0].result == APPLIED


def test_a_policy_whose_every_term_contradicts_is_in_conflict_and_skipped_as_a_whole() -> None:
    pod = {"affinity": required(term(req("zone", "In", "a"))), "nodeSelector": {"disk": "ssd"}}
    policy = cluster(
        "etcd",
        affinity=required(term(req("zone", "In", "b")), term(req("zone", "DoesNotExist"))),
        nodeSelector={"pool": "etcd"},
        tolerations=[TOLERATION],
    )
    later = namespaced("team-a", "spot", nodeSelector={"pool": "spot"})
    result = merge_detailed(pod, [policy, later])
    assert result.spec == {**pod, "nodeSelector": {"disk": "ssd", "pool": "spot"}}  # the pod keeps its own terms
    conflict = result.outcomes[0]
    assert (conflict.ref, conflict.result) == ("ClusterPodSchedulingPolicy/etcd", CONFLICT)
    assert conflict.message == (
        "every required node-affinity term would be unsatisfiable "
        "(terms[0]: zone: In sets do not intersect; terms[1]: zone: DoesNotExist meets In)"
    )
    assert conflict.conflicts[-1].path == f"affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms"
    assert result.outcomes[1].result == APPLIED
    assert merge_detailed(result.spec, [policy, later]).spec == result.spec


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ({"nodeSelector": {"pool": 1}}, "spec.nodeSelector.pool: Input should be a valid string"),
        (
            {"affinity": required(term(req("k", "Gt", "five")))},
            f"spec.affinity.nodeAffinity.{REQUIRED}.nodeSelectorTerms[0].matchExpressions[0].values: Invalid value",
        ),
        (
            {"affinity": {"nodeAffinity": {PREFERRED: [{"weight": 1, "preference": term(req("k", "Near", "x"))}]}}},
            f"spec.affinity.nodeAffinity.{PREFERRED}[0].preference.matchExpressions[0].operator: Unsupported value",
        ),
        ({"tolerations": "all"}, "spec.tolerations: Input should be a valid list"),
        ({"kind": "ConfigMap"}, "kind: 'ConfigMap' is neither"),
        (
            {"kind": "PodSchedulingPolicy", "metadata": {"name": "p", "namespace": "n"}, "spec": "x"},
            "spec: is not an object",
        ),
    ],
)
def test_an_invalid_policy_is_an_error_and_every_other_policy_still_applies(
    policy: dict[str, Any], message: str
) -> None:
    result = merge_detailed(
        {},
        [
            {"nodeName": "n1"},
            {**policy, "nodeName": "n9"} if "kind" not in policy else policy,
            {"nodeSelector": {"a": "b"}},
        ],
    )
    assert result.spec == {"nodeName": "n1", "nodeSelector": {"a": "b"}}
    assert [o.result for o in result.outcomes] == [APPLIED, ERROR, APPLIED]
    assert result.outcomes[1].message.startswith(message)


def test_outcomes_name_each_policy_and_what_it_changed() -> None:
    model = ClusterPodSchedulingPolicy.model_validate(cluster("etcd", tolerations=[TOLERATION]))
    policies: list[Any] = [model, namespaced("team-a", "spot", nodeSelector={"pool": "spot"}), {"nodeName": ""}]
    result = merge_detailed({}, policies)
    assert [(o.ref, o.result, o.changed) for o in result.outcomes] == [
        ("ClusterPodSchedulingPolicy/etcd", APPLIED, ("tolerations",)),
        ("PodSchedulingPolicy/team-a/spot", APPLIED, ("nodeSelector",)),
        ("policies[2]", UNCHANGED, ()),
    ]
    assert result.changed
    assert not merge_detailed(result.spec, policies).changed


def test_the_inputs_are_not_mutated_and_the_result_shares_nothing_with_them() -> None:
    pod = {
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
        "nodeSelector": {"zone": "a"},
        "tolerations": [TOLERATION],
        "affinity": required(term(req("a"))),
    }
    policies = [
        cluster(
            "p",
            nodeSelector={"pool": "x"},
            tolerations=[{"key": "t", "operator": "Exists"}],
            affinity=required(term(req("d"))),
        ),
        {"affinity": {"podAffinity": {REQUIRED: [POD_AFFINITY_TERM]}}},
    ]
    before = copy.deepcopy((pod, policies))
    spec = merge_policies(pod, policies)
    assert (pod, policies) == before
    inputs = {id(node) for node in _containers((pod, policies))}
    assert not [node for node in _containers(spec) if id(node) in inputs]
    assert spec["containers"] == pod["containers"]


def _containers(value: Any) -> list[Any]:
    found: list[Any] = []
    if isinstance(value, dict | list | tuple):
        found.append(value)
        for child in value.values() if isinstance(value, dict) else value:
            found.extend(_containers(child))
    return found


# ----------------------------------------------------------- kupid's own code (docs/design.md, differences 54–57)

ETCD_TERM = {"weight": 50, "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname",
                                               "labelSelector": {"matchLabels": {"app": "etcd"}}}}  # fmt: skip


@pytest.mark.parametrize(
    ("section", "field", "repeated"),
    [
        ("podAntiAffinity", PREFERRED, ETCD_TERM),
        ("podAffinity", PREFERRED, ETCD_TERM),
        ("podAntiAffinity", REQUIRED, POD_AFFINITY_TERM),
        ("podAffinity", REQUIRED, POD_AFFINITY_TERM),
        ("nodeAffinity", PREFERRED, {"weight": 10, "preference": term(req("zone", "In", "a"))}),
    ],
)
def test_a_term_a_policy_repeats_is_added_once(section: str, field: str, repeated: dict[str, Any]) -> None:
    # Difference 54, issue 30's example: kupid copies a missing section whole, [T, T]; the scheduler would then
    # score a preferred T twice.
    policy = {"affinity": {section: {field: [repeated, copy.deepcopy(repeated)]}}}

    merged = merge_policies({"containers": []}, [policy])

    assert merged["affinity"] == {section: {field: [repeated]}}
    assert merge_policies(merged, [policy]) == merged  # and when the section is there, as kupid does too


@pytest.mark.parametrize(
    "affinity",
    [
        {},
        {"podAffinity": {}},
        {"podAntiAffinity": {PREFERRED: [], REQUIRED: []}},
        {"nodeAffinity": {}},
        {"nodeAffinity": {PREFERRED: [], REQUIRED: {"nodeSelectorTerms": []}}},
        {"nodeAffinity": {}, "podAffinity": {}, "podAntiAffinity": {}},
    ],
)
def test_an_empty_affinity_section_writes_nothing(affinity: dict[str, Any]) -> None:
    # Difference 55: kupid writes the empty section into a pod without one; no scheduling effect either way.
    result = merge_detailed({"containers": []}, [{"affinity": affinity}])

    assert result.spec == {"containers": []}
    assert result.outcomes[0].result == UNCHANGED


def test_a_required_node_selector_without_terms_is_ignored_and_the_rest_merged() -> None:
    # Difference 56: kupid copies the empty selector, and the API server refuses the pod.
    policy = {"affinity": {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": []}}}, "tolerations": [TOLERATION]}

    result = merge_detailed({"containers": []}, [policy])

    assert result.spec == {"containers": [], "tolerations": [TOLERATION]}
    assert result.outcomes[0].result == APPLIED
    pinned = merge_detailed({"affinity": required(term(req("a")))}, [policy])
    assert pinned.spec["affinity"] == required(term(req("a")))


def test_every_pod_spec_field_outside_the_merged_ones_is_kept() -> None:
    # Difference 57: kupid re-encodes the pod from k8s.io/api v0.24.3 types, losing schedulingGates,
    # matchLabelKeys and every later field.
    spec = full_pod_spec()
    assert {"schedulingGates", "resourceClaims", "hostUsers", "os"} <= spec.keys()
    policy = {
        "nodeSelector": {"pool": "etcd"}, "tolerations": [TOLERATION],
        "affinity": {"podAntiAffinity": {PREFERRED: [ETCD_TERM]}, "podAffinity": {REQUIRED: [POD_AFFINITY_TERM]}},
    }  # fmt: skip

    result = merge_detailed(spec, [policy])

    assert result.outcomes[0].result == APPLIED
    assert {k: v for k, v in result.spec.items() if k not in SCHEDULING_FIELDS} == {
        k: v for k, v in spec.items() if k not in SCHEDULING_FIELDS
    }
    merged = result.spec["affinity"]
    assert merged["nodeAffinity"] == spec["affinity"]["nodeAffinity"]
    for section, field, added in (("podAntiAffinity", PREFERRED, ETCD_TERM), ("podAffinity", REQUIRED,
                                                                             POD_AFFINITY_TERM)):  # fmt: skip
        own = spec["affinity"][section][field]
        assert merged[section][field] == [*own, added]
        assert all("matchLabelKeys" in (t.get("podAffinityTerm") or t) for t in own)
    assert result.spec["tolerations"] == [*spec["tolerations"], TOLERATION]
    assert result.spec["nodeSelector"] == {**spec["nodeSelector"], "pool": "etcd"}
