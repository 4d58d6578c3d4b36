"""Backends behind the API server: an aggregated metrics.k8s.io API and a fake kubelet's Summary API."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ballast.runtime.envtest import Environment, json_handler

METRICS_DISCOVERY = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": "metrics.k8s.io/v1beta1",
    "resources": [
        {"name": "pods", "singularName": "", "namespaced": True, "kind": "PodMetrics", "verbs": ["get", "list"]},
        {"name": "nodes", "singularName": "", "namespaced": False, "kind": "NodeMetrics", "verbs": ["get", "list"]},
    ],
}
POD_METRICS = {
    "kind": "PodMetricsList",
    "apiVersion": "metrics.k8s.io/v1beta1",
    "metadata": {},
    "items": [
        {
            "metadata": {"name": "api-7d9f", "namespace": "default", "labels": {"app": "api"}},
            "timestamp": "2026-11-29T12:00:00Z",
            "window": "15s",
            "containers": [{"name": "api", "usage": {"cpu": "287m", "memory": "192Mi"}}],
        }
    ],
}
SUMMARY = {
    "node": {"nodeName": "node-a", "cpu": {"usageNanoCores": 250000000}},
    "pods": [
        {
            "podRef": {"name": "api-7d9f", "namespace": "default", "uid": "u-1"},
            "containers": [
                {"name": "api", "cpu": {"usageNanoCores": 287000000}, "memory": {"workingSetBytes": 201326592}}
            ],
            "ephemeral-storage": {"usedBytes": 330},
        }
    ],
}


def _metrics_handler() -> Any:
    return json_handler(
        {
            "/apis/metrics.k8s.io/v1beta1": METRICS_DISCOVERY,
            "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods": POD_METRICS,
        }
    )


@pytest.fixture(scope="module")
def loopback_env(envtest: Environment) -> Iterator[Environment]:
    """A second control plane in loopback mode (the session one may run in the private network)."""
    if envtest.network_mode == "loopback":
        yield envtest
        return
    with Environment(assets=envtest.assets, network_mode="loopback") as env:
        yield env


def test_metrics_api_answers_through_the_api_server_in_loopback_mode(loopback_env: Environment) -> None:
    handler = _metrics_handler()
    with loopback_env.serve_api_service("metrics.k8s.io", "v1beta1", handler) as backend:
        assert backend.host == "127.0.0.1"
        service = loopback_env.rest.get("/api/v1/namespaces/kube-system/services/metrics-v1beta1")
        assert (service["spec"]["type"], service["spec"]["externalName"]) == ("ExternalName", "localhost")
        listed = loopback_env.rest.get(
            "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", params={"labelSelector": "app=api"}
        )
        assert listed["items"][0]["containers"][0]["usage"] == {"cpu": "287m", "memory": "192Mi"}
        # The API server forwards the selector: the backend can honour it (docs/design.md, difference 16).
        assert (
            "GET",
            "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods?labelSelector=app%3Dapi",
        ) in handler.requests


@pytest.mark.private_network
@pytest.mark.usefixtures("private_network")
def test_metrics_api_behind_an_endpointslice_in_the_private_network(envtest: Environment) -> None:
    with envtest.serve_api_service(
        "metrics.k8s.io", "v1beta1", _metrics_handler(), service="metrics-private"
    ) as backend:
        assert backend.host.startswith("198.51.100.")
        slice_ = envtest.rest.get("/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices/metrics-private")
        assert slice_["endpoints"][0]["addresses"] == [backend.host]
        listed = envtest.rest.get("/apis/metrics.k8s.io/v1beta1/namespaces/default/pods")
        assert listed["items"][0]["metadata"]["name"] == "api-7d9f"
    envtest.rest.delete("/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io")


@pytest.mark.private_network
@pytest.mark.usefixtures("private_network")
def test_a_fake_kubelet_answers_the_summary_api_through_the_node_proxy(envtest: Environment) -> None:
    handler = json_handler({"/stats/summary": SUMMARY})
    with envtest.serve_kubelet("node-a", handler, labels={"topology.kubernetes.io/zone": "z1"}) as kubelet:
        node = envtest.rest.get("/api/v1/nodes/node-a")
        assert node["status"]["addresses"] == [{"type": "InternalIP", "address": kubelet.host}]
        assert node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"] == kubelet.port
        summary = envtest.rest.get("/api/v1/nodes/node-a/proxy/stats/summary")
        assert summary == SUMMARY
        assert handler.requests == [("GET", "/stats/summary")]
    envtest.rest.delete("/api/v1/nodes/node-a")
