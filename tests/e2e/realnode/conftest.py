"""The real-node scenarios: a mini-cluster whose one Node is a real kubelet with containerd (no kwok Node), and
`ballastd` running against it with the generated RBAC. One real node per machine: each module starts its own
cluster and stops it before the next module starts one (`make test-real-node` runs only these)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ballast.runtime.envtest import APIError, AssetsNotFoundError, BuildError, MiniCluster, in_private_network
from ballast.runtime.envtest.ports import suggest_port
from ballast.runtime.envtest.pytest_plugin import unavailable
from tests.e2e.support import MountedSecret, Operator
from tests.integration.internal.cmd.ballastd.conftest import GROUP_VERSION, fast_policy, install_operator_objects
from tests.paths import CRD_DIR

HERE = Path(__file__).parent
KUBELET_SUMMARY = "kubelet-summary"
# The fast local-testing policy, also sizing limits (so a resize shows in cpu.cfs_quota_us and memory.limit_in_bytes)
# and ephemeral storage from the kubelet's Summary API.
METRICS: list[dict[str, Any]] = [
    {"resource": "cpu", "field": "request", "source": "kubernetes-metrics", "aggregation": "avg", "headroom": "1.25"},
    {"resource": "cpu", "field": "limit", "source": "kubernetes-metrics", "aggregation": "max", "headroom": "4"},
    {"resource": "memory", "field": "request", "source": "kubernetes-metrics", "aggregation": "p75", "headroom": "1.2"},
    {"resource": "memory", "field": "limit", "source": "kubernetes-metrics", "aggregation": "max", "headroom": "2"},
    {"resource": "ephemeral-storage", "field": "request", "source": KUBELET_SUMMARY, "aggregation": "max"},
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.real_node)
            item.add_marker(pytest.mark.alone)  # host-wide: sysctls, cgroups, the node's bridge and routes


def start_real_cluster(**options: Any) -> MiniCluster:
    """A started MiniCluster with only the real node; a missing binary or host tool skips (fails under CI)."""
    if not in_private_network():
        unavailable("the real node needs the private test network: run it under `ballast-envtest netns`")
    cluster = MiniCluster(nodes=0, real_node=True, crd_paths=[CRD_DIR], **options)
    try:
        cluster.start()
    except (AssetsNotFoundError, BuildError) as exc:
        unavailable(f"the real node's binaries or host tools are missing: {exc} (`make real-node-tools`)")
    return cluster


@pytest.fixture(scope="module")
def real_cluster() -> Iterator[MiniCluster]:
    cluster = start_real_cluster()
    yield cluster
    cluster.stop()


@pytest.fixture(scope="module")
def real_operator(real_cluster: MiniCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Operator]:
    """`ballastd` with every lane against the real-node cluster, collecting from metrics-server (which scrapes
    the real kubelet) and from the kubelet's Summary API; never refused anything by its RBAC."""
    env = real_cluster.env
    work = tmp_path_factory.mktemp("ballastd-real-node")
    install_operator_objects(env)
    source = {"apiVersion": GROUP_VERSION, "kind": "MetricsSource", "metadata": {"name": KUBELET_SUMMARY},
              "spec": {"type": "kubeletSummary", "config": {"pollInterval": "2s"}}}  # fmt: skip
    env.rest.apply(f"/apis/ballast.tightlinesoftware.com/v1/metricssources/{KUBELET_SUMMARY}", source)
    env.rest.apply(
        "/apis/ballast.tightlinesoftware.com/v1/clusterresourcepolicies/default", fast_policy(metrics=METRICS)
    )
    webhook_port = suggest_port()
    secret = MountedSecret(env, work / "webhook-certs", hosts=("localhost", "127.0.0.1"))
    running = Operator(
        env,
        work,
        [f"--store=sqlite:///{work / 'history.db'}", f"--webhook-bind-address=127.0.0.1:{webhook_port}",
         f"--webhook-cert-path={secret.directory}"],
        webhook_port,
        secret,
    )  # fmt: skip
    try:
        running.start()
        running.register_webhooks()
        yield running
        assert running.process.process.poll() is None, f"ballastd exited:\n{running.output()}"
    finally:
        running.stop()
        for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
            with contextlib.suppress(APIError):
                env.rest.delete(f"/apis/admissionregistration.k8s.io/v1/{kind}/ballast")
    assert running.refusals() == [], "ballastd was refused by its RBAC:\n" + "\n".join(running.refusals()[:10])
