"""An API server that accepts TCP connections and never answers, on loopback: `silent_server()`."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class SilentServer:
    """Accepts every connection and never sends a byte (not even the TLS handshake's)."""

    listener: socket.socket
    accepted: list[socket.socket] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.listener.getsockname()[1]}"

    def serve(self) -> None:
        self.listener.settimeout(0.05)  # so that the loop sees `stop`
        while not self.stop.is_set():
            try:
                connection, _ = self.listener.accept()
            except TimeoutError:
                continue
            self.accepted.append(connection)


@contextlib.contextmanager
def silent_server() -> Iterator[SilentServer]:
    """A silent server on loopback; its connections are closed on leaving."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    server = SilentServer(listener)
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    yield server
    server.stop.set()
    thread.join(5)
    listener.close()
    for connection in server.accepted:
        connection.close()
