"""kwok against an Environment: fake Nodes that heartbeat, Pods that start and stop, per-node resource metrics.

kwok (sigs.k8s.io/kwok) plays kubelet for Nodes carrying the annotation `kwok.x-k8s.io/node: fake`: its Stages
initialise the Node, renew its Lease, and move bound Pods to Running (and Job pods to Succeeded, deleted pods
away). It serves every Node's `/metrics/resource` on one port under `/metrics/nodes/<node>/metrics/resource`,
which metrics-server reads through the Node annotation `metrics.k8s.io/resource-metrics-path`.

The Stage, Metric and usage YAML are the files the kwok module ships (its `kustomize/` directory in the Go
module cache), not copies. One addition is ours: a usage per container name (`usage_per_container`), since
kwok's stock usage gives every container of a Pod the same number.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import urllib3
import yaml

from . import network
from .errors import EnvtestError
from .ports import suggest_port
from .tools import find_tool, module_dir

if TYPE_CHECKING:
    from .environment import Environment
    from .process import ControlPlaneProcess

FAKE_NODE_ANNOTATION = "kwok.x-k8s.io/node"
METRICS_PATH_ANNOTATION = "metrics.k8s.io/resource-metrics-path"
USAGE_CPU = "kwok.x-k8s.io/usage-cpu"
USAGE_MEMORY = "kwok.x-k8s.io/usage-memory"

# Files of the kwok module, relative to its kustomize/ directory: fast pod and node lifecycles, Lease
# heartbeats, and the kubelet-shaped resource metrics.
STAGE_FILES = (
    "stage/node/fast/node-initialize.yaml",
    "stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
    "stage/pod/fast/pod-ready.yaml",
    "stage/pod/fast/pod-complete.yaml",
    "stage/pod/fast/pod-delete.yaml",
    "metrics/resource/metrics-resource.yaml",
)
STOCK_USAGE_FILE = "metrics/usage/usage-from-annotation.yaml"
CONFIGURATION_FILE = "kwok/kwok.yaml"


def usage_annotation(resource: str, container: str | None = None) -> str:
    """`kwok.x-k8s.io/usage-cpu` for every container, `kwok.x-k8s.io/usage-cpu-<container>` for one."""
    base = {"cpu": USAGE_CPU, "memory": USAGE_MEMORY}[resource]
    return f"{base}-{container}" if container else base


def usage_per_container(stock: Mapping[str, Any]) -> dict[str, Any]:
    """kwok's usage-from-annotation ClusterResourceUsage, asking `<annotation>-<container.name>` first.

    A container without its own annotation falls back to the stock expression (the Pod-wide annotation, then
    kwok's default), so every Pod the stock file served is served the same way.
    """
    usage = dict(stock)
    entries = []
    for entry in stock["spec"]["usages"]:
        resources = {}
        for resource, value in entry["usage"].items():
            specific = f'"{usage_annotation(resource)}-" + container.name'
            resources[resource] = {
                "expression": f"{specific} in pod.metadata.annotations"
                f" ? Quantity(pod.metadata.annotations[{specific}])"
                f" : ({value['expression'].strip()})"
            }
        entries.append({**entry, "usage": resources})
    usage["metadata"] = {"name": "usage-per-container"}
    usage["spec"] = {**stock["spec"], "usages": entries}
    return usage


def configuration_documents(kustomize: Path, *, cidr: str) -> list[dict[str, Any]]:
    """kwok's own KwokConfiguration (its defaults, which a partial one would zero) with our pod CIDR and no
    CRDs (the Stages, Metric and usage come in this configuration instead: kwok takes a kind from one place
    only), then those objects."""
    configuration = yaml.safe_load((kustomize / CONFIGURATION_FILE).read_text())
    configuration["options"] |= {"cidr": cidr, "podPlayStageParallelism": 16, "enableCRDs": []}
    documents: list[dict[str, Any]] = [configuration]
    for relative in STAGE_FILES:
        documents += [d for d in yaml.safe_load_all((kustomize / relative).read_text()) if d]
    stock = next(d for d in yaml.safe_load_all((kustomize / STOCK_USAGE_FILE).read_text()) if d)
    documents.append(usage_per_container(stock))
    return documents


class Kwok:
    """One kwok process serving every fake Node of `env`, on `host` (a TEST-NET-2 address when private)."""

    def __init__(self, env: Environment, *, cidr: str = "10.128.0.0/14", host: str | None = None) -> None:
        self.env = env
        self.cidr = cidr
        self.host = host or (network.allocate_address() if env.network_mode == "private" else "127.0.0.1")
        self.port = 0
        self.process: ControlPlaneProcess | None = None

    def start(self, timeout: float = 60.0) -> None:
        binary = find_tool("kwok")
        kustomize = module_dir("kwok") / "kustomize"
        work = self.env.work_dir / "kwok"
        work.mkdir(parents=True, exist_ok=True)
        config = work / "kwok.yaml"
        config.write_text(yaml.safe_dump_all(configuration_documents(kustomize, cidr=self.cidr), sort_keys=False))
        self.env.ca.issue("kwok", hosts=(self.host, "localhost"), server=True).write(work, "tls.crt", "tls.key")
        self.port = suggest_port(self.host)
        kubeconfig = self.env.add_user("kwok-controller", groups=("system:masters",)).write_kubeconfig(
            work / "kubeconfig"
        )
        self.process = self.env.spawn(
            "kwok",
            [
                str(binary),
                f"--kubeconfig={kubeconfig}",
                f"--config={config}",
                "--manage-all-nodes=false",
                f"--manage-nodes-with-annotation-selector={FAKE_NODE_ANNOTATION}=fake",
                f"--node-ip={self.host}",
                f"--node-port={self.port}",
                f"--server-address={self.host}:{self.port}",
                f"--tls-cert-file={work / 'tls.crt'}",
                f"--tls-private-key-file={work / 'tls.key'}",
            ],
        )
        http = urllib3.PoolManager(cert_reqs="CERT_NONE", timeout=urllib3.Timeout(total=2.0), retries=False)
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        self.process.wait_ready(
            lambda: http.request("GET", f"https://{self.host}:{self.port}/healthz").status == 200, timeout
        )

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop(10.0)
            self.process = None

    def add_node(
        self,
        name: str,
        *,
        cpu: str = "4",
        memory: str = "16Gi",
        pods: str = "110",
        labels: Mapping[str, str] | None = None,
        taints: Sequence[Mapping[str, str]] = (),
    ) -> dict[str, Any]:
        """Create a fake Node kwok manages, with its metrics path and capacity; returns the Node as created."""
        if self.process is None:
            raise EnvtestError("kwok is not started")
        resources = {"cpu": cpu, "memory": memory, "pods": pods}
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {"kubernetes.io/hostname": name, "type": "kwok", **dict(labels or {})},
                "annotations": {
                    FAKE_NODE_ANNOTATION: "fake",
                    METRICS_PATH_ANNOTATION: f"/metrics/nodes/{name}/metrics/resource",
                },
            },
            "spec": {"taints": [dict(t) for t in taints]} if taints else {},
            "status": {"allocatable": resources, "capacity": resources},
        }
        return self.env.rest.create("/api/v1/nodes", body)

    def __enter__(self) -> Kwok:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(EnvtestError):
            self.stop()


__all__ = [
    "CONFIGURATION_FILE",
    "FAKE_NODE_ANNOTATION",
    "METRICS_PATH_ANNOTATION",
    "STAGE_FILES",
    "STOCK_USAGE_FILE",
    "USAGE_CPU",
    "USAGE_MEMORY",
    "Kwok",
    "configuration_documents",
    "usage_annotation",
    "usage_per_container",
]
