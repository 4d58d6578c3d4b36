"""The endpoints' HTTP server: a client gone before its answer (a probe that timed out) is not a traceback on
stderr, and a handler's own failure is logged, not printed."""

from __future__ import annotations

import logging
import socket
import ssl
import struct
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler

import pytest

from ballast.runtime.httpserver import QuietHTTPServer
from tests.unit.internal.runtime.support import eventually

LOGGER = "ballast.runtime.httpserver"


class _Handler(BaseHTTPRequestHandler):
    client_gone = threading.Event()

    def do_GET(self) -> None:
        if self.path == "/broken":
            raise ValueError("a bug in the handler")
        self.client_gone.wait(5)  # answer only once the client has reset the connection
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, format: str, *args: object) -> None:
        return


@pytest.fixture
def server() -> Iterator[QuietHTTPServer]:
    _Handler.client_gone.clear()
    serving = QuietHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=serving.serve_forever, daemon=True)
    thread.start()
    yield serving
    serving.shutdown()
    serving.server_close()
    thread.join(5)


def _send(server: QuietHTTPServer, path: str) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", server.server_port))
    client.sendall(f"GET {path} HTTP/1.1\r\nHost: probe\r\n\r\n".encode())
    return client


def _records(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == LOGGER and r.levelno == level]


def test_a_client_that_stopped_waiting_is_dropped_without_a_traceback(
    server: QuietHTTPServer, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    client = _send(server, "/readyz")
    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close with a reset
    client.close()
    _Handler.client_gone.set()

    [dropped] = eventually(lambda: _records(caplog, logging.DEBUG), "the dropped client's debug line")
    assert "went away before the answer" in dropped.getMessage()
    assert _records(caplog, logging.ERROR) == []
    assert "Traceback" not in capfd.readouterr().err


def test_a_handlers_own_failure_is_logged_with_its_traceback_not_printed(
    server: QuietHTTPServer, caplog: pytest.LogCaptureFixture, capfd: pytest.CaptureFixture[str]
) -> None:
    client = _send(server, "/broken")
    [failed] = eventually(lambda: _records(caplog, logging.ERROR), "the handler's failure logged")
    client.close()
    assert "a bug in the handler" in failed.getMessage()
    assert failed.exc_info is not None
    assert failed.exc_info[0] is ValueError
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("gone", [ConnectionResetError, BrokenPipeError, ssl.SSLEOFError, ssl.SSLZeroReturnError])
def test_every_way_a_client_goes_away_is_a_debug_line(
    server: QuietHTTPServer, gone: type[OSError], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    try:
        raise gone("the client stopped waiting")
    except OSError:
        server.handle_error(None, ("127.0.0.1", 40000))  # as socketserver calls it, inside the except block
    assert [r.levelno for r in caplog.records if r.name == LOGGER] == [logging.DEBUG]
