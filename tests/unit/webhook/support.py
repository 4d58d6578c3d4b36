"""Builders and an in-memory reader for the admission handler tests."""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import Any, Unpack

from pydantic import BaseModel

from ballast.api.ballast.v1 import BallastConfig, WorkloadProfile
from ballast.internal.enrollment import MODE_LABEL
from ballast.runtime import AdmissionRequest, GroupVersionKind, NotFoundError, ObjectList
from ballast.runtime.interfaces import ListOptions

IDENTITY = ["app.kubernetes.io/name", "app.kubernetes.io/component"]
APP_LABELS = {"app.kubernetes.io/name": "billing", "app.kubernetes.io/component": "api"}
NAMESPACE = "shop"
DEFAULT_PROFILE = "billing--api--default-a9696153"
"""`profile_name` of APP_LABELS under ClusterResourcePolicy `default`."""
NO_POLICY_PROFILE = "billing--api--nopolicy"

JSON = dict[str, Any]


def container(
    name: str,
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    *,
    restart_policy: str | None = None,
) -> JSON:
    """A container; `resources` holds only the maps given."""
    body: JSON = {"name": name, "image": "example/app:1"}
    resources: JSON = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    if resources:
        body["resources"] = resources
    if restart_policy is not None:
        body["restartPolicy"] = restart_policy
    return body


def pod(
    mode: str | None = "apply",
    *,
    containers: list[JSON] | None = None,
    init_containers: list[JSON] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    owners: list[JSON] | None = None,
) -> JSON:
    """An enrolled pod of the billing/api workload (one container `app` with 100m cpu unless given)."""
    metadata: JSON = {"name": "web-0", "namespace": NAMESPACE, "labels": dict(APP_LABELS if labels is None else labels)}
    if mode is not None:
        metadata["labels"][MODE_LABEL] = mode
    if annotations is not None:
        metadata["annotations"] = annotations
    if owners is not None:
        metadata["ownerReferences"] = owners
    spec: JSON = {"containers": containers if containers is not None else [container("app", {"cpu": "100m"})]}
    if init_containers is not None:
        spec["initContainers"] = init_containers
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


def review(
    obj: JSON | None,
    *,
    operation: str = "CREATE",
    old: JSON | None = None,
    kind: str = "Pod",
    namespace: str = NAMESPACE,
    name: str = "",
) -> AdmissionRequest:
    """An AdmissionRequest as the webhook server decodes it."""
    group = "" if kind == "Pod" else "ballast.tightlinesoftware.com"
    version = "v1"
    return AdmissionRequest(
        uid="uid-1",
        kind={"group": group, "version": version, "kind": kind},
        resource={"group": group, "version": version, "resource": kind.lower() + "s"},
        operation=operation,
        name=name,
        namespace=namespace,
        object=obj,
        old_object=old,
    )


def owner(kind: str, name: str, uid: str, api_version: str = "apps/v1") -> JSON:
    """A controller ownerReference."""
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": True}


def ballast_config(identity: list[str] | None = None) -> BallastConfig:
    return BallastConfig.model_validate(
        {"metadata": {"name": "ballast"}, "spec": {"identityLabels": identity or IDENTITY}}
    )


def container_profile(
    name: str, recommendations: dict[str, dict[str, str]], measured: Iterable[str] | None = None
) -> JSON:
    """A `status.containers[]` entry: usageStats for `measured` (default: the recommended resources)."""
    resources = list(recommendations) if measured is None else list(measured)
    return {
        "name": name,
        "usageStats": [{"resource": resource, "samples": 600} for resource in resources],
        "recommendations": recommendations,
    }


def profile(name: str, containers: list[JSON], *, meets_threshold: bool = True) -> WorkloadProfile:
    return WorkloadProfile.model_validate(
        {
            "metadata": {"name": name},
            "status": {
                "containers": containers,
                "meetsThreshold": meets_threshold,
                "state": "Sufficient" if meets_threshold else "Accruing",
            },
        }
    )


def _kind_name(kind: Any) -> str:
    if isinstance(kind, GroupVersionKind):
        return kind.kind
    if isinstance(kind, str):
        return GroupVersionKind.parse(kind).kind
    return str(kind.KIND)


def _object_kind(obj: Any) -> str:
    return str(getattr(obj, "KIND", None) or obj["kind"])


def _object_key(obj: Any) -> tuple[str, str]:
    if isinstance(obj, BaseModel):
        metadata = obj.metadata  # type: ignore[attr-defined]
        return metadata.namespace or "", metadata.name or ""
    return obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


class MemoryReader:
    """A `Reader` over objects held in memory, recording its calls; `fail[kind] = error` makes reads of that
    kind raise."""

    def __init__(self, *objects: Any) -> None:
        self.objects: dict[tuple[str, str, str], Any] = {}
        self.calls: list[tuple[str, str, str]] = []
        self.fail: dict[str, Exception] = {}
        for obj in objects:
            self.add(obj)

    def add(self, obj: Any) -> None:
        namespace, name = _object_key(obj)
        self.objects[(_object_kind(obj), namespace, name)] = obj

    def _check(self, operation: str, kind: str, name: str) -> None:
        self.calls.append((operation, kind, name))
        if kind in self.fail:
            raise self.fail[kind]

    def get(self, kind: Any, name: str, namespace: str | None = None) -> Any:
        kind_name = _kind_name(kind)
        self._check("get", kind_name, name)
        found = self.objects.get((kind_name, namespace or "", name))
        if found is None:
            raise NotFoundError(404, "NotFound", f"{kind_name} {name!r} not found")
        return found

    def list(self, kind: Any, namespace: str | None = None, **options: Unpack[ListOptions]) -> ObjectList:
        filters = (options.get("label_selector"), options.get("field_selector"), options.get("index"))
        if any(value is not None for value in filters) or options.get("limit") or options.get("continue_"):
            raise NotImplementedError("MemoryReader lists by kind and namespace only")
        kind_name = _kind_name(kind)
        self._check("list", kind_name, namespace or "")
        return ObjectList(
            [
                obj
                for (stored_kind, stored_namespace, _), obj in self.objects.items()
                if stored_kind == kind_name and (namespace is None or stored_namespace == namespace)
            ]
        )

    def reads_of(self, kind: str) -> builtins.list[tuple[str, str, str]]:
        return [call for call in self.calls if call[1] == kind]
