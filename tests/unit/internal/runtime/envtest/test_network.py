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


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "network.json"
    monkeypatch.setenv(network.STATE_ENV_VAR, str(path))
    return path


def _host(address: str) -> int:
    return int(address.rsplit(".", 1)[1])


def test_addresses_are_distinct_test_net_2_hosts(state: Path) -> None:
    addresses = {network.allocate_address() for _ in range(5)}
    assert len(addresses) == 5
    assert all(address.startswith("198.51.100.") for address in addresses)
    assert state.is_file()


def test_the_state_file_defaults_to_the_ballast_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(network.STATE_ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert network.state_path() == tmp_path / "ballast" / "envtest" / "network.json"


ALLOCATOR = """
import sys
from ballast.runtime.envtest import network
for _ in range(int(sys.argv[1])):
    print(network.allocate_address(), flush=True)
sys.stdin.read()  # hold the leases until the test has seen every process's addresses
"""


def test_processes_sharing_a_namespace_never_get_the_same_address(state: Path) -> None:
    """Four processes drawing at once (as pytest-xdist workers do) get disjoint addresses inside the range."""
    per_process = 15
    children = [
        subprocess.Popen(
            [sys.executable, "-c", ALLOCATOR, str(per_process)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, network.STATE_ENV_VAR: str(state)},
        )
        for _ in range(4)
    ]
    drawn: list[str] = []
    try:
        for child in children:
            assert child.stdout is not None
            drawn += [child.stdout.readline().strip() for _ in range(per_process)]
    finally:
        for child in children:
            assert child.stdin is not None
            child.stdin.close()
            child.wait(timeout=30)
    assert all(child.returncode == 0 for child in children)
    assert len(drawn) == len(set(drawn)) == 4 * per_process
    assert all(network.FIRST_BACKEND_HOST <= _host(a) <= network.LAST_BACKEND_HOST for a in drawn), drawn


def test_the_addresses_of_an_exited_process_are_handed_out_again_and_live_ones_are_not(
    state: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    last = network.FIRST_BACKEND_HOST + 3  # a range of four addresses
    monkeypatch.setattr(network, "LAST_BACKEND_HOST", last)
    exited = subprocess.run(
        [sys.executable, "-c", ALLOCATOR, "2"], input="", capture_output=True, text=True, check=True,
        env={**os.environ, network.STATE_ENV_VAR: str(state)},
    )  # fmt: skip
    theirs = exited.stdout.split()
    assert [_host(a) for a in theirs] == [network.FIRST_BACKEND_HOST, network.FIRST_BACKEND_HOST + 1]
    mine = [network.allocate_address() for _ in range(4)]
    assert set(theirs) <= set(mine)
    assert sorted(_host(a) for a in mine) == list(range(network.FIRST_BACKEND_HOST, last + 1))
    with pytest.raises(NetworkError, match=r"all 4 backend addresses .* are leased to live processes"):
        network.allocate_address()


def test_a_corrupt_state_file_starts_afresh(state: Path) -> None:
    state.write_text('{"namespaces": {"net:[1]": ')
    assert _host(network.allocate_address()) == network.FIRST_BACKEND_HOST


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
