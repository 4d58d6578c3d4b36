"""Short builders for consolidation tests: Nodes, Pods, PDBs and catalogues as the Kubernetes JSON `plan` takes."""

from __future__ import annotations

from typing import Any

ZONE = "zone-a"


def node(
    name: str,
    instance_type: str = "m.xlarge",
    *,
    pool: str | None = "general",
    cpu: str = "4",
    memory: str = "16Gi",
    pods: int = 110,
    capacity_type: str | None = "on-demand",
    zone: str | None = ZONE,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    taints: list[dict[str, str]] | None = None,
    ready: bool = True,
    deleting: bool = False,
) -> dict[str, Any]:
    all_labels = {"kubernetes.io/hostname": name, "node.kubernetes.io/instance-type": instance_type}
    if pool is not None:
        all_labels["karpenter.sh/nodepool"] = pool
    if capacity_type is not None:
        all_labels["karpenter.sh/capacity-type"] = capacity_type
    if zone is not None:
        all_labels["topology.kubernetes.io/zone"] = zone
    all_labels.update(labels or {})
    metadata: dict[str, Any] = {"name": name, "labels": all_labels, "annotations": annotations or {}}
    if deleting:
        metadata["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {
        "metadata": metadata,
        "spec": {"taints": taints or []},
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory, "pods": str(pods)},
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def pod(
    name: str,
    on: str | None,
    cpu: str = "1",
    memory: str = "1Gi",
    *,
    namespace: str = "default",
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    priority: int | None = None,
    owner: tuple[str, str] | None = ("apps/v1", "ReplicaSet"),
    **spec: Any,
) -> dict[str, Any]:
    """A running pod with one container `app`; `owner` is (apiVersion, kind) of its owner reference."""
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "labels": labels or {},
        "annotations": annotations or {},
    }
    if owner is not None:
        metadata["ownerReferences"] = [{"apiVersion": owner[0], "kind": owner[1], "name": f"{name}-owner"}]
    body: dict[str, Any] = {
        "containers": [{"name": "app", "resources": {"requests": {"cpu": cpu, "memory": memory}}}],
        **spec,
    }
    if on is not None:
        body["nodeName"] = on
    if priority is not None:
        body["priority"] = priority
    return {"metadata": metadata, "spec": body, "status": {"phase": "Running"}}


def daemon(name: str, on: str, cpu: str = "100m", memory: str = "128Mi", ds: str = "agent") -> dict[str, Any]:
    result = pod(name, on, cpu, memory, owner=None)
    result["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": ds}]
    return result


def pdb(name: str, match: dict[str, str], allowed: int, namespace: str = "default", **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": match}, **spec},
        "status": {"disruptionsAllowed": allowed},
    }


def offering(
    instance_type: str,
    price: float,
    cpu: str,
    memory: str,
    *,
    pods: int = 110,
    capacity_type: str = "on-demand",
    zone: str | None = None,
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "instanceType": instance_type,
        "capacityType": capacity_type,
        "cpu": cpu,
        "memory": memory,
        "pods": pods,
        "pricePerHour": price,
    }
    if zone is not None:
        entry["zone"] = zone
    return entry


# A family that doubles in size and price, like c7i/m7i: large 2 cpu, xlarge 4, 2xlarge 8.
FAMILY = [
    offering("m.large", 0.10, "2", "8Gi"),
    offering("m.xlarge", 0.20, "4", "16Gi"),
    offering("m.2xlarge", 0.40, "8", "32Gi"),
]


def catalogue(*entries: dict[str, Any]) -> dict[str, Any]:
    return {"offerings": list(entries or FAMILY)}


BALANCED_POOL = {"general": {"consolidationPolicy": "Balanced"}}
UNDERUTILIZED_POOL = {"general": {"consolidationPolicy": "WhenEmptyOrUnderutilized"}}
