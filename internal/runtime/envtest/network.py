"""The two test networks: loopback (default) and a private network namespace.

The API server will not proxy to loopback addresses (`400 address not allowed` on `nodes/<n>/proxy`), so fake
kubelets and several backends behind one Service need other addresses. `ballast-envtest netns -- CMD` runs CMD
in a fresh network namespace (`unshare --net` as root, `unshare -rn` otherwise; Python 3.11 cannot enter one
itself) whose only interface is `lo`, with TEST-NET-2 (198.51.100.0/24) routed locally on it, and sets
`BALLAST_ENVTEST_NETWORK=private`. Nothing sent there can leave the machine.

Every process in one namespace (pytest-xdist workers, a test and the operator it starts) draws backend
addresses from one state file, `$XDG_CACHE_HOME/ballast/envtest/network.json` (`BALLAST_ENVTEST_NETWORK_STATE`
overrides), under a file lock: an address is leased to the process that drew it, per namespace, until that
process exits, so two processes never get the same address.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import socket
import subprocess
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import orjson

from . import _filelock
from .errors import NetworkError

TEST_NETWORK = ipaddress.ip_network("198.51.100.0/24")
ENV_VAR = "BALLAST_ENVTEST_NETWORK"
STATE_ENV_VAR = "BALLAST_ENVTEST_NETWORK_STATE"
_SETUP = f"ip link set lo up && ip route add local {TEST_NETWORK} dev lo"
# .1-.9 are left for the user; backends get FIRST_BACKEND_HOST..LAST_BACKEND_HOST (host numbers in TEST_NETWORK);
# above LAST_BACKEND_HOST is the real node's pod range (realnode.POD_CIDR).
FIRST_BACKEND_HOST = 10
LAST_BACKEND_HOST = 191
REAL_NODE_BRIDGE = "ballast0"  # the real node's pod bridge; its veth peers are the other interfaces it adds
_state_lock = threading.Lock()  # one thread of this process at a time; the file lock orders the processes


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


def state_path() -> Path:
    """The allocator's state file: `BALLAST_ENVTEST_NETWORK_STATE`, else under the ballast cache."""
    override = os.environ.get(STATE_ENV_VAR)
    if override:
        return Path(override)
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "ballast" / "envtest" / "network.json"


def _namespace_id() -> str:
    """This process's network namespace (`net:[inode]`): addresses collide only inside one namespace."""
    return os.readlink("/proc/self/ns/net")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def _read_state(path: Path) -> dict[str, Any]:
    try:
        state = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        return {}
    except orjson.JSONDecodeError:
        return {}  # a torn or foreign file: its leases are lost, the worst case is one reused address
    return state if isinstance(state, dict) else {}


def _write_state(path: Path, state: dict[str, Any]) -> None:
    staging = path.with_name(f".{path.name}.{os.getpid()}")
    staging.write_bytes(orjson.dumps(state))
    staging.replace(path)


def _lease(leases: dict[str, int], start: int, pid: int) -> int:
    """The first host number from `start` (round robin) not leased to a live process; recorded for `pid`."""
    count = LAST_BACKEND_HOST - FIRST_BACKEND_HOST + 1
    for step in range(count):
        host = FIRST_BACKEND_HOST + (start - FIRST_BACKEND_HOST + step) % count
        holder = leases.get(str(host))
        if holder is None or (holder != pid and not _alive(holder)):
            leases[str(host)] = pid
            return host
    raise NetworkError(
        f"all {count} backend addresses of {TEST_NETWORK} (.{FIRST_BACKEND_HOST}-.{LAST_BACKEND_HOST}) are leased "
        f"to live processes in this network namespace (state: {state_path()})"
    )


def allocate_address() -> str:
    """A fresh TEST-NET-2 address for a backend; only bindable inside the private network.

    Leased to this process until it exits: no other process in this network namespace gets it meanwhile.
    """
    path = state_path()
    with _state_lock, _filelock.locked(path.with_name(f"{path.name}.lock")):
        state = _read_state(path)
        namespaces: dict[str, dict[str, Any]] = state.setdefault("namespaces", {})
        for key in list(namespaces):  # forget namespaces whose every lease holder has exited
            leases = namespaces[key].get("leases", {})
            if not any(_alive(pid) for pid in leases.values()):
                del namespaces[key]
        mine = namespaces.setdefault(_namespace_id(), {"next": FIRST_BACKEND_HOST, "leases": {}})
        host = _lease(mine["leases"], int(mine["next"]), os.getpid())
        mine["next"] = host + 1
        _write_state(path, state)
    return str(TEST_NETWORK[host])


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
    "FIRST_BACKEND_HOST",
    "LAST_BACKEND_HOST",
    "REAL_NODE_BRIDGE",
    "STATE_ENV_VAR",
    "TEST_NETWORK",
    "allocate_address",
    "in_private_network",
    "interfaces",
    "mode_from_environment",
    "require_private_network",
    "run_in_private_network",
    "state_path",
]
