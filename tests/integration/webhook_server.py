"""A webhook server running in a thread for the length of a block, for tests that register handlers on it and
install configurations pointing at it."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

from ballast.runtime import WebhookServer


@contextlib.contextmanager
def serving(server: WebhookServer) -> Iterator[WebhookServer]:
    """Start `server` (handlers already registered), wait until it listens, stop it when the block ends."""
    stop = threading.Event()
    thread = threading.Thread(target=server.start, args=(stop,), daemon=True)
    thread.start()
    assert server.wait_listening(10)
    try:
        yield server
    finally:
        stop.set()
        thread.join(15)


def serve(server: WebhookServer) -> Callable[[], None]:
    """`serving(server)` for a fixture that stops it later: returns the function that stops it."""
    stack = contextlib.ExitStack()
    stack.enter_context(serving(server))
    return stack.close
