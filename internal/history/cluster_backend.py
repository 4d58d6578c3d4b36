"""The Redis/Valkey Cluster backend: the tagged key layout, one pipelined round trip per shard per cycle
(docs/design.md, differences 68 and 76).

Each profile's keys carry its bucket (the measurement hash's last two hex digits) as a hash tag
(keys.tagged_values_key), so a bucket of profiles — their series, the `:ts` and `:first_seen`, the bucket's cycle
markers — lives in one slot and is written by one WRITE_GROUP script: a cycle sends at most 256 scripts, whatever
the number of profiles. A cycle's scripts are grouped by the primary serving their slot and sent to every primary
at once, one pipeline each, then the replies are read: one network round trip per shard. Atomicity and
idempotency are per bucket: each bucket's write carries its own marker, so a cycle is "all or nothing per bucket"
(a profile is never split), and a retry re-sends only the buckets not yet applied. The rounds, and the MOVED,
ASK and TRYAGAIN they follow, are cluster_rounds.py's; the client, made at the first call, cluster_client.py's.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Callable, Collection, Sequence
from datetime import timedelta
from types import TracebackType
from typing import Any, Self

import redis
from redis.cluster import ClusterNode, RedisCluster
from redis.crc import key_slot

from .cluster_client import LazyCluster, cluster_options
from .cluster_rounds import Call, Rounds, RoundTrips, Wait
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
from .series import Cycle, Series, SeriesKey
from .topology import Endpoints

_REMEMBERED_CYCLES = 256  # cycles whose applied groups are remembered, so a retry sends only the rest
_SCAN_COUNT = 1000


class ClusterHistoryStore:
    """History in a Redis/Valkey Cluster in the tagged layout. See the module docstring and `HistoryStore`."""

    def __init__(
        self,
        cluster: RedisCluster | LazyCluster,
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
        self._wait = Wait(min_replicas, max(1, int(wait_timeout * 1000))) if min_replicas > 0 else None
        self._applied: OrderedDict[str, set[str]] = OrderedDict()  # cycle id → groups applied and acknowledged
        self._shas = {script: _sha(script) for script in (WRITE_GROUP, READ_GROUP, IMPORT_GROUP)}
        self._rounds = Rounds(self._client, list(self._shas), list(self._shas.values()), where)

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
        cluster = LazyCluster(endpoints.hosts, cluster_options(endpoints, timeout))
        where = f"the cluster of {endpoints.redacted()}"
        return cls(cluster, cycle_ttl=cycle_ttl, min_replicas=min_replicas, wait_timeout=timeout / 2, where=where)

    @property
    def round_trips(self) -> RoundTrips:
        """Pipelines sent so far, and the MOVED/ASK/TRYAGAIN met (for tests and the benchmark)."""
        return self._rounds.round_trips

    def _client(self) -> RedisCluster:
        cluster = self._cluster
        return cluster.get() if isinstance(cluster, LazyCluster) else cluster

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
        calls: list[Call] = []
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
            calls.append(Call(digest, WRITE_GROUP, self._shas[WRITE_GROUP], keys, args))
        what = f"writing cycle {cycle.cycle_id} ({len(cycle.samples)} samples, {len(groups)} buckets)"
        try:
            self._rounds.run(calls, what, wait=self._wait)
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
        calls: list[tuple[list[SeriesKey], Call]] = []
        flag = "1" if with_times else "0"
        for digest, members in groups.items():
            for start in range(0, len(members), READ_BATCH):
                batch = members[start : start + READ_BATCH]
                names = [tagged_values_key(k) for k in batch]
                call = Call(digest, READ_GROUP, self._shas[READ_GROUP], names + _derived(names), [flag])
                calls.append((batch, call))
        self._rounds.run([call for _, call in calls], f"reading {len(keys)} series")
        found: dict[SeriesKey, Series] = {}
        for batch, call in calls:
            for key, reply in zip(batch, call.reply, strict=True):
                found[key] = RedisHistoryStore._series(key, reply, with_times)
        return [found[key] for key in keys]

    def import_profiles(self, profiles: Sequence[Sequence[Series]]) -> list[bool]:
        """Copy whole profiles' series (read with times from another store) into this cluster, one IMPORT_GROUP
        per profile, one round trip per shard; a profile with any series already here is skipped (`False`)."""
        calls: list[Call] = []
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
            call = Call(bucket_of(digest), IMPORT_GROUP, self._shas[IMPORT_GROUP], names + _derived(names), args)
            calls.append(call)
        self._rounds.run(calls, f"copying {len(calls)} profiles")
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
        with self._rounds.errors(f"purging history {measurement_hash}"):
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
        with self._rounds.errors("listing measurement hashes"):
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
        with self._rounds.errors("recording unowned history"):
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
        with self._rounds.errors("ping"):
            for node in self._primaries():
                ping: Callable[..., Any] = node.execute_command
                ping("PING")

    def primary(self) -> str | None:
        """The primaries, comma-separated (for `ballast_history_primary`); `None` before the first call."""
        cluster = self._cluster
        if isinstance(cluster, LazyCluster) and cluster.client is None:
            return None
        primaries: list[ClusterNode] = self._client().get_primaries()  # type: ignore[no-untyped-call]
        return ",".join(sorted(node.name for node in primaries))

    def close(self) -> None:
        """Close every node's connections."""
        cluster = self._cluster
        if isinstance(cluster, LazyCluster):
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


def _derived(values_keys: list[str]) -> list[str]:
    """Each value list's `:ts` and `:first_seen`, declared to the server with the script's keys."""
    return [name + suffix for name in values_keys for suffix in (TIMES_SUFFIX, FIRST_SEEN_SUFFIX)]


def _sha(script: str) -> str:
    return hashlib.sha1(script.encode(), usedforsecurity=False).hexdigest()
