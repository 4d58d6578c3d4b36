"""kube-scheduler and kube-controller-manager on request, and the audit log."""

from __future__ import annotations

from collections.abc import Iterator

import orjson
import pytest

from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until


@pytest.fixture(scope="module")
def full_env(envtest: Environment) -> Iterator[Environment]:
    components = ["kube-scheduler", "kube-controller-manager"]
    with Environment(
        assets=envtest.assets, components=components, audit_log=True, network_mode=envtest.network_mode
    ) as env:
        yield env


def _ready_node(env: Environment, name: str) -> None:
    env.rest.create("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    capacity = {"cpu": "4", "memory": "8Gi", "pods": "110"}
    env.rest.patch_status(
        f"/api/v1/nodes/{name}",
        {
            "status": {
                "capacity": capacity,
                "allocatable": capacity,
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "test node"}],
            }
        },
    )


def test_controller_manager_and_scheduler_run_a_deployment_onto_a_node(full_env: Environment) -> None:
    namespace = "components"
    full_env.rest.create(
        "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}
    )
    _ready_node(full_env, "worker-1")
    labels = {"app": "web"}
    full_env.rest.create(
        f"/apis/apps/v1/namespaces/{namespace}/deployments",
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": labels},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "containers": [
                            {
                                "name": "web",
                                "image": "registry.k8s.io/pause:3.10",
                                "resources": {"requests": {"cpu": "100m"}},
                            }
                        ]
                    },
                },
            },
        },
    )

    def scheduled_pods() -> list[str] | None:
        pods = full_env.rest.get(f"/api/v1/namespaces/{namespace}/pods", params={"labelSelector": "app=web"})["items"]
        nodes = [p["spec"].get("nodeName") for p in pods]
        return nodes if len(nodes) == 2 and all(nodes) else None

    assert poll_until(scheduled_pods, timeout=60, what="two scheduled pods of the Deployment") == [
        "worker-1",
        "worker-1",
    ]
    replica_sets = full_env.rest.get(f"/apis/apps/v1/namespaces/{namespace}/replicasets")["items"]
    assert [rs["metadata"]["ownerReferences"][0]["name"] for rs in replica_sets] == ["web"]


def test_the_audit_log_records_requests(full_env: Environment) -> None:
    full_env.rest.get("/api/v1/namespaces/kube-public/configmaps")

    def audited() -> bool:
        if not full_env.audit_log_path.exists():
            return False
        lines = full_env.audit_log_path.read_bytes().splitlines()
        return any(
            orjson.loads(line).get("requestURI") == "/api/v1/namespaces/kube-public/configmaps" for line in lines
        )

    poll_until(audited, timeout=10, what="the request in the audit log")
