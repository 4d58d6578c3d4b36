"""Free ports for control-plane processes, with envtest's short reservation against reuse races.

A reservation is a marker file `<host>-<port>` under `$XDG_CACHE_HOME/ballast/envtest/ports/` (shared by every
test process of the user); each `suggest_port` first removes the markers that have expired, so the directory
holds only the last `RESERVATION_SECONDS` of reservations. Sweeping and reserving happen under one file lock
(`ports.lock` beside the directory), so that an expired marker one process removes cannot be a fresh marker
another process has just written.
"""

from __future__ import annotations

import errno
import os
import socket
import time
from pathlib import Path

from . import _filelock
from .errors import PortInUseError

# A port handed out recently is not handed out again for this long, even by another test process:
# between our probe closing it and the child binding it, someone else could take it.
RESERVATION_SECONDS = 120


def _reservation_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    directory = base / "ballast" / "envtest" / "ports"
    directory.mkdir(parents=True, exist_ok=True)
    return directory


def sweep_expired(directory: Path | None = None, *, now: float | None = None) -> int:
    """Remove reservation markers older than RESERVATION_SECONDS; returns how many went. Markers another process
    removes meanwhile, or files that are not markers' (subdirectories), are skipped."""
    directory = directory or _reservation_dir()
    now = time.time() if now is None else now
    removed = 0
    for marker in directory.iterdir():
        try:
            if now - marker.stat().st_mtime >= RESERVATION_SECONDS and marker.is_file():
                marker.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    return removed


def _reserve(host: str, port: int) -> bool:
    """Record `port` as taken; False when a live reservation already exists."""
    marker = _reservation_dir() / f"{host}-{port}"
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        try:
            if time.time() - marker.stat().st_mtime < RESERVATION_SECONDS:
                return False
            marker.unlink()
        except FileNotFoundError:
            pass
        return _reserve(host, port)
    os.close(fd)
    return True


def _lock_path() -> Path:
    return _reservation_dir().with_name("ports.lock")


def suggest_port(host: str = "127.0.0.1", attempts: int = 50) -> int:
    """Return a port on `host` that is free now and was not handed out in the last two minutes."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with _filelock.locked(_lock_path()):
        sweep_expired()
    for _ in range(attempts):
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((host, 0))
            port: int = probe.getsockname()[1]
        with _filelock.locked(_lock_path()):
            reserved = _reserve(host, port)
        if reserved:
            return port
    raise PortInUseError(f"no free port found on {host} after {attempts} attempts")


def ensure_free(host: str, port: int, what: str) -> None:
    """Raise PortInUseError naming `what` when `host:port` cannot be bound."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise PortInUseError(
                    f"{what}: port {port} on {host} is already in use by another process; "
                    "pick another port or leave it unset to get a free one"
                ) from exc
            raise PortInUseError(f"{what}: cannot bind {host}:{port}: {exc.strerror}") from exc


__all__ = [
    "RESERVATION_SECONDS",
    "ensure_free",
    "suggest_port",
    "sweep_expired",
]
