"""The webhook server's connection phase: idle sockets, slow clients and descriptor exhaustion never hold a
worker, so every valid review is answered while thousands of them are open."""

from __future__ import annotations

import contextlib
import errno
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
import urllib3

from ballast.runtime import AdmissionRequest, AdmissionResponse, WebhookServer, allowed
from ballast.runtime._httpconn import Phase
from ballast.runtime.certs import CertificateAuthority
from ballast.runtime.envtest.wait import poll_until

POD = {"group": "", "version": "v1", "kind": "Pod"}
PODS = {"group": "", "version": "v1", "resource": "pods"}
REQUEST = {"uid": "u-1", "kind": POD, "resource": PODS, "operation": "CREATE", "namespace": "shop"}
REVIEW = orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": REQUEST})


def allow(request: AdmissionRequest) -> AdmissionResponse:
    return allowed()


@dataclass
class Served:
    server: WebhookServer
    ca: CertificateAuthority
    stop: threading.Event

    @property
    def address(self) -> tuple[str, int]:
        return "127.0.0.1", self.server.port

    def pool(self, **options: Any) -> urllib3.PoolManager:
        return urllib3.PoolManager(ca_cert_data=self.ca.cert_pem.decode(), retries=False, **options)

    def review(self, pool: urllib3.PoolManager, timeout: float = 5.0) -> bool:
        response = pool.request(
            "POST", f"https://127.0.0.1:{self.server.port}/validate", body=REVIEW,
            headers={"Content-Type": "application/json"}, timeout=timeout,
        )  # fmt: skip
        return response.status == 200 and orjson.loads(response.data)["response"]["allowed"] is True

    def tls(self) -> ssl.SSLContext:
        return ssl.create_default_context(cadata=self.ca.cert_pem.decode())


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    started: list[Served] = []

    def start(**options: Any) -> Served:
        ca = CertificateAuthority("conn-ca")
        ca.issue("conn-webhook", hosts=("127.0.0.1",), server=True).write(tmp_path)
        server = WebhookServer(host="127.0.0.1", port=0, cert_dir=tmp_path, **options)
        server.register("/validate", allow)
        stop = threading.Event()
        threading.Thread(target=server.start, args=(stop,), daemon=True).start()
        assert server.wait_listening(10)
        served = Served(server, ca, stop)
        started.append(served)
        return served

    yield start
    for served in started:
        served.stop.set()


def _raw_connections(address: tuple[str, int], count: int) -> list[socket.socket]:
    """TCP connections that never send a ClientHello."""
    return [socket.create_connection(address) for _ in range(count)]


def _phase_count(served: Served, phase: Phase) -> int:
    assert served.server.connections is not None
    return served.server.connections.phases()[phase]


class Slowloris:
    """Clients that complete TLS, then send a request one byte every `interval` seconds (or a ClientHello one
    byte at a time, with `tls=False`), on a thread until closed."""

    def __init__(self, served: Served, count: int, interval: float, *, tls: bool = True) -> None:
        self.sockets: list[Any] = []
        for _ in range(count):
            raw = socket.create_connection(served.address)
            self.sockets.append(served.tls().wrap_socket(raw, server_hostname="127.0.0.1") if tls else raw)
        self.interval = interval
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._trickle, daemon=True)
        self._thread.start()

    def _trickle(self) -> None:
        request = b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 999\r\n"
        for index in range(len(request)):
            for sock in self.sockets:
                with contextlib.suppress(OSError):  # closed by the server: what a slowloris earns
                    sock.send(request[index : index + 1] if isinstance(sock, ssl.SSLSocket) else b"\x16")
            if self._done.wait(self.interval):
                return

    def close(self) -> None:
        self._done.set()
        self._thread.join(5)
        for sock in self.sockets:
            sock.close()


def test_every_review_is_answered_while_a_thousand_idle_and_slow_clients_hold_connections(serve: Any) -> None:
    served = serve()
    idle = _raw_connections(served.address, 1000)
    slow = Slowloris(served, 20, interval=2.0)
    slow_hello = Slowloris(served, 20, interval=2.0, tls=False)
    try:
        poll_until(lambda: _phase_count(served, Phase.HANDSHAKE) >= 1000, timeout=10, what="the idle sockets")
        poll_until(lambda: _phase_count(served, Phase.READING) >= 20, timeout=10, what="the slow requests")
        pool = served.pool(maxsize=8)
        with ThreadPoolExecutor(8) as clients:
            answers = list(clients.map(lambda _: served.review(pool), range(200)))
        assert answers == [True] * 200  # none refused, none timed out (5 s each)
        assert _phase_count(served, Phase.HANDSHAKE) >= 1000  # the idle ones are still open: they cost nothing
    finally:
        slow.close()
        slow_hello.close()
        for sock in idle:
            sock.close()


def _closed_by_server(sock: socket.socket, timeout: float) -> bool:
    sock.settimeout(timeout)
    try:
        return sock.recv(1) == b""
    except TimeoutError:
        return False
    except OSError:
        return True


def test_a_handshake_that_never_comes_and_a_request_that_never_ends_are_cut_at_their_deadlines(serve: Any) -> None:
    served = serve(handshake_timeout=0.5, read_timeout=1.0)
    (silent,) = _raw_connections(served.address, 1)
    assert _closed_by_server(silent, timeout=3.0)
    slow = served.tls().wrap_socket(socket.create_connection(served.address), server_hostname="127.0.0.1")
    began = time.monotonic()
    slow.send(b"POST /validate HTTP/1.1\r\n")
    assert _closed_by_server(slow, timeout=5.0)
    assert time.monotonic() - began >= 1.0  # the read deadline, not the handshake's
    silent.close()
    slow.close()


