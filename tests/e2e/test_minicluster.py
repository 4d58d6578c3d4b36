"""The harness itself: Deployments roll out onto kwok Nodes, Nodes heartbeat, metrics.k8s.io serves each
container's own usage, and kube-controller-manager's HPA scales on it."""

from __future__ import annotations

from typing import Any

from ballast.internal.quantity import parse_quantity
from ballast.runtime.envtest import MiniCluster, usage_annotation
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.support import create_namespace, deployment, running_pods


def test_a_deployment_runs_on_kwok_nodes_and_every_node_heartbeats(cluster: MiniCluster) -> None:
    namespace = create_namespace(cluster, "harness-rollout")
    cluster.env.rest.create(
        f"/apis/apps/v1/namespaces/{namespace}/deployments", deployment("web", replicas=4, cpu="100m")
    )

    def four_running() -> list[dict[str, Any]] | None:
        found = running_pods(cluster, namespace, "app=web")
        return found if len(found) == 4 else None

    pods = poll_until(four_running, timeout=60.0, what="4 Running pods")
    assert {p["spec"]["nodeName"] for p in pods} <= {f"kwok-node-{i}" for i in range(3)}
    assert all(p["status"]["podIP"] for p in pods)
    leases = cluster.env.rest.get("/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases")["items"]
    assert {lease["metadata"]["name"] for lease in leases} >= {f"kwok-node-{i}" for i in range(3)}


def test_metrics_server_reports_each_containers_own_usage(cluster: MiniCluster) -> None:
    namespace = create_namespace(cluster, "harness-metrics")
    annotations = {
        usage_annotation("cpu", "app"): "400m",
        usage_annotation("memory", "app"): "300Mi",
        usage_annotation("cpu", "sidecar"): "20m",
        usage_annotation("memory", "sidecar"): "40Mi",
    }
    body = deployment("two", replicas=1, cpu="500m", containers=("app", "sidecar"), annotations=annotations)
    cluster.env.rest.create(f"/apis/apps/v1/namespaces/{namespace}/deployments", body)

    def usage() -> dict[str, dict[str, Any]] | None:
        metrics = cluster.pod_metrics(namespace)
        if not metrics:
            return None
        (item,) = metrics.values()
        return {c["name"]: c["usage"] for c in item["containers"]}

    containers = poll_until(usage, timeout=120.0, interval=2.0, what="PodMetrics for the pod")
    assert parse_quantity(containers["app"]["memory"]) == 300 * 2**20
    assert parse_quantity(containers["sidecar"]["memory"]) == 40 * 2**20
    # CPU is a rate between two scrapes of a cumulative counter: close to, not exactly, the annotation.
    assert abs(float(parse_quantity(containers["app"]["cpu"])) - 0.4) < 0.04
    assert abs(float(parse_quantity(containers["sidecar"]["cpu"])) - 0.02) < 0.005


def test_the_hpa_scales_a_deployment_on_the_usage_metrics_server_reports(cluster: MiniCluster) -> None:
    namespace = create_namespace(cluster, "harness-hpa")
    # 200m used of 100m requested: 200 % utilisation against a 50 % target → the HPA scales to its max.
    body = deployment("busy", replicas=1, cpu="100m", annotations={usage_annotation("cpu"): "200m"})
    cluster.env.rest.create(f"/apis/apps/v1/namespaces/{namespace}/deployments", body)
    cluster.env.rest.create(
        f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers",
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "busy"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "busy"},
                "minReplicas": 1,
                "maxReplicas": 3,
                "metrics": [
                    {
                        "type": "Resource",
                        "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
                    }
                ],
            },
        },
    )
    poll_until(
        lambda: len(running_pods(cluster, namespace, "app=busy")) == 3,
        timeout=180.0,
        interval=2.0,
        what="the HPA to scale busy to 3 Running pods",
    )
    hpa = cluster.env.rest.get(f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers/busy")
    assert hpa["status"]["desiredReplicas"] == 3
