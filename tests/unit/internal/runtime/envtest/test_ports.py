from __future__ import annotations

import socket
from pathlib import Path

import pytest

from ballast.internal.runtime.envtest.errors import PortInUseError
from ballast.internal.runtime.envtest.ports import ensure_free, suggest_port


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
