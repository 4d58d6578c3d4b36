"""Objects and wiring shared by the resize lane's unit and integration tests."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ballast.api.ballast.v1 import WorkloadProfile
from ballast.internal.enrollment import MODE_LABEL, PROFILE_REF, PROFILE_REF_INDEX, PodProjection, profile_ref_index
from ballast.runtime import CacheScope, Manager
from ballast.runtime.client import APIServerClient

POD = "v1/Pod"
IMAGE = "registry.k8s.io/pause:3.10"
Recs = Mapping[str, Mapping[str, tuple[str | None, str | None]]]


def new_manager(client: APIServerClient) -> Manager:
    """A Manager whose cache is configured as the operator's wiring does: enrolled pods only, as projections,
    indexed by profile-ref (the client's scheme must have our kinds registered)."""
    manager = Manager(
        client=client, cache_by_kind={POD: CacheScope(label_selector=MODE_LABEL, projection=PodProjection)}
    )
    manager.cache.index_field(POD, PROFILE_REF_INDEX, profile_ref_index)
    return manager


def container(
    name: str, requests: dict[str, str] | None = None, limits: dict[str, str] | None = None, **extra: Any
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return {"name": name, "image": IMAGE, "resources": resources, **extra}


def pod(
    name: str,
    namespace: str,
    profile: str,
    containers: list[dict[str, Any]],
    *,
    mode: str = "resize",
    init_containers: list[dict[str, Any]] | None = None,
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": containers}
    if init_containers:
        spec["initContainers"] = init_containers
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {MODE_LABEL: mode, "app.kubernetes.io/name": profile},
            "annotations": {PROFILE_REF: profile, **(annotations or {})},
        },
        "spec": spec,
    }


def cluster_policy(name: str, **resize: str) -> dict[str, Any]:
    """A ClusterResourcePolicy; keyword arguments go to `spec.behaviors.resize` (interval, maxChangePerCycle)."""
    spec: dict[str, Any] = {"metrics": [{"resource": "cpu", "field": "request", "source": "metrics"}]}
    if resize:
        spec["behaviors"] = {"resize": resize}
    return {"apiVersion": WorkloadProfile.API_VERSION, "kind": "ClusterResourcePolicy", "metadata": {"name": name},
            "spec": spec}  # fmt: skip


def profile_status(
    recommendations: Recs,
    *,
    meets_threshold: bool = True,
    policy: tuple[str, str, str] | None = ("ClusterResourcePolicy", "", "default"),
    measured: Mapping[str, list[str]] | None = None,
) -> dict[str, Any]:
    """A WorkloadProfile status: recommendations per container and resource as (request, limit); `measured`
    gives containers' usageStats resources (a container with stats but no recommendation is still accruing)."""
    names = list(recommendations) + [n for n in measured or {} if n not in recommendations]
    containers: list[dict[str, Any]] = []
    for name in names:
        entry: dict[str, Any] = {"name": name}
        recs = recommendations.get(name) or {}
        if recs:
            entry["recommendations"] = {
                resource: {k: v for k, v in (("request", req), ("limit", lim)) if v is not None}
                for resource, (req, lim) in recs.items()
            }
        if measured and name in measured:
            entry["usageStats"] = [{"resource": resource, "samples": 10} for resource in measured[name]]
        containers.append(entry)
    status: dict[str, Any] = {
        "tupleLabels": {"app.kubernetes.io/name": "app"},
        "containers": containers,
        "meetsThreshold": meets_threshold,
        "state": "Sufficient" if meets_threshold else "Accruing",
    }
    if policy is not None:
        kind, namespace, name = policy
        status["policyRef"] = {"kind": kind, "name": name, **({"namespace": namespace} if namespace else {})}
    return status


def profile(name: str) -> dict[str, Any]:
    return {"apiVersion": WorkloadProfile.API_VERSION, "kind": "WorkloadProfile", "metadata": {"name": name}}


def resources_of(obj: dict[str, Any], name: str, group: str = "containers") -> dict[str, Any]:
    """The resources of container `name` of a pod dict."""
    return next(c for c in obj["spec"].get(group) or () if c["name"] == name).get("resources") or {}
