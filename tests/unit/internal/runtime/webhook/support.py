"""A real WebhookServer on loopback for the connection-level tests: certificate, routes, a client pool."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import urllib3

from ballast.runtime import AdmissionRequest, AdmissionResponse, WebhookServer
from ballast.runtime.certs import CertificateAuthority


@dataclass(frozen=True)
class ServedWebhook:
    server: WebhookServer
    ca: CertificateAuthority
    base: str
    """`https://127.0.0.1:<port>`."""

    def pool(self, **options: Any) -> urllib3.PoolManager:
        """A client trusting the server's CA, without retries (a test sees each answer)."""
        return urllib3.PoolManager(ca_cert_data=self.ca.cert_pem.decode(), retries=False, **options)


@contextlib.contextmanager
def serving(
    cert_dir: Path, name: str, routes: Mapping[str, Callable[[AdmissionRequest], AdmissionResponse]], **options: Any
) -> Iterator[ServedWebhook]:
    """A WebhookServer on 127.0.0.1 with a certificate from a fresh CA `<name>-ca`, serving `routes` (path →
    handler); stopped when the block ends."""
    ca = CertificateAuthority(f"{name}-ca")
    ca.issue(f"{name}-webhook", hosts=("127.0.0.1",), server=True).write(cert_dir)
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=cert_dir, **options)
    for path, handler in routes.items():
        server.register(path, handler)
    stop = threading.Event()
    thread = threading.Thread(target=server.start, args=(stop,), daemon=True)
    thread.start()
    assert server.wait_listening(10)
    try:
        yield ServedWebhook(server, ca, f"https://127.0.0.1:{server.port}")
    finally:
        stop.set()
        thread.join(10)
