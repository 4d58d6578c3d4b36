"""CertWatcher: a serving certificate that follows cert-manager rotations without a restart.

Reads `tls.crt`/`tls.key` from a directory laid out like a mounted Secret and keeps an `ssl.SSLContext` built
from them. Changes are picked up by a file watch on the directory (kubelet swaps the `..data` symlink
atomically, so the directory is what changes) plus a poll every 10 s (controller-runtime's
`defaultWatchInterval`) for filesystems where notifications do not arrive. A pair that does not load — half
written, or a key that does not match the certificate — keeps the previous one in service and is logged and
counted (`certwatcher_read_certificate_errors_total`). Servers ask `context()` at each handshake, so new
connections get the new pair while connections already open keep theirs.
"""

from __future__ import annotations

import hashlib
import ssl
import threading
from collections.abc import Callable
from pathlib import Path

import watchfiles

from . import metrics
from .log import get_logger

POLL_INTERVAL = 10.0
_log = get_logger("ballast.runtime.certwatcher")

ContextFactory = Callable[[], ssl.SSLContext]


def server_context() -> ssl.SSLContext:
    """A TLS server context: TLS ≥ 1.2, HTTP/1.1 only (ALPN) — HTTP/2 stays off (CVE-2023-44487)."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["http/1.1"])
    return context


class CertificateError(RuntimeError):
    """The certificate pair could not be loaded."""


class CertWatcher:
    """Holds the current serving context for `cert_dir/cert_name` + `cert_dir/key_name`; thread-safe."""

    def __init__(
        self,
        cert_dir: str | Path,
        cert_name: str = "tls.crt",
        key_name: str = "tls.key",
        *,
        poll_interval: float = POLL_INTERVAL,
        context_factory: ContextFactory = server_context,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        self.cert_dir = Path(cert_dir)
        self.cert_path = self.cert_dir / cert_name
        self.key_path = self.cert_dir / key_name
        self.poll_interval = poll_interval
        self._factory = context_factory
        self._on_change = on_change
        self._lock = threading.Lock()
        self._context: ssl.SSLContext | None = None
        self._fingerprint = b""
        self._stop = threading.Event()
        self.reloads = 0

    # ------------------------------------------------------------------------------------------- read

    def read(self) -> bool:
        """Load the pair if it changed; returns True when a new pair went into service.

        Raises CertificateError only when there is no pair in service yet (nothing to keep serving with).
        """
        metrics.CERTWATCHER_READ.inc()
        try:
            cert, key = self.cert_path.read_bytes(), self.key_path.read_bytes()
            fingerprint = hashlib.sha256(cert + b"\0" + key).digest()
            if fingerprint == self._fingerprint:
                return False
            context = self._factory()
            context.load_cert_chain(self.cert_path, self.key_path)
        except (OSError, ssl.SSLError) as exc:
            metrics.CERTWATCHER_READ_ERRORS.inc()
            if self._context is None:
                raise CertificateError(
                    f"cannot load the serving certificate {self.cert_path} / {self.key_path}: {exc}"
                ) from exc
            _log.error("keeping the current certificate: the new pair does not load: %s", exc)
            return False
        with self._lock:
            first = self._context is None
            self._context, self._fingerprint = context, fingerprint
        if not first:
            self.reloads += 1
            _log.info("serving certificate reloaded", extra={"cert": str(self.cert_path)})
            if self._on_change:
                self._on_change()
        return True

    def context(self) -> ssl.SSLContext:
        """The context for the next handshake (raises CertificateError before the first successful read)."""
        with self._lock:
            context = self._context
        if context is None:
            raise CertificateError("no serving certificate has been loaded yet")
        return context

    @property
    def loaded(self) -> bool:
        return self._context is not None

    # ---------------------------------------------------------------------------------------- watching

    def start(self, stop: threading.Event) -> None:
        """Watch and poll until `stop` is set (a manager runnable on every replica)."""
        if not self.loaded:
            self.read()
        watcher = threading.Thread(target=self._watch, args=(stop,), name="certwatcher-files", daemon=True)
        watcher.start()
        while not stop.wait(self.poll_interval):
            self.read()
        watcher.join(5)

    def need_leader_election(self) -> bool:
        return False

    def _watch(self, stop: threading.Event) -> None:
        try:
            for _ in watchfiles.watch(
                self.cert_dir, stop_event=stop, debounce=100, rust_timeout=1000, yield_on_timeout=False
            ):
                self.read()
        except Exception as exc:  # the poll still covers us; a broken watch must not end the watcher
            _log.warning(
                "file watch on %s stopped, relying on the %ss poll: %s", self.cert_dir, self.poll_interval, exc
            )


__all__ = [
    "POLL_INTERVAL",
    "CertWatcher",
    "CertificateError",
    "ContextFactory",
    "server_context",
]
