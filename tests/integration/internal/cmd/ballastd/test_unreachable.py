"""`ballastd` whose API server accepts connections and never answers, then comes back: it logs where it
connects, stays alive with /healthz ok while /readyz names the server and the deadline, and becomes ready on the
real API server once it answers — no restart.

The API server is reached through `GatedProxy` on the API server's own address (its certificate names it): while
closed, it accepts and holds every connection without a byte (a frozen server); opened, it forwards them.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import urllib3
import yaml

from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until
from tests.integration.config.rbac.config_rbac import service_account_kubeconfig

from .conftest import Ballastd, install_operator_objects, remove_operator_objects


class GatedProxy:
    """A TCP proxy to `upstream`: silent (connections accepted and held) until `open()`, forwarding after."""

    def __init__(self, host: str, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.listener = socket.create_server((host, 0))
        self.listener.settimeout(0.05)
        self.held: list[socket.socket] = []
        self.opened = threading.Event()
        self.stopped = threading.Event()
        self._thread = threading.Thread(target=self._accept, name="gated-proxy", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self.listener.getsockname()[:2]
        return f"https://{host}:{port}"

    def open(self) -> None:
        self.opened.set()
        for connection in self.held:  # a frozen server's connections do not come back to life
            connection.close()

    def close(self) -> None:
        self.stopped.set()
        self._thread.join(5)
        self.listener.close()
        for connection in self.held:
            connection.close()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            if not self.opened.is_set():
                self.held.append(connection)
                continue
            upstream = socket.create_connection(self.upstream)
            for source, target in ((connection, upstream), (upstream, connection)):
                threading.Thread(target=_pipe, args=(source, target), daemon=True).start()


def _pipe(source: socket.socket, target: socket.socket) -> None:
    with contextlib.suppress(OSError):  # either side closing ends both directions
        while data := source.recv(65536):
            target.sendall(data)
    for side in (source, target):
        with contextlib.suppress(OSError):
            side.shutdown(socket.SHUT_RDWR)


@pytest.fixture
def proxy(envtest: Environment) -> Iterator[GatedProxy]:
    server = urlsplit(envtest.server)
    assert server.hostname is not None and server.port is not None
    gated = GatedProxy(server.hostname, (server.hostname, server.port))
    yield gated
    gated.close()


def kubeconfig_through(proxy: GatedProxy, envtest: Environment, path: Path) -> Path:
    """The operator's ServiceAccount kubeconfig, pointed at the proxy."""
    config = yaml.safe_load(service_account_kubeconfig(envtest, "ballast").read_text())
    config["clusters"][0]["cluster"]["server"] = proxy.url
    path.write_text(yaml.safe_dump(config))
    return path


def probe(port: int, path: str) -> tuple[int, str]:
    answer = urllib3.PoolManager().request(
        "GET", f"http://127.0.0.1:{port}{path}", retries=False, timeout=5, headers={"Connection": "close"}
    )
    return answer.status, answer.data.decode()


def test_ballastd_waits_for_a_silent_api_server_with_probes_then_becomes_ready(
    envtest: Environment, proxy: GatedProxy, tmp_path: Path
) -> None:
    install_operator_objects(envtest)
    process = Ballastd(
        envtest,
        tmp_path,
        [
            "--request-timeout=1s",
            f"--store=sqlite:///{tmp_path / 'history.db'}",
            "--webhook-bind-address=127.0.0.1:0",
            f"--webhook-cert-path={envtest.webhook_cert_dir()}",
        ],
        kubeconfig=kubeconfig_through(proxy, envtest, tmp_path / "kubeconfig"),
    )
    try:
        poll_until(
            lambda: "retrying (attempt 2" in process.output(),
            timeout=60,
            what="two failed attempts logged",
            last_error=process.output,
        )
        assert f"connecting to {proxy.url}" in process.output()
        assert process.process.poll() is None
        assert probe(process.health_port, "/healthz") == (200, "ok")
        status, body = probe(process.health_port, "/readyz")
        assert status == 500
        assert f"[-]api-server failed: the API server {proxy.url} did not answer within 1s (GET /version)" in body
        assert "Traceback" not in process.output()

        proxy.open()
        process.wait_ready(timeout=90)  # on a kept-alive connection, opened while waiting
        assert f"connected to {proxy.url}" in process.output()
        assert "Traceback" not in process.output()
    finally:
        process.stop()
        remove_operator_objects(envtest)
