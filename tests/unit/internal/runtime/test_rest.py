"""The REST transport against a local HTTP server: retry policy, cooperative deadlines, token bucket, metrics."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson
import pytest
from kubernetes import client as kubernetes_client

from ballast.runtime import RESTConfig, apierrors, rest
from ballast.runtime.metrics import REGISTRY
from ballast.runtime.rest import Transport, deadline, remaining_time

Reply = tuple[int, dict[str, str], bytes]
OK: Reply = (200, {"Content-Type": "application/json"}, b'{"kind": "Pod"}')


@dataclass
class Seen:
    method: str
    path: str
    body: bytes
    headers: dict[str, str]


@dataclass
class Script:
    """What the server answers, in order (the last reply repeats), and what it was asked."""

    replies: list[Reply] = field(default_factory=lambda: [OK])
    seen: list[Seen] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, request: Seen) -> Reply:
        with self.lock:
            self.seen.append(request)
            return self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]


def _handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        wbufsize = 1 << 16  # headers and body in one segment: no delayed-ACK stall per request

        def _serve(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            status, headers, data = script.answer(Seen(self.command, self.path, body, dict(self.headers)))
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def do_PUT(self) -> None:
            self._serve()

        def do_PATCH(self) -> None:
            self._serve()

        def do_DELETE(self) -> None:
            self._serve()

        def log_message(self, format: str, *args: object) -> None:
            return

    return Handler


@dataclass
class Server:
    script: Script
    port: int

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"


@pytest.fixture
def server() -> Iterator[Server]:
    script = Script()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield Server(script, httpd.server_address[1])
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Retry back-off sleeps, recorded instead of slept (patched before any Transport is built)."""
    recorded: list[float] = []
    monkeypatch.setattr(Transport, "_sleep", staticmethod(recorded.append))
    return recorded


TransportFactory = Callable[..., Transport]


@pytest.fixture
def make_transport(sleeps: list[float]) -> Iterator[TransportFactory]:
    made: list[Transport] = []

    def make(port: int, *, token: str | None = None, **options: Any) -> Transport:
        configuration = kubernetes_client.Configuration()
        configuration.host = f"http://127.0.0.1:{port}"
        if token is not None:
            configuration.api_key = {"authorization": token}
        transport = Transport(RESTConfig(configuration, **options))
        made.append(transport)
        return transport

    yield make
    for transport in made:
        transport.close()


def _requests_total(code: str, method: str, host: str) -> float:
    return REGISTRY.get_sample_value("rest_client_requests_total", {"code": code, "method": method, "host": host}) or 0


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port  # closed again: nothing listens there


# ---------------------------------------------------------------------------------------- requests


def test_a_request_sends_path_query_body_and_headers(server: Server, make_transport: TransportFactory) -> None:
    transport = make_transport(server.port)
    response = transport.request(
        "POST", "/api/v1/namespaces/shop/pods", params={"fieldManager": "me", "dryRun": "All"},
        body=b'{"a": 1}', content_type="application/json",
    )  # fmt: skip
    assert response.status == 200
    assert orjson.loads(response.data) == {"kind": "Pod"}
    seen = server.script.seen[0]
    assert seen.method == "POST"
    assert seen.path == "/api/v1/namespaces/shop/pods?fieldManager=me&dryRun=All"
    assert seen.body == b'{"a": 1}'
    assert seen.headers["Content-Type"] == "application/json"
    assert seen.headers["Accept"] == "application/json"
    assert seen.headers["User-Agent"].startswith("ballast-runtime (python/")
    assert "Authorization" not in seen.headers


@pytest.mark.parametrize(("token", "header"), [("abc", "Bearer abc"), ("Bearer xyz", "Bearer xyz")])
def test_bearer_tokens(server: Server, make_transport: TransportFactory, token: str, header: str) -> None:
    make_transport(server.port, token=token).request("GET", "/api")
    assert server.script.seen[0].headers["Authorization"] == header


def test_errors_are_typed_and_name_the_request(server: Server, make_transport: TransportFactory) -> None:
    server.script.replies = [(404, {}, orjson.dumps({"reason": "NotFound", "message": 'pods "x" not found'}))]
    with pytest.raises(apierrors.NotFoundError) as error:
        make_transport(server.port).request("GET", "/api/v1/namespaces/shop/pods/x")
    assert str(error.value) == 'GET /api/v1/namespaces/shop/pods/x: 404 NotFound: pods "x" not found'
    assert len(server.script.seen) == 1  # a 404 is an answer, not a failure to retry


