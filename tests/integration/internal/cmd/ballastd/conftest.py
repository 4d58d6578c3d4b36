"""`ballastd` as a real process against the real API server, with a metrics.k8s.io backend that reports usage
for enrolled pods, and the webhook configurations installed — the operator end to end."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson
import pytest
import urllib3

from ballast.internal.enrollment import MODE_LABEL, managed_container_bodies
from ballast.runtime.envtest import Backend, Environment, json_handler
from ballast.runtime.envtest.ports import suggest_port
from ballast.runtime.envtest.wait import poll_until
from tests.integration.config.rbac.config_rbac import service_account_kubeconfig

OPERATOR_NAMESPACE = "ballast-system"
GROUP_VERSION = "ballast.tightlinesoftware.com/v1"
DEFAULT_USAGE = {"cpu": "230m", "memory": "100Mi"}


class Ballastd:
    """One `ballastd` process; its output goes to a log file shown when something fails.

    It runs as ServiceAccount ballast-system/ballast with exactly the RBAC of `config/rbac/` (applied once per
    environment), as in a cluster — a missing grant fails the test. `kubeconfig` runs it as someone else;
    `module` runs another entry point (a test wrapper around ballastd's `main`).
    """

    def __init__(
        self,
        env: Environment,
        work: Path,
        args: Sequence[str],
        name: str = "ballastd",
        *,
        kubeconfig: Path | None = None,
        module: str = "ballast.internal.cmd.ballastd",
    ) -> None:
        self.env = env
        self.kubeconfig = kubeconfig or service_account_kubeconfig(env, "ballast")
        self.log_path = work / f"{name}.log"
        self.health_port = suggest_port()
        self.metrics_port = suggest_port()
        argv = [
            sys.executable,
            "-m",
            module,
            f"--kubeconfig={self.kubeconfig}",
            f"--operator-namespace={OPERATOR_NAMESPACE}",
            f"--health-probe-bind-address=127.0.0.1:{self.health_port}",
            f"--metrics-bind-address=127.0.0.1:{self.metrics_port}",
            "--log-format=text",
            *args,
        ]
        self._log = self.log_path.open("wb")
        self.process = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)

    def log(self) -> str:
        """The whole log, for assertions on what was said (a line said early scrolls out of `output()`)."""
        return self.log_path.read_text(errors="replace")

    def output(self) -> str:
        """The log's tail, for failure messages."""
        return self.log()[-6000:]

    def wait_ready(self, timeout: float = 60) -> None:
        http = urllib3.PoolManager(retries=False, timeout=2.0)

        def ready() -> bool:
            if self.process.poll() is not None:
                raise AssertionError(f"ballastd exited with {self.process.returncode}:\n{self.output()}")
            return http.request("GET", f"http://127.0.0.1:{self.health_port}/readyz").status == 200

        poll_until(ready, timeout=timeout, what="ballastd /readyz", last_error=self.output)

    def metrics(self) -> str:
        return str(urllib3.request("GET", f"http://127.0.0.1:{self.metrics_port}/metrics").data.decode())

    def metric(self, family: str, /, **labels: str) -> float:
        """The value of the first sample of `family` that carries all of `labels` (0 when there is none)."""
        wanted = [f'{key}="{value}"' for key, value in labels.items()]
        for line in self.metrics().splitlines():
            if line.startswith((family + "{", family + " ")) and all(label in line for label in wanted):
                return float(line.rsplit(" ", 1)[1])
        return 0.0

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(40)
            except subprocess.TimeoutExpired:
                self.kill()
        self._log.close()


class MetricsBackend:
    """metrics.k8s.io PodMetrics for every enrolled pod, with usage set per container by the test."""

    def __init__(self, env: Environment) -> None:
        self.env = env
        self.usage: dict[tuple[str, str, str], dict[str, str]] = {}
        self.lock = threading.Lock()
        discovery = {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": "metrics.k8s.io/v1beta1",
            "resources": [
                {"name": "pods", "singularName": "", "namespaced": True, "kind": "PodMetrics", "verbs": ["get", "list"]}
            ],
        }
        handler = json_handler(
            {"/apis/metrics.k8s.io/v1beta1": discovery, "/apis/metrics.k8s.io/v1beta1/pods": self.pod_metrics}
        )
        self.backend: Backend = env.serve_api_service(
            "metrics.k8s.io", "v1beta1", handler, service="ballast-test-metrics"
        )

    def set_usage(self, namespace: str, pod: str, container: str, **usage: str) -> None:
        with self.lock:
            self.usage[(namespace, pod, container)] = usage

    def pod_metrics(self) -> dict[str, Any]:
        pods = self.env.rest.get("/api/v1/pods", params={"labelSelector": MODE_LABEL})["items"]
        items = []
        with self.lock:
            for pod in pods:
                meta = pod["metadata"]
                if meta.get("deletionTimestamp"):
                    continue
                containers = [
                    {
                        "name": c["name"],
                        "usage": self.usage.get((meta["namespace"], meta["name"], c["name"]), DEFAULT_USAGE),
                    }
                    for _, c in managed_container_bodies(pod)
                ]
                items.append(
                    {
                        "metadata": {
                            "name": meta["name"],
                            "namespace": meta["namespace"],
                            "labels": meta.get("labels", {}),
                        },
                        "timestamp": "2026-11-29T12:00:00Z",
                        "window": "15s",
                        "containers": containers,
                    }
                )
        return {"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {}, "items": items}

    def stop(self) -> None:
        self.backend.stop()
        with contextlib.suppress(Exception):
            self.env.rest.delete("/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io")


def apply(env: Environment, path: str, body: Mapping[str, Any]) -> None:
    env.rest.apply(path, dict(body))


def fast_policy(name: str = "default", **spec: Any) -> dict[str, Any]:
    """The local-testing preset, faster still: ready after 3 samples over 5 s; resize every 3 s."""
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "ClusterResourcePolicy",
        "metadata": {"name": name},
        "spec": {
            "priority": 0,
            "metrics": [
                {
                    "resource": "cpu",
                    "field": "request",
                    "source": "kubernetes-metrics",
                    "aggregation": "avg",
                    "headroom": "1.25",
                },
                {
                    "resource": "memory",
                    "field": "request",
                    "source": "kubernetes-metrics",
                    "aggregation": "p75",
                    "headroom": "1.0",
                },
            ],
            "readiness": {"minDataPoints": 3, "minTimeSpan": "5s", "maxCV": "2.0"},
            "behaviors": {"resize": {"interval": "3s", "maxChangePerCycle": "50%"}},
            **spec,
        },
    }


def install_operator_objects(env: Environment) -> None:
    """Namespace, BallastConfig, MetricsSource and the default policy the tests run under."""
    with contextlib.suppress(Exception):
        env.rest.create(
            "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": OPERATOR_NAMESPACE}}
        )
    base = "/apis/ballast.tightlinesoftware.com/v1"
    apply(
        env,
        f"{base}/ballastconfigs/ballast",
        {
            "apiVersion": GROUP_VERSION,
            "kind": "BallastConfig",
            "metadata": {"name": "ballast"},
            "spec": {"identityLabels": ["app.kubernetes.io/name", "app.kubernetes.io/component"], "orphanTTL": "168h"},
        },
    )
    apply(
        env,
        f"{base}/metricssources/kubernetes-metrics",
        {
            "apiVersion": GROUP_VERSION,
            "kind": "MetricsSource",
            "metadata": {"name": "kubernetes-metrics"},
            "spec": {"type": "kubernetesMetrics", "config": {"pollInterval": "1s", "reservoirSize": 1000}},
        },
    )
    apply(env, f"{base}/clusterresourcepolicies/default", fast_policy())


def remove_operator_objects(env: Environment) -> None:
    base = "/apis/ballast.tightlinesoftware.com/v1"
    for path in (
        f"{base}/clusterresourcepolicies/default",
        f"{base}/metricssources/kubernetes-metrics",
        f"{base}/ballastconfigs/ballast",
    ):
        with contextlib.suppress(Exception):
            env.rest.delete(path)


def pod(
    name: str,
    namespace: str,
    app: str,
    mode: str | None,
    *,
    cpu: str = "1000m",
    memory: str = "128Mi",
    limits: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    labels = {"app.kubernetes.io/name": app, "app.kubernetes.io/component": "api"}
    if mode is not None:
        labels[MODE_LABEL] = mode
    resources: dict[str, Any] = {"requests": {"cpu": cpu, "memory": memory}}
    if limits:
        resources["limits"] = dict(limits)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10", "resources": resources}]},
    }


@pytest.fixture
def metrics_backend(envtest: Environment) -> Iterator[MetricsBackend]:
    backend = MetricsBackend(envtest)
    yield backend
    backend.stop()


def dump(obj: Any) -> str:
    return orjson.dumps(obj, option=orjson.OPT_INDENT_2).decode()
