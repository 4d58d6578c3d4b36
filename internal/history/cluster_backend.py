"""The Redis/Valkey Cluster backend: the tagged key layout, one pipelined round trip per shard per cycle
(docs/design.md, differences 68 and 80).

Each profile's keys carry its bucket (the measurement hash's last two hex digits) as a hash tag
(keys.tagged_values_key), so a bucket of profiles — their series, the `:ts` and `:first_seen`, the bucket's cycle
markers — lives in one slot and is written by one WRITE_GROUP script: a cycle sends at most 256 scripts, whatever
the number of profiles. A cycle's scripts are grouped by the primary serving their slot and sent to every primary
at once, one pipeline each, then the replies are read: one network round trip per shard. Atomicity and
idempotency are per bucket: each bucket's write carries its own marker, so a cycle is "all or nothing per bucket"
(a profile is never split), and a retry re-sends only the buckets not yet applied. `MOVED` refreshes the slot
map and `ASK`/`TRYAGAIN` (a slot being migrated) are retried, a few times within one call.
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from types import TracebackType
from typing import Any, Self

import redis
import redis.exceptions
from redis.backoff import NoBackoff
from redis.cluster import ClusterNode, RedisCluster
from redis.crc import key_slot
from redis.retry import Retry

from .errors import StoreError, StoreNotReplicatedError, StoreUnavailableError
from .keys import (
    FIRST_SEEN_SUFFIX,
    PREFIX,
    TIMES_SUFFIX,
    UNOWNED_KEY,
    bucket_of,
    group_marker_key,
    is_values_key,
    measurement_hash_of,
    tag,
    tagged_profile_pattern,
    tagged_values_key,
    untagged,
)
from .protocol import DEFAULT_CYCLE_TTL
from .redis_backend import DEFAULT_TIMEOUT, READ_BATCH, RedisHistoryStore
from .redis_scripts import IMPORT_GROUP, READ_GROUP, WRITE_GROUP
from .resp import pack_commands
from .series import Cycle, Series, SeriesKey
from .topology import Endpoints, client_tls

ATTEMPTS = 5
"""Rounds per call: a slot that moved or is migrating settles within a few (each a round trip per shard)."""

TRYAGAIN_PAUSE = 0.05
"""Seconds before a round that retries `TRYAGAIN` (a multi-key script on a key set split by a migration)."""

_REMEMBERED_CYCLES = 256  # cycles whose applied groups are remembered, so a retry sends only the rest
_SCAN_COUNT = 1000


@dataclass(slots=True)
class _Call:
    """One script call for one hash-tag group (a bucket of profiles)."""

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


class ClusterHistoryStore:
    """History in a Redis/Valkey Cluster in the tagged layout. See the module docstring and `HistoryStore`."""

    def __init__(
        self,
        cluster: RedisCluster | _LazyCluster,
        *,
        cycle_ttl: timedelta = DEFAULT_CYCLE_TTL,
        min_replicas: int = 0,
        wait_timeout: float = 1.0,
        where: str = "the cluster",
    ) -> None:
        if cycle_ttl < timedelta(seconds=1):
            raise ValueError(f"cycle_ttl {cycle_ttl} must be at least one second")
        if min_replicas < 0:
            raise ValueError(f"min_replicas {min_replicas} must be 0 or more")
        self._cluster = cluster
        self._cycle_ttl_s = int(cycle_ttl.total_seconds())
        self.min_replicas = min_replicas
        self._wait_timeout_ms = max(1, int(wait_timeout * 1000))
        self._where = where
        self._loaded: set[str] = set()  # nodes known to hold both scripts
        self._applied: OrderedDict[str, set[str]] = OrderedDict()  # cycle id → groups applied and acknowledged
        self.round_trips = RoundTrips()
        self._shas = {script: _sha(script) for script in (WRITE_GROUP, READ_GROUP, IMPORT_GROUP)}

    @classmethod
    def from_endpoints(
        cls,
        endpoints: Endpoints,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        cycle_ttl: timedelta = DEFAULT_CYCLE_TTL,
        min_replicas: int = 0,
    ) -> ClusterHistoryStore:
        """redis-py's RedisCluster seeded with the URL's nodes; it discovers the rest (at the first call)."""
        if timeout <= 0:
            raise ValueError(f"timeout {timeout} must be positive (seconds)")
        kwargs: dict[str, Any] = {
            "socket_timeout": timeout,
            "socket_connect_timeout": timeout,
            "username": endpoints.username,
            "password": endpoints.password,
            "decode_responses": False,
            **client_tls(endpoints),
        }
        cluster = _LazyCluster(endpoints.hosts, kwargs)
        where = f"the cluster of {endpoints.redacted()}"
        return cls(cluster, cycle_ttl=cycle_ttl, min_replicas=min_replicas, wait_timeout=timeout / 2, where=where)

    # ------------------------------------------------------------------------------------------------ plumbing

    @contextlib.contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        try:
            yield
        except StoreError:
            raise
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
            self._refresh()
            raise StoreUnavailableError(f"{what}: a node of {self._where} is unavailable: {exc}") from exc
        except (redis.exceptions.ClusterDownError, redis.exceptions.SlotNotCoveredError) as exc:
            self._refresh()
            raise StoreUnavailableError(f"{what}: {self._where} is down: {exc}") from exc
        except redis.exceptions.ReadOnlyError as exc:
            self._refresh()
            raise StoreUnavailableError(f"{what}: a replica of {self._where} answered: {exc}") from exc
        except redis.exceptions.RedisError as exc:
            raise StoreError(f"{what}: {self._where} refused it: {exc}") from exc

    def _client(self) -> RedisCluster:
        cluster = self._cluster
        return cluster.get() if isinstance(cluster, _LazyCluster) else cluster

    def _refresh(self) -> None:
        # A broad except, because this is best effort on a failing path: the next call refreshes again.
        with contextlib.suppress(Exception):
            self._client().nodes_manager.initialize()
        self._loaded.clear()

    def _node_for(self, call: _Call) -> ClusterNode:
        if call.asking is not None:
            host, port = call.asking
            node = self._client().nodes_manager.get_node(host, port)
            if node is None:
                self._refresh()
                node = self._client().nodes_manager.get_node(host, port)
            if node is None:
                raise StoreUnavailableError(f"{self._where}: ASK names an unknown node {host}:{port}")
            return node
        return self._client().nodes_manager.get_node_from_slot(key_slot(tag(call.group).encode()))

    def _round(self, calls: Sequence[_Call], wait: bool) -> None:  # noqa: PLR0912 - one loop per phase
        """Send every pending call, one pipeline per node (written to all nodes first, then read)."""
        by_node: dict[str, tuple[ClusterNode, list[_Call]]] = {}
        for call in calls:
            node = self._node_for(call)
            by_node.setdefault(node.name, (node, []))[1].append(call)
        sent: list[tuple[Any, Any, list[_Call], bool, bool]] = []
        try:
            for name, (node, node_calls) in by_node.items():
                load = name not in self._loaded
                commands: list[tuple[str | int, ...]] = []
                if load:
                    commands += [("SCRIPT", "LOAD", script) for script in self._shas]
                for call in node_calls:
                    if call.asking is not None:
                        commands.append(("ASKING",))
                    commands.append(("EVALSHA", call.sha, len(call.keys), *call.keys, *call.args))
                if wait:
                    commands.append(("WAIT", self.min_replicas, self._wait_timeout_ms))
                redis_node = self._client().get_redis_connection(node)
                connection: Any = redis_node.connection_pool.get_connection()
                sent.append((redis_node, connection, node_calls, load, wait))
                connection.send_packed_command([pack_commands(commands)])
                self.round_trips.count += 1
            for redis_node, connection, node_calls, load, node_wait in sent:
                self._read(connection, node_calls, load, node_wait, redis_node)
        except BaseException:
            # replies may be left unread on any of them: never hand such a connection out again
            for _, connection, *_ in sent:
                connection.disconnect()
            raise
        finally:
            for redis_node, connection, *_ in sent:
                redis_node.connection_pool.release(connection)
        for name, (_, node_calls) in by_node.items():
            if all(
                call.error is None or not isinstance(call.error, redis.exceptions.NoScriptError) for call in node_calls
            ):
                self._loaded.add(name)
            else:
                self._loaded.discard(name)

    def _read(self, connection: Any, calls: list[_Call], load: bool, wait: bool, redis_node: Any) -> None:
        loaded = [_reply_or_error(connection) for _ in self._shas] if load else []
        for call in calls:
            if call.asking is not None:
                _reply_or_error(connection)
            call.asking = None
            reply = _reply_or_error(connection)
            if isinstance(reply, redis.exceptions.ResponseError):
                call.error = reply
            else:
                call.reply, call.done, call.error = reply, True, None
        if wait:
            acknowledged = _reply_or_error(connection)
            if isinstance(acknowledged, Exception) or int(acknowledged) < self.min_replicas:
                for call in calls:
                    if call.done:
                        call.done = False
                        call.error = StoreNotReplicatedError(
                            f"{acknowledged} of {self.min_replicas} replicas acknowledged the write at "
                            f"{redis_node.get_connection_kwargs().get('host')}"
                        )
        if refused := next((reply for reply in loaded if isinstance(reply, Exception)), None):
            raise StoreError(f"{self._where} refused SCRIPT LOAD: {refused}")

    def _run(self, calls: list[_Call], what: str, *, wait: bool = False) -> None:
        """Run `calls` until each is done, following MOVED/ASK/TRYAGAIN for `ATTEMPTS` rounds."""
        rounds = 0
        pending = calls
        with self._errors(what):
            while pending:
                if rounds == ATTEMPTS:
                    raise StoreUnavailableError(f"{what}: {_first_error(pending)} (after {ATTEMPTS} rounds)")
                if rounds and any(isinstance(c.error, redis.exceptions.TryAgainError) for c in pending):
                    time.sleep(TRYAGAIN_PAUSE)
                rounds += 1
                self._round(pending, wait)
                if any([self._classify(call) for call in pending]):  # noqa: C419 - classify every call
                    self._refresh()
                if not_replicated := [c for c in pending if isinstance(c.error, StoreNotReplicatedError)]:
                    raise StoreNotReplicatedError(f"{what}: {not_replicated[0].error}; kept for a retry")
                pending = [call for call in pending if not call.done]
        self.round_trips.per_call.append(rounds)

    def _classify(self, call: _Call) -> bool:
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
            raise StoreError(f"{self._where} refused a call for bucket {tag(call.group)}: {error}")
        return False

    # ------------------------------------------------------------------------------------------------ contract

    def write_cycle(self, cycle: Cycle) -> bool:
        """One WRITE_GROUP per bucket of profiles, one round trip per shard; all or nothing per bucket. Returns
        `False` when every bucket had already applied this cycle id."""
        groups: dict[str, list[tuple[SeriesKey, list[int]]]] = {}
        for key, values in cycle.by_series().items():
            groups.setdefault(bucket_of(key.measurement_hash), []).append((key, values))
        done = self._applied.get(cycle.cycle_id, set())
        head: list[str | int] = [
            self._cycle_ttl_s,
            cycle.at_ms,
            cycle.at_s,
            "" if cycle.cutoff_ms is None else cycle.cutoff_ms,
            cycle.reservoir_size,
            cycle.cycle_id,
        ]
        calls: list[_Call] = []
        for digest, series in groups.items():
            if digest in done:
                continue
            keys = [group_marker_key(digest)]
            args = list(head)
            for key, values in series:
                keys.append(tagged_values_key(key))
                args.append(len(values))
                args.extend(values)
            keys += _derived(keys[1:])
            calls.append(_Call(digest, WRITE_GROUP, self._shas[WRITE_GROUP], keys, args))
        what = f"writing cycle {cycle.cycle_id} ({len(cycle.samples)} samples, {len(groups)} buckets)"
        try:
            self._run(calls, what, wait=self.min_replicas > 0)
        finally:
            applied_now = {call.group for call in calls if call.done}
            if applied_now and len(applied_now | done) < len(groups):
                self._applied[cycle.cycle_id] = done | applied_now
                while len(self._applied) > _REMEMBERED_CYCLES:
                    self._applied.popitem(last=False)
        self._applied.pop(cycle.cycle_id, None)
        return any(call.reply == 1 for call in calls) or (bool(done) and not calls)

    def read_many(self, keys: Sequence[SeriesKey], *, with_times: bool = False) -> list[Series]:
        """Every bucket's series in one READ_GROUP (a snapshot per bucket), one round trip per shard."""
        groups: dict[str, list[SeriesKey]] = {}
        for key in keys:
            groups.setdefault(bucket_of(key.measurement_hash), []).append(key)
        calls: list[tuple[list[SeriesKey], _Call]] = []
        flag = "1" if with_times else "0"
        for digest, members in groups.items():
            for start in range(0, len(members), READ_BATCH):
                batch = members[start : start + READ_BATCH]
                names = [tagged_values_key(k) for k in batch]
                call = _Call(digest, READ_GROUP, self._shas[READ_GROUP], names + _derived(names), [flag])
                calls.append((batch, call))
        self._run([call for _, call in calls], f"reading {len(keys)} series")
        found: dict[SeriesKey, Series] = {}
        for batch, call in calls:
            for key, reply in zip(batch, call.reply, strict=True):
                found[key] = RedisHistoryStore._series(key, reply, with_times)
        return [found[key] for key in keys]

    def import_profiles(self, profiles: Sequence[Sequence[Series]]) -> list[bool]:
        """Copy whole profiles' series (read with times from another store) into this cluster, one IMPORT_GROUP
        per profile, one round trip per shard; a profile with any series already here is skipped (`False`)."""
        calls: list[_Call] = []
        for series in profiles:
            names = [tagged_values_key(s.key) for s in series]
            args: list[str | int] = []
            for item in series:
                times = item.times_s if item.times_s is not None else ()
                if len(times) != len(item.values):
                    raise ValueError(f"series {item.key} must be read with its times to be copied")
                args += [
                    len(item.values),
                    *item.values,
                    *times,
                    "" if item.first_seen_ms is None else item.first_seen_ms,
                ]
            digest = series[0].key.measurement_hash
            if any(s.key.measurement_hash != digest for s in series):
                raise ValueError("a profile's series must share one measurement hash")
            call = _Call(bucket_of(digest), IMPORT_GROUP, self._shas[IMPORT_GROUP], names + _derived(names), args)
            calls.append(call)
        self._run(calls, f"copying {len(calls)} profiles")
        return [call.reply == 1 for call in calls]

    def read(self, key: SeriesKey, *, with_times: bool = False) -> Series:
        """One series. See `HistoryStore.read`."""
        return self.read_many([key], with_times=with_times)[0]

    def _primaries(self) -> list[redis.Redis]:
        cluster = self._client()
        primaries: list[ClusterNode] = cluster.get_primaries()  # type: ignore[no-untyped-call]
        return [cluster.get_redis_connection(node) for node in primaries]

    def purge(self, measurement_hash: str) -> int:
        """Delete a profile's keys (one slot: SCAN its node); returns the series count. Its bucket's marker list
        stays: the bucket's other profiles share it (and it expires)."""
        pattern = tagged_profile_pattern(measurement_hash)
        series = 0
        with self._errors(f"purging history {measurement_hash}"):
            cluster = self._client()
            node: Any = cluster.get_redis_connection(
                cluster.nodes_manager.get_node_from_slot(key_slot(tag(bucket_of(measurement_hash)).encode()))
            )
            execute: Callable[..., Any] = node.execute_command
            cursor = 0
            while True:
                cursor, found = execute("SCAN", cursor, "MATCH", pattern, "COUNT", _SCAN_COUNT)
                if found:
                    execute("DEL", *found)
                    series += sum(1 for name in found if is_values_key(untagged(name.decode())))
                if int(cursor) == 0:
                    break
            hdel: Callable[..., Any] = cluster.execute_command
            hdel("HDEL", UNOWNED_KEY, measurement_hash)
        return series

    def measurement_hashes(self) -> set[str]:
        """SCAN `ballast:metrics:{*` on every primary."""
        hashes: set[str] = set()
        with self._errors("listing measurement hashes"):
            for node in self._primaries():
                execute: Callable[..., Any] = node.execute_command
                cursor = 0
                while True:
                    cursor, found = execute("SCAN", cursor, "MATCH", PREFIX + "{*", "COUNT", _SCAN_COUNT)
                    for raw in found:
                        name = untagged(raw.decode())
                        if is_values_key(name):
                            hashes.add(measurement_hash_of(name))
                    if int(cursor) == 0:
                        break
        return hashes

    def unowned_since(self, unowned: Collection[str], now_ms: int) -> dict[str, int]:
        """`ballast:unowned` is one key (one slot); as the single-instance backend."""
        wanted = set(unowned)
        with self._errors("recording unowned history"):
            cluster = self._client()
            execute: Callable[..., Any] = cluster.execute_command
            known = {key.decode(): int(value) for key, value in execute("HGETALL", UNOWNED_KEY).items()}
            if gone := known.keys() - wanted:
                execute("HDEL", UNOWNED_KEY, *gone)
            for digest in wanted - known.keys():
                execute("HSETNX", UNOWNED_KEY, digest, now_ms)
                known[digest] = int(execute("HGET", UNOWNED_KEY, digest))
            return {digest: known[digest] for digest in wanted}

    def ping(self) -> None:
        """Raise `StoreUnavailableError` unless every primary answers PING."""
        with self._errors("ping"):
            for node in self._primaries():
                ping: Callable[..., Any] = node.execute_command
                ping("PING")

    def primary(self) -> str | None:
        """The primaries, comma-separated (for `ballast_history_primary`); `None` before the first call."""
        cluster = self._cluster
        if isinstance(cluster, _LazyCluster) and cluster.client is None:
            return None
        primaries: list[ClusterNode] = self._client().get_primaries()  # type: ignore[no-untyped-call]
        return ",".join(sorted(node.name for node in primaries))

    def close(self) -> None:
        """Close every node's connections."""
        cluster = self._cluster
        if isinstance(cluster, _LazyCluster):
            if cluster.client is not None:
                cluster.client.close()
        else:
            cluster.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class _LazyCluster:
    """RedisCluster connects in its constructor; the store connects at its first call (as the other backends),
    so an unreachable cluster at start-up is a failed call, not a crash."""

    def __init__(self, hosts: Sequence[tuple[str, int]], kwargs: dict[str, Any]) -> None:
        self._hosts = hosts
        self._kwargs = kwargs
        self.client: RedisCluster | None = None

    def get(self) -> RedisCluster:
        if self.client is None:
            self.client = RedisCluster(
                startup_nodes=[ClusterNode(host, port) for host, port in self._hosts],  # type: ignore[no-untyped-call]
                retry=Retry(NoBackoff(), 0),
                **self._kwargs,
            )
        return self.client


def _derived(values_keys: list[str]) -> list[str]:
    """Each value list's `:ts` and `:first_seen`, declared to the server with the script's keys."""
    return [name + suffix for name in values_keys for suffix in (TIMES_SUFFIX, FIRST_SEEN_SUFFIX)]


def _reply_or_error(connection: Any) -> Any:
    try:
        return connection.read_response()
    except redis.exceptions.ResponseError as exc:
        return exc


def _first_error(calls: Sequence[_Call]) -> str:
    return next((str(call.error) for call in calls if call.error is not None), "no reply")


def _sha(script: str) -> str:
    return hashlib.sha1(script.encode(), usedforsecurity=False).hexdigest()
