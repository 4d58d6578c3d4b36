"""A fast uploader gets its turn and no more (internal/runtime/_httpconn.py, "Fairness"): one event reads at most
`READS_PER_TURN` chunks of a connection, the rest is read right after the next select — so the other connections'
events are served in between, and bytes already received (or already decrypted by TLS, which would not wake the
selector) are never stranded."""

from __future__ import annotations

import socket
import ssl
import time
from concurrent.futures import ThreadPoolExecutor
from typing import cast

from ballast.runtime._httpconn import READS_PER_TURN, Connection, ConnectionLoop, Limits, Message, Phase
from ballast.runtime.envtest.wait import poll_until


class Received:
    """A connection's socket with `data` already received: `recv` hands it out, then would block."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.reads = 0

    def recv(self, size: int) -> bytes:
        if not self.data:
            raise BlockingIOError
        self.reads += 1
        chunk, self.data = self.data[:size], self.data[size:]
        return chunk

    def fileno(self) -> int:
        return -1


def _request(body_bytes: int) -> bytes:
    head = (
        f"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {body_bytes}\r\n\r\n"
    )
    return head.encode() + b"x" * body_bytes


def test_a_connection_with_more_to_read_than_one_turn_is_read_again_after_the_next_select() -> None:
    answered: list[int] = []

    def handle(connection: Connection, message: Message) -> bool:
        answered.append(message.size)
        return False

    loop = ConnectionLoop(socket.socket(), ssl.create_default_context, handle, Limits(), lambda: 0)
    loop._pool = ThreadPoolExecutor(1)
    body = 2 * 1024 * 1024  # 32 chunks: two turns and a bit
    received = Received(_request(body))
    connection = Connection(cast(ssl.SSLSocket, received), loop._new_parser(), 0, time.monotonic() + 10)
    connection.phase = Phase.IDLE

    loop._read(connection)  # the event: one turn
    assert received.reads == READS_PER_TURN
    assert connection.phase is Phase.READING
    assert loop.carried() == [connection]

    loop._read_carried()  # right after the next select, whether or not the socket signals
    assert received.reads == 2 * READS_PER_TURN
    loop._read_carried()
    poll_until(lambda: answered == [body], timeout=5, what="the request answered once complete")
    assert loop.carried() == []
    loop._pool.shutdown()


def test_a_connection_read_by_an_event_does_not_get_a_second_turn_from_the_carry() -> None:
    loop = ConnectionLoop(socket.socket(), ssl.create_default_context, lambda c, m: False, Limits(), lambda: 0)
    received = Received(_request(4 * 1024 * 1024))
    connection = Connection(cast(ssl.SSLSocket, received), loop._new_parser(), 0, time.monotonic() + 10)
    connection.phase = Phase.IDLE

    loop._read(connection)
    loop._read(connection)  # its socket signalled again in the next select: that read is its turn
    assert received.reads == 2 * READS_PER_TURN
    assert loop.carried() == [connection]  # once, not twice
