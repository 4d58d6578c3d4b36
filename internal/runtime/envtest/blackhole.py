"""A loopback TCP proxy that can partition its clients from the API server, for failover tests.

    with BlackHoleProxy(address_of(env.client_configuration())) as proxy:
        configuration = through(proxy, env.client_configuration())   # one replica's connection goes through it
        ...
        proxy.cut()                                                  # from now on its bytes go nowhere

`cut()` black-holes: open connections stay open but every byte, either way, is dropped, and new connections
are accepted and never forwarded — no RST, no FIN, so the client learns only from its own timeouts, as behind
a partitioned network. `heal()` closes what was cut and forwards new connections again.
"""

from __future__ import annotations

import contextlib
import copy
import socket
import threading
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

_CHUNK = 65536


class BlackHoleProxy:
    """Forwards 127.0.0.1:`port` to `target` until `cut()`; thread per connection direction."""

    def __init__(self, target: tuple[str, int], *, host: str = "127.0.0.1") -> None:
        self.target = target
        self._listener = socket.create_server((host, 0))
        self.host = host
        self.port: int = self._listener.getsockname()[1]
        self._cut = threading.Event()
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self.connections = 0
        threading.Thread(target=self._accept, name=f"blackhole-{self.port}", daemon=True).start()

    @property
    def url(self) -> str:
        return f"https://{self.host}:{self.port}"

    @property
    def is_cut(self) -> bool:
        return self._cut.is_set()

    def cut(self) -> None:
        self._cut.set()

    def heal(self) -> None:
        """Close every connection opened so far (their streams lost bytes) and forward new ones again."""
        self._close_sockets()
        self._cut.clear()

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        self._close_sockets()

    def __enter__(self) -> BlackHoleProxy:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            self._track(client)
            self.connections += 1
            upstream = None
            if not self._cut.is_set():
                try:
                    upstream = socket.create_connection(self.target, timeout=5)
                except OSError:
                    client.close()
                    continue
                upstream.settimeout(None)
                self._track(upstream)
            self._pump(client, upstream)
            if upstream is not None:
                self._pump(upstream, client)

    def _pump(self, source: socket.socket, sink: socket.socket | None) -> None:
        threading.Thread(
            target=self._copy, args=(source, sink), name=f"blackhole-{self.port}-pump", daemon=True
        ).start()

    def _copy(self, source: socket.socket, sink: socket.socket | None) -> None:
        try:
            while data := source.recv(_CHUNK):
                if sink is not None and not self._cut.is_set():
                    sink.sendall(data)
        except OSError:
            pass  # either side closed: the pair is finished
        finally:
            if not self._cut.is_set():  # a cut connection stays open: silence, not a reset
                for sock in (source, sink):
                    if sock is not None:
                        with contextlib.suppress(OSError):
                            sock.shutdown(socket.SHUT_RDWR)

    def _track(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.add(sock)

    def _close_sockets(self) -> None:
        with self._lock:
            sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.close()


def through(proxy: BlackHoleProxy, configuration: Any) -> Any:
    """A copy of a `kubernetes.client.Configuration` that reaches its API server through `proxy`."""
    proxied = copy.deepcopy(configuration)
    proxied.host = proxy.url
    return proxied


def address_of(configuration: Any) -> tuple[str, int]:
    """(host, port) of the API server a `kubernetes.client.Configuration` points at."""
    url = urlsplit(configuration.host)
    return url.hostname or "127.0.0.1", url.port or 443


__all__ = [
    "BlackHoleProxy",
    "address_of",
    "through",
]
