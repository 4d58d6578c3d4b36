"""What `make dev` runs: three demo apps in three namespaces, a new namespace for the cold start, one `resize` pod.

Pods are created directly (this mode has no kube-controller-manager or kubelet), over-provisioned the way
hand-written requests usually are, with the identity labels of the `local-testing` BallastConfig
(`app.kubernetes.io/name` + `app.kubernetes.io/component`), so a copy of an app in any namespace shares one
WorkloadProfile with the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ballast.internal.enrollment import MODE_LABEL
from ballast.internal.naming import policy_discriminator, profile_name, tuple_labels

from .usage import MEBIBYTE, UsageProfile

NAME_LABEL = "app.kubernetes.io/name"
COMPONENT_LABEL = "app.kubernetes.io/component"
DEMO_LABEL = "ballast.tightlinesoftware.com/demo"
"""Marks every object the demo creates (`kubectl get pods -A -l ballast.tightlinesoftware.com/demo`)."""
IDENTITY_LABELS = (NAME_LABEL, COMPONENT_LABEL)
"""The identity tuple of the presets' BallastConfig."""
IMAGE = "registry.k8s.io/pause:3.10"
OPERATOR_NAMESPACE = "ballast-system"


@dataclass(frozen=True, slots=True)
class DemoApp:
    """An app: its identity labels, how it really uses resources, and the requests its manifest asks for."""

    name: str
    component: str
    usage: UsageProfile
    requests: Mapping[str, str]
    limits: Mapping[str, str] = field(default_factory=dict)

    @property
    def labels(self) -> dict[str, str]:
        """Its identity labels."""
        return {NAME_LABEL: self.name, COMPONENT_LABEL: self.component}

    def profile_name(self, policy: str = "default") -> str:
        """The WorkloadProfile its pods share under the ClusterResourcePolicy `policy` (`checkout--api--default-…`)."""
        discriminator = policy_discriminator("ClusterResourcePolicy", "", policy)
        return profile_name(tuple_labels(self.labels, IDENTITY_LABELS), IDENTITY_LABELS, discriminator)


@dataclass(frozen=True, slots=True)
class DemoPod:
    """One pod of the demo: where it runs, which app, which Ballast mode, and requests overriding the app's."""

    namespace: str
    name: str
    app: DemoApp
    mode: str
    requests: Mapping[str, str] | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def manifest(self) -> dict[str, Any]:
        """The Pod object to create."""
        return pod_manifest(self.namespace, self.name, self.app, self.mode, self.requests)


CHECKOUT = DemoApp(
    "checkout",
    "api",
    UsageProfile(cpu_millicores=230, memory_bytes=180 * MEBIBYTE),
    requests={"cpu": "500m", "memory": "512Mi"},
    limits={"memory": "1Gi"},
)
CATALOG = DemoApp(
    "catalog",
    "api",
    UsageProfile(cpu_millicores=120, memory_bytes=300 * MEBIBYTE, cpu_swing=0.25),
    requests={"cpu": "250m", "memory": "768Mi"},
    limits={"memory": "1Gi"},
)
SEARCH = DemoApp(
    "search",
    "indexer",
    UsageProfile(cpu_millicores=700, memory_bytes=900 * MEBIBYTE, cpu_swing=0.45, memory_swing=0.12),
    requests={"cpu": "2", "memory": "2Gi"},
    limits={"memory": "4Gi"},
)
APPS = (CHECKOUT, CATALOG, SEARCH)
FALLBACK_USAGE = UsageProfile(cpu_millicores=50, memory_bytes=64 * MEBIBYTE)
"""Usage reported for pods of apps the demo does not know (pods a user creates by hand)."""