# --------------------------------------------------------------------------------------- retries


@pytest.mark.parametrize("method", ["GET", "POST", "PUT", "PATCH", "DELETE"])
def test_429_is_retried_for_any_verb_honouring_retry_after(
    server: Server, make_transport: TransportFactory, sleeps: list[float], method: str
) -> None:
    server.script.replies = [(429, {"Retry-After": "3"}, b'{"reason": "TooManyRequests"}'), OK]
    response = make_transport(server.port).request(method, "/api/v1/pods", body=b"{}")
    assert response.status == 200
    assert [seen.method for seen in server.script.seen] == [method, method]
    assert len(sleeps) == 1
    assert sleeps[0] >= 3.0


def test_429_without_retry_after_waits_at_least_a_second(
    server: Server, make_transport: TransportFactory, sleeps: list[float]
) -> None:
    server.script.replies = [(429, {}, b""), OK]
    make_transport(server.port).request("POST", "/api/v1/pods")
    assert sleeps[0] >= 1.0


@pytest.mark.parametrize(
    ("status", "method", "retried"),
    [
        (503, "GET", True),
        (500, "GET", True),
        (502, "DELETE", True),
        (504, "PUT", True),
        (503, "POST", False),
        (500, "PATCH", False),
        (501, "GET", False),  # not a transient status
    ],
)
def test_5xx_is_retried_only_for_idempotent_verbs(
    server: Server, make_transport: TransportFactory, status: int, method: str, retried: bool
) -> None:
    server.script.replies = [(status, {}, b"unavailable"), OK]
    transport = make_transport(server.port)
    if retried:
        assert transport.request(method, "/api/v1/pods").status == 200
        assert len(server.script.seen) == 2
    else:
        with pytest.raises(apierrors.APIStatusError) as error:
            transport.request(method, "/api/v1/pods")
        assert error.value.status == status
        assert len(server.script.seen) == 1


def test_retries_stop_after_max_retries_and_raise_the_last_error(
    server: Server, make_transport: TransportFactory, sleeps: list[float]
) -> None:
    server.script.replies = [(503, {}, b"")]
    with pytest.raises(apierrors.InternalServerError, match="503 ServiceUnavailable"):
        make_transport(server.port, max_retries=3).request("GET", "/api/v1/pods")
    assert len(server.script.seen) == 3
    assert len(sleeps) == 2
    assert sleeps == sorted(sleeps)  # exponential back-off (jitter never reverses the order here)


def test_a_refused_connection_is_retried_then_raised_as_connection_error(
    make_transport: TransportFactory, sleeps: list[float]
) -> None:
    port = _free_port()
    with pytest.raises(
        rest.UnreachableError,
        match=rf"^cannot reach the API server http://127.0.0.1:{port} \(POST /api/v1/pods\): connection refused$",
    ) as error:
        make_transport(port).request("POST", "/api/v1/pods", body=b"{}")  # nothing was sent: safe to retry
    assert not isinstance(error.value, apierrors.APIStatusError)
    assert len(sleeps) == 4  # five attempts
    assert _requests_total("<error>", "POST", f"127.0.0.1:{port}") == 5


# -------------------------------------------------------------------------------------- deadlines


def test_no_deadline_means_no_remaining_time() -> None:
    assert remaining_time() is None
    with deadline(None):
        assert remaining_time() is None


def test_nested_deadlines_keep_the_earlier_one() -> None:
    with deadline(100):
        outer = remaining_time()
        assert outer is not None
        assert 99 < outer <= 100
        with deadline(1000):
            inner = remaining_time()
            assert inner is not None
            assert inner <= outer
        with deadline(1):
            inner = remaining_time()
            assert inner is not None
            assert inner <= 1
    assert remaining_time() is None


def test_a_passed_deadline_sends_nothing(server: Server, make_transport: TransportFactory) -> None:
    transport = make_transport(server.port)
    with deadline(0), pytest.raises(apierrors.DeadlineExceededError, match="deadline passed before the request"):
        transport.request("GET", "/api/v1/pods")
    assert server.script.seen == []


