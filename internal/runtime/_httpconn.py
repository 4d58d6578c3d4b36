"""HTTP/1.1-over-TLS connections served from one selector thread; workers only ever see complete requests.

    loop = ConnectionLoop(listener, context_for_new_connections, handle, limits)
    loop.run(stop)                  # blocks; `handle(connection, message)` runs on the worker pool

A connection that has not finished its TLS handshake, or waits between requests, or is still sending one, costs
a file descriptor and a few hundred bytes here — never a worker. Each phase has its own deadline: the handshake
and a request that has started are short (slowloris), the idle keep-alive wait is long (the API server reuses
connections; closing them early races its next POST, which it does not retry). Past `max_connections` the
oldest idle connection is closed to admit a new one; `EMFILE`/`ENFILE` on accept closes one idle connection and
pauses accepting briefly, never ending the loop.

Memory is bounded twice: a body over `max_body_bytes` is discarded while it is read (the request is then
refused with 413 once complete, so the client is listening), and while the bodies held by all connections
exceed `max_in_flight_bytes`, connections sending a body are paused (not read, under the same read deadline) —
all but one: the paused request closest to complete keeps reading, so a burst of large bodies always drains
and nobody holds the budget without sending the bytes. After a burst the freed heap is handed back to the OS
(`malloc_trim`, glibc).

Fairness: one event reads at most `READS_PER_TURN` chunks of a connection; a connection with more to read is
carried over and read again right after the next select (which does not block while any is carried), since bytes
TLS has already decrypted would not wake the selector.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import enum
import errno
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

import httptools

from .log import get_logger

_log = get_logger("ballast.runtime.webhook")
_READ = selectors.EVENT_READ
_WRITE = selectors.EVENT_WRITE
_SCAN_SECONDS = 0.25  # deadlines are checked this often
_ACCEPT_PAUSE_SECONDS = 0.1
_TRIM_AFTER_BYTES = 8 * 1024 * 1024  # bodies handled since the last trim before heap is handed back
_RECV_BYTES = 65536
READS_PER_TURN = 16
"""Reads one connection gets per turn of the loop (1 MiB): a fast uploader then waits for the others' turns."""
_OUT_OF_RESOURCES = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})


@dataclass(frozen=True)
class Limits:
    """The connection phase's bounds (see the module docstring)."""

    handshake_timeout: float = 10.0
    request_read_timeout: float = 10.0
    idle_timeout: float = 90.0
    write_timeout: float = 10.0
    max_connections: int = 10_000
    max_body_bytes: int = 4 * 1024 * 1024
    drain_limit_bytes: int = 64 * 1024 * 1024
    max_in_flight_bytes: int = 32 * 1024 * 1024
    workers: int = 32  # handlers may wait on a live read (an owner GET); a worker is only a thread


class Phase(enum.Enum):
    HANDSHAKE = "handshake"
    IDLE = "idle"
    READING = "reading"
    BUSY = "busy"  # on a worker
    PAUSED = "paused"  # its request's body waits for in-flight budget
    CLOSED = "closed"


class Message:
    """One parsed request (httptools callbacks fill it)."""

    __slots__ = ("body", "complete", "content_type", "held", "keep_alive", "length", "malformed", "method", "size",
                 "too_large", "url")  # fmt: skip

    def __init__(self, *, malformed: bool = False) -> None:
        self.malformed = malformed  # not HTTP: answered 400, then the connection closes
        self.url = b""
        self.length: int | None = None  # Content-Length, when sent
        self.held = 0  # body bytes counted in the loop's in-flight total
        self.method = b""
        self.content_type = b""
        self.body: list[bytes] = []
        self.size = 0
        self.too_large = False
        self.complete = False
        self.keep_alive = True


