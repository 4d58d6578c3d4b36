"""The admission webhook server: HTTPS on :9443, AdmissionReview handlers, certificates that rotate in place
(controller-runtime's `webhook.Server`).

    server = WebhookServer(cert_dir="/tmp/k8s-webhook-server/serving-certs")
    server.register("/mutate-v1-pod", pod_defaulter)       # a function AdmissionRequest -> AdmissionResponse
    manager.add_webhook_server(server)                      # runs on every replica, before the caches

- TLS ≥ 1.2, HTTP/1.1 only; each new connection is wrapped with the CertWatcher's current context, so a
  rotated certificate is presented at the next handshake and open connections are not cut.
- Connections are accepted, handshaken and read by one selector thread (`_httpconn`); a pool of `workers` only
  answers complete requests, so idle or slow clients cannot hold it: handshake and started requests have short
  deadlines, keep-alive waits a long one (90 s), at most `max_connections` stay open (the oldest idle goes
  first), and running out of descriptors only pauses accepting. Requests are parsed with llhttp (`httptools`).
- Bodies over `max_body_bytes` (4 MiB: an UPDATE's object and oldObject), malformed JSON, wrong kinds or
  versions, wrong content types are answered with an AdmissionReview carrying the error code (400/413), never a
  crash; an oversize body is discarded as it arrives. At most `max_in_flight_bytes` (32 MiB) of bodies are held
  at once. A handler that raises is answered 500 and counted as a panic. `request_timeout` is a cooperative
  deadline for the handler (and its client calls). Each refusal of a malformed request — unparseable HTTP, a
  wrong content type, a body that is not an AdmissionReview, one over the size cap, or a handler's own 400 (an
  object it cannot decode) — is a warning naming the path and the reason, at most one per path every
  `MALFORMED_LOG_INTERVAL` seconds (the next one says how many were left out), since any client can send them.
- A certificate not there yet (a Secret still being mounted or issued) is waited for, with a warning at once and
  every `CERTIFICATE_WARNING_INTERVAL` seconds, for `certificate_timeout` seconds (120): then `start()` raises
  CertificateError naming the files, and the manager stops — controller-runtime fails start-up at once
  (docs/design.md, difference 73).
  `certificate_timeout=None` waits as long as it takes (ballastd, for a late cert-manager Secret).
- Metrics: `controller_runtime_webhook_requests_total{webhook,code}`, `..._latency_seconds{webhook}`,
  `..._requests_in_flight{webhook}`, `controller_runtime_webhook_panics_total`. `ready()` is a readiness check:
  certificate loaded and socket listening.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from . import metrics
from ._httpconn import Connection, ConnectionLoop, Limits, Message
from .admission import AdmissionResponse, Handler, ReviewError, decode_review, encode_review, errored
from .certwatcher import CertificateError, CertWatcher
from .log import RateLimitedLog, get_logger
from .rest import deadline

if TYPE_CHECKING:
    from .webhookbuilder import KindWebhooks

DEFAULT_PORT = 9443
MAX_BODY_BYTES = 4 * 1024 * 1024
CERTIFICATE_WAIT_SECONDS = 1.0
CERTIFICATE_TIMEOUT = 120.0
CERTIFICATE_WARNING_INTERVAL = 30.0
MALFORMED_LOG_INTERVAL = 10.0
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
        handshake_timeout: float = 10.0,
        read_timeout: float = 10.0,
        max_connections: int = 10_000,
        max_in_flight_bytes: int = 32 * 1024 * 1024,
        workers: int = 32,
        certificate_timeout: float | None = CERTIFICATE_TIMEOUT,
    ) -> None:
        if cert_watcher is None:
            directory = Path(cert_dir) if cert_dir else Path("/tmp/k8s-webhook-server/serving-certs")
            cert_watcher = CertWatcher(directory, cert_name, key_name, on_change=self.retire_connections)
        self.cert_watcher = cert_watcher
        self.certificate_timeout = certificate_timeout
        self.host = host
        self.port = port
        self.max_body_bytes = max_body_bytes
        self.request_timeout = request_timeout
        self.limits = Limits(
            handshake_timeout=handshake_timeout,
            request_read_timeout=read_timeout,
            idle_timeout=idle_timeout,
            write_timeout=request_timeout,
            max_connections=max_connections,
            max_body_bytes=max_body_bytes,
            max_in_flight_bytes=max_in_flight_bytes,
            workers=workers,
        )
        self.connections: ConnectionLoop | None = None  # while serving: phases(), in_flight_bytes
        self._routes: dict[bytes, _Route] = {}
        self._listening = threading.Event()
        self._generation = 0  # bumped on rotation; older connections close after their next answer
        self._malformed = RateLimitedLog(_log, interval=MALFORMED_LOG_INTERVAL)
        self.name = "webhook-server"
        self.kind_webhooks: list[
            KindWebhooks
        ] = []  # what WebhookBuilder registered here (`KindWebhooks`), for generators

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
        listener = socket.create_server((self.host, self.port), backlog=1024, reuse_port=False)
        self.port = listener.getsockname()[1]
        self.connections = ConnectionLoop(
            listener, self.cert_watcher.context, self._answer, self.limits, lambda: self._generation
        )
        self._listening.set()
        _log.info("serving webhooks", extra={"port": self.port, "paths": [r.path for r in self._routes.values()]})
        try:
            self.connections.run(stop)
        finally:
            self._listening.clear()
            listener.close()
            watcher_stop.set()
            watcher.join(5)

    def _wait_for_certificate(self, stop: threading.Event) -> bool:
        """Load the pair, waiting while it is not there yet (a Secret still being mounted or issued), up to
        `certificate_timeout` seconds; then CertificateError."""
        began = time.monotonic()
        warned_at: float | None = None
        while not stop.is_set():
            try:
                self.cert_watcher.read()
                return True
            except CertificateError as exc:
                waited = time.monotonic() - began
                if self.certificate_timeout is not None and waited >= self.certificate_timeout:
                    raise CertificateError(
                        f"no serving certificate after {self.certificate_timeout:g} s: {exc} (certificate_timeout)"
                    ) from exc
                if warned_at is None or waited - warned_at >= CERTIFICATE_WARNING_INTERVAL:
                    deadline = f"{self.certificate_timeout:g} s" if self.certificate_timeout is not None else "ever"
                    _log.warning("waiting for the serving certificate (for %s): %s", deadline, exc)
                    warned_at = waited
            stop.wait(CERTIFICATE_WAIT_SECONDS)
        return False

    def _answer(self, connection: Connection, message: Message) -> bool:
        """On a worker: answer one complete request; whether the connection stays open."""
        if message.malformed:
            self._refused(None, 400, "malformed HTTP request")
            connection.send(
                _response(400, b'{"error":"malformed HTTP request"}', keep_alive=False), self.request_timeout
            )
            return False
        if message.too_large:
            self._answer_too_large(connection, message)
            return False
        stopping = self.connections is not None and self.connections.stopping  # answers while stopping close
        keep_alive = message.keep_alive and not stopping and connection.generation == self._generation
        status, body = self._dispatch(message)
        connection.send(_response(status, body, keep_alive=keep_alive), self.request_timeout)
        return keep_alive

    def retire_connections(self) -> None:
        """After a certificate rotation: each open connection answers its next request with `Connection: close`.

        Clients (the API server keeps connections open) then reconnect and validate the new pair — before an
        old certificate expires or its CA leaves the caBundle. Closing idle connections instead would race a
        request the client is already sending, and a POST that meets EOF is not retried.
        """
        self._generation += 1

    def _answer_too_large(self, connection: Connection, message: Message) -> None:
        route = self._routes.get(message.url.split(b"?")[0])
        refusal = f"the request body exceeds {self.max_body_bytes} bytes"
        self._refused(route.path if route is not None else None, 413, refusal)
        body = encode_review("", "", errored(413, refusal))
        if route is not None:
            route.count(200)
        connection.send(_response(200, body, keep_alive=False), self.request_timeout)

    def _dispatch(self, message: Message) -> tuple[int, bytes]:
        route = self._routes.get(message.url.split(b"?")[0])
        if route is None:
            return 404, b'{"error":"no webhook at this path"}'
        if message.method != b"POST":
            route.count(405)
            return 405, b'{"error":"webhooks only accept POST"}'
        began = time.perf_counter()
        route.in_flight.inc()
        try:
            body = self._review(route, message)
        finally:
            route.in_flight.dec()
        route.latency.observe(time.perf_counter() - began)
        route.count(200)
        return 200, body

    def _review(self, route: _Route, message: Message) -> bytes:
        content_type = message.content_type
        if content_type.split(b";")[0].strip() != b"application/json":
            refusal = f"Content-Type must be application/json, got {content_type.decode(errors='replace')!r}"
            self._refused(route.path, 400, refusal)
            return encode_review("", "", errored(400, refusal))
        try:
            api_version, request = decode_review(b"".join(message.body))
        except ReviewError as exc:
            self._refused(route.path, exc.code, str(exc))
            return encode_review("", "", errored(exc.code, str(exc)))
        try:
            with deadline(self.request_timeout):
                response: AdmissionResponse = route.handler(request)
        except Exception as exc:  # a handler bug must become a 500 answer, never a dropped connection
            metrics.WEBHOOK_PANICS.inc()
            _log.exception("webhook %s failed on %s", route.path, request.uid)
            response = errored(500, f"internal error: {type(exc).__name__}: {exc}")
        if response.code == 400:  # the handler could not read the review's object
            self._refused(route.path, 400, response.message, uid=request.uid)
        return encode_review(api_version, request.uid, response)

    def _refused(self, path: str | None, code: int, reason: str, uid: str = "") -> None:
        """One rate-limited warning per registered path (and one key for requests no path was read from, so
        clients cannot grow the limiter's keys)."""
        key = path or "-"
        fields = {"path": key, "code": code, "reason": reason[:512]} | ({"uid": uid} if uid else {})
        self._malformed.warning("refused a malformed admission review", key=key, extra=fields)


def _response(status: int, body: bytes, *, keep_alive: bool) -> bytes:
    head = b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n" % (
        status,
        _REASONS.get(status, b"Error"),
        len(body),
        b"" if keep_alive else b"Connection: close\r\n",
    )
    return head + body


def local_url(server: WebhookServer, path: str, host: str = "127.0.0.1") -> str:
    """`https://host:port/path` of a started server (for tests and `make dev`)."""
    return f"https://{host}:{server.port}{path}"


__all__ = ["DEFAULT_PORT", "MAX_BODY_BYTES", "WebhookServer", "local_url"]
