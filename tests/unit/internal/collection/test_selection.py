"""Which profiles a source's cycle measures, and through which pods."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.api.ballast.v1 import ClusterResourcePolicy, MetricsSource, ResourcePolicy, WorkloadProfile
from ballast.internal.collection import (
    LoadedPolicy,
    MeasuredPod,
    MeasuredPodMemo,
    PolicyKey,
    attribution,
    fed_profiles,
    measured_pods,
    policy_key,
    policy_keys,
    selection,
)
from ballast.internal.enrollment import PodProjection, pod_projection

HASH = "0123456789abcdef"
MODE = "ballast.tightlinesoftware.com/mode"
SOURCE = MetricsSource.model_validate(
    {"metadata": {"name": "metrics", "uid": "s1", "generation": 2}, "spec": {"type": "metrics-server"}}
)
SPEC = {"metrics": [{"resource": "cpu", "field": "request", "source": "metrics", "aggregation": "max"}]}
CLUSTER = ClusterResourcePolicy.model_validate(
    {"metadata": {"name": "default", "uid": "p1", "generation": 3}, "spec": SPEC}
)


def profile(name: str, *, ref: dict[str, str] | None = None, hash_: str = HASH, **meta: Any) -> WorkloadProfile:
    status: dict[str, Any] = {"measurementHash": hash_, "selectorLabels": {"app": name}}
    if ref is not None:
        status["policyRef"] = ref
    return WorkloadProfile.model_validate({"metadata": {"name": name, "uid": f"u-{name}", **meta}, "status": status})


CLUSTER_REF = {"kind": "ClusterResourcePolicy", "name": "default"}


def test_only_profiles_with_a_policy_that_takes_a_resource_from_the_source_are_fed() -> None:
    kubelet_only = ResourcePolicy.model_validate({
        "metadata": {"name": "disk", "namespace": "team", "uid": "p2", "generation": 1},
        "spec": {"metrics": [{"resource": "ephemeral-storage", "field": "request", "source": "kubelet"}]},
    })  # fmt: skip
    profiles = [
        profile("api", ref=CLUSTER_REF),
        profile("orphan"),  # no policy: never measured
        profile("gone", ref=CLUSTER_REF, deletionTimestamp="2026-03-01T12:00:00Z"),
        profile("disk", ref={"kind": "ResourcePolicy", "namespace": "team", "name": "disk"}),
        profile("lost", ref={"kind": "ResourcePolicy", "namespace": "team", "name": "missing"}),
        profile("fresh", ref=CLUSTER_REF, hash_=""),
    ]
    keys = policy_keys(profiles)
    assert keys == {
        ("ClusterResourcePolicy", "", "default"),
        ("ResourcePolicy", "team", "disk"),
        ("ResourcePolicy", "team", "missing"),
    }
    loaded: dict[PolicyKey, LoadedPolicy | None] = {
        ("ClusterResourcePolicy", "", "default"): LoadedPolicy.of(CLUSTER),
        ("ResourcePolicy", "team", "disk"): LoadedPolicy.of(kubelet_only),
        ("ResourcePolicy", "team", "missing"): None,  # not in the cache
    }

    fed = fed_profiles(SOURCE, profiles, loaded)

    assert [f.name for f in fed.profiles] == ["api"]
    assert fed.without_identity == ["fresh"]
    assert fed.profiles[0].measured.resources == frozenset({"cpu"})
    assert fed.profiles[0].stamp == (HASH, "ClusterResourcePolicy", "", "default", "p1", 3, "s1", 2)
    assert policy_key(profiles[2]) is None


def pod(name: str, labels: dict[str, str], node: str | None) -> PodProjection:
    spec: dict[str, Any] = {"containers": [{"name": "app"}]}
    if node:
        spec["nodeName"] = node
    return pod_projection({"metadata": {"name": name, "namespace": "default", "labels": labels}, "spec": spec})


def test_measured_pods_are_the_enrolled_pods_still_matching_their_profile_and_their_nodes() -> None:
    fed = fed_profiles(
        SOURCE, [profile("api", ref=CLUSTER_REF)], {("ClusterResourcePolicy", "", "default"): LoadedPolicy.of(CLUSTER)}
    )
    pods_of = {
        "api": [
            pod("a", {MODE: "measure", "app": "api"}, "node-1"),
            pod("b", {MODE: "apply", "app": "api"}, None),  # pending: measured, no node to fetch
            pod("c", {MODE: "measure", "app": "web"}, "node-2"),  # relabelled away from the profile
            pod("d", {"app": "api"}, "node-3"),  # not enrolled
        ]
    }
    pods, nodes = measured_pods(fed.profiles, pods_of)
    assert sorted(pods) == [("default", "a"), ("default", "b")]
    assert pods[("default", "a")].containers == frozenset({"app"})
    assert nodes == frozenset({"node-1"})


def test_the_memo_measures_a_pod_again_only_when_the_pod_or_what_its_profile_measures_changed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    policies: dict[PolicyKey, LoadedPolicy | None] = {
        ("ClusterResourcePolicy", "", "default"): LoadedPolicy.of(CLUSTER)
    }
    fed = fed_profiles(SOURCE, [profile("api", ref=CLUSTER_REF)], policies).profiles
    calls: list[str] = []
    measure = attribution.measured_pod

    def counted(measured: PodProjection, *rest: Any) -> MeasuredPod | None:
        calls.append(measured.metadata.name)
        return measure(measured, *rest)

    monkeypatch.setattr(selection, "measured_pod", counted)
    a, b = pod("a", {MODE: "measure", "app": "api"}, "node-1"), pod("b", {MODE: "measure", "app": "api"}, None)
    memo = MeasuredPodMemo()

    first = measured_pods(fed, {"api": [a, b]}, memo)
    again = measured_pods(fed, {"api": [a, b]}, memo)  # the same cached objects: nothing measured again
    relabelled = pod("b", {MODE: "measure", "app": "web"}, None)  # b replaced in the cache
    changed = measured_pods(fed, {"api": [a, relabelled]}, memo)
    other_hash = fed_profiles(SOURCE, [profile("api", ref=CLUSTER_REF, hash_="fedcba9876543210")], policies).profiles
    rehashed = measured_pods(other_hash, {"api": [a, relabelled]}, memo)
    measured_pods(fed, {"api": [relabelled]}, memo)  # back to the first hash; a is gone: forgotten
    measured_pods(fed, {"api": [a]}, memo)

    assert calls == ["a", "b", "b", "a", "b", "b", "a"]
    assert first == again == measured_pods(fed, {"api": [a, b]})
    assert sorted(changed[0]) == [("default", "a")]
    assert rehashed[0][("default", "a")].profile.measurement_hash == "fedcba9876543210"