NAMESPACES = ("dev-alice", "dev-bob", "staging")
RESIZE_POD = DemoPod("staging", "checkout-0", CHECKOUT, "resize", {"cpu": "1", "memory": "512Mi"})
"""Created before its profile is ready, so admitted as written; resized in place once the profile is Sufficient."""
WORKLOADS = (
    DemoPod("dev-alice", "checkout-0", CHECKOUT, "apply"),
    DemoPod("dev-alice", "catalog-0", CATALOG, "apply"),
    DemoPod("dev-bob", "checkout-0", CHECKOUT, "apply"),
    DemoPod("dev-bob", "catalog-0", CATALOG, "measure"),
    RESIZE_POD,
    DemoPod("staging", "catalog-0", CATALOG, "apply"),
    DemoPod("staging", "search-0", SEARCH, "measure"),
    DemoPod("staging", "search-1", SEARCH, "measure"),
)
COLD_START_NAMESPACE = "dev-carol"
COLD_START_POD = DemoPod(COLD_START_NAMESPACE, "checkout-0", CHECKOUT, "apply")
"""A known app in a namespace that has never run it: sized from the shared profile at its first CREATE."""


def usage_profile(app_name: str) -> UsageProfile:
    """The usage of the demo app called `app_name`, or a small default for any other pod."""
    for app in APPS:
        if app.name == app_name:
            return app.usage
    return FALLBACK_USAGE


def namespace_manifest(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": {DEMO_LABEL: "true"}}}


def pod_manifest(
    namespace: str, name: str, app: DemoApp, mode: str, requests: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A one-container Pod of `app` enrolled in `mode`, with the app's requests (or `requests`) and limits."""
    resources: dict[str, Any] = {"requests": dict(requests or app.requests)}
    if app.limits:
        resources["limits"] = dict(app.limits)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {**app.labels, MODE_LABEL: mode, DEMO_LABEL: "true"},
        },
        "spec": {
            "containers": [{"name": app.component, "image": IMAGE, "resources": resources}],
            "terminationGracePeriodSeconds": 0,
        },
    }


def _container_status(container: Mapping[str, Any], now: str) -> dict[str, Any]:
    resources = container.get("resources") or {}
    return {
        "name": container["name"],
        "image": container["image"],
        "imageID": "",
        "ready": True,
        "started": True,
        "restartCount": 0,
        "state": {"running": {"startedAt": now}},
        # What an in-place-resize-capable kubelet reports; without it the API server refuses pods/resize
        # ("Pod running on node without support for resize").
        "allocatedResources": dict(resources.get("requests") or {}),
        "resources": {key: dict(value) for key, value in resources.items() if key in ("requests", "limits")},
    }


def running_status(pod: Mapping[str, Any], now: str) -> dict[str, Any]:
    """The status a kubelet would report for a started pod (phase Running, Ready), as of RFC 3339 `now`.

    This mode has no kubelet: the demo writes this through the status subresource (a merge patch body).
    """
    conditions = [
        {"type": kind, "status": "True", "lastTransitionTime": now}
        for kind in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
    ]
    return {
        "status": {
            "phase": "Running",
            "startTime": now,
            "conditions": conditions,
            "containerStatuses": [_container_status(c, now) for c in pod["spec"]["containers"]],
        }
    }


def actuated_status(pod: Mapping[str, Any]) -> dict[str, Any] | None:
    """After an in-place resize, the status patch a kubelet would send once it applied the new resources:
    each container's `resources` and `allocatedResources` set to its spec. None when they already agree."""
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    if not statuses:
        return None
    by_name = {c["name"]: c for c in pod["spec"]["containers"]}
    updated = []
    for status in statuses:
        container = by_name.get(status.get("name"))
        if container is None:
            updated.append(status)
            continue
        resources = container.get("resources") or {}
        wanted = {key: dict(value) for key, value in resources.items() if key in ("requests", "limits")}
        updated.append({**status, "resources": wanted, "allocatedResources": dict(resources.get("requests") or {})})
    if updated == statuses:
        return None
    return {"status": {"containerStatuses": updated}}
