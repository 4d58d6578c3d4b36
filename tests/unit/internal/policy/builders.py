"""Policy objects for the policy tests, built from wire-form specs."""

from __future__ import annotations

from typing import Any

from ballast.api.ballast.v1.clusterresourcepolicy import ClusterResourcePolicy
from ballast.api.ballast.v1.resourcepolicy import ResourcePolicy


def _metadata(name: str, namespace: str | None, resource_version: str | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "uid": f"uid-{namespace or ''}-{name}"}
    if namespace is not None:
        metadata["namespace"] = namespace
    if resource_version is not None:
        metadata["resourceVersion"] = resource_version
    return metadata


def crp(
    name: str,
    priority: int | None = None,
    selector: dict[str, Any] | None = None,
    *,
    rv: str | None = None,
    **spec: Any,
) -> ClusterResourcePolicy:
    """A ClusterResourcePolicy; `spec` keys are wire names."""
    body = {
        **spec,
        **({"priority": priority} if priority is not None else {}),
        **({"selector": selector} if selector else {}),
    }
    return ClusterResourcePolicy.model_validate({"metadata": _metadata(name, None, rv), "spec": body})


def rp(
    namespace: str,
    name: str,
    priority: int | None = None,
    selector: dict[str, Any] | None = None,
    *,
    rv: str | None = None,
    **spec: Any,
) -> ResourcePolicy:
    """A ResourcePolicy in `namespace`; `spec` keys are wire names."""
    body = {
        **spec,
        **({"priority": priority} if priority is not None else {}),
        **({"selector": selector} if selector else {}),
    }
    return ResourcePolicy.model_validate({"metadata": _metadata(name, namespace, rv), "spec": body})
