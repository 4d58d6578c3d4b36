"""A real `redis-server` for tests: free loopback port, temporary directory, append-only file.

Under CI=true a missing redis-server fails the test; elsewhere it skips with the reason. `BALLAST_REDIS_SERVER`
points at another binary (e.g. valkey-server).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import redis

from ballast.runtime.envtest.ports import suggest_port
from ballast.runtime.envtest.pytest_plugin import unavailable

READY_TIMEOUT = 15.0
_READY_LINE = re.compile(rb"Ready to accept connections|Sentinel ID is")
_PR_SET_PDEATHSIG = 1


def redis_server_binary() -> str | None:
    """The redis-server to run: `BALLAST_REDIS_SERVER` (a path or a name on PATH), else `redis-server` on PATH."""
    return shutil.which(os.environ.get("BALLAST_REDIS_SERVER") or "redis-server")


def _die_with_parent() -> None:
    # Runs in the child before exec: the kernel kills redis-server if the test process dies.
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class TLSFiles:
    """Server certificate and key, and the CA that clients trust."""

    cert: Path
    key: Path
    ca: Path


class RedisServer:
    """One redis-server process on 127.0.0.1: start, pause (SIGSTOP), resume, kill and restart on the same port
    and directory (the append-only file, fsync on every write, brings committed data back)."""

    def __init__(
        self,
        binary: str,
        directory: Path,
        *,
        username: str | None = None,
        password: str | None = None,
        tls: TLSFiles | None = None,
        extra: tuple[str, ...] = (),
        port: int | None = None,
        config_file: Path | None = None,
    ) -> None:
        self.binary = binary
        self.extra = extra
        self.config_file = config_file  # read first; the flags below override what it sets
        self.directory = directory
        self.username = username
        self.password = password
        self.tls = tls
        self.port = port or suggest_port()
        self.log = directory / "redis.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The URL a store opens, credentials and TLS options included."""
        auth = ""
        if self.password is not None:
            auth = f"{self.username or ''}:{self.password}@"
        if self.tls is not None:
            return f"rediss://{auth}localhost:{self.port}/0?ssl_ca_certs={self.tls.ca}"
        return f"redis://{auth}127.0.0.1:{self.port}/0"

    def argv(self) -> list[str]:
        argv = [
            self.binary,
            *([str(self.config_file)] if self.config_file else []),
            "--bind", "127.0.0.1",
            "--dir", str(self.directory),
            "--logfile", str(self.log),
            "--save", "",
            "--appendonly", "yes",
            "--appendfsync", "always",
            "--protected-mode", "no",
            "--daemonize", "no",
        ]  # fmt: skip
        if self.tls is None:
            argv += ["--port", str(self.port)]
        else:
            argv += ["--port", "0", "--tls-port", str(self.port), "--tls-auth-clients", "no"]
            argv += ["--tls-cert-file", str(self.tls.cert), "--tls-key-file", str(self.tls.key)]
            argv += ["--tls-ca-cert-file", str(self.tls.ca)]
        if self.password is not None and self.username:
            argv += [
                "--user",
                "default",
                "off",
                "--user",
                self.username,
                "on",
                f">{self.password}",
                "~*",
                "&*",
                "+@all",
            ]
        elif self.password is not None:
            argv += ["--requirepass", self.password]
        return argv + list(self.extra)

    def start(self) -> None:
        """Start (or restart) the server and return when it accepts connections."""
        offset = self.log.stat().st_size if self.log.exists() else 0
        self._process = subprocess.Popen(
            self.argv(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - only prctl, no locks taken
        )
        deadline = time.monotonic() + READY_TIMEOUT
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self._process.returncode}: {self._log_tail()}")
            if self.log.exists() and _READY_LINE.search(self.log.read_bytes()[offset:]):
                return
            time.sleep(0.02)
        raise RuntimeError(f"redis-server not ready after {READY_TIMEOUT}s: {self._log_tail()}")

    def _log_tail(self) -> str:
        return self.log.read_text(errors="replace")[-2000:] if self.log.exists() else "(no log)"

    @property
    def pid(self) -> int:
        assert self._process is not None, "redis-server is not running"
        return self._process.pid

    def pause(self) -> None:
        """SIGSTOP: connections are accepted by the kernel, nothing is answered."""
        os.kill(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.pid, signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL, even when paused: whatever it had not executed is lost, as in a crash."""
        if self._process is not None and self._process.poll() is None:
            self._process.kill()
            self._process.wait(10)
        self._process = None

    def stop(self) -> None:
        if self._process is None or self._process.poll() is not None:
            self._process = None
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self._process.pid, signal.SIGCONT)
        self._process.terminate()
        try:
            self._process.wait(10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(10)
        self._process = None

    def client(self) -> redis.Redis:
        """A plain client for poking at keys directly (the Go operator's view)."""
        return redis.Redis.from_url(self.url, decode_responses=True, socket_timeout=5)


def redis_server_or_skip() -> str:
    binary = redis_server_binary()
    if binary is None:
        wanted = os.environ.get("BALLAST_REDIS_SERVER") or "redis-server"
        unavailable(f"{wanted} not found (install the Debian package redis-server, or set BALLAST_REDIS_SERVER)")
    return binary
