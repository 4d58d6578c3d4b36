"""The preview of scheduling policies: loading the file, which objects are selected, the merge with the cluster's
policies in merge order, the diff, the skipped pods, and the foreign injecting webhooks."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.internal.scheduling import APPLIED, CONFLICT, ENFORCE_ANNOTATION, UNCHANGED
from ballast.internal.scheduling.preview import (
    ForeignWebhook,
    PolicyFileError,
    foreign_webhooks,
    load_policies,
    preview,
    scheduling_fields,
)

from .builders import cluster, namespaced

EVERYWHERE: dict[str, Any] = {"namespaceSelector": {}, "podSelector": {}}
LABELS: dict[str, dict[str, str]] = {"shop": {"tier": "prod"}, "lab": {}}


def deployment(namespace: str, name: str, labels: dict[str, str], **spec: Any) -> dict[str, Any]:
    template = {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "app"}], **spec}}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"namespace": namespace, "name": name},
        "spec": {"template": template},
    }


def pod(namespace: str, name: str, labels: dict[str, str], **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"namespace": namespace, "name": name, "labels": labels, **metadata},
        "spec": {"containers": [{"name": "app"}], "schedulerName": "default-scheduler"},
    }


SPOT = cluster(
    "spot", namespaceSelector={"matchLabels": {"tier": "prod"}}, podSelector={}, nodeSelector={"pool": "spot"}
)


# --------------------------------------------------------------------------------------------- loading


def test_several_documents_and_a_list_are_read_and_a_namespaced_policy_lands_in_the_namespace() -> None:
    text = """
apiVersion: kupid.gardener.cloud/v1alpha1
kind: ClusterPodSchedulingPolicy
metadata: {name: spot}
spec: {podSelector: {}, namespaceSelector: {}}
---
apiVersion: v1
kind: List
items:
- apiVersion: kupid.gardener.cloud/v1alpha1
  kind: PodSchedulingPolicy
  metadata: {name: zone}
  spec: {podSelector: {matchLabels: {app: web}}}
