"""A synthetic metrics.k8s.io/v1beta1 backend: PodMetrics for the pods that exist, with usage from `usage`.

It answers what metrics-server answers to the operator and to `kubectl top pods`: discovery, the PodMetrics
list of all namespaces or of one, and one pod's PodMetrics. Pods come from the API server at each request,
listed with the request's own `labelSelector` and `fieldSelector`, so selectors are honoured exactly as
metrics-server (which filters its pod informer by them) honours them. A pod being deleted, or finished, has no
metrics; every other pod's regular containers and restartable-init sidecars have usage, for the current
metrics window.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import orjson
import urllib3

from ballast.internal.enrollment import managed_container_bodies
from ballast.runtime import rfc3339
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.rest import RESTClient

from .scenario import NAME_LABEL, usage_profile
from .usage import SyntheticUsage

GROUP_VERSION = "metrics.k8s.io/v1beta1"
BASE = f"/apis/{GROUP_VERSION}"
DISCOVERY = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": GROUP_VERSION,
    "resources": [
        {"name": "pods", "singularName": "", "namespaced": True, "kind": "PodMetrics", "verbs": ["get", "list"]}
    ],
}
FINISHED_PHASES = ("Succeeded", "Failed")

PodLister = Callable[[str, Mapping[str, str]], list[dict[str, Any]]]
"""Lists pods: (namespace or "" for all, query parameters such as labelSelector) → pod objects."""


def rest_pod_lister(rest: RESTClient) -> PodLister:
    """A `PodLister` reading from the API server through `rest`."""

    def list_pods(namespace: str, params: Mapping[str, str]) -> list[dict[str, Any]]:
        path = f"/api/v1/namespaces/{namespace}/pods" if namespace else "/api/v1/pods"
        items: list[dict[str, Any]] = rest.get(path, params=dict(params) or None).get("items", [])
        return items

    return list_pods


def _rfc3339(epoch_seconds: float) -> str:
    return rfc3339(datetime.datetime.fromtimestamp(epoch_seconds, tz=datetime.UTC))


class PodMetricsSource:
    """Builds PodMetrics documents from the pods that `lister` returns and the synthetic `usage`.

    `elapsed` gives seconds since the demo started (the usage curve's time), `wall` the epoch time stamped on
    each PodMetrics (the end of the current window).
    """

    def __init__(
        self,
        lister: PodLister,
        usage: SyntheticUsage,
        *,
        elapsed: Callable[[], float],
        wall: Callable[[], float] = time.time,
    ) -> None:
        self._lister = lister
        self._usage = usage
        self._elapsed = elapsed
        self._wall = wall

    def pod_metrics(self, pod: Mapping[str, Any], elapsed: float, stamp: str) -> dict[str, Any] | None:
        """The PodMetrics of `pod` at `elapsed`, or None for a pod that has none (deleting, finished)."""
        meta = pod.get("metadata") or {}
        if meta.get("deletionTimestamp") or (pod.get("status") or {}).get("phase") in FINISHED_PHASES:
            return None
        labels = meta.get("labels") or {}
        profile = usage_profile(labels.get(NAME_LABEL, ""))
        key = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        containers = [
            {"name": c["name"], "usage": self._usage.usage(profile, key, c["name"], elapsed).quantities()}
            for _, c in managed_container_bodies(pod)
        ]
        return {
            "kind": "PodMetrics",
            "apiVersion": GROUP_VERSION,
            "metadata": {
                "name": meta.get("name", ""),
                "namespace": meta.get("namespace", ""),
                "labels": dict(labels),
                "creationTimestamp": stamp,
            },
            "timestamp": stamp,
            "window": f"{self._usage.timeline.window_seconds:g}s",
            "containers": containers,
        }

    def list(self, namespace: str, params: Mapping[str, str]) -> dict[str, Any]:
        """A PodMetricsList of the pods in `namespace` ("" for all) that match the query's selectors."""
        elapsed, stamp = self._elapsed(), _rfc3339(self._wall())
        selectors = {k: v for k, v in params.items() if k in ("labelSelector", "fieldSelector") and v}
        items = [m for pod in self._lister(namespace, selectors) if (m := self.pod_metrics(pod, elapsed, stamp))]
        return {"kind": "PodMetricsList", "apiVersion": GROUP_VERSION, "metadata": {}, "items": items}

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The PodMetrics of one pod, or None when it does not exist or has no metrics."""
        pods = self._lister(namespace, {"fieldSelector": f"metadata.name={name}"})
        return self.pod_metrics(pods[0], self._elapsed(), _rfc3339(self._wall())) if pods else None


def route(source: PodMetricsSource, path: str, query: str) -> tuple[int, dict[str, Any]]:
    """Answer a GET of `path?query`: (HTTP status, JSON body). Unknown paths are 404, as the aggregator expects."""
    params = {key: values[-1] for key, values in parse_qs(query).items()}
    parts = path.rstrip("/").removeprefix(BASE).strip("/").split("/") if path.startswith(BASE) else None
    if parts == [""]:
        return 200, DISCOVERY
    if parts == ["pods"]:
        return 200, source.list("", params)
    if parts and len(parts) in (3, 4) and parts[0] == "namespaces" and parts[2] == "pods":
        if len(parts) == 3:
            return 200, source.list(parts[1], params)
        found = source.get(parts[1], parts[3])
        if found is not None:
            return 200, found
        return 404, _status(404, "NotFound", f'podmetrics.metrics.k8s.io "{parts[1]}/{parts[3]}" not found')
    return 404, _status(404, "NotFound", f"the server could not find the requested resource ({path})")


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "reason": reason,
        "message": message,
        "code": code,
    }


def metrics_handler(source: PodMetricsSource) -> type[BaseHTTPRequestHandler]:
    """An HTTP handler class serving `source` (for `Environment.serve_api_service`)."""

    class MetricsHandler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        requests_served: ClassVar[int] = 0

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            try:
                code, body = route(source, url.path, url.query)
            except (APIError, urllib3.exceptions.HTTPError) as exc:  # no pods from the API server: say so
                code, body = 503, _status(503, "ServiceUnavailable", str(exc))
            MetricsHandler.requests_served += 1
            payload = orjson.dumps(body)
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            return

    return MetricsHandler
