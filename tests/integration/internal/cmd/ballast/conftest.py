"""A control plane with kube-controller-manager for the `ballast` CLI, a stand-in kubelet that marks pods Ready,
and builders of workloads carrying the identity tuple.

There is no kubelet or scheduler: controllers create pods, `FakeKubelet` reports them Running and Ready through
the status subresource (so Deployments, StatefulSets and DaemonSets settle and roll), and pods stay unbound so a
deleted pod disappears at once, as an unscheduled pod does.
"""

from __future__ import annotations

import contextlib
import datetime
import threading
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from ballast.internal.enroll import API_KINDS, Kind, Workload, settled
from ballast.internal.enrollment import MODE_LABEL
from ballast.runtime import RESTConfig
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.rest import Transport

TUPLE = {"app.kubernetes.io/name": "shop", "app.kubernetes.io/component": "api"}
NODES = ("node-a", "node-b")
KINDS = {"deployment": "Deployment", "statefulset": "StatefulSet", "daemonset": "DaemonSet"}


class FakeKubelet:
    """Marks every live pod Running and Ready shortly after it appears (a thread polling the API server)."""

    def __init__(self, env: Environment, interval: float = 0.3) -> None:
        self.env = env
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fake-kubelet", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.is_set():
            with contextlib.suppress(Exception):  # the API server may be stopping; the next round retries
                self._mark_ready()
            self._stop.wait(self.interval)

    def _mark_ready(self) -> None:
        for pod in self.env.rest.get("/api/v1/pods")["items"]:
            metadata = pod["metadata"]
            conditions = {c["type"]: c["status"] for c in (pod.get("status") or {}).get("conditions") or ()}
            if metadata.get("deletionTimestamp") or conditions.get("Ready") == "True":
                continue
            now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
            status = {
                "phase": "Running",
                "conditions": [
                    {"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
                    {"type": "Ready", "status": "True", "lastTransitionTime": now},
                ],
            }
            with contextlib.suppress(Exception):  # deleted meanwhile
                self.env.rest.patch_status(
                    f"/api/v1/namespaces/{metadata['namespace']}/pods/{metadata['name']}", {"status": status}
                )


@pytest.fixture(scope="module")
def cluster(envtest: Environment) -> Iterator[Environment]:
    """A control plane of its own with kube-controller-manager and our CRDs, two Nodes, and a fake kubelet."""
    with Environment(
        assets=envtest.assets,
        components=["kube-controller-manager"],
        crd_paths=["config/crd/bases"],
        network_mode=envtest.network_mode,
    ) as env:
        for node in NODES:
            env.rest.create("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}})
        kubelet = FakeKubelet(env)
        kubelet.start()
        try:
            yield env
        finally:
            kubelet.stop()


@pytest.fixture(scope="module")
def client(cluster: Environment) -> Iterator[APIServerClient]:
    """Our runtime client, as the admin."""
    api = APIServerClient(Transport(RESTConfig.from_kubeconfig(str(cluster.kubeconfig_path))))
    yield api
    api.close()


@pytest.fixture
def namespace(cluster: Environment) -> Iterator[str]:
    name = f"cli-{uuid.uuid4().hex[:6]}"
    cluster.rest.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    yield name
    with contextlib.suppress(Exception):
        cluster.rest.delete(f"/api/v1/namespaces/{name}")


def _template(app: str, labels: dict[str, str] | None, mode: str | None) -> dict[str, Any]:
    pod_labels = {"app": app, **(TUPLE if labels is None else labels)}
    if mode:
        pod_labels[MODE_LABEL] = mode
    return {
        "metadata": {"labels": pod_labels},
        "spec": {
            "tolerations": [{"operator": "Exists"}],  # DaemonSet pods land on the kubelet-less nodes too
            "terminationGracePeriodSeconds": 0,
            "containers": [
                {
                    "name": "app",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "1"}},
                }
            ],
        },
    }


def workload(
    kind: str, name: str, *, replicas: int = 1, labels: dict[str, str] | None = None, mode: str | None = None
) -> dict[str, Any]:
    """A Deployment, StatefulSet or DaemonSet named `name` whose pods carry `app=<name>` and the tuple."""
    spec: dict[str, Any] = {"selector": {"matchLabels": {"app": name}}, "template": _template(name, labels, mode)}
    if kind != "daemonset":
        spec["replicas"] = replicas
    if kind == "statefulset":
        spec["serviceName"] = name
    return {"apiVersion": "apps/v1", "kind": KINDS[kind], "metadata": {"name": name}, "spec": spec}


def create(env: Environment, namespace: str, *objects: dict[str, Any]) -> None:
    for obj in objects:
        env.rest.create(f"/apis/apps/v1/namespaces/{namespace}/{obj['kind'].lower()}s", obj)


def wait_settled(client: APIServerClient, namespace: str, *names: tuple[Kind, str], pods: int) -> None:
    """Until every named (kind, name) workload has settled and `pods` pods are Ready."""

    def ready() -> bool:
        for kind, name in names:
            obj = client.get(API_KINDS[kind], name, namespace)
            if not settled(Workload.from_object(obj)):
                return False
        live = [p for p in client.list("v1/Pod", namespace).items if not p["metadata"].get("deletionTimestamp")]
        return len(live) == pods

    poll_until(ready, timeout=90, what=f"workloads of {namespace} to settle", interval=0.5)


def pod_uids(client: APIServerClient, namespace: str, app: str) -> set[str]:
    pods = client.list("v1/Pod", namespace, label_selector=f"app={app}").items
    return {p["metadata"]["uid"] for p in pods if not p["metadata"].get("deletionTimestamp")}


def pod_modes(client: APIServerClient, namespace: str, app: str) -> list[str | None]:
    pods = client.list("v1/Pod", namespace, label_selector=f"app={app}").items
    return [p["metadata"].get("labels", {}).get(MODE_LABEL) for p in pods if not p["metadata"].get("deletionTimestamp")]
