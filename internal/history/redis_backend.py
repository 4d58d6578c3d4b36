"""The Redis/Valkey backend: the Go operator's key schema, one Lua script per collection cycle; standalone or
behind Sentinel (docs/design.md, differences 66 and 67)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterator, Sequence
from datetime import timedelta
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit

import msgspec
import redis
import redis.exceptions
from redis.backoff import NoBackoff
from redis.retry import Retry
from redis.sentinel import Sentinel

from .errors import StoreError, StoreNotReplicatedError, StoreUnavailableError, StoreURLError
from .keys import (
    PREFIX,
    UNOWNED_KEY,
    cycle_key,
    is_values_key,
    measurement_hash_of,
    profile_pattern,
    values_key,
)
from .protocol import DEFAULT_CYCLE_TTL
from .redis_scripts import READ_SERIES, WRITE_CYCLE
from .series import Cycle, Series, SeriesKey
from .topology import SentinelTarget, client_tls

DEFAULT_TIMEOUT = 5.0
"""Seconds a connect or a reply may take before the store counts as unavailable."""

READ_BATCH = 32
"""Series per read EVAL: at the default reservoir about 30 ms of server time, so other clients never wait long."""

DEFAULT_SENTINEL_MIN_REPLICAS = 1
"""Replicas that must acknowledge a cycle behind Sentinel unless told otherwise (`--history-min-replicas`)."""

_PURGE_SCAN_COUNT = 100  # the Go operator's SCAN COUNT
_HASHES_SCAN_COUNT = 1000  # every history key is walked: bigger steps, still short for the server


_DECIMAL_BYTES = b"0123456789 -"
_INT_ARRAY = msgspec.json.Decoder(tuple[int, ...])


def _parse_ints(raw: bytes, what: str) -> tuple[int, ...]:
    """Space-separated decimal integers (the READ_SERIES reply) → ints.

    A reservoir holds up to 10,000 values; msgspec reads them as one JSON array of ints (exact at any size)
    about 3× faster than `int()` per value. Anything else — other characters, doubled spaces, leading zeros —
    takes the slow path, which also names the bad value.
    """
    if raw and not raw.translate(None, _DECIMAL_BYTES):
        with contextlib.suppress(msgspec.DecodeError):
            return _INT_ARRAY.decode(b"[" + raw.replace(b" ", b",") + b"]")
    try:
        return tuple(map(int, raw.split()))
    except ValueError as exc:
        raise StoreError(f"{what} holds a value that is not a decimal integer: {exc}") from exc


class RedisHistoryStore:
    """History in Redis/Valkey under `ballast:metrics:…` (keys.py), readable by the Go operator and back.

    Writes are one EVAL per cycle (one round trip, atomic, idempotent by cycle id); reads are one EVAL per
    `READ_BATCH` series (each a consistent snapshot). A lost connection is re-established on the next call. Errors:
    `StoreUnavailableError` for connection failures and timeouts (the client does not retry on its own, so the
    error arrives within `timeout`), `StoreError` for refusals (wrong key types, corrupt values).
    """

    def __init__(
        self,
        client: redis.Redis,
        *,
        cycle_ttl: timedelta = DEFAULT_CYCLE_TTL,
        min_replicas: int = 0,
        wait_timeout: float = 1.0,
        where: str | None = None,
    ) -> None:
        """Wrap a `redis.Redis` client (bytes replies, i.e. `decode_responses=False`). Prefer `from_url`.

        `min_replicas` > 0: each cycle's EVAL is followed, in the same pipeline on the same connection, by
        `WAIT min_replicas wait_timeout`, and a cycle fewer replicas acknowledged raises `StoreNotReplicatedError`.
        """
        if cycle_ttl < timedelta(seconds=1):
            raise ValueError(f"cycle_ttl {cycle_ttl} must be at least one second")
        if min_replicas < 0:
            raise ValueError(f"min_replicas {min_replicas} must be 0 or more")
        if wait_timeout <= 0:
            raise ValueError(f"wait_timeout {wait_timeout} must be positive (seconds)")
        self._client = client
        # redis-py leaves execute_command untyped; every reply is parsed and checked here.
        self._execute: Callable[..., Any] = client.execute_command
        self._cycle_ttl_s = int(cycle_ttl.total_seconds())
        self.min_replicas = min_replicas
        self._wait_timeout_ms = max(1, int(wait_timeout * 1000))
        kwargs = client.connection_pool.connection_kwargs
        # Where, for error messages: never the URL itself, which may carry a password.
        self._where = where or str(
            kwargs.get("path") or f"{kwargs.get('host', 'localhost')}:{kwargs.get('port', 6379)}"
        )

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        cycle_ttl: timedelta = DEFAULT_CYCLE_TTL,
        min_replicas: int = 0,
    ) -> RedisHistoryStore:
        """Open `redis://[[user]:password@]host[:port][/db]` or `rediss://…` (TLS; options such as
        `?ssl_ca_certs=/path/ca.crt` or `ssl_cert_reqs=none` in the query). Nothing is sent until the first call.

        Raises `StoreURLError` for a URL the client cannot parse.
        """
        if timeout <= 0:
            raise ValueError(f"timeout {timeout} must be positive (seconds)")
        database = urlsplit(url).path.lstrip("/")
        if database and not database.isdigit():
            # redis-py would silently use database 0
            raise StoreURLError(f"store URL: database {database!r} is not a number (redis://host:6379/0)")
        try:
            client = redis.Redis.from_url(
                url,
                socket_timeout=timeout,
                socket_connect_timeout=timeout,
                retry=Retry(NoBackoff(), 0),
                decode_responses=False,
            )
        except ValueError as exc:
            raise StoreURLError(f"store URL: {exc}") from exc
        return cls(client, cycle_ttl=cycle_ttl, min_replicas=min_replicas, wait_timeout=timeout / 2)

    @classmethod
    def from_sentinel(
        cls,
        target: SentinelTarget,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        cycle_ttl: timedelta = DEFAULT_CYCLE_TTL,
        min_replicas: int = DEFAULT_SENTINEL_MIN_REPLICAS,
    ) -> RedisHistoryStore:
        """The primary of a Sentinel-managed group, found by redis-py's `Sentinel.master_for` (asked again after a
        connection to it fails, so a promoted replica is found at the next call). Nothing is sent yet."""
        if timeout <= 0:
            raise ValueError(f"timeout {timeout} must be positive (seconds)")
        endpoints = target.endpoints
        tls = client_tls(endpoints)
        sentinel_auth = {"username": target.sentinel_username, "password": target.sentinel_password}
        common: dict[str, Any] = {"socket_timeout": timeout, "socket_connect_timeout": timeout, **tls}
        sentinel = Sentinel(
            list(endpoints.hosts),
            sentinel_kwargs={**common, **{k: v for k, v in sentinel_auth.items() if v is not None}},
            **common,
        )
        client = sentinel.master_for(
            target.service,
            redis_class=redis.Redis,
            db=target.db,
            username=endpoints.username,
            password=endpoints.password,
            retry=Retry(NoBackoff(), 0),
            decode_responses=False,
        )
        where = f"the primary of Sentinel service {target.service!r} (sentinels {endpoints.redacted()})"
        # WAIT must answer well within the socket timeout.
        return cls(client, cycle_ttl=cycle_ttl, min_replicas=min_replicas, wait_timeout=timeout / 2, where=where)

    def primary(self) -> str | None:
        """The primary last used ("host:port"), for the `ballast_history_primary` metric; `None` before any call."""
        pool = self._client.connection_pool
        address = getattr(pool, "master_address", None)
        if isinstance(address, tuple):
            return f"{address[0]}:{address[1]}"
        kwargs = pool.connection_kwargs
        return None if "host" not in kwargs else f"{kwargs['host']}:{kwargs.get('port', 6379)}"

    @contextlib.contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        try:
            yield
        except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError) as exc:
            raise StoreUnavailableError(f"{what}: Redis at {self._where} is unavailable: {exc}") from exc
        except redis.exceptions.ReadOnlyError as exc:
            raise StoreUnavailableError(f"{what}: Redis at {self._where} is a read-only replica: {exc}") from exc
        except redis.exceptions.RedisError as exc:
            raise StoreError(f"{what}: Redis at {self._where} refused it: {exc}") from exc

    def _eval(self, script: str, keys: Sequence[str], args: Sequence[str | int]) -> Any:
        # Plain EVAL, not EVALSHA: always exactly one round trip, also right after a server restart.
        return self._execute("EVAL", script, len(keys), *keys, *args)

    def write_cycle(self, cycle: Cycle) -> bool:
        """Apply `cycle` in one EVAL; `False` when its id was already applied. See `HistoryStore.write_cycle`."""
        grouped = cycle.by_series()
        keys = [cycle_key(cycle.cycle_id)]
        args: list[str | int] = [
            self._cycle_ttl_s,
            cycle.at_ms,
            cycle.at_s,
            "" if cycle.cutoff_ms is None else cycle.cutoff_ms,
            cycle.reservoir_size,
        ]
        for key, values in grouped.items():
            keys.append(values_key(key))
            args.append(len(values))
            args.extend(values)
        what = f"writing cycle {cycle.cycle_id} ({len(cycle.samples)} samples)"
        with self._errors(what):
            if not self.min_replicas:
                return bool(self._eval(WRITE_CYCLE, keys, args))
            # One pipeline, one connection: WAIT counts only this connection's earlier writes (a retry's marker
            # refresh included) and cannot run inside the script.
            pipe = self._client.pipeline(transaction=False)
            queue: Callable[..., Any] = pipe.execute_command
            queue("EVAL", WRITE_CYCLE, len(keys), *keys, *args)
            queue("WAIT", self.min_replicas, self._wait_timeout_ms)
            applied, acknowledged = pipe.execute()
        if int(acknowledged) < self.min_replicas:
            raise StoreNotReplicatedError(
                f"{what}: {acknowledged} of the {self.min_replicas} replicas wanted acknowledged it within "
                f"{self._wait_timeout_ms} ms at {self._where}; kept for a retry"
            )
        return bool(applied)

    def read_many(self, keys: Sequence[SeriesKey], *, with_times: bool = False) -> list[Series]:
        """Return the series of `keys`, one EVAL per `READ_BATCH` keys; each batch is one consistent snapshot
        (a profile's series fit in one). See `HistoryStore.read_many`."""
        out: list[Series] = []
        for start in range(0, len(keys), READ_BATCH):
            batch = keys[start : start + READ_BATCH]
            with self._errors(f"reading {len(batch)} series"):
                replies = self._eval(READ_SERIES, [values_key(key) for key in batch], ["1" if with_times else "0"])
            out.extend(self._series(key, reply, with_times) for key, reply in zip(batch, replies, strict=True))
        return out

    @staticmethod
    def _series(key: SeriesKey, reply: list[Any], with_times: bool) -> Series:
        raw_values, raw_first_seen, raw_times = reply
        name = values_key(key)
        values = _parse_ints(raw_values, name)
        first_seen = None
        if raw_first_seen is not None:
            try:
                first_seen = int(raw_first_seen)
            except ValueError:
                raise StoreError(f"{name}:first_seen holds {raw_first_seen!r}, not epoch milliseconds") from None
        times = None
        if with_times:
            dated = _parse_ints(raw_times, f"{name}:ts")[-len(values) :] if values else ()
            undated_at = (first_seen or 0) // 1000
            times = (undated_at,) * (len(values) - len(dated)) + dated
        return Series(key, values, first_seen, times)

    def read(self, key: SeriesKey, *, with_times: bool = False) -> Series:
        """Return one series. See `HistoryStore.read`."""
        return self.read_many([key], with_times=with_times)[0]

    def purge(self, measurement_hash: str) -> int:
        """SCAN `ballast:metrics:<hash>:*` (COUNT 100, as the Go operator) and DEL every key; returns the series count.

        Not atomic: a purge cut short is simply run again (the profile finalizer retries).
        """
        pattern = profile_pattern(measurement_hash)
        series = 0
        with self._errors(f"purging history {measurement_hash}"):
            cursor = 0
            while True:
                cursor, found = self._execute("SCAN", cursor, "MATCH", pattern, "COUNT", _PURGE_SCAN_COUNT)
                if found:
                    self._execute("DEL", *found)
                    series += sum(1 for name in found if is_values_key(name.decode()))
                if int(cursor) == 0:
                    self._execute("HDEL", UNOWNED_KEY, measurement_hash)
                    return series

    def measurement_hashes(self) -> set[str]:
        """SCAN `ballast:metrics:*` for the hashes of the value lists. See `HistoryStore.measurement_hashes`."""
        hashes: set[str] = set()
        with self._errors("listing measurement hashes"):
            cursor = 0
            while True:
                cursor, found = self._execute("SCAN", cursor, "MATCH", f"{PREFIX}*", "COUNT", _HASHES_SCAN_COUNT)
                hashes.update(measurement_hash_of(name.decode()) for name in found if is_values_key(name.decode()))
                if int(cursor) == 0:
                    return hashes

    def series_of(self, measurement_hash: str) -> list[SeriesKey]:
        """The series a profile's history holds (SCAN `ballast:metrics:<hash>:*`), sorted."""
        found: list[SeriesKey] = []
        with self._errors(f"listing the series of {measurement_hash}"):
            cursor = 0
            while True:
                cursor, names = self._execute(
                    "SCAN", cursor, "MATCH", profile_pattern(measurement_hash), "COUNT", _PURGE_SCAN_COUNT
                )
                for raw in names:
                    name = raw.decode()
                    if is_values_key(name):
                        _, container, resource = name[len(PREFIX) :].split(":")
                        found.append(SeriesKey(measurement_hash, container, resource))
                if int(cursor) == 0:
                    return sorted(found, key=lambda key: (key.container, key.resource))

    def unowned_since(self, unowned: Collection[str], now_ms: int) -> dict[str, int]:
        """Since when each hash of `unowned` has had no profile (`ballast:unowned`). See `HistoryStore`.

        Not atomic, and needs not be: the leader alone sweeps, and HSETNX never moves a time already recorded.
        """
        wanted = set(unowned)
        with self._errors("recording unowned history"):
            known = {key.decode(): int(value) for key, value in self._execute("HGETALL", UNOWNED_KEY).items()}
            if gone := known.keys() - wanted:
                self._execute("HDEL", UNOWNED_KEY, *gone)
            for digest in wanted - known.keys():
                self._execute("HSETNX", UNOWNED_KEY, digest, now_ms)
                known[digest] = int(self._execute("HGET", UNOWNED_KEY, digest))
            return {digest: known[digest] for digest in wanted}

    def ping(self) -> None:
        """Raise `StoreUnavailableError` unless Redis answers PING."""
        with self._errors("ping"):
            self._execute("PING")

    def close(self) -> None:
        """Close the client and its connections."""
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
