"""envtest for Python: a real kube-apiserver + etcd per test session, as controller-runtime's envtest.

    from ballast.runtime.envtest import Environment

    with Environment(crd_paths=["config/crd/bases"]) as env:
        print(env.kubeconfig_path)

Binaries are built from Go modules on first use and cached (`ballast-envtest use`); see `assets`. `MiniCluster`
adds kube-scheduler, kube-controller-manager, kwok and metrics-server (`ballast-envtest tool`).
"""

from .assets import DEFAULT_KUBERNETES_VERSION, Assets, build_assets, find_assets
from .backends import Backend, json_handler, serve_api_service, serve_backend, serve_kubelet
from .certs import CertPair, TinyCA
from .environment import Environment
from .errors import (
    APIError,
    AssetsNotFoundError,
    BuildError,
    EnvtestError,
    ManifestError,
    NetworkError,
    PortInUseError,
    ProcessStartError,
)
from .kubeconfig import Credentials
from .kwok import Kwok, usage_annotation
from .manifests import WebhookInstallOptions
from .metrics_server import MetricsServer
from .minicluster import MiniCluster
from .network import in_private_network, run_in_private_network
from .tools import find_tool

__all__ = [
    "DEFAULT_KUBERNETES_VERSION",
    "APIError",
    "Assets",
    "AssetsNotFoundError",
    "Backend",
    "BuildError",
    "CertPair",
    "Credentials",
    "Environment",
    "EnvtestError",
    "Kwok",
    "ManifestError",
    "MetricsServer",
    "MiniCluster",
    "NetworkError",
    "PortInUseError",
    "ProcessStartError",
    "TinyCA",
    "WebhookInstallOptions",
    "build_assets",
    "find_assets",
    "find_tool",
    "in_private_network",
    "json_handler",
    "run_in_private_network",
    "serve_api_service",
    "serve_backend",
    "serve_kubelet",
    "usage_annotation",
]