def test_an_idle_keep_alive_connection_stays_open_past_the_short_deadlines(serve: Any) -> None:
    served = serve(handshake_timeout=0.3, read_timeout=0.3)
    pool = served.pool(maxsize=1)
    assert served.review(pool)
    time.sleep(1.0)  # longer than both short deadlines: idle connections wait for the long one
    assert _phase_count(served, Phase.IDLE) == 1
    assert served.review(pool)
    assert served.server.connections is not None
    assert len(served.server.connections.connections) == 1  # the same connection served both


def test_past_the_connection_cap_the_oldest_idle_connection_makes_room(serve: Any) -> None:
    served = serve(max_connections=50)
    idle = _raw_connections(served.address, 80)
    try:
        poll_until(lambda: _phase_count(served, Phase.HANDSHAKE) > 0, timeout=5, what="idle sockets")
        pool = served.pool(maxsize=1)
        assert served.review(pool)
        assert served.server.connections is not None
        assert len(served.server.connections.connections) <= 50
        closed = sum(_closed_by_server(sock, timeout=0.01) for sock in idle[:30])
        assert closed == 30  # the oldest went first
    finally:
        for sock in idle:
            sock.close()


def test_running_out_of_descriptors_pauses_accepting_and_never_ends_the_server(serve: Any) -> None:
    served = serve()
    loop = served.server.connections
    assert loop is not None
    real = loop.listener
    failures = iter([errno.EMFILE, errno.ENFILE, errno.ECONNABORTED])

    class Exhausted:
        def fileno(self) -> int:
            descriptor: int = real.fileno()
            return descriptor

        def setblocking(self, flag: bool) -> None:
            real.setblocking(flag)

        def accept(self) -> tuple[socket.socket, Any]:
            connection, peer = real.accept()
            code = next(failures, None)
            if code is not None:
                connection.close()  # the pending connection is lost, as when the kernel refuses it
                raise OSError(code, "simulated")
            return connection, peer

    loop.listener = Exhausted()
    pool = served.pool(maxsize=1)
    for _ in range(3):
        with pytest.raises(urllib3.exceptions.HTTPError):
            served.review(pool, timeout=2.0)
    assert served.review(pool)
    assert loop.refused_accepts == 2  # EMFILE and ENFILE; a reset connection is simply skipped


def test_a_burst_larger_than_the_in_flight_budget_drains(serve: Any) -> None:
    """Twenty 3 MiB bodies against a 4 MiB budget: no body can complete before the budget is spent, yet one
    paused request at a time keeps reading, so every review is answered."""
    served = serve(max_in_flight_bytes=4 * 1024 * 1024)
    pod = {"metadata": {"name": "big", "annotations": {"blob": "x" * (3 * 1024 * 1024)}}}
    body = orjson.dumps(
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {**REQUEST, "object": pod}}
    )
    pool = served.pool(maxsize=20)

    def post(_: int) -> bool:
        response = pool.request(
            "POST", f"https://127.0.0.1:{served.server.port}/validate", body=body,
            headers={"Content-Type": "application/json"}, timeout=30.0,
        )  # fmt: skip
        return response.status == 200 and orjson.loads(response.data)["response"]["allowed"] is True

    with ThreadPoolExecutor(20) as clients:
        assert list(clients.map(post, range(20))) == [True] * 20
    loop = served.server.connections
    assert loop is not None
    # Every held byte is given back once the workers are done (an answer leaves before its bytes are released).
    poll_until(lambda: loop.in_flight_bytes == 0, timeout=5, what="the budget to be released")
    assert loop.phases()[Phase.PAUSED] == 0


def test_bodies_waiting_for_a_slow_handler_stay_within_the_budget(tmp_path: Path) -> None:
    """Twenty 1 MiB reviews, a 256 KiB budget and two workers whose handler takes 0.3 s: bodies already read
    wait for a worker, so no second connection may read over the budget until the drained one was answered."""
    ca = CertificateAuthority("budget-ca")
    ca.issue("budget-webhook", hosts=("127.0.0.1",), server=True).write(tmp_path)
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=tmp_path, max_in_flight_bytes=256 * 1024, workers=2)

    def slow(request: AdmissionRequest) -> AdmissionResponse:
        time.sleep(0.3)
        return allowed()

    server.register("/validate", slow)
    stop = threading.Event()
    threading.Thread(target=server.start, args=(stop,), daemon=True).start()
    assert server.wait_listening(10)
    loop = server.connections
    assert loop is not None
    served = Served(server, ca, stop)
    pod = {"metadata": {"name": "big", "annotations": {"blob": "x" * (1024 * 1024)}}}
    body = orjson.dumps(
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {**REQUEST, "object": pod}}
    )
    pool = served.pool(maxsize=20)
    peak = [0]
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            peak[0] = max(peak[0], loop.in_flight_bytes)
            time.sleep(0.002)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        with ThreadPoolExecutor(20) as clients:
            answers = list(clients.map(lambda _: served.review(pool, timeout=30.0), range(20)))
    finally:
        done.set()
        watcher.join(5)
        stop.set()
    assert answers == [True] * 20
    # The budget, plus the one body that drains over it, plus a TLS record per connection read before pausing.
    assert peak[0] <= 256 * 1024 + len(body) + 20 * 64 * 1024, f"{peak[0] / 2**20:.1f} MiB held at once"
