"""`ballastd` waiting for its API server: it says where it connects, keeps /healthz ok while /readyz names the
reason, retries with backoff, answers as soon as the server does, and stops on a signal."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import urllib3
from kubernetes import client as kubernetes_client

from ballast.internal.cmd import connecting
from ballast.runtime import RESTConfig
from ballast.runtime.envtest.wait import poll_until
from tests.unit.internal.runtime.silent import SilentServer, silent_server


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    with silent_server() as server:
        yield server


def config_for(url: str) -> RESTConfig:
    configuration = kubernetes_client.Configuration()
    configuration.host = url
    configuration.verify_ssl = False
    return RESTConfig(configuration, timeout=0.3, connect_timeout=0.3)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def probe(port: int, path: str) -> tuple[int, str]:
    answer = urllib3.PoolManager().request(  # a connection of its own, as the kubelet's probes
        "GET", f"http://127.0.0.1:{port}{path}", retries=False, timeout=5, headers={"Connection": "close"}
    )
    return answer.status, answer.data.decode()


def test_while_the_server_is_silent_healthz_is_ok_and_readyz_says_why(
    silent: SilentServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="ballast.startup")
    port, stop, outcome = free_port(), threading.Event(), []
    waiter = threading.Thread(
        target=lambda: outcome.append(
            connecting.await_api_server(config_for(silent.url), health_address=("127.0.0.1", port), stop=stop)
        )
    )
    waiter.start()
    try:
        poll_until(lambda: "retrying (attempt 1" in caplog.text, timeout=30, what="the first failed attempt")
        assert probe(port, "/healthz") == (200, "ok")
        status, body = probe(port, "/readyz")
        assert status == 500
        assert f"[-]api-server failed: the API server {silent.url} did not answer within 0.3s (GET /version)" in body
    finally:
        stop.set()
        waiter.join(30)
    assert outcome == [False]
    assert caplog.messages[0] == f"connecting to {silent.url}"
    with pytest.raises(urllib3.exceptions.HTTPError):  # the probes are the manager's again once the wait ends
        probe(port, "/healthz")


class _Version(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401 if self.path == "/version" else 404)  # any answer means the server is there
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


def test_an_answering_server_ends_the_wait_at_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ballast.startup")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Version)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        assert connecting.await_api_server(config_for(url), health_address=None, stop=threading.Event())
    finally:
        server.shutdown()
        server.server_close()
    assert caplog.messages == [f"connecting to {url}", f"connected to {url}"]


def test_a_refusing_server_is_retried_with_growing_waits(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ballast.startup")
    url, stop = f"https://127.0.0.1:{free_port()}", threading.Event()
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) == 4:
            stop.set()

    assert not connecting.await_api_server(config_for(url), health_address=None, stop=stop, sleep=sleep)
    assert len(waits) == 4
    assert waits[-1] > waits[0]  # exponential backoff (1 s, 2 s, 4 s, 8 s, each with up to 1 s of jitter)
    assert all(
        f"cannot reach the API server {url} (GET /version): connection refused" in m for m in caplog.messages[1:]
    )