class _Parser:
    """httptools protocol: turns bytes into `Message`s, pipelined requests included; counts held body bytes."""

    def __init__(self, limits: Limits, held: Callable[[Message, int], None]) -> None:
        self.limits = limits
        self.held = held
        self.parser = httptools.HttpRequestParser(self)
        self.current: Message | None = None
        self.completed: list[Message] = []

    def feed(self, data: bytes) -> None:
        self.parser.feed_data(data)

    @property
    def started(self) -> bool:
        return self.current is not None

    def on_message_begin(self) -> None:
        self.current = Message()

    def on_url(self, url: bytes) -> None:
        assert self.current is not None
        self.current.url += url

    def on_header(self, name: bytes, value: bytes) -> None:
        assert self.current is not None
        lowered = name.lower()
        if lowered == b"content-type":
            self.current.content_type = value
        elif lowered == b"content-length" and value.isdigit():
            self.current.length = int(value)
            if self.current.length > self.limits.max_body_bytes:
                self.current.too_large = True  # refused from its Content-Length: nothing of it is kept

    def on_headers_complete(self) -> None:
        # Asked here: llhttp forgets the request's Connection header once the message is complete.
        assert self.current is not None
        self.current.keep_alive = self.parser.should_keep_alive()
        self.current.method = self.parser.get_method()

    def on_body(self, body: bytes) -> None:
        message = self.current
        assert message is not None
        message.size += len(body)
        if message.size > self.limits.max_body_bytes:
            message.body.clear()  # a body that outgrew the cap (no Content-Length said so): discarded from here
            self.held(message, -message.held)
            message.too_large = True
        elif not message.too_large:
            message.body.append(body)
            self.held(message, len(body))

    def on_message_complete(self) -> None:
        assert self.current is not None
        self.current.complete = True
        self.completed.append(self.current)
        self.current = None


class Connection:
    """One client connection and where it is in its life."""

    __slots__ = ("deadline", "generation", "last_active", "parser", "phase", "sock")

    def __init__(self, sock: ssl.SSLSocket, parser: _Parser, generation: int, deadline: float) -> None:
        self.sock = sock
        self.parser = parser
        self.phase = Phase.HANDSHAKE
        self.generation = generation
        self.deadline = deadline
        self.last_active = time.monotonic()

    def send(self, data: bytes, timeout: float) -> None:
        """Write an answer from a worker (the loop does not touch a busy connection)."""
        self.sock.settimeout(timeout)
        try:
            self.sock.sendall(data)
        finally:
            self.sock.setblocking(False)


Handle = Callable[[Connection, Message], bool]
"""Answers one message on a worker; returns whether the connection stays open for another request."""


class _Trimmer:
    """Hands freed heap back to the OS after large bodies (glibc's `malloc_trim`; a no-op elsewhere)."""

    def __init__(self) -> None:
        name = ctypes.util.find_library("c")
        libc = ctypes.CDLL(name) if name else None
        self._trim = getattr(libc, "malloc_trim", None)
        self._since = 0
        self._lock = threading.Lock()

    def handled(self, size: int, idle: bool) -> None:
        with self._lock:
            self._since += size
            due = idle and self._since >= _TRIM_AFTER_BYTES
            if due:
                self._since = 0
        if due and self._trim is not None:
            self._trim(0)


def _remaining(connection: Connection) -> int:
    """Body bytes still to come (unknown length: as much as the cap allows)."""
    current = connection.parser.current
    if current is None:
        return 0
    expected = current.length if current.length is not None else connection.parser.limits.max_body_bytes
    return max(0, expected - current.size)


