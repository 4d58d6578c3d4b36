"""Objects a test creates, deleted when the block ends whatever happened (already-gone ones are fine)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ballast.runtime import APIStatusError, Client


@contextlib.contextmanager
def deleted_afterwards(client: Client) -> Iterator[list[Any]]:
    """Yield a list; every object appended to it is deleted through `client` when the block ends."""
    created: list[Any] = []
    try:
        yield created
    finally:
        for obj in created:
            with contextlib.suppress(APIStatusError):
                client.delete(obj)
