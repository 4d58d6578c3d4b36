"""The e2e suite runs on one MiniCluster per session: the real control plane, kube-scheduler,
kube-controller-manager, kwok and metrics-server, inside the private test network (`make test-e2e`)."""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from ballast.runtime.envtest import (
    APIError,
    AssetsNotFoundError,
    BuildError,
    MiniCluster,
    in_private_network,
)
from ballast.runtime.envtest.ports import suggest_port
from ballast.runtime.envtest.pytest_plugin import unavailable
from tests.e2e import reliability
from tests.e2e.figures import FIGURES_DIR
from tests.e2e.support import MountedSecret, Operator, kubeconfig_tokens, leaked, private_key_lines, store_passwords
from tests.integration.internal.cmd.ballastd.conftest import install_operator_objects
from tests.integration.redis_server import RedisServer, redis_server_or_skip
from tests.paths import CRD_DIR


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """RELIABILITY.md's table follows the figures this run recorded (rendered once: by the pytest-xdist controller,
    not by each of its workers)."""
    worker = hasattr(session.config, "workerinput")
    if FIGURES_DIR.is_dir() and session.testscollected and not session.config.option.collectonly and not worker:
        reliability.main([])


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.e2e)


@pytest.fixture(scope="session")
def cluster() -> Iterator[MiniCluster]:
    """Three fake Nodes of 8 CPUs and 32 GiB; the product's CRDs installed."""
    if not in_private_network():
        unavailable("the e2e suite needs the private test network: run it under `ballast-envtest netns`")
    try:
        minicluster = MiniCluster(nodes=3, crd_paths=[CRD_DIR])
        minicluster.start()
    except (AssetsNotFoundError, BuildError) as exc:
        unavailable(f"the mini-cluster's binaries are missing: {exc}")
    yield minicluster
    minicluster.stop()


@pytest.fixture(scope="session")
def operator(cluster: MiniCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Operator]:
    """`ballastd` with every lane, as ServiceAccount ballast-system/ballast under the generated RBAC of
    config/rbac/, its webhooks registered (loopback: the API server calls webhooks there). At the end of the
    session no run of it may have been refused anything: a missing grant fails the suite."""
    env = cluster.env
    work = tmp_path_factory.mktemp("ballastd")
    install_operator_objects(env)
    webhook_port = suggest_port()
    secret = MountedSecret(env, work / "webhook-certs", hosts=("localhost", "127.0.0.1"))
    running = Operator(
        env,
        work,
        [
            f"--store=sqlite:///{work / 'history.db'}",
            f"--webhook-bind-address=127.0.0.1:{webhook_port}",
            f"--webhook-cert-path={secret.directory}",
            "--balancer-reprocess-period=2s",
        ],
        webhook_port,
        secret,
    )
    try:
        running.start()
        running.register_webhooks()
        yield running
        assert running.process.process.poll() is None, f"ballastd exited during the suite:\n{running.output()}"
    finally:
        running.stop()
        for kind in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
            with contextlib.suppress(APIError):
                env.rest.delete(f"/apis/admissionregistration.k8s.io/v1/{kind}/ballast")
    refused = running.refusals()
    assert refused == [], "ballastd was refused by its RBAC:\n" + "\n".join(refused[:10])
    runs = running.runs + running.replica_runs
    logs = {run.log_path.name: run.log_path.read_text(errors="replace") for run in runs}
    secret_values = {
        "the Redis password": REDIS_PASSWORDS + store_passwords(runs),  # and a test's own Redis, by its URL
        "the ServiceAccount token": sorted({t for run in runs for t in kubeconfig_tokens(run.kubeconfig)}),
        "a TLS private key": private_key_lines(work) + private_key_lines(env.work_dir),
    }
    # The token and the keys exist in every session (Redis only when a test used one): a check on nothing fails.
    assert secret_values["the ServiceAccount token"]
    assert secret_values["a TLS private key"]
    assert leaked(logs, secret_values) == [], "secrets in ballastd's logs: " + ", ".join(leaked(logs, secret_values))


REDIS_PASSWORDS: list[str] = []  # every e2e Redis's; the operator fixture checks no log line shows one


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server with `requirepass` for a test's operator replicas, stopped afterwards."""
    password = secrets.token_hex(16)
    REDIS_PASSWORDS.append(password)
    server = RedisServer(redis_server_or_skip(), tmp_path, password=password)
    server.start()
    yield server
    server.stop()
