"""The manager's metrics endpoint (controller-runtime's `metrics/server`): `/metrics` over HTTP, or over HTTPS with a
certificate that follows rotations and a filter that decides who may scrape (`metricsauth`).

`MetricsServerOptions(secure=True)` serves TLS from `cert_dir/cert_name` + `cert_dir/key_name`, watched by a
`CertWatcher`; without a `cert_dir` it writes a self-signed pair under `<tmp>/k8s-metrics-server/serving-certs`
(controller-runtime does the same). A secure server authenticates and authorises each scrape
(`metricsauth.AuthenticationAndAuthorization`) unless `filter` says otherwise (`metricsauth.allow_all`).
"""

from __future__ import annotations

import socket
import ssl
import tempfile
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from . import metrics
from .certs import CertificateAuthority
from .certwatcher import CertificateError, CertWatcher
from .httpserver import QuietHTTPServer
from .log import get_logger
from .metricsauth import AuthenticationAndAuthorization, MetricsFilter, allow_all

HANDSHAKE_TIMEOUT = 10.0
_log = get_logger("ballast.runtime.metricsserver")


def default_cert_dir() -> Path:
    """Where a secure metrics server without a `cert_dir` keeps its self-signed pair."""
    return Path(tempfile.gettempdir()) / "k8s-metrics-server" / "serving-certs"


@dataclass(frozen=True)
class MetricsServerOptions:
    """How the metrics are served (controller-runtime's `metricsserver.Options`)."""

    secure: bool = False
    """HTTPS, with the scrapes filtered (`SecureServing`)."""
    cert_dir: str | Path | None = None
    """The directory of the serving pair (`CertDir`); None: a self-signed pair in `default_cert_dir()`."""
    cert_name: str = "tls.crt"
    key_name: str = "tls.key"
    filter: MetricsFilter | None = None
    """Who may scrape (`FilterProvider`); None: `AuthenticationAndAuthorization` when secure, everyone when not."""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def do_GET(self) -> None:
        path = self.path.split("?")[0]
        if path != "/metrics":
            self._send(404, b"404 page not found\n", "text/plain; charset=utf-8")
            return
        decision = self.server.decide(self.headers.get("Authorization"), path, self.command)
        if not decision.allowed:
            self._send(decision.status, f"{decision.message}\n".encode(), "text/plain; charset=utf-8")
            return
        self._send(200, generate_latest(metrics.REGISTRY), CONTENT_TYPE_LATEST)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return


class _HTTPServer(QuietHTTPServer):
    def __init__(self, address: tuple[str, int], tls: CertWatcher | None, decide: MetricsFilter) -> None:
        super().__init__(address, _Handler)
        self.tls = tls
        self.decide = decide

    def finish_request(self, request: Any, client_address: Any) -> None:
        # On the request's own thread: a slow or silent TLS client never holds up accepting the next one.
        if self.tls is not None:
            raw: socket.socket = request
            raw.settimeout(HANDSHAKE_TIMEOUT)
            try:
                request = self.tls.context().wrap_socket(raw, server_side=True)
            except (OSError, ssl.SSLError) as error:
                _log.debug("metrics TLS handshake failed: %s", error)
                raw.close()
                return
            request.settimeout(None)
        super().finish_request(request, client_address)


class MetricsServer:
    """Serves `/metrics` as the options say; a runnable on every replica (`Manager` makes one)."""

    def __init__(self, address: tuple[str, int], options: MetricsServerOptions, *, review_client: Any = None) -> None:
        self.name = "metrics"
        self.options = options
        self.cert_watcher: CertWatcher | None = None
        if options.secure:
            directory = Path(options.cert_dir) if options.cert_dir else _self_signed(options)
            self.cert_watcher = CertWatcher(directory, options.cert_name, options.key_name)
            self.cert_watcher.read()  # fail start-up on a missing or broken pair, as controller-runtime does
        self.filter = _filter(options, review_client)
        """Who may scrape: the filter each request goes through."""
        self._server = _HTTPServer(address, self.cert_watcher, self.filter)
        self.port: int = self._server.server_address[1]

    def need_leader_election(self) -> bool:
        return False

    def start(self, stop: threading.Event) -> None:
        threads = [threading.Thread(target=self._server.serve_forever, name="metrics-server", daemon=True)]
        if self.cert_watcher is not None:
            threads.append(
                threading.Thread(target=self.cert_watcher.start, args=(stop,), name="metrics-certwatcher", daemon=True)
            )
        for thread in threads:
            thread.start()
        stop.wait()
        self._server.shutdown()
        self._server.server_close()
        for thread in threads:
            thread.join(5)


def _filter(options: MetricsServerOptions, review_client: Any) -> MetricsFilter:
    if options.filter is not None:
        return options.filter
    if not options.secure:
        return allow_all
    if review_client is None:
        raise ValueError("secure metrics authenticate scrapes with the API server: give the server a client")
    return AuthenticationAndAuthorization(review_client)


def _self_signed(options: MetricsServerOptions) -> Path:
    directory = default_cert_dir()
    cert, key = directory / options.cert_name, directory / options.key_name
    if cert.exists() and key.exists():
        return directory
    host = socket.gethostname()
    pair = CertificateAuthority("ballast-metrics-ca").issue(host, hosts=(host, "localhost", "127.0.0.1"), server=True)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        pair.write(directory, options.cert_name, options.key_name)
    except OSError as error:
        raise CertificateError(
            f"cannot write the self-signed metrics certificate under {directory} ({error.strerror or error}): give "
            "the metrics server a certificate directory (cert_dir; ballastd --metrics-cert-path) or a writable /tmp"
        ) from error
    _log.info("serving metrics with a self-signed certificate", extra={"dir": str(directory)})
    return directory


__all__ = [
    "MetricsServer",
    "MetricsServerOptions",
    "default_cert_dir",
]
