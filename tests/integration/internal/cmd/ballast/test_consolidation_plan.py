"""`ballast consolidation plan` on a real API server: three m5.xlarge Nodes of a Karpenter NodePool `general`
(Balanced, on-demand m5 only; the NodePool kind a stand-in CRD), pods bound to them, the sample catalogue applied
with `kubectl apply -k`, and a WorkloadProfile recommending smaller requests for the api pods.

The JSON and the table show what the recommended requests free (node-a and node-b, $210.24 a month) beside what
the current requests free (node-a, $70.08), and the marginal replacement of node-c (six cheap pods: 1/6 of the
cost for 7/13 of the disruption) rejected at k 2 — and taken once the NodePool says WhenEmptyOrUnderutilized. The
sample file as a local catalogue gives the same plans, and the ConsolidationReport the consolidation controller
writes from the same cluster frees the same nodes; a missing ConfigMap exits 1 naming it."""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from ballast.api.scheme import add_to_scheme
from ballast.controllers.consolidation import AdvisorSettings, setup
from ballast.internal.cmd import ballast as cli
from ballast.internal.consolidation.inputs import ReadSettings
from ballast.internal.enrollment import PROFILE_REF
from ballast.runtime import Manager, RESTConfig, Scheme
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.wait import poll_until
from tests.paths import REPOSITORY
from tests.unit.internal.runtime.support import running

SAMPLE = REPOSITORY / "config" / "samples" / "consolidation"
NAMESPACE = "shop"
PROFILE = "shop-api"
NODES = ("node-a", "node-b", "node-c")
NODEPOOLS = "/apis/karpenter.sh/v1/nodepools"
PROFILES = "/apis/ballast.tightlinesoftware.com/v1/workloadprofiles"
REPORT = "/apis/ballast.tightlinesoftware.com/v1/consolidationreports/cluster"
NODEPOOL_CRD = {
    # A stand-in for Karpenter's CRD: its group, version and names; a schema that accepts anything.
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "nodepools.karpenter.sh"},
    "spec": {
        "group": "karpenter.sh",
        "names": {"kind": "NodePool", "listKind": "NodePoolList", "plural": "nodepools", "singular": "nodepool"},
        "scope": "Cluster",
        "versions": [{"name": "v1", "served": True, "storage": True,
                      "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}],
    },
}  # fmt: skip
NODEPOOL = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "general"},
    "spec": {
        "disruption": {"consolidationPolicy": "Balanced", "budgets": [{"nodes": "100%"}]},
        "template": {"spec": {"requirements": [
            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]},
            {"key": "node.kubernetes.io/instance-type", "operator": "In",
             "values": ["m5.large", "m5.xlarge", "m5.2xlarge"]},
        ]}},
    },
}  # fmt: skip
M5_XLARGE = {"cpu": "3920m", "memory": "14162Mi", "pods": "58"}  # the sample catalogue's allocatable


def _node(name: str) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, "karpenter.sh/nodepool": "general",
              "node.kubernetes.io/instance-type": "m5.xlarge", "karpenter.sh/capacity-type": "on-demand",
              "topology.kubernetes.io/zone": "us-east-1a"}  # fmt: skip
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def _pod(name: str, node: str, cpu: str, memory: str, profile: str | None = None) -> dict[str, Any]:
    annotations = {PROFILE_REF: profile} if profile else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": name.split("-", maxsplit=1)[0]}, "annotations": annotations},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
        },
    }  # fmt: skip


PROFILE_STATUS = {
    "tupleLabels": {"app.kubernetes.io/name": "shop", "app.kubernetes.io/component": "api"},
    "containers": [
        {
            "name": "app",
            "usageStats": [{"resource": "cpu", "samples": 600}, {"resource": "memory", "samples": 600}],
            "recommendations": {"cpu": {"request": "700m"}, "memory": {"request": "1Gi"}},
        }
    ],
    "meetsThreshold": True,
    "state": "Sufficient",
}


