"""The admission port speaks TLS 1.2 or newer and nothing else (issue 18): a TLS 1.1 client is refused with a
protocol-version alert, and plaintext HTTP gets no HTTP answer.

OpenSSL 3 refuses TLS 1.1 on both ends by default (security level 1 forbids its SHA-1 signatures), so a client
that merely asks for 1.1 fails locally and would "prove" nothing. The client here lowers its security level
(`DEFAULT:@SECLEVEL=0`) and first completes a TLS 1.1 handshake with a control server opened to 1.1 on the same
certificate: only then does the webhook server's refusal show the server's own minimum.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from ballast.runtime import allowed

from .support import ServedWebhook, serving

LEGACY_CIPHERS = "DEFAULT:@SECLEVEL=0"


@pytest.fixture(scope="module")
def webhook(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServedWebhook]:
    with serving(tmp_path_factory.mktemp("certs"), "tls", {"/validate": lambda _: allowed()}) as served:
        yield served


def _tls11(context: ssl.SSLContext) -> ssl.SSLContext:
    with warnings.catch_warnings():  # TLSVersion.TLSv1_1 is deprecated, which is the point here
        warnings.simplefilter("ignore", DeprecationWarning)
        context.minimum_version = context.maximum_version = ssl.TLSVersion.TLSv1_1
    context.set_ciphers(LEGACY_CIPHERS)
    return context


def _tls11_client(served: ServedWebhook) -> ssl.SSLContext:
    context = _tls11(ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))
    context.load_verify_locations(cadata=served.ca.cert_pem.decode())
    return context


@contextlib.contextmanager
def _control_server(cert: Path, key: Path) -> Iterator[tuple[int, list[str]]]:
    """A TLS server opened to 1.1 only, on the webhook's certificate; yields its port and the versions it
    negotiated."""
    context = _tls11(ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER))
    context.load_cert_chain(cert, key)
    negotiated: list[str] = []
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(10)

        def accept_one() -> None:
            connection, _ = listener.accept()
            with contextlib.suppress(OSError), context.wrap_socket(connection, server_side=True) as tls:
                negotiated.append(str(tls.version()))

        thread = threading.Thread(target=accept_one, daemon=True)
        thread.start()
        yield listener.getsockname()[1], negotiated
        thread.join(10)


def test_a_tls_1_1_client_that_can_speak_1_1_is_refused_with_a_protocol_version_alert(
    webhook: ServedWebhook,
) -> None:
    client = _tls11_client(webhook)
    watcher = webhook.server.cert_watcher
    with (
        _control_server(watcher.cert_path, watcher.key_path) as (port, negotiated),
        socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
        client.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        assert tls.version() == "TLSv1.1"  # this client really speaks 1.1 here
    assert negotiated == ["TLSv1.1"]
    with (
        socket.create_connection(("127.0.0.1", webhook.server.port), timeout=10) as raw,
        pytest.raises(ssl.SSLError) as refused,
    ):
        client.wrap_socket(raw, server_hostname="127.0.0.1")
    assert refused.value.reason == "TLSV1_ALERT_PROTOCOL_VERSION", refused.value


def test_tls_1_2_and_1_3_are_served(webhook: ServedWebhook) -> None:
    for version in (ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3):
        client = ssl.create_default_context(cadata=webhook.ca.cert_pem.decode())
        client.minimum_version = client.maximum_version = version
        with (
            socket.create_connection(("127.0.0.1", webhook.server.port), timeout=10) as raw,
            client.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
        ):
            assert tls.version() == version.name.replace("v1_", "v1.")


def test_plaintext_http_gets_no_http_answer(webhook: ServedWebhook) -> None:
    request = (
        b"POST /validate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
    )
    with socket.create_connection(("127.0.0.1", webhook.server.port), timeout=10) as plain:
        plain.sendall(request)
        received = b""
        with contextlib.suppress(ConnectionResetError):  # the server may reset after its alert
            while chunk := plain.recv(4096):
                received += chunk
    assert not received.startswith(b"HTTP/"), received[:200]
    assert b"HTTP/1." not in received
    assert received[:1] in (b"", b"\x15")  # nothing, or a TLS alert record
