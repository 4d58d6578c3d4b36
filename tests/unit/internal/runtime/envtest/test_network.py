from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from ballast.runtime.envtest import network
from ballast.runtime.envtest.backends import json_handler, serve_backend
from ballast.runtime.envtest.certs import TinyCA
from ballast.runtime.envtest.errors import EnvtestError, NetworkError


def test_mode_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(network.ENV_VAR, raising=False)
    assert network.mode_from_environment() == "loopback"
    monkeypatch.setenv(network.ENV_VAR, "private")
    assert network.mode_from_environment() == "private"
    monkeypatch.setenv(network.ENV_VAR, "bridge")
    with pytest.raises(NetworkError, match="expected 'loopback' or 'private'"):
        network.mode_from_environment()


def test_addresses_are_distinct_test_net_2_hosts() -> None:
    addresses = {network.allocate_address() for _ in range(5)}
    assert len(addresses) == 5
    assert all(address.startswith("198.51.100.") for address in addresses)


def test_a_namespace_that_cannot_be_created_is_reported_as_such(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "unshare"
    fake.write_text("#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    monkeypatch.setattr(network, "in_private_network", lambda: False)
    with pytest.raises(
        NetworkError, match=r"cannot create the private test network namespace.*Operation not permitted"
    ):
        network.run_in_private_network(["true"])


def test_missing_unshare_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(network, "in_private_network", lambda: False)
    with pytest.raises(NetworkError, match=r"`unshare` .* is not installed"):
        network.run_in_private_network(["true"])


def test_netns_runs_the_command_in_an_isolated_namespace() -> None:
    """The command sees only `lo`, TEST-NET-2 binds, and the mode variable is set; exit codes pass through."""
    probe = (
        "import os, sys; from ballast.runtime.envtest import network as n; "
        "print(n.interfaces(), n.in_private_network(), os.environ[n.ENV_VAR]); sys.exit(7)"
    )
    result = subprocess.run(
        [sys.executable, "-m", "ballast.runtime.envtest.cli", "netns", "--", sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 7, result.stderr
    assert result.stdout.strip() == "['lo'] True private"


def test_private_mode_is_required_exactly_outside_the_namespace() -> None:
    if network.in_private_network():
        network.require_private_network()
    else:
        with pytest.raises(NetworkError, match="ballast-envtest netns"):
            network.require_private_network()


def test_test_net_backends_bind_only_inside_the_private_network(tmp_path: Path) -> None:
    """Outside the namespace a TEST-NET-2 backend fails at bind time, before anything is registered."""
    env = SimpleNamespace(work_dir=tmp_path, ca=TinyCA())
    handler = json_handler({"/": {}})
    if network.in_private_network():
        serve_backend(env, handler, host="198.51.100.9").stop()  # type: ignore[arg-type]
    else:
        expected = r"cannot serve a test backend on 198\.51\.100\.9.*ballast-envtest netns"
        with pytest.raises(EnvtestError, match=expected):
            serve_backend(env, handler, host="198.51.100.9")  # type: ignore[arg-type]