---
"""
    policies = load_policies(text, "p.yaml", "shop")
    assert [(p["kind"], p["metadata"].get("namespace")) for p in policies] == [
        ("ClusterPodSchedulingPolicy", None),
        ("PodSchedulingPolicy", "shop"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
         "p.yaml: the document: kind 'Deployment' is neither ClusterPodSchedulingPolicy nor PodSchedulingPolicy"),
        ("kind: ClusterPodSchedulingPolicy\napiVersion: kupid.gardener.cloud/v1alpha1\nmetadata: {name: a}\n---\n"
         "- a list\n", "p.yaml: document 2: is a list, not an object"),
        ("kind: ClusterPodSchedulingPolicy\napiVersion: kupid.gardener.cloud/v1\nmetadata: {name: a}\n",
         "apiVersion 'kupid.gardener.cloud/v1' is not kupid.gardener.cloud/v1alpha1"),
        ("kind: ClusterPodSchedulingPolicy\napiVersion: kupid.gardener.cloud/v1alpha1\nmetadata: {}\n",
         "metadata.name is missing"),
        ("kind: ClusterPodSchedulingPolicy\napiVersion: kupid.gardener.cloud/v1alpha1\nmetadata: {name: a}\n"
         "spec: {podSelector: {matchExpressions: [{key: k, operator: Near}]}}\n",
         "spec.podSelector.matchExpressions[0]"),
        ("kind: ClusterPodSchedulingPolicy\napiVersion: kupid.gardener.cloud/v1alpha1\nmetadata: {name: a}\n"
         "spec: {tolerations: 3}\n", "spec.tolerations"),
        ("kind: PodSchedulingPolicy\napiVersion: kupid.gardener.cloud/v1alpha1\nmetadata: {name: a}\n",
         "PodSchedulingPolicy/a): a PodSchedulingPolicy without metadata.namespace needs -n"),
        ("kind: ClusterPodSchedulingPolicy\napiVersion: kupid.gardener.cloud/v1alpha1\nmetadata: {name: a}\n---\n"
         "kind: ClusterPodSchedulingPolicy\napiVersion: kupid.gardener.cloud/v1alpha1\nmetadata: {name: a}\n",
         "document 2: ClusterPodSchedulingPolicy/a is given twice (also document 1)"),
        ("---\n", "p.yaml: no policy in it"),
        ("a: [\n", "p.yaml: not YAML"),
    ],
)  # fmt: skip
def test_a_document_that_is_not_a_usable_policy_is_refused_by_its_position(text: str, message: str) -> None:
    with pytest.raises(PolicyFileError, match=None) as refused:
        load_policies(text, "p.yaml", None)
    assert message in str(refused.value)


def test_a_namespace_other_than_the_one_given_with_n_is_refused() -> None:
    text = "kind: PodSchedulingPolicy\napiVersion: kupid.gardener.cloud/v1alpha1\nmetadata: {name: a, namespace: x}\n"
    with pytest.raises(PolicyFileError, match="its namespace 'x' does not match -n 'y'"):
        load_policies(text, "p.yaml", "y")


# --------------------------------------------------------------------------------------------- preview


def test_only_the_objects_a_previewed_policy_selects_are_shown_with_the_change() -> None:
    objects = [deployment("shop", "web", {"app": "web"}), deployment("lab", "try", {"app": "try"})]
    result = preview([SPOT], [], LABELS, objects)
    [item] = result.objects
    assert (item.label, item.result, item.changed) == ("Deployment shop/web", APPLIED, True)
    assert item.before == {}
    assert item.after == {"nodeSelector": {"pool": "spot"}}
    assert item.diff() == [
        "--- Deployment shop/web (now)",
        "+++ Deployment shop/web (with the policies)",
        "@@ -0,0 +1,2 @@",
        "+nodeSelector:",
        "+  pool: spot",
    ]
    assert (result.previewed, result.replaced, result.existing) == (("ClusterPodSchedulingPolicy/spot",), (), ())


def test_the_cluster_policies_merge_first_so_a_previewed_policy_that_loses_every_field_is_unchanged() -> None:
    etcd = cluster("etcd", **EVERYWHERE, nodeSelector={"pool": "etcd"})
    tenant = namespaced("shop", "cheap", podSelector={}, nodeSelector={"pool": "spot"})
    result = preview([tenant], [etcd], LABELS, [deployment("shop", "web", {"app": "web"})])
    [item] = result.objects
    assert [(o.ref, o.result) for o in item.outcomes] == [
        ("ClusterPodSchedulingPolicy/etcd", APPLIED),
        ("PodSchedulingPolicy/shop/cheap", UNCHANGED),
    ]
    assert item.result == UNCHANGED  # the previewed policy's result, though the object changes (etcd applies)
    assert item.after == {"nodeSelector": {"pool": "etcd"}}
    assert [str(c) for c in item.outcomes[1].conflicts] == ["nodeSelector[pool]: is 'etcd', the policy's is 'spot'"]
    assert result.existing == ("ClusterPodSchedulingPolicy/etcd",)


def test_a_previewed_policy_replaces_the_clusters_policy_of_the_same_name() -> None:
    stored = cluster("spot", **EVERYWHERE, nodeSelector={"pool": "old"})
    result = preview([SPOT], [stored], LABELS, [deployment("shop", "web", {"app": "web"})])
    [item] = result.objects
    assert [o.ref for o in item.outcomes] == ["ClusterPodSchedulingPolicy/spot"]
    assert item.after == {"nodeSelector": {"pool": "spot"}}
    assert (result.replaced, result.existing) == (("ClusterPodSchedulingPolicy/spot",), ())


def test_a_namespaced_policy_selects_only_in_its_own_namespace() -> None:
    tenant = namespaced("lab", "zone", podSelector={}, nodeSelector={"zone": "a"})
    objects = [deployment("shop", "web", {"app": "web"}), deployment("lab", "try", {"app": "try"})]
    assert [item.label for item in preview([tenant], [], LABELS, objects).objects] == ["Deployment lab/try"]


def test_daemonset_and_mirror_pods_are_counted_not_previewed_and_workloads_come_before_pods() -> None:
    owner = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "uid": "u", "controller": True}
    objects = [
        pod("shop", "bare", {}),
        pod("shop", "agent-x", {}, ownerReferences=[owner]),
        pod("shop", "static-node-a", {}, annotations={"kubernetes.io/config.mirror": "x"}),
        pod("shop", "leaving", {}, deletionTimestamp="2026-01-01T00:00:00Z"),
        deployment("shop", "web", {"app": "web"}),
        {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"namespace": "shop", "name": "web-1"}},
    ]
    result = preview([SPOT], [], LABELS, objects)
    assert [item.label for item in result.objects] == ["Deployment shop/web", "Pod shop/bare"]
    assert (result.skipped_daemonset_pods, result.skipped_mirror_pods) == (1, 1)
    assert result.objects[1].before == {"schedulerName": "default-scheduler"}


def test_a_conflict_and_an_enforced_policy_that_would_deny_the_object() -> None:
    impossible = cluster(
        "impossible",
        **EVERYWHERE,
        affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}]}}},
    )  # fmt: skip
    impossible["metadata"]["annotations"] = {ENFORCE_ANNOTATION: "true"}
    own = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}}  # fmt: skip
    result = preview([impossible], [], LABELS, [deployment("shop", "web", {}, affinity=own)])
    [item] = result.objects
    assert (item.result, item.changed, item.denied_by) == (CONFLICT, False, ("ClusterPodSchedulingPolicy/impossible",))
    assert item.diff() == []


def test_an_invalid_policy_in_the_cluster_is_reported_once_and_the_others_still_apply() -> None:
    broken = cluster("broken", namespaceSelector={}, podSelector={"matchExpressions": [{"key": "k", "operator": "?"}]})
    objects = [deployment("shop", "web", {}), deployment("shop", "api", {})]
    result = preview([SPOT], [broken], LABELS, objects)
    assert [item.label for item in result.objects] == ["Deployment shop/api", "Deployment shop/web"]
    assert [o.ref for o in result.invalid] == ["ClusterPodSchedulingPolicy/broken"]


def test_scheduling_fields_leave_out_everything_else_and_empty_values() -> None:
    spec = {"containers": [], "nodeName": "", "tolerations": [], "schedulerName": "x", "nodeSelector": {"a": "b"}}
    assert scheduling_fields(spec) == {"schedulerName": "x", "nodeSelector": {"a": "b"}}


# --------------------------------------------------------------------------------------------- webhooks


def configuration(name: str, rules: list[dict[str, Any]], labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "webhooks": [{"name": f"{name}.example.com", "rules": rules}],
    }


def rule(groups: list[str], resources: list[str], operations: list[str] | None = None) -> dict[str, Any]:
    return {"apiGroups": groups, "apiVersions": ["v1"], "resources": resources, "operations": operations or ["CREATE"]}


def test_foreign_webhooks_intercepting_target_kinds_are_found_and_ours_are_not() -> None:
    found = foreign_webhooks(
        [
            configuration(
                "gardener-extension-kupid", [rule([""], ["pods"]), rule(["apps"], ["deployments", "*/scale"])]
            ),
            configuration("everything", [rule(["*"], ["*/*"], ["*"])]),
            configuration("ballast-scheduling", [rule([""], ["pods"])], {"app.kubernetes.io/name": "ballast"}),
            configuration("subresources-only", [rule([""], ["pods/*", "pods/status"])]),
            configuration("deletes-only", [rule([""], ["pods"], ["DELETE"])]),
            configuration("other-group", [rule(["example.com"], ["pods"])]),
        ]
    )
    assert found == [
        ForeignWebhook("gardener-extension-kupid", "gardener-extension-kupid.example.com", ("pods", "deployments")),
        ForeignWebhook(
            "everything",
            "everything.example.com",
            ("pods", "replicationcontrollers", "deployments", "statefulsets", "daemonsets", "jobs", "cronjobs"),
        ),
    ]
