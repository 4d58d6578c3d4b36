"""`make dev` end to end, as a user runs it: the entry point as a process, driven non-interactively.

It starts its own control plane (loopback), the synthetic metrics.k8s.io backend, `ballastd` and the demo
workloads; the profile of a known app becomes Sufficient from the pods of three namespaces, and a pod of that app
in a fourth namespace is admitted with exactly the profile's recommendation. Teardown — after `--exit-after` or
Ctrl-C — leaves no process the demo started and no directory behind.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ballast.internal.dev.demo import recommendations_of
from ballast.internal.dev.scenario import CHECKOUT, COLD_START_POD
from ballast.internal.quantity import parse_quantity
from ballast.runtime.envtest import AssetsNotFoundError, find_assets
from ballast.runtime.envtest.pytest_plugin import unavailable

ANNOTATION = "ballast.tightlinesoftware.com/"


@pytest.fixture(autouse=True)
def control_plane_binaries() -> None:
    try:
        find_assets(build=False)
    except AssetsNotFoundError as exc:
        unavailable(f"no envtest control plane: {exc}")


def process_table() -> dict[int, tuple[int, str, str]]:
    """pid → (parent pid, state, start time in clock ticks) of every process, from /proc."""
    table: dict[int, tuple[int, str, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
        table[int(entry.name)] = (int(fields[1]), fields[0], fields[19])
    return table


def alive(pid: int, started: str) -> bool:
    """Whether the process `pid` that started at `started` still runs (a reused pid or a zombie does not count)."""
    entry = process_table().get(pid)
    return entry is not None and entry[2] == started and entry[1] != "Z"


class DemoRun:
    """`python -m ballast.internal.cmd.dev` as a child; its output lines are queued, its descendants recorded."""

    def __init__(self, tmp_path: Path, *args: str) -> None:
        self.report_path = tmp_path / "report.json"
        argv = [
            sys.executable,
            "-m",
            "ballast.internal.cmd.dev",
            "--non-interactive",
            "--report",
            str(self.report_path),
        ]
        self.process = subprocess.Popen(
            [*argv, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self.descendants: dict[int, str] = {}
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._watch, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def _watch(self) -> None:
        while self.process.poll() is None:
            table = process_table()
            family = {self.process.pid}
            grew = True
            while grew:
                found = {pid for pid, (parent, _, _) in table.items() if parent in family} - family
                grew = bool(found)
                family |= found
            for pid in family - {self.process.pid}:
                self.descendants.setdefault(pid, table[pid][2])
            time.sleep(0.2)

    def wait_for(self, text: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not any(text in line for line in self.lines):
            try:
                line = self._queue.get(timeout=max(deadline - time.monotonic(), 0.01))
            except queue.Empty:
                raise AssertionError(f"no {text!r} within {timeout}s; output:\n" + "\n".join(self.lines)) from None
            if line is None:
                raise AssertionError(f"exited before {text!r}; output:\n" + "\n".join(self.lines))
            self.lines.append(line)

    def finish(self, timeout: float) -> str:
        self.process.wait(timeout)
        while (line := self._queue.get(timeout=10)) is not None:
            self.lines.append(line)
        return "\n".join(self.lines)

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()

    def report(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads(self.report_path.read_text())
        return loaded

    def assert_torn_down(self) -> None:
        report = self.report()
        assert report["stopped"] is True
        assert not Path(report["work_dir"]).exists(), "the control plane's directory (store, logs, certs) is left"
        assert set(report["pids"]) == {"etcd", "kube-apiserver", "ballastd"}
        assert set(report["pids"].values()) <= set(self.descendants), "the demo's processes were watched"
        survivors = {pid for pid, started in self.descendants.items() if alive(pid, started)}
        assert not survivors, f"processes left running: {survivors}"


@pytest.mark.timeout(480)
def test_make_dev_admits_a_cold_start_pod_with_the_recommendation(tmp_path: Path) -> None:
    run = DemoRun(tmp_path, "--exit-after", "cold-start")
    try:
        output = run.finish(timeout=420)
    finally:
        run.kill()
    assert run.process.returncode == 0, output
    report = run.report()
    cold_start = report["cold_start"]
    pod, profile = cold_start["pod"], cold_start["profile"]

    # The profile was learned from the three other namespaces' pods, through the real aggregated API.
    assert profile["metadata"]["name"] == CHECKOUT.profile_name() == "checkout--api--default-a9696153"
    assert profile["status"]["state"] == "Sufficient"
    assert profile["status"]["activeWorkloads"] == 3
    stats = {s["resource"]: s for s in profile["status"]["containers"][0]["usageStats"]}
    assert stats["cpu"]["samples"] >= 5  # the local-testing readiness, not a faster one
    assert stats["cpu"]["source"] == "kubernetes-metrics"

    # A namespace that never ran the app: its first pod gets the recommendation, not its manifest's values.
    assert (pod["metadata"]["namespace"], pod["metadata"]["name"]) == (COLD_START_POD.namespace, "checkout-0")
    recommended = recommendations_of(profile, "api")
    assert set(recommended) == {"cpu", "memory"}
    resources = pod["spec"]["containers"][0]["resources"]
    assert parse_quantity(resources["requests"]["cpu"]) == parse_quantity(recommended["cpu"]["request"])
    assert parse_quantity(resources["requests"]["memory"]) == parse_quantity(recommended["memory"]["request"])
    assert parse_quantity(resources["limits"]["memory"]) == parse_quantity(recommended["memory"]["limit"])
    assert parse_quantity(resources["requests"]["cpu"]) < parse_quantity("500m")  # the manifest asked 500m
    annotations = pod["metadata"]["annotations"]
    assert annotations[ANNOTATION + "applied-cpu-request"] == recommended["cpu"]["request"]
    assert annotations[ANNOTATION + "policy-ref"] == "default"
    assert cold_start["matches"] is True

    # What the user sees: the steps, the kubectl tables.
    for text in ("✓ control plane", "✓ metrics", "✓ ballastd", "✓ profiles", "✓ cold start", "$ kubectl get"):
        assert text in output
    assert "checkout--api--default-a9696153     4" in output  # kubectl's ACTIVEWORKLOADS column

    run.assert_torn_down()


@pytest.mark.timeout(300)
def test_ctrl_c_stops_everything_and_removes_the_directory(tmp_path: Path) -> None:
    run = DemoRun(tmp_path)
    try:
        run.wait_for("✓ workloads", timeout=180)
        run.process.send_signal(signal.SIGINT)
        output = run.finish(timeout=120)
    finally:
        run.kill()
    assert run.process.returncode == 0, output
    assert "stopped; removed" in output
    run.assert_torn_down()
