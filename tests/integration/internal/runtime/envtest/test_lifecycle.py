"""Start-up failures are reported clearly, and nothing outlives the environment or a killed test process."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import orjson
import pytest

from ballast.runtime.envtest import (
    Assets,
    AssetsNotFoundError,
    Environment,
    EnvtestError,
    ManifestError,
    PortInUseError,
    ProcessStartError,
)


def _running(binary_prefix: Path) -> list[int]:
    """Pids of live processes whose executable path starts with `binary_prefix`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv0 = (entry / "cmdline").read_bytes().split(b"\0")[0].decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError, IndexError):
            continue
        if argv0.startswith(str(binary_prefix)) and state != "Z":
            found.append(int(entry.name))
    return found


def _wait_gone(pids: list[int], directory: Path, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = [
            pid
            for pid in pids
            if Path(f"/proc/{pid}").exists()
            and Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        ]
        if not alive and not directory.exists():
            return
        time.sleep(0.05)
    raise AssertionError(f"left behind: pids {alive}, directory exists: {directory.exists()}")


@pytest.fixture
def private_assets(envtest: Environment, tmp_path: Path) -> Assets:
    """The real binaries behind a directory of our own, so processes can be told apart from other tests'."""
    directory = tmp_path / "assets"
    directory.mkdir()
    for name in ("etcd", "kube-apiserver"):
        (directory / name).symlink_to(envtest.assets.binary(name))
    return Assets(directory, "test")


def test_stop_leaves_no_process_and_no_directory(private_assets: Assets, envtest: Environment) -> None:
    env = Environment(assets=private_assets, network_mode=envtest.network_mode)
    env.start()
    pids, work_dir = env.pids, env.work_dir
    assert len(pids) == 2
    assert work_dir.is_dir()
    env.stop()
    _wait_gone(pids, work_dir, timeout=1)


def test_a_killed_test_process_leaves_nothing_behind(private_assets: Assets, envtest: Environment) -> None:
    program = textwrap.dedent(f"""
        import orjson, time
        from ballast.runtime.envtest import Assets, Environment
        from pathlib import Path
        env = Environment(assets=Assets(Path({str(private_assets.directory)!r}), "test"),
                          network_mode={envtest.network_mode!r})
        env.start()
        print(orjson.dumps({{"pids": env.pids, "dir": str(env.work_dir)}}).decode(), flush=True)
        time.sleep(600)
    """)
    child = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    started = orjson.loads(child.stdout.readline())
    assert len(started["pids"]) == 2
    child.send_signal(signal.SIGKILL)
    child.wait()
    _wait_gone(started["pids"], Path(started["dir"]))
    assert _running(private_assets.directory) == []


def test_an_occupied_port_is_refused_before_anything_starts(private_assets: Assets) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        with pytest.raises(PortInUseError, match=f"port {port} on 127.0.0.1 is already in use"):
            Environment(assets=private_assets, apiserver_port=port).start()
        with pytest.raises(PortInUseError, match="etcd client URL"):
            Environment(assets=private_assets, etcd_port=port).start()
    assert _running(private_assets.directory) == []


def test_a_broken_apiserver_binary_is_named_with_its_output(private_assets: Assets) -> None:
    broken = private_assets.directory / "kube-apiserver"
    broken.unlink()
    broken.write_text("#!/bin/sh\necho 'Error: unknown flag: --endpoint-reconciler-type' >&2\nexit 1\n")
    broken.chmod(0o755)
    env = Environment(assets=private_assets)
    with pytest.raises(ProcessStartError) as caught:
        env.start()
    message = str(caught.value)
    assert f"kube-apiserver ({broken}) exited with code 1" in message
    assert "Error: unknown flag: --endpoint-reconciler-type" in message
    assert _running(private_assets.directory) == []  # etcd was stopped again


def test_a_crd_that_does_not_parse_fails_start_and_cleans_up(private_assets: Assets, tmp_path: Path) -> None:
    bad = tmp_path / "crds.yaml"
    bad.write_text("kind: CustomResourceDefinition\n\tbad: tab\n")
    env = Environment(assets=private_assets, crd_paths=[bad])
    with pytest.raises(ManifestError, match=f"{bad} does not parse as YAML"):
        env.start()
    assert _running(private_assets.directory) == []


def test_a_missing_binary_is_named_before_anything_starts(tmp_path: Path) -> None:
    empty = Assets(tmp_path, "an empty directory")
    with pytest.raises(AssetsNotFoundError, match=rf"etcd not found at {tmp_path}/etcd \(from an empty directory\)"):
        Environment(assets=empty).start()


def test_unknown_components_are_refused() -> None:
    with pytest.raises(EnvtestError, match=r"unknown components \['kubelet'\]"):
        Environment(components=["kubelet"])


def test_environment_reports_its_start_time(private_assets: Assets, envtest: Environment) -> None:
    with Environment(assets=private_assets, network_mode=envtest.network_mode) as env:
        # etcd's start, one kube-apiserver attempt and the namespace poll, each bounded by its own timeout.
        assert 0 < env.started_seconds <= 2 * env.start_timeout + 5
        assert os.access(env.kubeconfig_path, os.R_OK)
