"""The collector against a real kube-apiserver: our CRDs installed, a metrics.k8s.io backend behind the aggregation
layer that honours label selectors as metrics-server does, the operator's manager wiring, and history stores
(SQLite in the test's directory, or a real redis-server)."""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import orjson
import pytest

from ballast.api.scheme import add_to_scheme
from ballast.controllers.collector import setup
from ballast.internal.enrollment import MODE_LABEL, PROFILE_REF_INDEX, PodProjection, profile_ref_index
from ballast.internal.history import HistoryStore, RedisHistoryStore, SQLiteHistoryStore
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.operator import OperatorOptions
from ballast.runtime import CacheScope, Manager, RESTConfig, Scheme
from ballast.runtime import labels as label_selectors
from ballast.runtime.envtest import Backend, Environment
from ballast.runtime.envtest.backends import RecordingHandler
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.wait import poll_until
from tests.integration.redis_server import RedisServer
from tests.paths import CRD_DIR

GROUP_PATH = "/apis/ballast.tightlinesoftware.com/v1"
METRICS_DISCOVERY = {
    "kind": "APIResourceList",
    "apiVersion": "v1",
    "groupVersion": "metrics.k8s.io/v1beta1",
    "resources": [
        {"name": "pods", "singularName": "", "namespaced": True, "kind": "PodMetrics", "verbs": ["get", "list"]},
        {"name": "nodes", "singularName": "", "namespaced": False, "kind": "NodeMetrics", "verbs": ["get", "list"]},
    ],
}


class MetricsServer:
    """What the test metrics.k8s.io backend serves: PodMetrics it can change, label selectors honoured."""

    def __init__(self) -> None:
        self.pods: list[dict[str, Any]] = []
        self.lists: list[tuple[float, str]] = []
        """(monotonic time, path with query) of every PodMetrics LIST."""
        self._lock = threading.Lock()

    def set_pod(self, namespace: str, name: str, labels: dict[str, str], usage: dict[str, dict[str, str]]) -> None:
        item = {
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "timestamp": "2026-11-29T12:00:00Z",
            "window": "15s",
            "containers": [{"name": container, "usage": values} for container, values in usage.items()],
        }
        with self._lock:
            self.pods = [
                p for p in self.pods if (p["metadata"]["namespace"], p["metadata"]["name"]) != (namespace, name)
            ]
            self.pods.append(item)

    def lists_of(self, selector: str) -> list[float]:
        with self._lock:
            return [at for at, path in self.lists if selector in path]

    def answer(self, path: str) -> tuple[int, Any]:
        url = urlsplit(path)
        if url.path == "/apis/metrics.k8s.io/v1beta1":
            return 200, METRICS_DISCOVERY
        if url.path != "/apis/metrics.k8s.io/v1beta1/pods":
            return 404, {"kind": "Status", "status": "Failure", "reason": "NotFound", "code": 404}
        selector = label_selectors.parse(parse_qs(url.query).get("labelSelector", [""])[0])
        with self._lock:
            self.lists.append((time.monotonic(), path))
            items = [p for p in self.pods if selector.matches(p["metadata"]["labels"])]
        return 200, {"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {}, "items": items}

    def handler(self) -> type[RecordingHandler]:
        server = self

        class Handler(RecordingHandler):
            requests: ClassVar[list[tuple[str, str]]] = []

            def do_GET(self) -> None:
                Handler.requests.append(("GET", self.path))
                code, payload = server.answer(self.path)
                body = orjson.dumps(payload)
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


@pytest.fixture(scope="module")
def crds(envtest: Environment) -> list[str]:
    return envtest.install_crds([CRD_DIR])


@pytest.fixture(scope="module")
def metrics_server(envtest: Environment, crds: list[str]) -> Iterator[MetricsServer]:
    """metrics.k8s.io/v1beta1 served through the API server (loopback: ExternalName; private network: Service)."""
    server = MetricsServer()
    backend: Backend = envtest.serve_api_service("metrics.k8s.io", "v1beta1", server.handler(), service="metrics-test")
    try:
        yield server
    finally:
        backend.stop()
        with contextlib.suppress(APIError):
            envtest.rest.delete("/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io")


class Cluster:
    """Objects of one test: created with unique names, cluster-scoped ones deleted afterwards."""

    def __init__(self, envtest: Environment, namespace: str) -> None:
        self.rest = envtest.rest
        self.namespace = namespace
        self.suffix = uuid.uuid4().hex[:6]
        self._cluster: list[str] = []

    def create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        created: dict[str, Any] = self.rest.create(path, body)
        if "namespace" not in body["metadata"]:
            self._cluster.append(f"{path}/{body['metadata']['name']}")
        return created

    def source(self, name: str, type_: str, poll: str = "1s") -> None:
        self.create(f"{GROUP_PATH}/metricssources", {
            "apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "MetricsSource", "metadata": {"name": name},
            "spec": {"type": type_, "config": {"pollInterval": poll}},
        })  # fmt: skip

    def policy(self, name: str, metrics: list[dict[str, Any]], readiness: dict[str, Any]) -> None:
        self.create(f"{GROUP_PATH}/clusterresourcepolicies", {
            "apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "ClusterResourcePolicy",
            "metadata": {"name": name}, "spec": {"metrics": metrics, "readiness": readiness},
        })  # fmt: skip

    def profile(self, name: str, policy: str, hash_: str, app: str) -> None:
        """A profile as the enrollment and profile lanes leave it, with their own field managers."""
        body = {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "WorkloadProfile", "metadata": {"name": name}}
        self.create(f"{GROUP_PATH}/workloadprofiles", body)
        path = f"{GROUP_PATH}/workloadprofiles/{name}/status"
        self.rest.apply(path, {**body, "status": {
            "tupleLabels": {"app": app}, "selectorLabels": {"app": app}, "measurementHash": hash_,
            "policyRef": {"kind": "ClusterResourcePolicy", "name": policy},
        }}, field_manager="ballast-workloadwatcher")  # fmt: skip
        self.rest.apply(path, {**body, "status": {
            "activeWorkloads": 1,
            "conditions": [{"type": "Orphaned", "status": "False", "reason": "ActiveWorkloads", "message": "",
                            "lastTransitionTime": "2026-11-29T12:00:00Z"}],
        }}, field_manager="ballast-workloadwatcher-profile")  # fmt: skip

    def pod(self, name: str, labels: dict[str, str], profile: str | None, *, node: str | None = None,
            containers: tuple[str, ...] = ("app",), sidecars: tuple[str, ...] = (),
            inits: tuple[str, ...] = ()) -> None:  # fmt: skip
        spec: dict[str, Any] = {"containers": [{"name": c, "image": "registry.example/app:1"} for c in containers]}
        init = [{"name": c, "image": "registry.example/app:1", "restartPolicy": "Always"} for c in sidecars]
        init += [{"name": c, "image": "registry.example/app:1"} for c in inits]
        if init:
            spec["initContainers"] = init
        if node:
            spec["nodeName"] = node
        annotations = {"ballast.tightlinesoftware.com/profile-ref": profile} if profile else {}
        self.create(f"/api/v1/namespaces/{self.namespace}/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": self.namespace, "labels": labels, "annotations": annotations},
            "spec": spec,
        })  # fmt: skip

    def get_profile(self, name: str) -> dict[str, Any]:
        found: dict[str, Any] = self.rest.get(f"{GROUP_PATH}/workloadprofiles/{name}")
        return found

    def cleanup(self) -> None:
        for path in reversed(self._cluster):
            with contextlib.suppress(APIError):
                self.rest.delete(path)