def test_a_deadline_stops_retries_that_would_outlast_it(
    server: Server, make_transport: TransportFactory, sleeps: list[float]
) -> None:
    server.script.replies = [(503, {"Retry-After": "5"}, b"")]
    transport = make_transport(server.port)
    with deadline(2), pytest.raises(apierrors.InternalServerError):
        transport.request("GET", "/api/v1/pods")
    assert len(server.script.seen) == 1  # waiting 5 s would pass the 2 s deadline: fail now
    assert sleeps == []


def test_a_deadline_also_bounds_connection_retries(make_transport: TransportFactory, sleeps: list[float]) -> None:
    transport = make_transport(_free_port())
    with deadline(0.05), pytest.raises(ConnectionError):
        transport.request("GET", "/api/v1/pods")  # the first back-off (≥ 0.1 s) would pass the deadline
    assert sleeps == []


def test_retries_within_the_deadline_go_ahead(
    server: Server, make_transport: TransportFactory, sleeps: list[float]
) -> None:
    server.script.replies = [(429, {"Retry-After": "1"}, b""), OK]
    with deadline(30):
        assert make_transport(server.port).request("GET", "/api/v1/pods").status == 200
    assert len(sleeps) == 1


# ----------------------------------------------------------------------------------- token bucket


class FakeTime:
    """Stands in for the `time` module inside `rest`: sleeping advances the monotonic clock."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


@pytest.fixture
def fake_time(monkeypatch: pytest.MonkeyPatch) -> FakeTime:
    fake = FakeTime()
    monkeypatch.setattr(rest, "time", fake)
    return fake


def test_the_token_bucket_is_off_by_default(
    server: Server, make_transport: TransportFactory, fake_time: FakeTime
) -> None:
    transport = make_transport(server.port)
    for _ in range(20):
        transport.request("GET", "/api/v1/pods")
    assert fake_time.slept == []


def test_the_token_bucket_allows_a_burst_then_paces_at_qps(
    server: Server, make_transport: TransportFactory, fake_time: FakeTime
) -> None:
    transport = make_transport(server.port, qps=5.0, burst=2)
    for _ in range(5):
        transport.request("GET", "/api/v1/pods")
    assert fake_time.slept == pytest.approx([0.2, 0.2, 0.2])
    assert len(server.script.seen) == 5
    fake_time.now += 10  # idle: the bucket refills up to its burst, no more
    for _ in range(3):
        transport.request("GET", "/api/v1/pods")
    assert fake_time.slept == pytest.approx([0.2, 0.2, 0.2, 0.2])


def test_the_token_bucket_gives_up_when_the_deadline_comes_first(
    server: Server, make_transport: TransportFactory, fake_time: FakeTime
) -> None:
    transport = make_transport(server.port, qps=1.0, burst=1)
    transport.request("GET", "/api/v1/pods")
    with deadline(0.5), pytest.raises(apierrors.DeadlineExceededError, match="client-side rate limit"):
        transport.request("GET", "/api/v1/pods")
    assert len(server.script.seen) == 1
    assert fake_time.slept == []


# ---------------------------------------------------------------------------------------- metrics


def test_requests_are_counted_by_code_method_and_host(server: Server, make_transport: TransportFactory) -> None:
    server.script.replies = [OK, OK, (503, {}, b""), (409, {}, b"")]
    transport = make_transport(server.port)
    transport.request("GET", "/a")
    transport.request("GET", "/b")
    with pytest.raises(apierrors.ConflictError):
        transport.request("GET", "/c")  # the 503 is retried, the 409 ends it
    assert _requests_total("200", "GET", server.host) == 2
    assert _requests_total("503", "GET", server.host) == 1
    assert _requests_total("409", "GET", server.host) == 1
    duration = REGISTRY.get_sample_value(
        "rest_client_request_duration_seconds_count", {"verb": "GET", "host": server.host}
    )
    assert duration == 4


# ---------------------------------------------------------------------------------------- streams


def test_a_stream_is_read_as_it_comes_and_errors_are_typed(server: Server, make_transport: TransportFactory) -> None:
    lines = b'{"type": "ADDED"}\n{"type": "DELETED"}\n'
    server.script.replies = [(200, {}, lines), (410, {}, orjson.dumps({"reason": "Expired", "message": "old"}))]
    transport = make_transport(server.port)
    response = transport.stream("GET", "/api/v1/pods", params={"watch": "true"}, read_timeout=5)
    try:
        assert response.read() == lines
    finally:
        response.release_conn()
    with pytest.raises(apierrors.GoneError, match="old"):
        transport.stream("GET", "/api/v1/pods", params={"watch": "true"})
