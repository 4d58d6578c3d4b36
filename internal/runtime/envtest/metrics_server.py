"""metrics-server (sigs.k8s.io/metrics-server) against an Environment, registered as `v1beta1.metrics.k8s.io`.

It scrapes each Node's resource metrics at the path in the Node annotation `metrics.k8s.io/resource-metrics-path`
(kwok serves them, see `kwok`), on the Node's status port, trusting any kubelet certificate
(`--kubelet-insecure-tls`: kwok's certificate is for its own address, not each Node's name). The first
PodMetrics appear after two scrapes, since CPU usage is a rate between them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import urllib3

from . import network
from .backends import register_api_service
from .ports import suggest_port
from .tools import find_tool

if TYPE_CHECKING:
    from .environment import Environment
    from .process import ControlPlaneProcess

GROUP = "metrics.k8s.io"
VERSION = "v1beta1"
SERVICE = "metrics-server"
NAMESPACE = "kube-system"


class MetricsServer:
    """One metrics-server process; `start()` returns once its APIService is Available."""

    def __init__(self, env: Environment, *, resolution_seconds: int = 15, host: str | None = None) -> None:
        self.env = env
        self.resolution_seconds = resolution_seconds
        # The aggregator dials a Service's endpoint, which must not be loopback when aggregator routing is on.
        self.host = host or (network.allocate_address() if env.network_mode == "private" else "127.0.0.1")
        self.port = 0
        self.process: ControlPlaneProcess | None = None

    def start(self, timeout: float = 60.0) -> None:
        binary = find_tool("metrics-server")
        work = self.env.work_dir / "metrics-server"
        work.mkdir(parents=True, exist_ok=True)
        names = (self.host, "localhost", f"{SERVICE}.{NAMESPACE}.svc")
        self.env.ca.issue("metrics-server", hosts=names, server=True).write(work, "tls.crt", "tls.key")
        credentials = self.env.add_user("system:metrics-server", groups=("system:masters",))
        kubeconfig = credentials.write_kubeconfig(work / "kubeconfig")
        self.port = suggest_port(self.host)
        self.process = self.env.spawn(
            "metrics-server",
            [
                str(binary),
                f"--kubeconfig={kubeconfig}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                f"--bind-address={self.host}",
                f"--secure-port={self.port}",
                f"--tls-cert-file={work / 'tls.crt'}",
                f"--tls-private-key-file={work / 'tls.key'}",
                "--kubelet-use-node-status-port",
                "--kubelet-insecure-tls",
                "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
                f"--metric-resolution={self.resolution_seconds}s",
            ],
        )
        http = urllib3.PoolManager(cert_reqs="CERT_NONE", timeout=urllib3.Timeout(total=2.0), retries=False)
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        # /livez, not /readyz: metrics-server is ready only after its first scrape, which needs Nodes.
        self.process.wait_ready(
            lambda: http.request("GET", f"https://{self.host}:{self.port}/livez").status == 200, timeout
        )
        register_api_service(
            self.env,
            GROUP,
            VERSION,
            host=self.host,
            port=self.port,
            ca_pem=self.env.ca.cert_pem,
            namespace=NAMESPACE,
            service=SERVICE,
            timeout=timeout,
        )

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop(10.0)
            self.process = None


__all__ = [
    "GROUP",
    "NAMESPACE",
    "SERVICE",
    "VERSION",
    "MetricsServer",
]