@pytest.fixture
def cluster(envtest: Environment, crds: list[str], envtest_namespace: str) -> Iterator[Cluster]:
    created = Cluster(envtest, envtest_namespace)
    yield created
    created.cleanup()


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[HistoryStore]:
    with SQLiteHistoryStore(tmp_path / "history.db") as store:
        yield store


@pytest.fixture
def redis_store(redis_server: RedisServer) -> Iterator[tuple[HistoryStore, RedisServer]]:
    """A RedisHistoryStore on a real redis-server, and that server (for looking at the Go operator's keys)."""
    with RedisHistoryStore.from_url(redis_server.url, timeout=5) as store:
        yield store, redis_server


RunOperator = Callable[[HistoryStore], Manager]


@pytest.fixture
def run_operator(envtest: Environment) -> Iterator[RunOperator]:
    """Start a manager wired as `ballastd` wires it (enrolled-pod cache as PodProjection with the profile-ref
    index, our kinds in the scheme) with the collector; stopped after the test."""
    started: list[tuple[Manager, threading.Thread, list[BaseException]]] = []

    def run(store: HistoryStore) -> Manager:
        manager = Manager(
            RESTConfig(envtest.client_configuration()),
            scheme=add_to_scheme(Scheme()),
            cache_by_kind={"v1/Pod": CacheScope(label_selector=MODE_LABEL, projection=PodProjection)},
        )
        manager.cache.index_field("v1/Pod", PROFILE_REF_INDEX, profile_ref_index)
        setup(manager, store=store, kill_switch=KillSwitchState(), options=OperatorOptions())
        failures: list[BaseException] = []

        def target() -> None:
            try:
                manager.start()
            except BaseException as exc:  # surfaced at teardown
                failures.append(exc)

        thread = threading.Thread(target=target, name="operator", daemon=True)
        thread.start()
        started.append((manager, thread, failures))
        return manager

    yield run
    for manager, thread, failures in started:
        manager.stop()
        thread.join(30)
        assert not failures, failures


def eventually(condition: Callable[[], Any], what: str, timeout: float = 30.0) -> Any:
    return poll_until(condition, timeout=timeout, what=what, interval=0.1)
