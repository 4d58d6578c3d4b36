"""`ballast explain` on a real API server: the scheduling policies a pod was admitted with (its annotation)
against today's, from the ClusterPodSchedulingPolicies, the namespace's PodSchedulingPolicies and the namespace's
labels."""

from __future__ import annotations

import pytest

from ballast.internal.cmd import ballast as cli
from ballast.internal.scheduling import POLICIES_ANNOTATION
from ballast.runtime.envtest import Environment

KUPID = "/apis/kupid.gardener.cloud/v1alpha1"


def test_explain_compares_the_admitted_policies_with_todays(
    cluster: Environment, namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cluster.rest.request(
        "PATCH", f"/api/v1/namespaces/{namespace}", {"metadata": {"labels": {"pool": "db"}}},
        content_type="application/merge-patch+json",
    )  # fmt: skip
    cluster.rest.create(
        f"{KUPID}/clusterpodschedulingpolicies",
        {"apiVersion": "kupid.gardener.cloud/v1alpha1", "kind": "ClusterPodSchedulingPolicy",
         "metadata": {"name": f"{namespace}-db"},
         "spec": {"namespaceSelector": {"matchLabels": {"pool": "db"}}, "podSelector": {"matchLabels": {"app": "db"}},
                  "nodeSelector": {"pool": "db"}}},
    )  # fmt: skip
    cluster.rest.create(
        f"{KUPID}/namespaces/{namespace}/podschedulingpolicies",
        {"apiVersion": "kupid.gardener.cloud/v1alpha1", "kind": "PodSchedulingPolicy",
         "metadata": {"name": "zone"}, "spec": {"podSelector": {}, "nodeSelector": {"zone": "a"}}},
    )  # fmt: skip
    stamped = f"ClusterPodSchedulingPolicy/{namespace}-db,PodSchedulingPolicy/{namespace}/spot"
    for name, stamps in (("admitted", {POLICIES_ANNOTATION: stamped}), ("unstamped", {})):
        cluster.rest.create(
            f"/api/v1/namespaces/{namespace}/pods",
            {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": name, "labels": {"app": "db"}, "annotations": stamps},
             "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]}},
        )  # fmt: skip
    try:
        assert cli.main(["explain", "--kubeconfig", str(cluster.kubeconfig_path), f"pod/{namespace}/admitted"]) == 0
        admitted = capsys.readouterr().out.splitlines()
        assert cli.main(["explain", "--kubeconfig", str(cluster.kubeconfig_path), f"pod/{namespace}/unstamped"]) == 0
        unstamped = capsys.readouterr().out.splitlines()
    finally:
        cluster.rest.delete(f"{KUPID}/clusterpodschedulingpolicies/{namespace}-db")
    section = admitted[admitted.index("Scheduling policies") :][:3]
    assert section == [
        "Scheduling policies",
        f"  matched at admission: ClusterPodSchedulingPolicy/{namespace}-db, PodSchedulingPolicy/{namespace}/spot",
        f"  today: ClusterPodSchedulingPolicy/{namespace}-db, PodSchedulingPolicy/{namespace}/zone (added "
        f"PodSchedulingPolicy/{namespace}/zone; removed PodSchedulingPolicy/{namespace}/spot; the pod changes only "
        "when it is re-created)",
    ]
    assert unstamped[unstamped.index("Scheduling policies") :][:3] == [
        "Scheduling policies",
        "  no scheduling policy matched at admission",
        f"  today: ClusterPodSchedulingPolicy/{namespace}-db, PodSchedulingPolicy/{namespace}/zone would match (it "
        "applies when the pod is re-created)",
    ]
