"""What a real node changes outside its own directory, and how it is put back: one node per machine.

A kubelet and containerd are not namespaced the way the control plane is: they write cgroups in every
hierarchy, mount overlay root filesystems and tmpfs, start shims that outlive containerd, create
`/run/containerd`, and the kubelet sets six kernel-wide sysctls at every start. `HostGuard` serialises real
nodes machine-wide (an flock on `/run/ballast-real-node/lock`, released by the kernel if the run dies),
records what the run created in `state.json` before creating it, and puts the host back — at teardown, or at
the start of the next run when a killed one left its state file behind.

The sysctls' original values go to `sysctls.json` before the first kubelet start and stay there until a
teardown has restored and verified them: a killed run must not let the next one "save" the kubelet's values
as originals. `/run` is the right home: the kubelet's values do not survive a reboot either.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from .errors import EnvtestError

HOST_DIR = Path("/run/ballast-real-node")
CGROUP_ROOT = "/ballast-real-node"  # the kubelet's cgroupRoot, in every hierarchy
CGROUP_MOUNT = Path("/sys/fs/cgroup")
CONTAINERD_RUN = Path("/run/containerd")  # shim sockets land here whatever containerd's state setting says
# Set by the kubelet at every start (pkg/kubelet/cm: setupKernelTunables), none of them network-namespaced.
KUBELET_SYSCTLS = (
    "vm.overcommit_memory",
    "vm.panic_on_oom",
    "kernel.panic",
    "kernel.panic_on_oops",
    "kernel.keys.root_maxkeys",
    "kernel.keys.root_maxbytes",
)
LOCK_WAIT_SECONDS = 900.0


class HostBusyError(EnvtestError):
    """Another real node, or a foreign container runtime, holds what this one needs."""


def _sysctl_path(name: str) -> Path:
    return Path("/proc/sys") / name.replace(".", "/")


def read_sysctls(names: Iterable[str] = KUBELET_SYSCTLS) -> dict[str, str]:
    return {name: _sysctl_path(name).read_text().strip() for name in names}


def write_sysctls(values: dict[str, str]) -> None:
    for name, value in values.items():
        path = _sysctl_path(name)
        if path.read_text().strip() != value:
            path.write_text(value)


def _write_json(path: Path, value: Any) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n")
    temporary.rename(path)  # atomic: a run killed here leaves the old file or the new one, never half of one


def cgroup_hierarchies() -> list[Path]:
    """Every mounted cgroup hierarchy (the v1 controllers, the named systemd one, the unified v2 mount)."""
    found = []
    for line in Path("/proc/self/mounts").read_text().splitlines():
        fields = line.split()
        if len(fields) > 2 and fields[2] in ("cgroup", "cgroup2"):
            found.append(Path(fields[1]))
    return sorted(set(found))


def cgroup_trees(root: str = CGROUP_ROOT) -> list[Path]:
    """The directories of `root` that exist, one per hierarchy."""
    return [h / root.strip("/") for h in cgroup_hierarchies() if (h / root.strip("/")).is_dir()]


def mounts_under(directory: Path) -> list[Path]:
    """Mount points at or below `directory` (this mount namespace), deepest first."""
    prefix = str(directory).rstrip("/") + "/"
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        point = line.split()[4].replace("\\040", " ")
        if point.startswith(prefix) or point == prefix.rstrip("/"):
            points.append(Path(point))
    return sorted(set(points), key=lambda p: (len(p.parts), str(p)), reverse=True)


def processes_naming(needle: str) -> list[int]:
    """PIDs whose command line contains `needle` (ours excluded)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if needle in (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"):
                found.append(int(entry.name))
    return found


def _kill(pids: Iterable[int]) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def remove_cgroup_tree(tree: Path, timeout: float = 10.0) -> None:
    """Kill every task in `tree` and remove its directories deepest first (a cgroup with tasks cannot go)."""
    deadline = time.monotonic() + timeout
    while tree.is_dir():
        directories = sorted((p for p in tree.rglob("*") if p.is_dir()), key=lambda p: len(p.parts), reverse=True)
        for directory in [*directories, tree]:
            with contextlib.suppress(OSError):
                _kill(int(pid) for pid in (directory / "cgroup.procs").read_text().split())
            with contextlib.suppress(OSError):
                directory.rmdir()
        if tree.is_dir():
            if time.monotonic() > deadline:
                raise EnvtestError(f"cannot remove cgroup {tree}: tasks remain in it")
            time.sleep(0.1)


def unmount_all(directory: Path) -> None:
    for point in mounts_under(directory):
        result = subprocess.run(["umount", str(point)], capture_output=True, text=True, check=False)
        if result.returncode != 0:  # busy (a process still has it open): detach it, the kernel frees it later
            subprocess.run(["umount", "-l", str(point)], capture_output=True, check=False)


class HostGuard:
    """Held for one real node's lifetime: `acquire()` before anything touches the host, `release()` last."""

    def __init__(self, host_dir: Path = HOST_DIR) -> None:
        self.host_dir = host_dir
        self.lock_path = host_dir / "lock"
        self.state_path = host_dir / "state.json"
        self.sysctls_path = host_dir / "sysctls.json"
        self._lock: IO[str] | None = None
        self.state: dict[str, Any] = {}

    # ------------------------------------------------------------------------------------------ locking

    def acquire(self, lab: Path, *, wait: float = LOCK_WAIT_SECONDS) -> None:
        """Take the machine-wide lock, put back what a killed run left, and refuse a foreign containerd."""
        self.host_dir.mkdir(parents=True, exist_ok=True)
        lock = self.lock_path.open("a+")
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    lock.close()
                    raise HostBusyError(
                        f"another real node holds {self.lock_path} (one per machine) and did not finish in {wait:.0f}s"
                    ) from None
                time.sleep(1.0)
        self._lock = lock
        try:
            if self.state_path.exists():
                self.clean(json.loads(self.state_path.read_text()))
            if self.sysctls_path.exists():  # a killed run's kubelet values are still set: the file has the originals
                write_sysctls(json.loads(self.sysctls_path.read_text()))
            self._refuse_foreign_runtime(lab)
            self.state = {"lab": str(lab), "created_containerd_run": not CONTAINERD_RUN.exists(), "pids": []}
            _write_json(self.state_path, self.state)
        except BaseException:
            self._unlock()
            raise

    def _refuse_foreign_runtime(self, lab: Path) -> None:
        for pid in processes_naming("containerd"):
            with contextlib.suppress(OSError):
                command = (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                if str(lab) not in command and Path(command.split()[0]).name.startswith("containerd"):
                    raise HostBusyError(
                        f"a containerd not started by this harness runs (pid {pid}: {command.strip()[:200]}); "
                        f"it shares {CONTAINERD_RUN} and the machine's cgroups with a real node: stop it first"
                    )

    def record_pid(self, pid: int) -> None:
        """A process to kill (if its command line still names the lab) when a later run cleans up after us."""
        self.state.setdefault("pids", []).append(pid)
        _write_json(self.state_path, self.state)

    def _unlock(self) -> None:
        if self._lock is not None:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None

    # ------------------------------------------------------------------------------------------ sysctls

    def save_sysctls(self) -> None:
        """Before the first kubelet start: the original values, kept until a teardown verified them back."""
        if not self.sysctls_path.exists():
            _write_json(self.sysctls_path, read_sysctls())

    def restore_sysctls(self) -> None:
        """After every kubelet start (restarts too) and at teardown."""
        if self.sysctls_path.exists():
            write_sysctls(json.loads(self.sysctls_path.read_text()))

    def changed_sysctls(self) -> dict[str, tuple[str, str]]:
        """name → (original, now) for every sysctl that differs from its saved original."""
        if not self.sysctls_path.exists():
            return {}
        original: dict[str, str] = json.loads(self.sysctls_path.read_text())
        now = read_sysctls(original)
        return {name: (value, now[name]) for name, value in original.items() if now[name] != value}

    # ------------------------------------------------------------------------------------------ cleanup

    def clean(self, state: dict[str, Any]) -> None:
        """Put back what the run described by `state` changed: processes, mounts, cgroups, /run/containerd."""
        lab = Path(state["lab"])
        socket = str(lab / "containerd")
        _kill(pid for pid in state.get("pids", []) if pid in processes_naming(socket) + processes_naming(str(lab)))
        _kill(processes_naming(socket))  # shims outlive containerd; they name its socket on their command line
        for tree in cgroup_trees():
            remove_cgroup_tree(tree)
        unmount_all(lab)
        shutil.rmtree(lab, ignore_errors=True)
        if state.get("created_containerd_run"):
            shutil.rmtree(CONTAINERD_RUN, ignore_errors=True)
        self.restore_sysctls()

    def release(self) -> None:
        """Teardown's last step: everything put back and verified, the state files removed, the lock freed."""
        try:
            self.clean(self.state)
            changed = self.changed_sysctls()
            if changed:
                raise EnvtestError(f"sysctls not restored after the real node: {changed}")
            left = leftovers(Path(self.state["lab"]))
            if left:
                raise EnvtestError("the real node left behind: " + "; ".join(left))
            self.sysctls_path.unlink(missing_ok=True)
            self.state_path.unlink(missing_ok=True)
        finally:
            self._unlock()

    @contextlib.contextmanager
    def held(self, lab: Path) -> Iterator[HostGuard]:
        self.acquire(lab)
        try:
            yield self
        finally:
            self.release()


def leftovers(lab: Path) -> list[str]:
    """What a finished real node must not leave: processes naming its lab, mounts under it, its cgroups."""
    found = [f"process {pid}" for pid in processes_naming(str(lab))]
    found += [f"mount {point}" for point in mounts_under(lab)]
    found += [f"cgroup {tree}" for tree in cgroup_trees()]
    if lab.exists():
        found.append(f"directory {lab}")
    return found


__all__ = [
    "CGROUP_ROOT",
    "HOST_DIR",
    "KUBELET_SYSCTLS",
    "HostBusyError",
    "HostGuard",
    "cgroup_hierarchies",
    "cgroup_trees",
    "leftovers",
    "mounts_under",
    "processes_naming",
    "read_sysctls",
    "remove_cgroup_tree",
    "write_sysctls",
]
