"""The host guard's bookkeeping, on a scratch directory: one holder of the lock at a time, the sysctls' originals
kept until a teardown restored them, and what a killed run left cleaned by the next."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ballast.runtime.envtest import EnvtestError, hostguard
from ballast.runtime.envtest.hostguard import HostBusyError, HostGuard, mounts_under, remove_cgroup_tree


@pytest.fixture
def sysctls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The six sysctls as files under a scratch /proc/sys, holding the machine's values."""
    root = tmp_path / "proc-sys"
    for name, value in zip(hostguard.KUBELET_SYSCTLS, ("0", "0", "1", "0", "1000000", "25000000"), strict=True):
        path = root / name.replace(".", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")
    monkeypatch.setattr(hostguard, "_sysctl_path", lambda name: root / name.replace(".", "/"))
    monkeypatch.setattr(hostguard, "cgroup_hierarchies", list)  # no cgroup is touched here
    monkeypatch.setattr(hostguard, "CONTAINERD_RUN", tmp_path / "run-containerd")  # nor the machine's /run
    monkeypatch.setattr(hostguard, "processes_naming", lambda needle: [])  # nor a real node running meanwhile
    return root


def kubelet_start(root: Path) -> None:
    (root / "vm" / "overcommit_memory").write_text("1\n")
    (root / "kernel" / "panic").write_text("10\n")


def test_the_originals_survive_a_killed_run_and_are_restored_by_the_next(tmp_path: Path, sysctls: Path) -> None:
    original = hostguard.read_sysctls()
    first = HostGuard(tmp_path / "host")
    first.acquire(tmp_path / "lab")
    first.save_sysctls()
    kubelet_start(sysctls)
    assert set(first.changed_sysctls()) == {"vm.overcommit_memory", "kernel.panic"}
    first._unlock()  # killed: the kernel drops the lock, the state files stay

    second = HostGuard(tmp_path / "host")
    second.acquire(tmp_path / "lab")  # finds the state and the originals: puts them back first
    assert hostguard.read_sysctls() == original
    second.save_sysctls()  # must not take the (already restored) values as new originals... nor the kubelet's
    kubelet_start(sysctls)
    second.restore_sysctls()
    assert hostguard.read_sysctls() == original
    second.release()
    assert not second.sysctls_path.exists()
    assert not second.state_path.exists()


def test_a_teardown_that_finds_a_sysctl_changed_says_which(tmp_path: Path, sysctls: Path) -> None:
    guard = HostGuard(tmp_path / "host")
    guard.acquire(tmp_path / "lab")
    guard.save_sysctls()
    kubelet_start(sysctls)
    guard.restore_sysctls = lambda: None  # type: ignore[method-assign]  # a restore that failed
    with pytest.raises(EnvtestError, match=r"kernel\.panic"):
        guard.release()


def test_one_holder_at_a_time(tmp_path: Path, sysctls: Path) -> None:
    guard = HostGuard(tmp_path / "host")
    guard.acquire(tmp_path / "lab")
    with pytest.raises(HostBusyError, match=r"another real node holds .*lock \(one per machine\)"):
        HostGuard(tmp_path / "host").acquire(tmp_path / "other", wait=0)
    guard.release()
    again = HostGuard(tmp_path / "host")
    again.acquire(tmp_path / "other", wait=0)
    assert json.loads(again.state_path.read_text())["lab"] == str(tmp_path / "other")
    again.release()


def test_a_tree_is_removed_deepest_first(tmp_path: Path) -> None:
    tree = tmp_path / "ballast-real-node"
    (tree / "kubepods" / "burstable" / "pod1").mkdir(parents=True)
    remove_cgroup_tree(tree)
    assert not tree.exists()
    assert mounts_under(tmp_path) == []
