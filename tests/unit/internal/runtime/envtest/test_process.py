from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ballast.runtime.envtest.errors import ProcessStartError
from ballast.runtime.envtest.process import ControlPlaneProcess


def _script(path: Path, body: str, mode: int = 0o755) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(mode)
    return path


def test_a_binary_that_exits_early_is_reported_with_its_last_output(tmp_path: Path) -> None:
    binary = _script(tmp_path / "kube-apiserver", "echo starting\necho 'E: boom, no etcd' >&2\nexit 3\n")
    process = ControlPlaneProcess("kube-apiserver", [str(binary)], tmp_path / "out.log")
    process.start()
    with pytest.raises(ProcessStartError) as caught:
        process.wait_ready(lambda: False, timeout=10)
    message = str(caught.value)
    assert "kube-apiserver" in message
    assert str(binary) in message
    assert "exited with code 3" in message
    assert "E: boom, no etcd" in message
    process.stop()


def test_a_binary_that_never_gets_ready_times_out_with_its_output(tmp_path: Path) -> None:
    binary = _script(tmp_path / "etcd", "echo waiting forever\nexec sleep 60\n")
    process = ControlPlaneProcess("etcd", [str(binary)], tmp_path / "out.log")
    process.start()
    with pytest.raises(ProcessStartError, match=r"(?s)timed out after 0.3s waiting for etcd.*waiting forever"):
        process.wait_ready(lambda: False, timeout=0.3)
    pid = process.pid
    process.stop(timeout=5)
    assert pid is not None
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        (lambda p: None, "does not exist"),
        (lambda p: _script(p, "exit 0\n", mode=0o644), "is not executable"),
        (lambda p: (p.write_bytes(b"\x7fELF\x02garbage"), p.chmod(0o755)), "cannot run"),
    ],
    ids=["missing", "not-executable", "not-a-binary"],
)
def test_broken_binaries_are_named(tmp_path: Path, setup: object, expected: str) -> None:
    binary = tmp_path / "kube-apiserver"
    setup(binary)  # type: ignore[operator]
    process = ControlPlaneProcess("kube-apiserver", [str(binary)], tmp_path / "out.log")
    with pytest.raises(ProcessStartError, match=expected):
        process.start()


def test_children_and_temp_dirs_do_not_outlive_a_killed_parent(tmp_path: Path) -> None:
    """The parent is SIGKILLed: the kernel kills its child, the reaper removes the directory."""
    work = tmp_path / "work"
    program = textwrap.dedent(f"""
        import pathlib, sys, time
        from ballast.runtime.envtest.process import ControlPlaneProcess, Reaper
        reaper = Reaper()
        work = pathlib.Path({str(work)!r}); work.mkdir()
        reaper.own_dir(work)
        child = ControlPlaneProcess("sleeper", ["/bin/sleep", "600"], work / "log", reaper)
        child.start()
        print(child.pid, flush=True)
        time.sleep(600)
    """)
    parent = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child_pid = int(parent.stdout.readline())
    assert work.is_dir()
    os.kill(child_pid, 0)  # alive while the parent lives
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (work.exists() or _alive(child_pid)):
        time.sleep(0.05)
    assert not _alive(child_pid)
    assert not work.exists()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie not yet reaped by init counts as gone.
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(")")[-1].split()[0] != "Z"
