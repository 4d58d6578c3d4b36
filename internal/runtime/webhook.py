"""The admission webhook server: HTTPS on :9443, AdmissionReview handlers, certificates that rotate in place
(controller-runtime's `webhook.Server`).

    server = WebhookServer(cert_dir="/tmp/k8s-webhook-server/serving-certs")
    server.register("/mutate-v1-pod", pod_defaulter)       # a function AdmissionRequest -> AdmissionResponse
    manager.add_webhook_server(server)                      # runs on every replica, before the caches

- TLS ≥ 1.2, HTTP/1.1 only; each new connection is wrapped with the CertWatcher's current context, so a
  rotated certificate is presented at the next handshake and open connections are not cut.
- Keep-alive connections (the API server reuses them), one pool thread per open connection; requests are parsed
  with llhttp (`httptools`).
- Bodies over 7 MiB, malformed JSON, wrong kinds or versions, wrong content types are answered with an
  AdmissionReview carrying the error code (400/413), never a crash; a handler that raises is answered 500 and
  counted as a panic. `request_timeout` is a cooperative deadline for the handler (and its client calls).
- Metrics: `controller_runtime_webhook_requests_total{webhook,code}`, `..._latency_seconds{webhook}`,
  `..._requests_in_flight{webhook}`, `controller_runtime_webhook_panics_total`. `ready()` is a readiness check:
  certificate loaded and socket listening.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httptools

from . import metrics
from .admission import AdmissionResponse, Handler, ReviewError, decode_review, encode_review, errored
from .certwatcher import CertificateError, CertWatcher
from .log import get_logger
from .rest import deadline

DEFAULT_PORT = 9443
MAX_BODY_BYTES = 7 * 1024 * 1024
DRAIN_LIMIT_BYTES = 64 * 1024 * 1024
CERTIFICATE_WAIT_SECONDS = 1.0
_REASONS = {200: b"OK", 400: b"Bad Request", 404: b"Not Found", 405: b"Method Not Allowed", 413: b"Payload Too Large"}
_log = get_logger("ballast.runtime.webhook")


class _Route:
    """A registered path with its metric children resolved once."""

    def __init__(self, path: str, handler: Handler) -> None:
        self.path = path
        self.handler = handler
        self.in_flight = metrics.WEBHOOK_IN_FLIGHT.labels(path)
        self.latency = metrics.WEBHOOK_LATENCY.labels(path)
        self.codes = {code: metrics.WEBHOOK_REQUESTS.labels(path, str(code)) for code in (200, 500)}

    def count(self, code: int) -> None:
        counter = self.codes.get(code)
        if counter is None:
            counter = self.codes[code] = metrics.WEBHOOK_REQUESTS.labels(self.path, str(code))
        counter.inc()


class _Request:
    """httptools callbacks collect one request at a time."""

    def __init__(self, max_body: int) -> None:
        self.max_body = max_body
        self.parser: httptools.HttpRequestParser | None = None
        self.reset()

    def reset(self) -> None:
        self.url = b""
        self.content_type = b""
        self.body: list[bytes] = []
        self.size = 0
        self.too_large = False
        self.complete = False
        self.keep_alive = True

    def on_url(self, url: bytes) -> None:
        self.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        if name.lower() == b"content-type":
            self.content_type = value
        elif name.lower() == b"content-length" and value.isdigit() and int(value) > self.max_body:
            self.too_large = True

    def on_headers_complete(self) -> None:
        # Asked here: llhttp forgets the request's Connection header once the message is complete.
        if self.parser is not None:
            self.keep_alive = self.parser.should_keep_alive()

    def on_body(self, body: bytes) -> None:
        self.size += len(body)
        if self.size > self.max_body:
            self.too_large = True
        elif not self.too_large:
            self.body.append(body)

    def on_message_complete(self) -> None:
        self.complete = True


class WebhookServer:
    """Serves registered admission handlers over TLS; a manager runnable that runs on every replica."""

    def __init__(
        self,
        *,
        host: str = "",
        port: int = DEFAULT_PORT,
        cert_dir: str | Path | None = None,
        cert_name: str = "tls.crt",
        key_name: str = "tls.key",
        cert_watcher: CertWatcher | None = None,
        max_body_bytes: int = MAX_BODY_BYTES,
        request_timeout: float = 10.0,
        idle_timeout: float = 90.0,
        max_connections: int = 64,
    ) -> None:
        if cert_watcher is None:
            directory = Path(cert_dir) if cert_dir else Path("/tmp/k8s-webhook-server/serving-certs")
            cert_watcher = CertWatcher(directory, cert_name, key_name, on_change=self.retire_connections)
        self.cert_watcher = cert_watcher
        self.host = host
        self.port = port
        self.max_body_bytes = max_body_bytes
        self.request_timeout = request_timeout
        self.idle_timeout = idle_timeout
        self.max_connections = max_connections
        self._routes: dict[bytes, _Route] = {}
        self._listener: socket.socket | None = None
        self._listening = threading.Event()
        self._idle: set[socket.socket] = set()
        self._generation = 0  # bumped on rotation; older connections close after their next answer
        self._connections_lock = threading.Lock()
        self._stopping = threading.Event()
        self.name = "webhook-server"

    def register(self, path: str, handler: Handler) -> None:
        """Serve `handler` at `path` (e.g. `/mutate-v1-pod`)."""
        if not path.startswith("/"):
            raise ValueError(f"webhook path {path!r} must start with '/'")
        if path.encode() in self._routes:
            raise ValueError(f"a webhook is already registered at {path}")
        self._routes[path.encode()] = _Route(path, handler)

    def need_leader_election(self) -> bool:
        return False

    def ready(self) -> None:
        """Readiness check: raises until the certificate is loaded and the port is listening."""
        if not self.cert_watcher.loaded:
            raise RuntimeError("the serving certificate is not loaded")
        if not self._listening.is_set():
            raise RuntimeError("the webhook server is not listening yet")

    def wait_listening(self, timeout: float) -> bool:
        return self._listening.wait(timeout)

    # -------------------------------------------------------------------------------------- serving

    def start(self, stop: threading.Event) -> None:
        """Load the certificate, listen, serve until `stop`; then finish in-flight requests and close."""
        if not self._wait_for_certificate(stop):
            return
        watcher_stop = threading.Event()
        watcher = threading.Thread(
            target=self.cert_watcher.start, args=(watcher_stop,), name="certwatcher", daemon=True
        )
        watcher.start()
        listener = socket.create_server((self.host, self.port), backlog=128, reuse_port=False)
        listener.settimeout(0.5)
        self._listener = listener
        self.port = listener.getsockname()[1]
        self._listening.set()
        _log.info("serving webhooks", extra={"port": self.port, "paths": [r.path for r in self._routes.values()]})
        pool = ThreadPoolExecutor(max_workers=self.max_connections, thread_name_prefix="webhook-conn")
        try:
            while not stop.is_set():
                try:
                    connection, _ = listener.accept()
                except TimeoutError:
                    continue
                except OSError:
                    if stop.is_set():
                        break
                    raise
                pool.submit(self._serve_connection, connection)
        finally:
            self._stopping.set()
            self._listening.clear()
            listener.close()
            self.close_idle_connections()  # busy connections finish their request first
            pool.shutdown(wait=True)
            watcher_stop.set()
            watcher.join(5)

    def _wait_for_certificate(self, stop: threading.Event) -> bool:
        """Load the pair, waiting while it is not there yet (a Secret still being mounted or issued)."""
        logged = False
        while not stop.is_set():
            try:
                self.cert_watcher.read()
                return True
            except CertificateError as exc:
                if not logged:
                    _log.info("waiting for the serving certificate: %s", exc)
                    logged = True
            stop.wait(CERTIFICATE_WAIT_SECONDS)
        return False

    def _serve_connection(self, raw: socket.socket) -> None:
        raw.settimeout(self.request_timeout)
        try:
            connection = self.cert_watcher.context().wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError) as exc:
            _log.debug("TLS handshake failed: %s", exc)
            raw.close()
            return
        try:
            self._requests(connection)
        except (OSError, ssl.SSLError):
            pass  # the client went away, or an idle connection was closed; nothing to answer
        finally:
            self._set_idle(connection, False)
            with contextlib.suppress(OSError):
                connection.close()

    def _requests(self, connection: ssl.SSLSocket) -> None:
        state = _Request(self.max_body_bytes)
        parser = httptools.HttpRequestParser(state)
        state.parser = parser
        connection.settimeout(self.idle_timeout)
        generation = self._generation
        while not self._stopping.is_set():
            self._set_idle(connection, not state.url)
            data = connection.recv(65536)
            self._set_idle(connection, False)
            if not data:
                return
            try:
                parser.feed_data(data)
            except httptools.HttpParserUpgrade:
                return
            except httptools.HttpParserError:
                self._send(connection, 400, b'{"error":"malformed HTTP request"}', keep_alive=False)
                return
            if state.too_large and state.size > DRAIN_LIMIT_BYTES:
                return  # not worth reading further: close without an answer
            if not state.complete:
                continue
            if state.too_large:
                # Read to the end (discarding) first, so the client is listening when the answer comes.
                self._answer_too_large(connection, state)
                return
            keep_alive = state.keep_alive and not self._stopping.is_set() and generation == self._generation
            status, body = self._dispatch(parser.get_method(), state)
            self._send(connection, status, body, keep_alive=keep_alive)
            if not keep_alive:
                return
            state.reset()

    def _set_idle(self, connection: socket.socket, idle: bool) -> None:
        with self._connections_lock:
            if idle:
                self._idle.add(connection)
            else:
                self._idle.discard(connection)

    def retire_connections(self) -> None:
        """After a certificate rotation: each open connection answers its next request with `Connection: close`.

        Clients (the API server keeps connections open) then reconnect and validate the new pair — before an
        old certificate expires or its CA leaves the caBundle. Closing idle connections instead would race a
        request the client is already sending, and a POST that meets EOF is not retried.
        """
        self._generation += 1

    def close_idle_connections(self) -> None:
        """Close keep-alive connections that wait between requests (on shutdown); requests in progress finish."""
        with self._connections_lock:
            idle = list(self._idle)
            self._idle.clear()
        for connection in idle:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def _answer_too_large(self, connection: ssl.SSLSocket, state: _Request) -> None:
        route = self._routes.get(state.url.split(b"?")[0])
        body = encode_review("", "", errored(413, f"the request body exceeds {self.max_body_bytes} bytes"))
        if route is not None:
            route.count(200)
        self._send(connection, 200, body, keep_alive=False)

    def _dispatch(self, method: bytes, state: _Request) -> tuple[int, bytes]:
        route = self._routes.get(state.url.split(b"?")[0])
        if route is None:
            return 404, b'{"error":"no webhook at this path"}'
        if method != b"POST":
            route.count(405)
            return 405, b'{"error":"webhooks only accept POST"}'
        began = time.perf_counter()
        route.in_flight.inc()
        try:
            body = self._review(route, state)
        finally:
            route.in_flight.dec()
        route.latency.observe(time.perf_counter() - began)
        route.count(200)
        return 200, body

    def _review(self, route: _Route, state: _Request) -> bytes:
        if state.content_type.split(b";")[0].strip() != b"application/json":
            message = f"Content-Type must be application/json, got {state.content_type.decode(errors='replace')!r}"
            return encode_review("", "", errored(400, message))
        try:
            api_version, request = decode_review(b"".join(state.body))
        except ReviewError as exc:
            return encode_review("", "", errored(exc.code, str(exc)))
        try:
            with deadline(self.request_timeout):
                response: AdmissionResponse = route.handler(request)
        except Exception as exc:  # a handler bug must become a 500 answer, never a dropped connection
            metrics.WEBHOOK_PANICS.inc()
            _log.exception("webhook %s failed on %s", route.path, request.uid)
            response = errored(500, f"internal error: {type(exc).__name__}: {exc}")
        return encode_review(api_version, request.uid, response)

    @staticmethod
    def _send(connection: ssl.SSLSocket, status: int, body: bytes, *, keep_alive: bool) -> None:
        head = b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n" % (
            status,
            _REASONS.get(status, b"Error"),
            len(body),
            b"" if keep_alive else b"Connection: close\r\n",
        )
        connection.sendall(head + body)


def local_url(server: WebhookServer, path: str, host: str = "127.0.0.1") -> str:
    """`https://host:port/path` of a started server (for tests and `make dev`)."""
    return f"https://{host}:{server.port}{path}"


__all__ = ["DEFAULT_PORT", "MAX_BODY_BYTES", "WebhookServer", "local_url"]
