"""The two test networks: loopback (default) and a private network namespace.

The API server will not proxy to loopback addresses (`400 address not allowed` on `nodes/<n>/proxy`), so fake
kubelets and several backends behind one Service need other addresses. `ballast-envtest netns -- CMD` runs CMD
in a fresh network namespace (`unshare --net` as root, `unshare -rn` otherwise; Python 3.11 cannot enter one
itself) whose only interface is `lo`, with TEST-NET-2 (198.51.100.0/24) routed locally on it, and sets
`BALLAST_ENVTEST_NETWORK=private`. Nothing sent there can leave the machine.
"""

from __future__ import annotations

import ipaddress
import itertools
import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from .errors import NetworkError

TEST_NETWORK = ipaddress.ip_network("198.51.100.0/24")
ENV_VAR = "BALLAST_ENVTEST_NETWORK"
_SETUP = f"ip link set lo up && ip route add local {TEST_NETWORK} dev lo"
# .1-.9 are left for the user; backends get .10 up to LAST_ALLOCATED_HOST; above it is the real node's pod range.
LAST_ALLOCATED_HOST = 191
REAL_NODE_BRIDGE = "ballast0"  # the real node's pod bridge; its veth peers are the other interfaces it adds
_next_host = itertools.count(10)
_next_host_lock = threading.Lock()


def mode_from_environment() -> Literal["loopback", "private"]:
    value = os.environ.get(ENV_VAR, "loopback") or "loopback"
    if value == "private":
        return "private"
    if value == "loopback":
        return "loopback"
    raise NetworkError(f"{ENV_VAR}={value!r}: expected 'loopback' or 'private'")


def interfaces() -> list[str]:
    """Interfaces of this process's network namespace (/proc/net/dev is per namespace; /sys is not)."""
    lines = Path("/proc/net/dev").read_text().splitlines()[2:]
    return [line.split(":", 1)[0].strip() for line in lines]


def in_private_network() -> bool:
    """True inside a namespace whose only interface is `lo` (besides a real node's pod bridge and veths) and
    where TEST-NET-2 addresses bind."""
    if [i for i in interfaces() if i != REAL_NODE_BRIDGE and not i.startswith("veth")] != ["lo"]:
        return False
    with socket.socket() as probe:
        try:
            probe.bind((str(TEST_NETWORK[1]), 0))
        except OSError:
            return False
    return True


def require_private_network() -> None:
    if not in_private_network():
        raise NetworkError(
            "this needs the private test network, but the process is not inside it (interfaces: "
            f"{', '.join(interfaces())}); run the command under `ballast-envtest netns -- ...` "
            "(or `make test`, which does)"
        )


def allocate_address() -> str:
    """A fresh TEST-NET-2 address for a backend; only bindable inside the private network."""
    with _next_host_lock:
        index = next(_next_host)
    if index > LAST_ALLOCATED_HOST:
        raise NetworkError(f"all addresses of {TEST_NETWORK} are in use")
    return str(TEST_NETWORK[index])


def _unshare_command() -> list[str]:
    if shutil.which("unshare") is None:
        raise NetworkError("`unshare` (util-linux) is not installed; it is needed to create the test network")
    if shutil.which("ip") is None:
        raise NetworkError("`ip` (iproute2) is not installed; it is needed to configure the test network")
    command = ["unshare", "--net", "--fork", "--kill-child"]
    if os.geteuid() != 0:
        command.insert(1, "--map-root-user")
    return command


def run_in_private_network(argv: Sequence[str]) -> int:
    """Run `argv` inside a new private network namespace and return its exit code.

    The namespace is probed first, so that a failure to create it is reported as such (with what the
    kernel said) rather than as a failure of the command.
    """
    if not argv:
        raise NetworkError("no command given to run in the private network")
    if in_private_network():
        return subprocess.call(list(argv), env={**os.environ, ENV_VAR: "private"})
    command = _unshare_command()
    probe = subprocess.run([*command, "sh", "-c", _SETUP], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        detail = probe.stderr.strip() or f"exit code {probe.returncode}"
        raise NetworkError(
            f"cannot create the private test network namespace with `{' '.join(command)}`: {detail}. "
            "As root this needs CAP_SYS_ADMIN; as another user it needs unprivileged user namespaces "
            "(sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces > 0)."
        )
    script = f'{_SETUP} && exec "$@"'
    return subprocess.call(
        [*command, "sh", "-c", script, "ballast-envtest-netns", *argv], env={**os.environ, ENV_VAR: "private"}
    )


__all__ = [
    "ENV_VAR",
    "LAST_ALLOCATED_HOST",
    "REAL_NODE_BRIDGE",
    "TEST_NETWORK",
    "allocate_address",
    "in_private_network",
    "interfaces",
    "mode_from_environment",
    "require_private_network",
    "run_in_private_network",
]
