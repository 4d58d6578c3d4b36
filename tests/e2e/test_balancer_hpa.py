"""One HPA scales a Balancer, the Balancer spreads the replicas over its Deployments, and kube-scheduler and kwok
run the pods: the seed's `nginx-priority-hpa` example applied unchanged with kubectl, on the mini-cluster,
with `ballastd` running the Balancer lane and kube-controller-manager's HPA reading metrics-server.

Idle pods (kwok's default usage, 1m of 100m) take the HPA to its minimum of 2, one per target (each target's
minReplicas is 1). Then load arrives — the Deployments' pods report 200m, twice the 50 % target — and the HPA
takes the Balancer to its maximum of 10: nginx-1 first, up to its maxReplicas of 7, the rest on nginx-2.
"""

from __future__ import annotations

from typing import Any

from ballast.runtime.envtest import MiniCluster, usage_annotation
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.support import Operator, create_namespace, running_pods
from tests.unit.api.balancer_samples import EXAMPLES

BALANCER = "/apis/balancer.x-k8s.io/v1alpha1/namespaces/{ns}/balancers/nginx"


def replicas(cluster: MiniCluster, namespace: str, name: str) -> int:
    return int(cluster.env.rest.get(f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}")["spec"]["replicas"])


def placement(cluster: MiniCluster, namespace: str) -> tuple[int, int, int]:
    """(Balancer replicas, nginx-1, nginx-2)."""
    balancer: dict[str, Any] = cluster.env.rest.get(BALANCER.format(ns=namespace))
    return (
        balancer["spec"]["replicas"],
        replicas(cluster, namespace, "nginx-1"),
        replicas(cluster, namespace, "nginx-2"),
    )


def running(cluster: MiniCluster, namespace: str) -> tuple[int, int]:
    return (
        len(running_pods(cluster, namespace, "app=nginx-1")),
        len(running_pods(cluster, namespace, "app=nginx-2")),
    )


def test_an_hpa_scales_a_balancer_down_and_up_across_its_deployments(cluster: MiniCluster, operator: Operator) -> None:
    env = cluster.env
    namespace = create_namespace(cluster, "balancer-hpa")
    env.kubectl("apply", "-n", namespace, "-f", "-", input_text=EXAMPLES["nginx-priority-hpa"])

    # Idle: the HPA's minimum, one replica per target.
    poll_until(
        lambda: placement(cluster, namespace) == (2, 1, 1) and running(cluster, namespace) == (1, 1),
        timeout=180,
        interval=2.0,
        what="the HPA to scale the idle Balancer to 2 (1 + 1 Running)",
        last_error=lambda: f"{placement(cluster, namespace)}, running {running(cluster, namespace)}",
    )

    # Load: every nginx pod now uses 200m of its 100m request.
    for name in ("nginx-1", "nginx-2"):
        env.rest.request(
            "PATCH",
            f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
            {"spec": {"template": {"metadata": {"annotations": {usage_annotation("cpu"): "200m"}}}}},
            content_type="application/strategic-merge-patch+json",
        )
    poll_until(
        lambda: placement(cluster, namespace) == (10, 7, 3) and running(cluster, namespace) == (7, 3),
        timeout=240,
        interval=2.0,
        what="the HPA to scale the loaded Balancer to 10 (7 + 3 Running)",
        last_error=lambda: f"{placement(cluster, namespace)}, running {running(cluster, namespace)}",
    )
    hpa = env.rest.get(f"/apis/autoscaling/v2/namespaces/{namespace}/horizontalpodautoscalers/nginx")
    assert hpa["status"]["desiredReplicas"] == 10
    status = env.rest.get(BALANCER.format(ns=namespace))["status"]
    assert status["replicas"] == 10
    assert status["selector"] == "srv=nginx"
