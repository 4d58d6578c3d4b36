"""An API server that accepts connections and never answers, then comes back: `ballast` fails in one line naming
the server and the deadline; `ballastd` logs where it connects, stays alive with /healthz ok while /readyz names
the server and the deadline, and becomes ready on the real API server once it answers — no restart. The figures
go to RELIABILITY.md ("API server that accepts and never answers").

The API server is reached through `GatedProxy` on the API server's own address (its certificate names it): while
closed, it accepts and holds every connection without a byte (a frozen server); opened, it forwards them.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import urllib3
import yaml

from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until
from tests.figures import write_figures
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
    assert server.hostname is not None
    assert server.port is not None
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


def ballast_profiles(kubeconfig: Path, *flags: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """`ballast profiles` through `kubeconfig`, and the wall seconds it took (a figure, never a bound)."""
    began = time.monotonic()
    result = subprocess.run(
        [str(Path(sys.executable).parent / "ballast"), "--kubeconfig", str(kubeconfig), *flags, "profiles"],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    return result, time.monotonic() - began


def test_ballast_fails_in_one_line_and_ballastd_waits_with_probes_then_becomes_ready(
    envtest: Environment, proxy: GatedProxy, tmp_path: Path
) -> None:
    kubeconfig = kubeconfig_through(proxy, envtest, tmp_path / "kubeconfig")
    cli = {}
    for flags, deadline in ((("--request-timeout=1s",), "1s"), ((), "10s")):
        result, cli[deadline] = ballast_profiles(kubeconfig, *flags)
        assert (result.returncode, result.stdout) == (1, "")
        assert result.stderr.splitlines() == [
            f"ballast: the API server {proxy.url} did not answer within {deadline} "
            "(GET /apis/ballast.tightlinesoftware.com/v1): no answer (TCP connect, TLS handshake or response)"
        ]

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
        kubeconfig=kubeconfig,
    )
    try:
        poll_until(
            lambda: "retrying (attempt 2" in process.log(),
            timeout=60,
            what="two failed attempts logged",
            last_error=process.output,
        )
        assert f"connecting to {proxy.url}" in process.log()
        assert process.process.poll() is None
        assert probe(process.health_port, "/healthz") == (200, "ok")
        status, body = probe(process.health_port, "/readyz")
        assert status == 500
        assert f"[-]api-server failed: the API server {proxy.url} did not answer within 1s (GET /version)" in body
        assert "Traceback" not in process.log()

        attempts = process.log().count("retrying (attempt ")

        proxy.open()
        began = time.monotonic()
        process.wait_ready(timeout=90)  # on a kept-alive connection, opened while waiting
        ready_seconds = time.monotonic() - began
        assert f"connected to {proxy.url}" in process.log()
        tracebacks = process.log().count("Traceback")
        write_figures(
            "silent_api_server",
            {
                "cli_seconds_request_timeout_1s": round(cli["1s"], 1),
                "cli_seconds_default": round(cli["10s"], 1),
                "attempts_logged": attempts,
                "healthz_status": 200,
                "readyz_status": status,
                "ready_seconds_after_answer": round(ready_seconds, 1),
                "tracebacks": tracebacks,
            },
            source=__name__,
        )
        assert tracebacks == 0, process.log()
    finally:
        process.stop()
        remove_operator_objects(envtest)
