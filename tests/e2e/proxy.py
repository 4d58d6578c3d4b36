"""A TCP forwarder on loopback that a test can cut: every connection through it dropped, new ones refused,
until `resume()`. Put between a client and the API server, it partitions that client alone."""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading


class CuttableProxy:
    """Forwards `127.0.0.1:<port>` to `target`; `cut()` severs and refuses, `resume()` accepts again."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._open = threading.Event()
        self._open.set()
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._thread = threading.Thread(target=self._accept, name="cuttable-proxy", daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def cut(self) -> None:
        self._open.clear()
        with self._lock:
            doomed, self._sockets = self._sockets, set()
        for sock in doomed:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def resume(self) -> None:
        self._open.set()

    def stop(self) -> None:
        self._stopped.set()
        self.cut()
        self._listener.close()
        self._thread.join(timeout=5)

    def _accept(self) -> None:
        self._listener.settimeout(0.2)
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # the listener was closed by stop()
            if not self._open.is_set():
                client.close()  # refused while cut: the client sees a reset, as with a partitioned server
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets |= {client, upstream}
            threading.Thread(target=self._pump, args=(client, upstream), daemon=True).start()

    def _pump(self, client: socket.socket, upstream: socket.socket) -> None:
        selector = selectors.DefaultSelector()
        peers = {client: upstream, upstream: client}
        for sock in peers:
            selector.register(sock, selectors.EVENT_READ)
        try:
            while not self._stopped.is_set():
                for key, _ in selector.select(timeout=0.5):
                    source: socket.socket = key.fileobj  # type: ignore[assignment]
                    data = source.recv(65536)
                    if not data:
                        return
                    peers[source].sendall(data)
        except OSError:
            return  # one side was cut or reset: the other is closed below
        finally:
            selector.close()
            for sock in peers:
                sock.close()
            with self._lock:
                self._sockets -= set(peers)
