"""The file lock excludes other processes while it is held, and only then."""

from __future__ import annotations

import fcntl
import subprocess
import sys
from pathlib import Path

import pytest

from ballast.runtime.envtest import _filelock

HOLDER = """
import sys
from pathlib import Path
from ballast.runtime.envtest import _filelock
with _filelock.locked(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.read()
"""


def _try_lock(path: Path) -> bool:
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        fcntl.flock(handle, fcntl.LOCK_UN)
        return True


def test_another_process_holding_the_lock_excludes_this_one_until_it_lets_go(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "state.lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None
    assert holder.stdin is not None
    try:
        assert holder.stdout.readline().strip() == "held"
        assert not _try_lock(path)
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    assert _try_lock(path)


def test_the_lock_is_released_when_the_block_raises(tmp_path: Path) -> None:
    path = tmp_path / "state.lock"
    with pytest.raises(RuntimeError), _filelock.locked(path):
        raise RuntimeError("boom")
    assert _try_lock(path)
    assert path.exists()  # kept: removing it would let a late-comer lock another inode
