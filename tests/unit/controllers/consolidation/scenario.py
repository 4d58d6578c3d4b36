"""One small cluster, as Kubernetes JSON, for the advisor's tests (unit and on the API server).

Pool `general` (nodes labelled `karpenter.sh/nodepool`, no NodePool: the default policy): nodes a, b, c are
m5.xlarge ($0.20/h), each full with two 1750m pods of profile `web` (recommended: 250m); node d is an m5.large
($0.10/h) with ten 100m pods of no profile. With today's requests nothing fits elsewhere except d's pods, and
deleting d saves 14 % of the pool for about half its disruption: Balanced (k=2) rejects it,
WhenEmptyOrUnderutilized takes it. With the recommended requests, a, b, c hold 500m each and nodes are freed.
"""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]
POOL = "general"
PROFILE = "web"
XLARGE, LARGE = "m5.xlarge", "m5.large"
CATALOGUE: JSON = {
    "offerings": [
        {"instanceType": LARGE, "cpu": "2", "memory": "8Gi", "pods": 29, "pricePerHour": 0.10},
        {"instanceType": XLARGE, "cpu": "4", "memory": "16Gi", "pods": 58, "pricePerHour": 0.20},
        {"instanceType": "m5.broken", "cpu": "lots", "memory": "8Gi", "pods": 29, "pricePerHour": 0.05},
    ],
}
BROKEN_ENTRY = "offerings[2] (m5.broken)"
NODES = {"a": XLARGE, "b": XLARGE, "c": XLARGE, "d": LARGE}


def node(name: str, instance_type: str) -> JSON:
    cpu, memory, pods = ("4", "16Gi", "58") if instance_type == XLARGE else ("2", "8Gi", "29")
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "node.kubernetes.io/instance-type": instance_type,
            "karpenter.sh/nodepool": POOL, "karpenter.sh/capacity-type": "on-demand",
        }},
        "spec": {"taints": [{"key": "example.com/dedicated", "value": "shop", "effect": "NoSchedule"}]},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                   "conditions": [{"type": "Ready", "status": "True"}]},
    }  # fmt: skip


def pod(namespace: str, name: str, node_name: str, cpu: str, *, profile: str | None = None) -> JSON:
    annotations = {"ballast.tightlinesoftware.com/profile-ref": profile} if profile else {}
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "annotations": annotations,
                     "labels": {"app": profile or "batch"}},
        "spec": {"nodeName": node_name,
                 "tolerations": [{"key": "example.com/dedicated", "operator": "Exists", "effect": "NoSchedule"}],
                 "containers": [{"name": "app", "image": "registry.example/app:1",
                                 "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}}}]},
    }  # fmt: skip


def nodes() -> list[JSON]:
    return [node(name, instance_type) for name, instance_type in NODES.items()]


def pods(namespace: str) -> list[JSON]:
    found = [pod(namespace, f"web-{n}-{i}", n, "1750m", profile=PROFILE) for n in ("a", "b", "c") for i in range(2)]
    return found + [pod(namespace, f"batch-{i}", "d", "100m") for i in range(10)]


PROFILE_STATUS: JSON = {
    "meetsThreshold": True,
    "state": "Sufficient",
    "containers": [{"name": "app", "recommendations": {"cpu": {"request": "250m"}, "memory": {"request": "128Mi"}}}],
}