@pytest.fixture(scope="module")
def advisor_cluster(envtest: Environment) -> Iterator[Environment]:
    """A control plane of its own (no other test's Nodes), our CRDs and the NodePool stand-in, the sample
    catalogue applied, three Nodes with their pods, and the api pods' WorkloadProfile."""
    with Environment(
        assets=envtest.assets, crd_paths=["config/crd/bases", NODEPOOL_CRD], network_mode=envtest.network_mode
    ) as env:
        for namespace in ("ballast-system", NAMESPACE):
            env.rest.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                   "metadata": {"name": namespace}})  # fmt: skip
        env.kubectl("apply", "-k", str(SAMPLE))
        env.rest.create(NODEPOOLS, copy.deepcopy(NODEPOOL))
        for name in NODES:
            env.rest.create("/api/v1/nodes", _node(name))
            ready = {"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "stand-in"}
            status = {"capacity": M5_XLARGE, "allocatable": M5_XLARGE, "conditions": [ready]}
            env.rest.patch_status(f"/api/v1/nodes/{name}", {"status": status})
            # What the node lifecycle controller does for a Ready node: lift the not-ready taint admission added.
            env.rest.request("PATCH", f"/api/v1/nodes/{name}", {"spec": {"taints": None}},
                             content_type="application/merge-patch+json")  # fmt: skip
        pods = [_pod(f"api-{n[-1]}{i}", n, "1800m", "2Gi", PROFILE) for n in NODES[:2] for i in (1, 2)]
        pods += [_pod(f"worker-{i}", "node-c", "250m", "256Mi") for i in range(6)]
        for pod in pods:
            path = f"/api/v1/namespaces/{NAMESPACE}/pods"
            env.rest.create(path, pod)
            env.rest.patch_status(f"{path}/{pod['metadata']['name']}", {"status": {"phase": "Running"}})
        env.rest.create(PROFILES, {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "WorkloadProfile",
                                   "metadata": {"name": PROFILE}})  # fmt: skip
        env.rest.patch_status(f"{PROFILES}/{PROFILE}", {"status": PROFILE_STATUS})
        yield env


def plan(capsys: pytest.CaptureFixture[str], env: Environment, *argv: str) -> tuple[int, str, str]:
    code = cli.main(["consolidation", "plan", "--kubeconfig", str(env.kubeconfig_path), *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def plan_json(capsys: pytest.CaptureFixture[str], env: Environment, *argv: str) -> dict[str, Any]:
    code, out, err = plan(capsys, env, "-o", "json", "--what-if", "recommended", *argv)
    assert (code, err) == (0, ""), out
    document: dict[str, Any] = json.loads(out)
    return document


def set_policy(env: Environment, policy: str) -> None:
    env.rest.request("PATCH", f"{NODEPOOLS}/general", {"spec": {"disruption": {"consolidationPolicy": policy}}},
                     content_type="application/merge-patch+json")  # fmt: skip


def _move(document: dict[str, Any], requests: str, nodes: list[str]) -> dict[str, Any]:
    (found,) = [m for m in document["plans"][requests]["moves"] if m["nodes"] == nodes]
    return dict(found)


def test_the_json_shows_the_nodes_the_recommended_requests_free(
    advisor_cluster: Environment, capsys: pytest.CaptureFixture[str]
) -> None:
    document = plan_json(capsys, advisor_cluster, "--catalogue", "cm/ballast-system/ballast-consolidation-catalogue")
    assert document["observed"] == {"nodes": 3, "pods": 10, "podDisruptionBudgets": 0, "nodePools": 1,
                                    "karpenter": True, "profiles": 1, "podsWithRecommendations": 4}  # fmt: skip
    assert document["problems"] == []
    current, recommended = document["plans"]["current"], document["plans"]["recommended"]
    assert current["freed"]["nodes"] == ["node-a"]
    assert current["freed"]["savingsPerMonth"] == "70.08"  # a 4-cpu node for a 2-cpu one
    assert recommended["freed"]["nodes"] == ["node-a", "node-b"]
    assert recommended["freed"]["savingsPerMonth"] == "210.24"
    assert [entry.split(": ", 1)[1] for entry in recommended["freed"]["launched"]] == ["general/m5.large/on-demand"]
    (pool,) = recommended["pools"]
    assert (pool["name"], pool["policy"], pool["nodes"], pool["nodesAfter"], pool["nodesFreed"]) == (
        "general", "Balanced", 3, 2, 2,
    )  # fmt: skip
    assert (pool["costPerMonth"], pool["costPerMonthAfter"]) == ("420.48", "210.24")
    marginal = _move(document, "current", ["node-c"])
    assert (marginal["decision"], marginal["approved"]) == ("replace", False)
    assert marginal["score"] == f"{(0.096 / 0.576) / (7 / 13):.2f}"
    assert marginal["reason"].startswith("score 0.31 < threshold 0.50")


def test_the_table_shows_them(advisor_cluster: Environment, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = plan(capsys, advisor_cluster, "--what-if", "recommended")  # the default catalogue: the sample
    assert (code, err) == (0, ""), out
    lines = out.splitlines()
    assert lines[:4] == [
        "Consolidation plan: 3 nodes in 1 pool, $420.48/month now",
        "Requests: current, and recommended for 4 pods (their WorkloadProfiles)",
        "Pools: 1 Karpenter NodePool (a pool none describes is Balanced); grouped as general (3 nodes)",
        "Catalogue: cm/ballast-system/ballast-consolidation-catalogue; k 2: a Balanced move needs a score ≥ 0.500",
    ]
    # AFTER = NODES - FREED + LAUNCHED: FREED counts today's nodes gone, as the report's freed.count.
    assert [line.split() for line in lines[5:8]] == [
        ["POOL", "POLICY", "REQUESTS", "NODES", "FREED", "LAUNCHED", "AFTER", "$/HOUR", "AFTER", "$/MONTH", "AFTER",
         "SAVING/MONTH"],
        ["general", "Balanced", "current", "3", "1", "1", "3", "0.576", "0.480", "420.48", "350.40", "70.08"],
        ["general", "Balanced", "recommended", "3", "2", "1", "2", "0.576", "0.288", "420.48", "210.24", "210.24"],
    ]  # fmt: skip
    assert ("Freed with the current requests: 1 of today's nodes, node-a, for 1 launched (saving $0.096/hour, "
            "$70.08/month), in 1 command:") in lines  # fmt: skip
    assert ("Freed with the recommended requests: 2 of today's nodes, node-a, node-b, for 1 launched (saving "
            "$0.288/hour, $210.24/month: $140.16 from right-sized requests, $70.08 from cheaper offerings and "
            "packing today's requests allow), in 1 command:") in lines  # fmt: skip
    assert "  1. multi-node: replace node-a, node-b by m5.large/on-demand (score 1.083)" in lines
    rejected = [line.split() for line in lines if line.startswith("  node-c ") and " no " in line]
    assert [row[:9] for row in rejected] == [
        ["node-c", "general", "single-node", "replace", "→", "m5.large/on-demand", "0.310", "70.08", "7.00"]
    ]
    assert lines[-2:] == ["Problems:", "  none"]


def test_when_empty_or_underutilized_takes_the_marginal_move(
    advisor_cluster: Environment, capsys: pytest.CaptureFixture[str]
) -> None:
    set_policy(advisor_cluster, "WhenEmptyOrUnderutilized")
    try:
        document = plan_json(capsys, advisor_cluster)
    finally:
        set_policy(advisor_cluster, "Balanced")
    taken = _move(document, "current", ["node-c"])
    assert (taken["decision"], taken["approved"], taken.get("score")) == (
        "replace",
        True,
        None,
    )  # no score: not Balanced
    assert document["plans"]["current"]["pools"][0]["policy"] == "WhenEmptyOrUnderutilized"


def test_the_sample_file_as_a_local_catalogue_gives_the_same_plans(
    advisor_cluster: Environment, capsys: pytest.CaptureFixture[str]
) -> None:
    from_configmap = plan_json(
        capsys, advisor_cluster, "--catalogue", "cm/ballast-system/ballast-consolidation-catalogue"
    )
    from_file = plan_json(capsys, advisor_cluster, "--catalogue", str(SAMPLE / "catalogue-configmap.yaml"))
    assert from_file["catalogue"].endswith("catalogue-configmap.yaml")
    assert from_file["plans"] == from_configmap["plans"]
    assert from_file["problems"] == []


@pytest.fixture
def report(advisor_cluster: Environment) -> Iterator[dict[str, Any]]:
    """The ConsolidationReport `cluster` as the controller writes it from the same cluster, catalogue and k."""
    settings = AdvisorSettings(read=ReadSettings(catalogue=("ballast-system", "ballast-consolidation-catalogue")),
                               interval=3600.0)  # fmt: skip
    manager = Manager(RESTConfig(advisor_cluster.client_configuration()), scheme=add_to_scheme(Scheme()),
                      field_owner="consolidation-cli-tests")  # fmt: skip
    setup(manager, settings=settings)

    def ready() -> dict[str, Any] | None:
        with contextlib.suppress(APIError):
            found: dict[str, Any] = advisor_cluster.rest.get(REPORT)
            conditions = {c["type"]: c["status"] for c in (found.get("status") or {}).get("conditions") or ()}
            return found if conditions.get("Ready") == "True" else None
        return None

    with running(manager):
        yield poll_until(ready, timeout=60, what="the ConsolidationReport Ready", interval=0.2)
    with contextlib.suppress(APIError):
        advisor_cluster.rest.delete(REPORT)


def test_the_cli_frees_what_the_consolidation_report_frees(
    advisor_cluster: Environment, report: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    document = plan_json(capsys, advisor_cluster)
    for requests in ("current", "recommended"):
        shown, written = document["plans"][requests], report["status"][requests]
        assert shown["freed"]["nodes"] == written["freed"]["nodes"], requests
        assert shown["freed"]["savingsPerMonth"] == written["freed"]["savingsPerMonth"], requests
        decisions = {(tuple(m["nodes"]), m["decision"], m["approved"]) for m in shown["moves"]}
        assert decisions == {(tuple(m["nodes"]), m["decision"], m["approved"]) for m in written["moves"]}, requests
    assert report["status"]["recommended"]["freed"]["nodes"] == ["node-a", "node-b"]


def test_errors_exit_1_naming_what_was_wrong(advisor_cluster: Environment, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = plan(capsys, advisor_cluster, "--catalogue", "cm/ballast-system/prices")
    assert (code, out) == (1, "")
    assert err == ("ballast: catalogue cm/ballast-system/prices: no offering read (catalogue ConfigMap "
                   "ballast-system/prices not found: every node priced 0)\n")  # fmt: skip
