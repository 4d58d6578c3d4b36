"""order_policies: cluster policies first, then namespaced ones, each ascending by name, whatever the input order
(docs/design.md, difference 27)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.api.kupid.v1alpha1 import ClusterPodSchedulingPolicy
from ballast.internal.scheduling import (
    InvalidPolicyError,
    Policy,
    merge_policies,
    order_policies,
    policy_ref,
    select_policies,
)

from .builders import cluster, namespaced


def _refs(policies: list[Any]) -> list[str]:
    return [policy_ref(p) for p in policies]


def test_cluster_policies_come_first_then_namespaced_each_ascending_by_name() -> None:
    policies = [
        namespaced("team-a", "b"),
        cluster("zeta"),
        namespaced("team-a", "a"),
        cluster("etcd"),
        cluster("alpha"),
    ]
    assert _refs(order_policies(policies)) == [
        "ClusterPodSchedulingPolicy/alpha",
        "ClusterPodSchedulingPolicy/etcd",
        "ClusterPodSchedulingPolicy/zeta",
        "PodSchedulingPolicy/team-a/a",
        "PodSchedulingPolicy/team-a/b",
    ]


def test_more_than_twelve_policies_are_ordered_too() -> None:
    # Upstream's comparator only left small lists as listed; above 12 its order was unspecified.
    names = [f"p{n:02}" for n in range(30)]
    policies = [cluster(name) for name in reversed(names)]
    assert [p["metadata"]["name"] for p in order_policies(policies)] == names


def test_a_tenants_policy_never_overrides_a_cluster_administrators_node_selector() -> None:
    admin = cluster("zz-dedicated", namespaceSelector={}, podSelector={}, nodeSelector={"pool": "etcd"})
    tenant = namespaced("team-a", "aa-cheap", podSelector={}, nodeSelector={"pool": "spot"})
    selection = select_policies([tenant, admin], {}, {"app": "etcd"})
    assert _refs(list(selection.matched)) == [
        "ClusterPodSchedulingPolicy/zz-dedicated",
        "PodSchedulingPolicy/team-a/aa-cheap",
    ]
    assert merge_policies({}, selection.matched)["nodeSelector"] == {"pool": "etcd"}


def test_ties_on_name_are_broken_by_namespace_then_content_and_models_mix_with_dicts() -> None:
    model = ClusterPodSchedulingPolicy.model_validate(cluster("m", nodeName="n1"))
    policies: list[Policy] = [namespaced("b", "same"), namespaced("a", "same"), model, cluster("m", nodeName="n0")]
    ordered = order_policies(policies)
    assert _refs(ordered) == [
        "ClusterPodSchedulingPolicy/m",
        "ClusterPodSchedulingPolicy/m",
        "PodSchedulingPolicy/a/same",
        "PodSchedulingPolicy/b/same",
    ]
    assert ordered[1] is model  # the items are returned as given


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(InvalidPolicyError, match="'ConfigMap' is neither"):
        order_policies([{"kind": "ConfigMap", "metadata": {"name": "x"}}])


_POLICIES = st.lists(
    st.one_of(
        st.builds(cluster, st.sampled_from("abcde")),
        st.builds(namespaced, st.sampled_from(["ns1", "ns2"]), st.sampled_from("abcde")),
        st.builds(lambda n, v: cluster(n, nodeName=v), st.sampled_from("ab"), st.sampled_from(["x", "y"])),
    ),
    max_size=15,
)


@given(_POLICIES, st.randoms(use_true_random=False))
def test_the_order_is_the_same_for_any_permutation(policies: list[dict[str, Any]], random: Any) -> None:
    shuffled = list(policies)
    random.shuffle(shuffled)
    assert order_policies(shuffled) == order_policies(policies)
    ordered = order_policies(policies)
    kinds = [p["kind"] for p in ordered]
    assert kinds == sorted(kinds)  # "ClusterPodSchedulingPolicy" < "PodSchedulingPolicy"
