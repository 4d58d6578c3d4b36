"""Watchdog that cleans up after a test process that died without cleaning up itself.

Run as a script (stdlib only, so it starts fast and never imports the project). The parent keeps the write
end of our stdin and tells us what it owns, one line at a time:

    pid <n>      a process group leader to kill if the parent dies
    dir <path>   a directory to remove if the parent dies
    done <item>  the parent released it itself (`done pid <n>` / `done dir <path>`)

When stdin reaches end of file — the parent exited, cleanly or by SIGKILL — every remaining process group
gets SIGTERM, then SIGKILL after a grace period, and every remaining directory is removed.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import time

GRACE_SECONDS = 5.0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _kill_group(pid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)


def main() -> None:
    pids: set[int] = set()
    dirs: set[str] = set()
    for line in sys.stdin:
        kind, _, value = line.rstrip("\n").partition(" ")
        if kind == "pid":
            pids.add(int(value))
        elif kind == "dir":
            dirs.add(value)
        elif kind == "done":
            sub, _, item = value.partition(" ")
            if sub == "pid":
                pids.discard(int(item))
            else:
                dirs.discard(item)
    for pid in pids:
        _kill_group(pid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_SECONDS
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in pids:
        _kill_group(pid, signal.SIGKILL)
    for directory in dirs:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    main()

__all__ = [
    "GRACE_SECONDS",
    "main",
]
