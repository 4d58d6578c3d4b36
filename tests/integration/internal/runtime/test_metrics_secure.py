"""Secure metrics on the real API server: HTTPS with the manager's certificate, each scrape authenticated with a
TokenReview and authorised with a SubjectAccessReview (controller-runtime's filter): no token or a bad one 401, a
service account RBAC does not allow 403, one bound to a metrics-reader role the metrics."""

from __future__ import annotations

import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ballast.runtime import Client, Manager, RESTConfig
from ballast.runtime.certs import CertificateAuthority
from ballast.runtime.envtest import Environment
from ballast.runtime.metricsauth import metrics_reader_rules
from ballast.runtime.metricsserver import MetricsServer, MetricsServerOptions


@pytest.fixture
def serving_ca(tmp_path: Path) -> tuple[Path, Path]:
    authority = CertificateAuthority("metrics-test-ca")
    authority.issue("localhost", hosts=("localhost", "127.0.0.1"), server=True).write(tmp_path / "certs")
    ca_file = tmp_path / "ca.crt"
    ca_file.write_bytes(authority.cert_pem)
    return tmp_path / "certs", ca_file


@pytest.fixture
def secure_manager(rest_config: RESTConfig, serving_ca: tuple[Path, Path]) -> Iterator[Manager]:
    cert_dir, _ = serving_ca
    manager = Manager(
        rest_config,
        metrics_bind_address="127.0.0.1:0",
        metrics_secure=True,
        metrics_server_options=MetricsServerOptions(cert_dir=cert_dir),
    )
    stop = threading.Event()
    thread = threading.Thread(target=manager.start, args=(stop,), daemon=True)
    thread.start()
    try:
        assert manager.elected.wait(30)
        yield manager
    finally:
        stop.set()
        thread.join(20)


def _scrape(manager: Manager, ca_file: Path, token: str | None) -> tuple[int, str]:
    request = urllib.request.Request(f"https://127.0.0.1:{manager.metrics_port}/metrics")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    context = ssl.create_default_context(cafile=str(ca_file))
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def _grant_metrics(client: Client, namespace: str, service_account: str, request: pytest.FixtureRequest) -> None:
    name = f"{namespace}-{service_account}-metrics-reader"
    role: dict[str, Any] = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": metrics_reader_rules(),
    }
    client.create(role)
    binding: dict[str, Any] = {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": service_account, "namespace": namespace}],
    }
    client.create(binding)

    def remove() -> None:  # cluster-scoped: the namespace's deletion does not take them
        client.delete(binding)
        client.delete(role)

    request.addfinalizer(remove)


def test_secure_metrics_answer_401_403_and_200(
    secure_manager: Manager,
    serving_ca: tuple[Path, Path],
    envtest: Environment,
    client: Client,
    envtest_namespace: str,
    request: pytest.FixtureRequest,
) -> None:
    _, ca_file = serving_ca
    assert _scrape(secure_manager, ca_file, None) == (401, "Unauthorized\n")
    assert _scrape(secure_manager, ca_file, "not-a-token")[0] == 401

    stranger = envtest.service_account(envtest_namespace, "stranger")
    status, body = _scrape(secure_manager, ca_file, stranger.token)
    assert status == 403
    assert body == f"Authorization denied for user system:serviceaccount:{envtest_namespace}:stranger\n"

    scraper = envtest.service_account(envtest_namespace, "scraper")
    _grant_metrics(client, envtest_namespace, "scraper", request)
    status, body = _scrape(secure_manager, ca_file, scraper.token)
    assert status == 200
    assert "controller_runtime_" in body or "workqueue_" in body or "rest_client_requests_total" in body

    plain = urllib.request.Request(f"http://127.0.0.1:{secure_manager.metrics_port}/metrics")
    with pytest.raises((urllib.error.URLError, ConnectionError)):
        urllib.request.urlopen(plain, timeout=5)


def test_decisions_are_cached(
    secure_manager: Manager,
    serving_ca: tuple[Path, Path],
    envtest: Environment,
    client: Client,
    envtest_namespace: str,
    request: pytest.FixtureRequest,
) -> None:
    _, ca_file = serving_ca
    scraper = envtest.service_account(envtest_namespace, "cached")
    _grant_metrics(client, envtest_namespace, "cached", request)
    assert _scrape(secure_manager, ca_file, scraper.token)[0] == 200
    [server] = [s for s in secure_manager._servers if isinstance(s, MetricsServer)]
    decide: Any = server.filter
    reviews = decide.reviews
    for _ in range(3):
        assert _scrape(secure_manager, ca_file, scraper.token)[0] == 200
    assert decide.reviews == reviews  # the token's review and the allow are cached
