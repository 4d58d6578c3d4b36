"""What every benchmark shares: the machine it reports, a free loopback port, a throw-away redis-server.

The benchmarks run as scripts (`python benchmarks/<name>.py`), so this folder is on `sys.path` and they import
it as `machine`.
"""

from __future__ import annotations

import os
import platform
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import redis


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@contextmanager
def redis_server() -> Iterator[str]:
    """A throw-away redis-server without persistence, yielding its URL."""
    binary = os.environ.get("BALLAST_REDIS_SERVER") or shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server not found (Debian package redis-server, or BALLAST_REDIS_SERVER)")
    port = free_port()
    with tempfile.TemporaryDirectory() as work:
        argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", work, "--save", "", "--appendonly", "no"]
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        client = redis.Redis(port=port)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.02)
        client.close()
        try:
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait(10)
