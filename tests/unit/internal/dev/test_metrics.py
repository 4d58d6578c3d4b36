"""The synthetic metrics.k8s.io backend: discovery, PodMetrics lists with the request's selectors, one pod, 404s."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Iterator, Mapping
from http.server import ThreadingHTTPServer
from typing import Any

import orjson
import pytest

from ballast.internal.dev.metrics import DISCOVERY, PodMetricsSource, metrics_handler, route
from ballast.internal.dev.scenario import CHECKOUT, FALLBACK_USAGE, pod_manifest
from ballast.internal.dev.usage import SyntheticUsage
from ballast.runtime import labels

BASE = "/apis/metrics.k8s.io/v1beta1"


class FakePods:
    """A PodLister over fixed pods that applies label and name selectors as the API server would."""

    def __init__(self, pods: list[dict[str, Any]]) -> None:
        self.pods = pods
        self.calls: list[tuple[str, dict[str, str]]] = []

    def __call__(self, namespace: str, params: Mapping[str, str]) -> list[dict[str, Any]]:
        self.calls.append((namespace, dict(params)))
        selector = labels.parse(params.get("labelSelector", ""))
        name = params.get("fieldSelector", "").removeprefix("metadata.name=")
        return [
            p
            for p in self.pods
            if (not namespace or p["metadata"]["namespace"] == namespace)
            and selector.matches(p["metadata"].get("labels"))
            and (not name or p["metadata"]["name"] == name)
        ]


def demo_pods() -> list[dict[str, Any]]:
    enrolled = pod_manifest("dev-alice", "checkout-0", CHECKOUT, "apply")
    sidecar = pod_manifest("dev-bob", "checkout-0", CHECKOUT, "measure")
    sidecar["spec"]["initContainers"] = [
        {"name": "proxy", "image": "x", "restartPolicy": "Always"},
        {"name": "migrate", "image": "x"},
    ]
    unenrolled = {
        "metadata": {"name": "web", "namespace": "dev-bob", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "web"}]},
    }
    deleting = pod_manifest("staging", "old", CHECKOUT, "apply")
    deleting["metadata"]["deletionTimestamp"] = "2026-11-29T12:00:00Z"
    finished = pod_manifest("staging", "done", CHECKOUT, "apply")
    finished["status"] = {"phase": "Succeeded"}
    return [enrolled, sidecar, unenrolled, deleting, finished]


@pytest.fixture
def pods() -> FakePods:
    return FakePods(demo_pods())


@pytest.fixture
def source(pods: FakePods) -> PodMetricsSource:
    return PodMetricsSource(pods, SyntheticUsage(seed=7), elapsed=lambda: 20.0, wall=lambda: 1_800_000_000.0)


def test_discovery_lists_pod_metrics(source: PodMetricsSource) -> None:
    assert route(source, BASE, "") == (200, DISCOVERY)
    assert route(source, BASE + "/", "")[0] == 200


def test_the_list_honours_the_label_selector_and_skips_pods_without_metrics(
    source: PodMetricsSource, pods: FakePods
) -> None:
    code, body = route(source, BASE + "/pods", "labelSelector=ballast.tightlinesoftware.com%2Fmode")
    assert code == 200
    assert body["kind"] == "PodMetricsList"
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in body["items"]] == [
        ("dev-alice", "checkout-0"),
        ("dev-bob", "checkout-0"),
    ]
    assert pods.calls[-1] == ("", {"labelSelector": "ballast.tightlinesoftware.com/mode"})
    first = body["items"][0]
    assert first["timestamp"] == "2027-01-15T08:00:00Z"
    assert first["window"] == "15s"
    assert first["metadata"]["labels"]["app.kubernetes.io/name"] == "checkout"
    (api,) = first["containers"]
    expected = SyntheticUsage(seed=7).usage(CHECKOUT.usage, "dev-alice/checkout-0", "api", 20.0).quantities()
    assert api == {"name": "api", "usage": expected}
    # Regular containers and restartable sidecars have usage; run-to-completion init containers do not.
    assert [c["name"] for c in body["items"][1]["containers"]] == ["api", "proxy"]


def test_without_a_selector_every_running_pod_is_listed_and_unknown_apps_get_a_default(
    source: PodMetricsSource,
) -> None:
    _, body = route(source, BASE + "/pods", "")
    assert len(body["items"]) == 3
    web = next(i for i in body["items"] if i["metadata"]["name"] == "web")
    expected = SyntheticUsage(seed=7).usage(FALLBACK_USAGE, "dev-bob/web", "web", 20.0).quantities()
    assert web["containers"] == [{"name": "web", "usage": expected}]


def test_namespaced_list_and_single_pod(source: PodMetricsSource, pods: FakePods) -> None:
    _, body = route(source, BASE + "/namespaces/dev-bob/pods", "labelSelector=app%3Dweb")
    assert [i["metadata"]["name"] for i in body["items"]] == ["web"]
    assert pods.calls[-1] == ("dev-bob", {"labelSelector": "app=web"})
    code, one = route(source, BASE + "/namespaces/dev-alice/pods/checkout-0", "")
    assert code == 200
    assert one["kind"] == "PodMetrics"
    assert one["metadata"]["name"] == "checkout-0"
    code, missing = route(source, BASE + "/namespaces/dev-alice/pods/nope", "")
    assert code == 404
    assert missing["reason"] == "NotFound"
    assert route(source, BASE + "/namespaces/staging/pods/old", "")[0] == 404  # being deleted: no metrics


@pytest.mark.parametrize("path", ["/apis/metrics.k8s.io/v1", BASE + "/nodes", BASE + "/namespaces/x", "/healthz"])
def test_other_paths_are_not_found(source: PodMetricsSource, path: str) -> None:
    assert route(source, path, "")[0] == 404


@pytest.fixture
def server(source: PodMetricsSource) -> Iterator[int]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), metrics_handler(source))
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def test_the_handler_serves_json_over_http(server: int) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", server, timeout=5)
    connection.request("GET", BASE + "/pods?labelSelector=app%3Dweb")
    response = connection.getresponse()
    assert response.status == 200
    assert response.getheader("Content-Type") == "application/json"
    assert [i["metadata"]["name"] for i in orjson.loads(response.read())["items"]] == ["web"]
    connection.request("GET", "/nowhere")
    response = connection.getresponse()
    assert response.status == 404
    response.read()
    connection.close()
