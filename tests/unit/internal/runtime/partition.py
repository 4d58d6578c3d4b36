"""A network partition in front of the in-memory API: for the leader-election tests of both electors.

`Partition` decides what each request meets — the API (`ok`), an immediate `ConnectionError` (`fail`), or a
request that hangs (`hang`: until the caller's cooperative deadline, as a socket timeout would end it;
`hang-forever`: ignoring every deadline, the worst a network can do) — and records when each successful Lease
write started. `PartitionedTransport` puts it in front of a `FakeAPI` in-process; `serve_over_http` serves the
same API on loopback HTTP, so a `ProcessLeaderElector`'s child can reach it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import orjson

from ballast.runtime import APIStatusError, Client, FakeAPI
from ballast.runtime.rest import remaining_time

MODES = ("ok", "fail", "hang", "hang-forever")
LEASE_PATH = "/apis/coordination.k8s.io/v1/namespaces/"


class Partition:
    """What requests meet, switchable at any time; thread-safe."""

    def __init__(self) -> None:
        self.mode = "ok"
        self.lease_writes: list[float] = []  # time.monotonic() at the start of each successful Lease write
        self._healed = threading.Event()
        self._lock = threading.Lock()

    def cut(self, mode: str) -> None:
        assert mode in MODES, mode
        self._healed.clear()
        self.mode = mode

    def heal(self) -> None:
        self.mode = "ok"
        self._healed.set()

    @property
    def last_lease_write(self) -> float:
        with self._lock:
            return self.lease_writes[-1]

    def gate(self, method: str, deadline: float | None) -> None:
        """Block or raise as the current mode says; return when the request may go through."""
        mode = self.mode
        if mode == "fail":
            raise ConnectionError("partitioned: connection refused")
        if mode in ("hang", "hang-forever"):
            wait = deadline if mode == "hang" and deadline is not None else 120.0
            if self._healed.wait(max(wait, 0.0)):
                raise ConnectionError("partitioned: connection reset after the partition healed")
            raise TimeoutError(f"{method}: read timed out")

    def record(self, method: str, path: str, began: float) -> None:
        if method in ("PUT", "POST") and path.startswith(LEASE_PATH) and "/leases" in path:
            with self._lock:
                self.lease_writes.append(began)


class PartitionedTransport:
    """The fake API's transport behind a `Partition` (in-process clients)."""

    def __init__(self, api: FakeAPI, partition: Partition) -> None:
        self.api = api
        self.partition = partition

    def request(self, method: str, path: str, **options: Any) -> Any:
        began = time.monotonic()
        self.partition.gate(method, remaining_time())
        response = self.api.request(method, path, **options)
        self.partition.record(method, path, began)
        return response

    def stream(self, method: str, path: str, **options: Any) -> Any:
        return self.api.stream(method, path, **options)

    def close(self) -> None:
        self.api.close()


def partitioned_client(api: FakeAPI, partition: Partition) -> Client:
    client = api.client()
    client.transport = PartitionedTransport(api, partition)  # type: ignore[assignment]
    return client


def _status_body(error: APIStatusError) -> bytes:
    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": error.status}
    return orjson.dumps({**status, "reason": error.reason, "message": error.message})


def _is_discovery(path: str) -> bool:
    parts = path.strip("/").split("/")
    return (parts[0] == "api" and len(parts) == 2) or (parts[0] == "apis" and len(parts) == 3)


def _handler(api: FakeAPI, partition: Partition) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            began = time.monotonic()
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            try:
                # A hung server gives the client nothing; its own socket timeout ends the wait.
                partition.gate(self.command, None)
            except (ConnectionError, TimeoutError):
                self.close_connection = True
                return
            params: Mapping[str, str] = dict(parse_qsl(url.query))
            if _is_discovery(url.path):
                self._answer(200, orjson.dumps(api.discovery(url.path)))
                return
            try:
                response = api.request(
                    self.command, url.path, params=params, body=body,
                    content_type=self.headers.get("Content-Type") or "",
                )  # fmt: skip
                status, data = response.status, response.data
                partition.record(self.command, url.path, began)
            except APIStatusError as error:
                status, data = error.status, _status_body(error)
            self._answer(status, data)

        def _answer(self, status: int, data: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_PATCH = do_DELETE = _serve  # noqa: N815 - http.server's names

        def log_message(self, format: str, *args: object) -> None:
            return

    return Handler


@contextmanager
def serve_over_http(api: FakeAPI, partition: Partition) -> Iterator[str]:
    """Serve `api` behind `partition` on 127.0.0.1; yields the base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api, partition))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="fake-api-http", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        partition.heal()  # release hung handlers
        server.shutdown()
        server.server_close()
        thread.join(5)
