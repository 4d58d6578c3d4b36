"""`ballast-envtest run` notices a control-plane process that died, instead of waiting for Ctrl-C in vain."""

from __future__ import annotations

import threading
from pathlib import Path

from ballast.runtime.envtest.cli import first_exited
from ballast.runtime.envtest.process import ControlPlaneProcess


def _process(tmp_path: Path, name: str, body: str) -> ControlPlaneProcess:
    script = tmp_path / name
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    process = ControlPlaneProcess(name, [str(script)], tmp_path / f"{name}.log")
    process.start()
    return process


def test_the_process_that_exited_is_named(tmp_path: Path) -> None:
    etcd = _process(tmp_path, "etcd", "exec sleep 60\n")
    apiserver = _process(tmp_path, "kube-apiserver", "echo 'F: etcd went away' >&2\nexit 7\n")
    try:
        dead = first_exited(lambda: (etcd, apiserver), threading.Event(), interval=0.05)
        assert dead is apiserver
        assert dead.exit_code() == 7
        assert "F: etcd went away" in dead.output_tail()
    finally:
        etcd.stop()
        apiserver.stop()


def test_a_stop_request_ends_the_wait_with_nothing_dead(tmp_path: Path) -> None:
    etcd = _process(tmp_path, "etcd", "exec sleep 60\n")
    stopped = threading.Event()
    stopped.set()
    try:
        assert first_exited(lambda: (etcd,), stopped, interval=0.05) is None
        assert etcd.exit_code() is None
    finally:
        etcd.stop()
