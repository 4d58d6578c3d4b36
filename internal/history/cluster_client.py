"""redis-py's RedisCluster for the Cluster backend, made at the store's first call: RedisCluster connects in its
constructor, and an unreachable cluster at start-up must be a failed call, as with the other backends, not a
crash."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.retry import Retry

from .topology import Endpoints, client_tls


def cluster_options(endpoints: Endpoints, timeout: float) -> dict[str, Any]:
    """RedisCluster's keyword arguments for a parsed Cluster URL: credentials, TLS, `timeout` per connect and
    reply; raises `ValueError` for a timeout that is not positive."""
    if timeout <= 0:
        raise ValueError(f"timeout {timeout} must be positive (seconds)")
    return {
        "socket_timeout": timeout,
        "socket_connect_timeout": timeout,
        "username": endpoints.username,
        "password": endpoints.password,
        "decode_responses": False,
        **client_tls(endpoints),
    }


class LazyCluster:
    """A RedisCluster seeded with `hosts`, made on the first `get()`; it discovers the other nodes itself. Its own
    retries are off: the store retries MOVED, ASK and TRYAGAIN (cluster_rounds.py)."""

    def __init__(self, hosts: Sequence[tuple[str, int]], options: dict[str, Any]) -> None:
        self._hosts = hosts
        self._options = options
        self.client: RedisCluster | None = None

    def get(self) -> RedisCluster:
        if self.client is None:
            self.client = RedisCluster(
                startup_nodes=[ClusterNode(host, port) for host, port in self._hosts],  # type: ignore[no-untyped-call]
                retry=Retry(NoBackoff(), 0),
                **self._options,
            )
        return self.client