class ConnectionLoop:
    """Accepts, handshakes and reads on the calling thread; hands complete requests to a worker pool."""

    def __init__(
        self,
        listener: socket.socket,
        context: Callable[[], ssl.SSLContext],
        handle: Handle,
        limits: Limits,
        generation: Callable[[], int],
    ) -> None:
        self.listener = listener
        self.context = context
        self.handle = handle
        self.limits = limits
        self.generation = generation
        self.connections: dict[int, Connection] = {}
        self.refused_accepts = 0
        self._selector = selectors.DefaultSelector()
        self._wake_reader, self._wake_writer = socket.socketpair()
        self._returned: list[Connection] = []
        self._paused: list[Connection] = []
        self._carried: dict[Connection, None] = {}  # stopped at READS_PER_TURN; read again next turn (in order)
        self._drainer: Connection | None = None  # the one connection that reads over budget
        self._lock = threading.Lock()  # guards _returned, _in_flight
        self._in_flight = 0
        self._trimmer = _Trimmer()
        self._accept_resumes = 0.0
        self._stopping = False

    # ------------------------------------------------------------------------------------------ public

    @property
    def stopping(self) -> bool:
        """Set once the loop stops: answers from then on say `Connection: close`."""
        return self._stopping

    @property
    def in_flight_bytes(self) -> int:
        with self._lock:
            return self._in_flight

    def carried(self) -> list[Connection]:
        """The connections that used their turn with bytes left, in the order they are read next (for tests)."""
        return list(self._carried)

    def phases(self) -> dict[Phase, int]:
        """How many connections are in each phase (a snapshot, for tests and metrics)."""
        counts = dict.fromkeys(Phase, 0)
        for connection in list(self.connections.values()):
            counts[connection.phase] += 1
        return counts

    def run(self, stop: threading.Event) -> None:
        self.listener.setblocking(False)
        self._wake_reader.setblocking(False)
        self._selector.register(self.listener, _READ, "accept")
        self._selector.register(self._wake_reader, _READ, "wake")
        pool = ThreadPoolExecutor(max_workers=self.limits.workers, thread_name_prefix="webhook-worker")
        self._pool = pool
        next_scan = time.monotonic() + _SCAN_SECONDS
        try:
            while not stop.is_set():
                timeout = 0.0 if self._carried else max(0.0, next_scan - time.monotonic())
                for key, events in self._selector.select(timeout):
                    self._guarded(partial(self._event, key.data, events), key.data)
                self._read_carried()
                now = time.monotonic()
                if now >= next_scan:
                    self._expire(now)
                    next_scan = now + _SCAN_SECONDS
        finally:
            self._shutdown(pool)

    def _guarded(self, step: Callable[[], None], data: object) -> None:
        try:
            step()
        except Exception:  # one connection's failure must not end serving for all the others
            _log.exception("webhook connection loop: handling an event failed")
            if isinstance(data, Connection):
                self._close(data)

    def _read_carried(self) -> None:
        """The connections that used their turn with bytes left: another turn each, in order."""
        carried, self._carried = list(self._carried), {}
        for connection in carried:
            if connection.phase in (Phase.IDLE, Phase.READING):
                self._guarded(partial(self._read, connection), connection)

    # ---------------------------------------------------------------------------------------- accept

    def _accept(self) -> None:
        for _ in range(64):  # then let the other connections have a turn
            try:
                raw, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                self._accept_failed(exc)
                return
            self._admit(raw)

    def _accept_failed(self, error: OSError) -> None:
        """Never the end of serving: a connection reset before we took it is skipped; out of descriptors
        (EMFILE/ENFILE) or buffers, one idle connection is closed and accepting pauses briefly."""
        if error.errno not in _OUT_OF_RESOURCES:
            return
        self.refused_accepts += 1
        if self.refused_accepts == 1 or self.refused_accepts % 1000 == 0:
            _log.warning("accepting a webhook connection failed: %s", error, extra={"refused": self.refused_accepts})
        self._close_oldest_idle()
        self._selector.unregister(self.listener)
        self._accept_resumes = time.monotonic() + _ACCEPT_PAUSE_SECONDS

    def _admit(self, raw: socket.socket) -> None:
        if len(self.connections) >= self.limits.max_connections and not self._close_oldest_idle():
            raw.close()  # every connection is busy or mid-request: refuse the newest rather than cut work
            return
        raw.setblocking(False)
        try:
            sock = self.context().wrap_socket(raw, server_side=True, do_handshake_on_connect=False)
        except (OSError, ssl.SSLError):
            raw.close()
            return
        connection = Connection(
            sock, self._new_parser(), self.generation(), time.monotonic() + self.limits.handshake_timeout
        )
        self.connections[sock.fileno()] = connection
        self._selector.register(sock, _READ, connection)

    # ------------------------------------------------------------------------------------- connections

    def _new_parser(self) -> _Parser:
        return _Parser(self.limits, self._hold)

    def _event(self, data: object, events: int) -> None:
        if data == "accept":
            self._accept()
        elif data == "wake":
            self._drain_wakes()
        elif isinstance(data, Connection):
            self._ready(data, events)

    def _ready(self, connection: Connection, events: int) -> None:
        if connection.phase is Phase.CLOSED:
            return  # closed by an earlier event of the same batch (made room for a new connection, say)
        if connection.phase is Phase.HANDSHAKE:
            self._handshake(connection)
            return
        if events & _WRITE:  # the write TLS wanted (a key update) can go now: wait for reads again
            self._selector.modify(connection.sock, _READ, connection)
        self._read(connection)

    def _handshake(self, connection: Connection) -> None:
        try:
            connection.sock.do_handshake()
        except ssl.SSLWantReadError:
            self._selector.modify(connection.sock, _READ, connection)
            return
        except ssl.SSLWantWriteError:
            self._selector.modify(connection.sock, _WRITE, connection)
            return
        except (OSError, ssl.SSLError) as exc:
            _log.debug("TLS handshake failed: %s", exc)
            self._close(connection)
            return
        self._selector.modify(connection.sock, _READ, connection)
        self._set_idle(connection)
        self._read(connection)  # the first request may already be waiting

    def _read(self, connection: Connection) -> None:
        self._carried.pop(connection, None)  # read now: this is its turn
        parser = connection.parser
        for _ in range(READS_PER_TURN):
            if self._over_budget(connection):
                self._pause(connection)
                return
            try:
                data = connection.sock.recv(_RECV_BYTES)
            except (ssl.SSLWantReadError, BlockingIOError):
                break
            except ssl.SSLWantWriteError:
                self._selector.modify(connection.sock, _WRITE, connection)
                return
            except (OSError, ssl.SSLError):
                self._close(connection)
                return
            if not data:
                self._close(connection)
                return
            if not self._parse(connection, data):
                return
            if parser.completed:
                self._dispatch(connection)
                return
        else:
            self._carried[connection] = None  # its turn is over, its bytes may not be

    def _parse(self, connection: Connection, data: bytes) -> bool:
        """Feed bytes; False when the connection was answered or closed instead."""
        parser = connection.parser
        try:
            parser.feed(data)
        except httptools.HttpParserUpgrade:
            self._close(connection)
            return False
        except httptools.HttpParserError:
            parser.completed.append(Message(malformed=True))
            self._dispatch(connection)
            return False
        current = parser.current
        if current is not None and current.size > self.limits.drain_limit_bytes:
            self._close(connection)  # not worth reading further: close without an answer
            return False
        if parser.started and connection.phase is Phase.IDLE:
            connection.phase = Phase.READING
            connection.deadline = time.monotonic() + self.limits.request_read_timeout
        return True

    def _dispatch(self, connection: Connection) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(connection.sock)
        connection.phase = Phase.BUSY
        self._pool.submit(self._work, connection)

    def _work(self, connection: Connection) -> None:
        """On a worker: answer every complete message in order, then give the connection back to the loop."""
        keep = True
        while keep and connection.parser.completed:
            message = connection.parser.completed.pop(0)
            size = message.size
            try:
                keep = self.handle(connection, message)
            except (OSError, ssl.SSLError):
                keep = False  # the client went away mid-answer
            except Exception:  # the handler answers its own errors; this is a bug in answering
                _log.exception("answering a webhook request failed")
                keep = False
            finally:
                message.body.clear()
                self._hold(message, -message.held)
                self._trimmer.handled(size, idle=self.in_flight_bytes == 0)
        with self._lock:
            self._returned.append(connection)
            connection.phase = Phase.BUSY if keep else Phase.CLOSED
        with contextlib.suppress(OSError):
            self._wake_writer.send(b"\0")

    def _drain_wakes(self) -> None:
        with contextlib.suppress(BlockingIOError, InterruptedError):
            while self._wake_reader.recv(4096):
                pass
        with self._lock:
            returned, self._returned = self._returned, []
        for connection in returned:
            if self._drainer is connection:
                self._drainer = None  # its body was answered and released: the next paused one may drain
            if connection.phase is Phase.CLOSED or self._stopping:
                self._close(connection)
                continue
            self._selector.register(connection.sock, _READ, connection)
            self._set_idle(connection)
            if connection.parser.started:  # the client already began its next request: the short deadline
                connection.phase = Phase.READING
                connection.deadline = time.monotonic() + self.limits.request_read_timeout
            self._read(connection)  # TLS may hold decrypted bytes the selector cannot see
        self._resume_paused()

    def _resume_paused(self) -> None:
        """Under budget, every paused connection reads again; over it, one (the closest to complete) drains."""
        if not self._paused or self._stopping:
            return
        if self.in_flight_bytes < self.limits.max_in_flight_bytes:
            paused, self._paused = self._paused, []
            for connection in paused:
                self._unpause(connection)
        elif self._drainer is None:
            drainer = min(self._paused, key=_remaining)
            self._paused.remove(drainer)
            self._drainer = drainer
            self._unpause(drainer)

    def _unpause(self, connection: Connection) -> None:
        self._selector.register(connection.sock, _READ, connection)
        connection.phase = Phase.READING
        self._read(connection)

    def _over_budget(self, connection: Connection) -> bool:
        return (
            connection.phase is Phase.READING
            and connection is not self._drainer
            and self.in_flight_bytes >= self.limits.max_in_flight_bytes
        )

    def _pause(self, connection: Connection) -> None:
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(connection.sock)
        connection.phase = Phase.PAUSED
        self._paused.append(connection)
        self._resume_paused()  # no drainer yet: the closest to complete goes on

    def _set_idle(self, connection: Connection) -> None:
        connection.phase = Phase.IDLE
        connection.last_active = time.monotonic()
        connection.deadline = connection.last_active + self.limits.idle_timeout

    def _hold(self, message: Message, delta: int) -> None:
        message.held += delta
        with self._lock:
            self._in_flight += delta

    # ------------------------------------------------------------------------------------ deadlines

    def _expire(self, now: float) -> None:
        if self._accept_resumes and now >= self._accept_resumes:
            self._accept_resumes = 0.0
            self._selector.register(self.listener, _READ, "accept")
        expired = [
            c
            for c in list(self.connections.values())
            if c.phase in (Phase.HANDSHAKE, Phase.IDLE, Phase.READING, Phase.PAUSED) and c.deadline <= now
        ]
        for connection in expired:
            self._close(connection)

    def _close_oldest_idle(self) -> bool:
        idle = [c for c in self.connections.values() if c.phase in (Phase.IDLE, Phase.HANDSHAKE)]
        if not idle:
            return False
        self._close(min(idle, key=lambda c: (c.phase is Phase.IDLE, c.last_active)))
        return True

    def close_idle(self) -> None:
        """Close every connection that waits between requests (loop thread only)."""
        for connection in [c for c in self.connections.values() if c.phase is Phase.IDLE]:
            self._close(connection)

    def _close(self, connection: Connection) -> None:
        sock = connection.sock
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(sock)
        with contextlib.suppress(ValueError):
            self._paused.remove(connection)
        fileno = sock.fileno()
        if fileno >= 0:
            self.connections.pop(fileno, None)
        for message in (connection.parser.current, *connection.parser.completed):
            if message is not None:
                message.body.clear()
                self._hold(message, -message.held)
        connection.phase = Phase.CLOSED
        if self._drainer is connection:
            self._drainer = None
            self._resume_paused()
        with contextlib.suppress(OSError):
            sock.close()

    def _shutdown(self, pool: ThreadPoolExecutor) -> None:
        """Stop accepting, close idle and unfinished connections, let busy ones finish their answer."""
        self._stopping = True
        with contextlib.suppress(KeyError, ValueError):
            self._selector.unregister(self.listener)
        for connection in list(self.connections.values()):
            if connection.phase is not Phase.BUSY:
                self._close(connection)
        pool.shutdown(wait=True)
        self._drain_wakes()
        for connection in list(self.connections.values()):
            self._close(connection)
        self._selector.close()
        self._wake_reader.close()
        self._wake_writer.close()
