"""Rounds of script calls on a Redis/Valkey Cluster: one pipeline per primary per round, written to every primary
before any reply is read, so a round is one network round trip per shard (docs/design.md, difference 68).

A call that meets `MOVED` refreshes the slot map, `ASK` is sent again to the node named with `ASKING`, `TRYAGAIN`
(a multi-key script on a slot being migrated) is sent again after a pause, `NOSCRIPT` loads the scripts again;
each for `ATTEMPTS` rounds at most within one store call. With `min_replicas`, each pipeline ends with `WAIT`, and
a call whose pipeline fewer replicas acknowledged is not done (`StoreNotReplicatedError`).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import redis
import redis.exceptions
from redis.cluster import ClusterNode, RedisCluster
from redis.crc import key_slot

from .errors import StoreError, StoreNotReplicatedError, StoreUnavailableError
from .keys import tag
from .resp import pack_commands

ATTEMPTS = 5
"""Rounds per call: a slot that moved or is migrating settles within a few (each a round trip per shard)."""

TRYAGAIN_PAUSE = 0.05
"""Seconds before a round that retries `TRYAGAIN` (a multi-key script on a key set split by a migration)."""


@dataclass(slots=True)
class Call:
    """One script call for one hash-tag group (a bucket of profiles, keys.bucket_of)."""

    group: str
    script: str
    sha: str
    keys: list[str]
    args: list[str | int]
    reply: Any = None
    done: bool = False
    asking: tuple[str, int] | None = None
    error: Exception | None = None


@dataclass(slots=True)
class RoundTrips:
    """Pipelines sent (one per shard per round), for tests and the benchmark."""

    count: int = 0
    asks: int = 0
    tryagains: int = 0
    moved: int = 0
    per_call: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Wait:
    """`WAIT replicas timeout_ms` at the end of each pipeline."""

    replicas: int
    timeout_ms: int


class Rounds:
    """Runs calls on the cluster `client()` returns; `scripts` are loaded on a node before its first call."""

    def __init__(self, client: Callable[[], RedisCluster], scripts: Sequence[str], shas: Sequence[str], where: str):
        self._client = client
        self._scripts = list(scripts)
        self._shas = list(shas)
        self.where = where
        self._loaded: set[str] = set()  # nodes known to hold every script
        self.round_trips = RoundTrips()

    @contextlib.contextmanager
    def errors(self, what: str) -> Iterator[None]:
        """Turn redis-py's errors into the store's, naming `what` was being done and where."""
        try:
            yield
        except StoreError:
            raise
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
            self.refresh()
            raise StoreUnavailableError(f"{what}: a node of {self.where} is unavailable: {exc}") from exc
        except (redis.exceptions.ClusterDownError, redis.exceptions.SlotNotCoveredError) as exc:
            self.refresh()
            raise StoreUnavailableError(f"{what}: {self.where} is down: {exc}") from exc
        except redis.exceptions.ReadOnlyError as exc:
            self.refresh()
            raise StoreUnavailableError(f"{what}: a replica of {self.where} answered: {exc}") from exc
        except redis.exceptions.RedisError as exc:
            raise StoreError(f"{what}: {self.where} refused it: {exc}") from exc

    def refresh(self) -> None:
        """Read the slot map again; scripts are loaded again on each node's next call."""
        # A broad except, because this is best effort on a failing path: the next call refreshes again.
        with contextlib.suppress(Exception):
            self._client().nodes_manager.initialize()
        self._loaded.clear()

    def run(self, calls: list[Call], what: str, *, wait: Wait | None = None) -> None:
        """Run `calls` until each is done, following MOVED/ASK/TRYAGAIN for `ATTEMPTS` rounds."""
        rounds = 0
        pending = calls
        with self.errors(what):
            while pending:
                if rounds == ATTEMPTS:
                    raise StoreUnavailableError(f"{what}: {_first_error(pending)} (after {ATTEMPTS} rounds)")
                if rounds and any(isinstance(c.error, redis.exceptions.TryAgainError) for c in pending):
                    time.sleep(TRYAGAIN_PAUSE)
                rounds += 1
                self._round(pending, wait)
                if any([self._classify(call) for call in pending]):  # noqa: C419 - classify every call
                    self.refresh()
                if not_replicated := [c for c in pending if isinstance(c.error, StoreNotReplicatedError)]:
                    raise StoreNotReplicatedError(f"{what}: {not_replicated[0].error}; kept for a retry")
                pending = [call for call in pending if not call.done]
        self.round_trips.per_call.append(rounds)

    def _node_for(self, call: Call) -> ClusterNode:
        if call.asking is not None:
            host, port = call.asking
            node = self._client().nodes_manager.get_node(host, port)
            if node is None:
                self.refresh()
                node = self._client().nodes_manager.get_node(host, port)
            if node is None:
                raise StoreUnavailableError(f"{self.where}: ASK names an unknown node {host}:{port}")
            return node
        return self._client().nodes_manager.get_node_from_slot(key_slot(tag(call.group).encode()))

    def _round(self, calls: Sequence[Call], wait: Wait | None) -> None:
        """Send every pending call, one pipeline per node (written to all nodes first, then read)."""
        by_node: dict[str, tuple[ClusterNode, list[Call]]] = {}
        for call in calls:
            node = self._node_for(call)
            by_node.setdefault(node.name, (node, []))[1].append(call)
        sent: list[tuple[Any, Any, list[Call], bool]] = []
        try:
            for name, (node, node_calls) in by_node.items():
                load = name not in self._loaded
                redis_node = self._client().get_redis_connection(node)
                connection: Any = redis_node.connection_pool.get_connection()
                sent.append((redis_node, connection, node_calls, load))
                connection.send_packed_command([pack_commands(self._pipeline(node_calls, load, wait))])
                self.round_trips.count += 1
            for redis_node, connection, node_calls, load in sent:
                self._read(connection, node_calls, load, wait, redis_node)
        except BaseException:
            # replies may be left unread on any of them: never hand such a connection out again
            for _, connection, *_ in sent:
                connection.disconnect()
            raise
        finally:
            for redis_node, connection, *_ in sent:
                redis_node.connection_pool.release(connection)
        for name, (_, node_calls) in by_node.items():
            if any(isinstance(call.error, redis.exceptions.NoScriptError) for call in node_calls):
                self._loaded.discard(name)
            else:
                self._loaded.add(name)

    def _pipeline(self, calls: list[Call], load: bool, wait: Wait | None) -> list[tuple[str | int, ...]]:
        commands: list[tuple[str | int, ...]] = []
        if load:
            commands += [("SCRIPT", "LOAD", script) for script in self._scripts]
        for call in calls:
            if call.asking is not None:
                commands.append(("ASKING",))
            commands.append(("EVALSHA", call.sha, len(call.keys), *call.keys, *call.args))
        if wait is not None:
            commands.append(("WAIT", wait.replicas, wait.timeout_ms))
        return commands

    def _read(self, connection: Any, calls: list[Call], load: bool, wait: Wait | None, redis_node: Any) -> None:
        loaded = [_reply_or_error(connection) for _ in self._scripts] if load else []
        for call in calls:
            if call.asking is not None:
                _reply_or_error(connection)
            call.asking = None
            reply = _reply_or_error(connection)
            if isinstance(reply, redis.exceptions.ResponseError):
                call.error = reply
            else:
                call.reply, call.done, call.error = reply, True, None
        if wait is not None:
            acknowledged = _reply_or_error(connection)
            if isinstance(acknowledged, Exception) or int(acknowledged) < wait.replicas:
                for call in calls:
                    if call.done:
                        call.done = False
                        call.error = StoreNotReplicatedError(
                            f"{acknowledged} of {wait.replicas} replicas acknowledged the write at "
                            f"{redis_node.get_connection_kwargs().get('host')}"
                        )
        if refused := next((reply for reply in loaded if isinstance(reply, Exception)), None):
            raise StoreError(f"{self.where} refused SCRIPT LOAD: {refused}")

    def _classify(self, call: Call) -> bool:
        """Count and prepare the retry of a call that failed; `True` when the slot map must be refreshed."""
        error = call.error
        if error is None or call.done:
            return False
        if isinstance(error, redis.exceptions.MovedError):
            self.round_trips.moved += 1
            return True
        if isinstance(error, redis.exceptions.AskError):
            self.round_trips.asks += 1
            call.asking = error.node_addr
        elif isinstance(error, redis.exceptions.TryAgainError):
            self.round_trips.tryagains += 1
        elif isinstance(error, redis.exceptions.NoScriptError):
            pass  # the node lost its scripts (restarted, or a failover): loaded again next round
        elif isinstance(error, StoreNotReplicatedError):
            pass
        else:
            raise StoreError(f"{self.where} refused a call for bucket {tag(call.group)}: {error}")
        return False


def _reply_or_error(connection: Any) -> Any:
    try:
        return connection.read_response()
    except redis.exceptions.ResponseError as exc:
        return exc


def _first_error(calls: Sequence[Call]) -> str:
    return next((str(call.error) for call in calls if call.error is not None), "no reply")
