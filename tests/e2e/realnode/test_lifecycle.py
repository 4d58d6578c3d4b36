"""The real node leaves the machine as it found it: after a clean stop, and after a run that was killed.

"As found" is read from the machine itself: processes naming the node's directory, mounts under it, cgroups
under the kubelet's cgroup root in every hierarchy, `/run/containerd`, the six sysctls the kubelet sets, and the
test network's interfaces.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ballast.runtime.envtest import MiniCluster, network
from ballast.runtime.envtest.hostguard import (
    CONTAINERD_RUN,
    HostBusyError,
    HostGuard,
    cgroup_trees,
    leftovers,
    read_sysctls,
)
from ballast.runtime.envtest.realnode import LAB
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.figures import record
from tests.e2e.realnode.conftest import start_real_cluster
from tests.e2e.realnode.support import real_pod, wait_running
from tests.e2e.support import create_namespace

SLEEP = ["/bin/sh", "-c", "exec sleep 3600"]


def run_a_pod(cluster: MiniCluster, name: str) -> None:
    namespace = create_namespace(cluster, "real-lifecycle")
    cluster.env.rest.create(
        f"/api/v1/namespaces/{namespace}/pods",
        real_pod(
            name, app=name, mode="measure", image="busybox", command=SLEEP, requests={"cpu": "10m", "memory": "8Mi"}
        ),
    )
    wait_running(cluster, namespace, name)


def host_as_found() -> dict[str, object]:
    return {
        "leftovers": leftovers(LAB),
        "cgroups": cgroup_trees(),
        "sysctls": read_sysctls(),
        "containerd run dir": CONTAINERD_RUN.exists(),
        "interfaces": network.interfaces(),
        "state files": sorted(p.name for p in HostGuard().host_dir.glob("*.json")),
    }


def test_a_stopped_real_node_leaves_nothing_behind_and_kept_the_machines_sysctls_across_restarts() -> None:
    before = host_as_found()
    assert before["leftovers"] == []
    assert before["state files"] == []
    cluster = start_real_cluster(metrics=False)
    try:
        run_a_pod(cluster, "sleeper")
        assert cgroup_trees(), "the kubelet's cgroups exist while it runs"
        # The kubelet changed the six kernel-wide sysctls at its start; they were put back right after it, and
        # again after a restart (which sets them again).
        assert read_sysctls() == before["sysctls"]
        assert cluster.real_node is not None
        cluster.real_node.restart_kubelet()
        assert read_sysctls() == before["sysctls"]
    finally:
        cluster.stop()
    assert host_as_found() == before
    node = cluster.real_node
    assert node is not None
    record("real_node_lifecycle", {
        "containerd_ready_seconds": round(node.timings["containerd"], 1),
        "node_ready_seconds": round(node.timings["ready"], 1),
        "teardown_seconds": round(node.timings["teardown"], 1), "leftovers": len(leftovers(LAB)),
        "sysctls_changed": sum(1 for k, v in read_sysctls().items() if before["sysctls"][k] != v),
    })  # fmt: skip


def test_a_run_after_a_killed_one_starts_clean(tmp_path: Path) -> None:
    before = host_as_found()
    # Another process starts a real node, runs a pod, sets the sysctls as a kubelet would, and is SIGKILLed:
    # its shims and containers survive it, and so do its mounts, its cgroups and the kubelet's sysctl values.
    victim = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(Path(__file__).parents[3])!r})
        from tests.e2e.realnode.conftest import start_real_cluster
        from tests.e2e.realnode.test_lifecycle import run_a_pod
        from ballast.runtime.envtest.hostguard import write_sysctls
        cluster = start_real_cluster(metrics=False)
        run_a_pod(cluster, "orphan")
        write_sysctls({{"kernel.panic": "10", "vm.overcommit_memory": "1"}})
        print("RUNNING", flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    result = subprocess.run([sys.executable, "-c", victim], capture_output=True, text=True, timeout=240, check=False)
    assert "RUNNING" in result.stdout, result.stderr[-3000:]
    assert result.returncode == -signal.SIGKILL
    assert HostGuard().state_path.exists()
    assert cgroup_trees(), "the killed run's containers are still in their cgroups"
    assert read_sysctls() != before["sysctls"]

    cluster = start_real_cluster(metrics=False)  # cleans up after the killed run first
    try:
        assert read_sysctls() == before["sysctls"]
        run_a_pod(cluster, "survivor")
    finally:
        cluster.stop()
    poll_until(lambda: host_as_found() == before, timeout=10, what="the machine as found")


def test_another_run_waits_for_the_machine_lock(tmp_path: Path) -> None:
    guard = HostGuard()
    guard.acquire(tmp_path / "lab", wait=0)
    try:
        with pytest.raises(HostBusyError, match="one per machine"):
            HostGuard().acquire(tmp_path / "other", wait=0)
    finally:
        guard.release()
    assert not guard.state_path.exists()
    assert os.path.exists(guard.lock_path)
