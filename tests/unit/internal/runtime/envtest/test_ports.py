"""Free ports with a short, shared reservation; expired reservations do not pile up on disk."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ballast.runtime.envtest.errors import PortInUseError
from ballast.runtime.envtest.ports import RESERVATION_SECONDS, ensure_free, suggest_port


@pytest.fixture(autouse=True)
def isolated_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))


def test_suggested_ports_are_free_and_not_handed_out_twice() -> None:
    ports = [suggest_port() for _ in range(20)]
    assert len(set(ports)) == 20
    for port in ports:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))


def test_an_occupied_port_is_reported_with_its_number_and_purpose() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(
            PortInUseError, match=rf"kube-apiserver --secure-port: port {port} on 127.0.0.1 is already in use"
        ):
            ensure_free("127.0.0.1", port, "kube-apiserver --secure-port")


def test_expired_reservations_are_removed_and_live_ones_kept(tmp_path: Path) -> None:
    directory = tmp_path / "ballast" / "envtest" / "ports"
    directory.mkdir(parents=True)
    old = time.time() - RESERVATION_SECONDS - 1
    for port in range(40000, 40050):
        marker = directory / f"127.0.0.1-{port}"
        marker.touch()
        os.utime(marker, (old, old))
    (directory / "127.0.0.1-40100").touch()  # reserved a moment ago by another test process

    port = suggest_port()

    assert sorted(path.name for path in directory.iterdir()) == sorted(["127.0.0.1-40100", f"127.0.0.1-{port}"])


SUGGESTER = """
import sys
from ballast.runtime.envtest.ports import suggest_port
print(" ".join(str(suggest_port()) for _ in range(int(sys.argv[1]))), flush=True)
"""


def test_processes_suggesting_at_once_never_get_the_same_port(tmp_path: Path) -> None:
    """Four processes (as pytest-xdist workers starting their control planes) draw disjoint ports."""
    children = [
        subprocess.Popen(
            [sys.executable, "-c", SUGGESTER, "25"],
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "XDG_CACHE_HOME": str(tmp_path)},
        )
        for _ in range(4)
    ]
    ports = [int(port) for child in children for port in child.communicate(timeout=60)[0].split()]
    assert all(child.returncode == 0 for child in children)
    assert len(ports) == len(set(ports)) == 100
    assert (tmp_path / "ballast" / "envtest" / "ports.lock").is_file()
