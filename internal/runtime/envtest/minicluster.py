"""A cluster without containers: envtest's control plane, kube-scheduler, kube-controller-manager, kwok and
metrics-server, every one a real binary built from its Go module.

    with MiniCluster(nodes=3) as cluster:
        cluster.env.rest.create(...)          # Deployments roll out, Pods are scheduled and turn Running,
        cluster.pod_metrics("default")        # metrics.k8s.io serves their usage, HPAs scale them

Pods run on kwok's fake Nodes; their usage is whatever their annotations say (`kwok.usage_annotation`). What
kwok does not emulate stays absent: no container runs, no Summary API, and an in-place resize is never
reflected in `containerStatuses[].resources`. Needs the private test network (`ballast-envtest netns`):
metrics-server's APIService must be reached on a non-loopback address.

`real_node=True` adds one real Node (`realnode.RealNode`: a kubelet and containerd, real containers, real
cgroups, one per machine) beside kwok's; the API server then also runs the Node authorizer and NodeRestriction.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import yaml

from . import network
from .environment import Environment
from .errors import APIError
from .kwok import Kwok
from .manifests import Source
from .metrics_server import MetricsServer
from .realnode import RealNode
from .wait import poll_until

# Client rate limits raised as kwokctl raises them: the defaults (QPS 50) make binding thousands of Pods take
# minutes.
CLIENT_QPS = 5000
CLIENT_BURST = 10000


class MiniCluster:
    """Start with `start()`/`stop()` or a `with` block; `nodes` fake Nodes of `node_cpu`/`node_memory` each.

    `metrics` starts metrics-server (first PodMetrics about two resolutions after a Pod is Running);
    `hpa_sync_seconds` is kube-controller-manager's HPA sync period (its downscale stabilization window is
    twice that, instead of 5 minutes).
    """

    def __init__(
        self,
        *,
        nodes: int = 1,
        node_cpu: str = "8",
        node_memory: str = "32Gi",
        node_pods: str = "250",
        crd_paths: Sequence[Source] = (),
        metrics: bool = True,
        metric_resolution_seconds: int = 15,
        hpa_sync_seconds: int = 5,
        audit_log: bool = False,
        kubernetes_version: str | None = None,
        real_node: bool = False,
    ) -> None:
        # The kubelet's Hostname address resolves nowhere (no DNS in the test network): proxy to its InternalIP.
        node_authorization = (
            "--authorization-mode=Node,RBAC",
            "--enable-admission-plugins=NodeRestriction",
            "--kubelet-preferred-address-types=InternalIP",
        )
        self.env = Environment(
            kubernetes_version=kubernetes_version,
            crd_paths=crd_paths,
            audit_log=audit_log,
            network_mode="private",
            apiserver_args=node_authorization if real_node else (),
        )
        self.node_count = nodes
        self.node_cpu = node_cpu
        self.node_memory = node_memory
        self.node_pods = node_pods
        self.hpa_sync_seconds = hpa_sync_seconds
        self.kwok = Kwok(self.env)
        self.metrics_server = MetricsServer(self.env, resolution_seconds=metric_resolution_seconds) if metrics else None
        self.real_node = RealNode(self.env) if real_node else None

    def start(self) -> None:
        network.require_private_network()
        self.env.start()
        try:
            self.env.start_component("kube-scheduler", ["--config=" + str(self._scheduler_config())])
            self.env.start_component(
                "kube-controller-manager",
                [
                    f"--kube-api-qps={CLIENT_QPS}",
                    f"--kube-api-burst={CLIENT_BURST}",
                    f"--horizontal-pod-autoscaler-sync-period={self.hpa_sync_seconds}s",
                    # 5 minutes by default: a test would wait that long for any scale-down.
                    f"--horizontal-pod-autoscaler-downscale-stabilization={self.hpa_sync_seconds * 2}s",
                ],
            )
            self.kwok.start()
            for index in range(self.node_count):
                self.add_node(f"kwok-node-{index}")
            if self.real_node is not None:
                self.real_node.start()
            if self.metrics_server is not None:
                self.metrics_server.start()
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        try:
            if self.real_node is not None:
                self.real_node.stop()  # first: it drains its pods through the running control plane
        finally:
            self.env.stop()

    def __enter__(self) -> MiniCluster:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _scheduler_config(self) -> Path:
        kubeconfig = self.env.add_user("system:kube-scheduler").write_kubeconfig(
            self.env.work_dir / "kube-scheduler-config" / "kubeconfig"
        )
        path = kubeconfig.parent / "config.yaml"
        config = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(kubeconfig), "qps": CLIENT_QPS, "burst": CLIENT_BURST},
            "leaderElection": {"leaderElect": False},
        }
        path.write_text(yaml.safe_dump(config))
        return path

    # ------------------------------------------------------------------------------------------ helpers

    def add_node(self, name: str, **options: Any) -> dict[str, Any]:
        """A fake Node (see `Kwok.add_node`), Ready once kwok initialises it."""
        options.setdefault("cpu", self.node_cpu)
        options.setdefault("memory", self.node_memory)
        options.setdefault("pods", self.node_pods)
        node = self.kwok.add_node(name, **options)
        poll_until(lambda: self.node_ready(name), timeout=30.0, interval=0.2, what=f"Node {name} to be Ready")
        return node

    def node_ready(self, name: str) -> bool:
        conditions = self.env.rest.get(f"/api/v1/nodes/{name}").get("status", {}).get("conditions", [])
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)

    def pod_metrics(self, namespace: str) -> dict[str, dict[str, Any]]:
        """PodMetrics of `namespace` by pod name, as metrics.k8s.io serves them (empty while none yet)."""
        with contextlib.suppress(APIError):  # 503 until metrics-server has scraped twice: simply none yet
            items = self.env.rest.get(f"/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods")["items"]
            return {item["metadata"]["name"]: item for item in items}
        return {}


__all__ = [
    "CLIENT_BURST",
    "CLIENT_QPS",
    "MiniCluster",
]
