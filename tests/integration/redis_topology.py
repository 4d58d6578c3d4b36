"""Real Redis topologies on loopback for tests and benchmarks: a Sentinel group (a primary, replicas, sentinels)
and a Cluster (primaries with a replica each, made by `redis-cli --cluster create`). Every process is a real
`redis-server` (`--sentinel` for the sentinels) that dies with the test process."""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from ballast.runtime.envtest.ports import suggest_port
from ballast.runtime.envtest.pytest_plugin import unavailable
from tests.integration.redis_server import RedisServer, _die_with_parent

SERVICE = "ballast"
SentinelConfig = Callable[[int, int, Path], str]
"""A sentinel's configuration file from (its port, the first primary's port, its directory)."""


def redis_cli_or_skip() -> str:
    cli = shutil.which("redis-cli")
    if cli is None:
        unavailable("redis-cli not found (install the Debian package redis-tools)")
    return cli


def _until(what: str, check: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        with contextlib.suppress(redis.RedisError, OSError):
            last = check()  # type: ignore[operator]
            if last:
                return
        time.sleep(0.05)
    raise RuntimeError(f"{what}: not reached within {timeout}s (last: {last!r})")


def _sentinel_primary_port(sentinel: redis.Redis) -> int:
    address: Any = sentinel.sentinel_get_master_addr_by_name(SERVICE)
    return int(address[1])


def _online_replicas(primary: redis.Redis) -> int:
    info = primary.info("replication")
    return sum(1 for index in range(info["connected_slaves"]) if info[f"slave{index}"]["state"] == "online")


class Sentinel:
    """One `redis-server <conf> --sentinel` process (the config file is Sentinel's own state, rewritten by it)."""

    def __init__(
        self,
        binary: str,
        directory: Path,
        primary_port: int,
        quorum: int,
        down_after_ms: int,
        config: SentinelConfig | None = None,
        auth_pass: str | None = None,
    ) -> None:
        self.binary = binary
        self.directory = directory
        self.port = suggest_port()
        self.config = directory / "sentinel.conf"
        self.config.write_text(
            config(self.port, primary_port, directory)
            if config is not None
            else f"port {self.port}\nbind 127.0.0.1\nprotected-mode no\ndir {directory}\n"
            f"logfile {directory / 'sentinel.log'}\n"
            f"sentinel monitor {SERVICE} 127.0.0.1 {primary_port} {quorum}\n"
            f"sentinel down-after-milliseconds {SERVICE} {down_after_ms}\n"
            f"sentinel failover-timeout {SERVICE} {down_after_ms * 3}\n"
            f"sentinel parallel-syncs {SERVICE} 1\n"
            + (f"sentinel auth-pass {SERVICE} {auth_pass}\n" if auth_pass is not None else "")
        )
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self._process = subprocess.Popen(
            [self.binary, str(self.config), "--sentinel"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
            preexec_fn=_die_with_parent,  # noqa: PLW1509 - only prctl, no locks taken
        )
        _until(f"sentinel on {self.port}", lambda: self.client().ping())

    def client(self) -> redis.Redis:
        return redis.Redis("127.0.0.1", self.port, decode_responses=True, socket_timeout=2)

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(10)
        self._process = None


class SentinelGroup:
    """A primary, `replicas` replicas and `sentinels` sentinels (quorum: a majority) on 127.0.0.1."""

    def __init__(
        self,
        binary: str,
        directory: Path,
        *,
        replicas: int = 2,
        sentinels: int = 3,
        down_after_ms: int = 1000,
        data_config: str | None = None,
        sentinel_config: SentinelConfig | None = None,
        password: str | None = None,
    ) -> None:
        """`data_config`: a valkey.conf every data server reads first; `sentinel_config`: each sentinel's file
        (e.g. what the chart renders, with its host names and ports made local); `password`: every data server's
        `requirepass` (and `masterauth`, for the replicas), which the sentinels use too."""
        self.password = password
        self.servers: list[RedisServer] = []
        for index in range(1 + replicas):
            path = directory / f"redis-{index}"
            path.mkdir()
            config_file = None
            if data_config is not None:
                config_file = path / "valkey.conf"
                config_file.write_text(data_config)
            self.servers.append(RedisServer(binary, path, config_file=config_file, password=password))
        primary_port = self.servers[0].port
        for server in self.servers:
            server.extra = ("--repl-diskless-sync-delay", "0")
            if password is not None:
                server.extra += ("--masterauth", password)
        for server in self.servers[1:]:
            server.extra += ("--replicaof", "127.0.0.1", str(primary_port))
        self.sentinels: list[Sentinel] = []
        for index in range(sentinels):
            path = directory / f"sentinel-{index}"
            path.mkdir()
            self.sentinels.append(
                Sentinel(binary, path, primary_port, sentinels // 2 + 1, down_after_ms, sentinel_config, password)
            )

    @property
    def url(self) -> str:
        hosts = ",".join(f"127.0.0.1:{sentinel.port}" for sentinel in self.sentinels)
        auth = f":{self.password}@" if self.password is not None else ""
        return f"redis+sentinel://{auth}{hosts}/{SERVICE}"

    def start(self) -> None:
        for server in self.servers:
            server.start()
        replicas = len(self.servers) - 1
        primary = self.servers[0].client()
        _until("replicas online", lambda: _online_replicas(primary) == replicas)
        for sentinel in self.sentinels:
            sentinel.start()
        # Every sentinel knows every replica and the other sentinels before anything is failed over.
        for sentinel in self.sentinels:
            client = sentinel.client()
            _until(
                "sentinels see the group",
                lambda c=client: (
                    int(c.sentinel_master(SERVICE)["num-slaves"]) == replicas
                    and int(c.sentinel_master(SERVICE)["num-other-sentinels"]) == len(self.sentinels) - 1
                ),
            )

    def primary_port(self) -> int:
        return _sentinel_primary_port(self.sentinels[0].client())

    def server_on(self, port: int) -> RedisServer:
        return next(server for server in self.servers if server.port == port)

    def wait_for_new_primary(self, old_port: int, timeout: float = 30.0) -> int:
        """Until every sentinel names a primary other than `old_port` and it answers as a primary; returns it."""

        def promoted() -> bool:
            ports = {_sentinel_primary_port(s.client()) for s in self.sentinels[:1]}
            if ports == {old_port}:
                return False
            port = ports.pop()
            return bool(self.server_on(port).client().info("replication")["role"] == "master")

        _until("a replica promoted", promoted, timeout)
        return self.primary_port()

    def stop(self) -> None:
        for sentinel in self.sentinels:
            sentinel.stop()
        for server in self.servers:
            server.stop()


class LocalCluster:
    """`primaries` primaries with `replicas_each` replicas, slots spread by `redis-cli --cluster create`."""

    def __init__(
        self, binary: str, directory: Path, *, primaries: int = 3, replicas_each: int = 1, persistent: bool = True
    ) -> None:
        """`persistent=False`: no append-only file (a benchmark compares with a server without one)."""
        self.cli = redis_cli_or_skip()
        self.primaries = primaries
        self.replicas_each = replicas_each
        self.servers: list[RedisServer] = []
        for index in range(primaries * (1 + replicas_each)):
            path = directory / f"node-{index}"
            path.mkdir()
            server = RedisServer(binary, path)
            server.extra = (
                "--cluster-enabled", "yes",
                "--cluster-config-file", str(path / "nodes.conf"),
                "--cluster-node-timeout", "2000",
                "--cluster-port", str(suggest_port()),
                "--appendfsync", "everysec",
                "--repl-diskless-sync-delay", "0",
            )  # fmt: skip
            if not persistent:
                server.extra += ("--appendonly", "no")
            self.servers.append(server)

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{server.port}" for server in self.servers[:2])

    def start(self) -> None:
        for server in self.servers:
            server.start()
        nodes = [f"127.0.0.1:{server.port}" for server in self.servers]
        subprocess.run(
            [self.cli, "--cluster", "create", *nodes, "--cluster-replicas", str(self.replicas_each), "--cluster-yes"],
            check=True,
            capture_output=True,
            timeout=60,
        )
        for server in self.servers:
            client = server.client()
            _until("cluster_state:ok", lambda c=client: c.cluster("info")["cluster_state"] == "ok")
        # every node sees every replica attached, so a failover or a reshard starts from a settled map
        _until(
            "replicas online",
            lambda: sum(_online_replicas(s.client()) for s in self.servers) == self.primaries * self.replicas_each,
        )

    def primary_ports_alive(self) -> list[int]:
        """The primaries among the servers still running (after a kill)."""
        ports = []
        for server in self.servers:
            with contextlib.suppress(redis.RedisError, OSError):
                if server.client().info("replication")["role"] == "master":
                    ports.append(server.port)
        return sorted(ports)

    def primary_ports(self) -> list[int]:
        return sorted(s.port for s in self.servers if s.client().info("replication")["role"] == "master")

    def reshard(self, source_port: int, target_port: int, slots: int) -> subprocess.CompletedProcess[bytes]:
        """Move `slots` slots from one primary to another with `redis-cli --cluster reshard` (keys included)."""

        def node_id(port: int) -> str:
            execute: Any = redis.Redis("127.0.0.1", port, decode_responses=True).execute_command
            return str(execute("CLUSTER", "MYID"))

        argv = [
            self.cli, "--cluster", "reshard", f"127.0.0.1:{source_port}",
            "--cluster-from", node_id(source_port), "--cluster-to", node_id(target_port),
            "--cluster-slots", str(slots), "--cluster-yes", "--cluster-pipeline", "1",
        ]  # fmt: skip
        return subprocess.run(
            argv,
            check=True,
            capture_output=True,
            timeout=300,
        )

    def stop(self) -> None:
        for server in self.servers:
            server.stop()
