"""The threading HTTP server behind the health, readiness and metrics endpoints.

The standard library's server prints a traceback to stderr whenever a handler raises — also when the client went
away before the answer was written, which is what a probe that timed out does (the kubelet waits one second by
default). Go's net/http says nothing then; so does this server. Anything else a handler raises is a bug, logged
with its traceback through the process's logger rather than printed past it.
"""

from __future__ import annotations

import ssl
import sys
from http.server import ThreadingHTTPServer
from typing import Any

from .log import get_logger

_log = get_logger("ballast.runtime.httpserver")
_CLIENT_GONE = (ConnectionError, ssl.SSLEOFError, ssl.SSLZeroReturnError)
"""The client stopped waiting: reset, broken pipe, aborted — or, over TLS, the stream ended under the answer."""


class QuietHTTPServer(ThreadingHTTPServer):
    """`ThreadingHTTPServer` (daemon threads) that drops a client gone mid-request and logs a handler's failure."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, _CLIENT_GONE):
            _log.debug("client %s went away before the answer: %s", client_address, error)
            return
        _log.error("answering %s failed: %s", client_address, error, exc_info=True)


__all__ = ["QuietHTTPServer"]
