"""An exclusive advisory lock on a file, held for a `with` block, shared by every process of the user.

The lock file is never removed: removing it would let a late-comer lock a new inode while an earlier holder
still holds the old one.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold an exclusive `flock` on `path` (created, with its directory, when missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


__all__ = ["locked"]
