"""Redis/Valkey specifics on a real redis-server: the Go operator's key schema both ways, one round trip per
cycle, all-or-nothing cycles, outages (SIGSTOP, crash and restart from the append-only file), auth and TLS."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any, ClassVar

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from ballast.internal.history import (
    Cycle,
    RedisHistoryStore,
    Sample,
    Series,
    SeriesKey,
    StoreError,
    StoreUnavailableError,
    open_store,
)
from tests.integration.redis_server import RedisServer, TLSFiles

T0 = 1_732_900_000_000
MINUTE = 60_000
DAY = 86_400_000
HASH = "8746f67fe9f3d343"
CPU = SeriesKey(HASH, "app", "cpu")
MEMORY = SeriesKey(HASH, "app", "memory")
CPU_KEY = f"ballast:metrics:{HASH}:app:cpu"


class _CountingConnection(redis.Connection):
    """Counts requests put on the wire: a pipeline or one command is one send, then one wait for replies."""

    sends: ClassVar[int] = 0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        type(self).sends += 1
        super().send_packed_command(command, check_health)  # type: ignore[no-untyped-call]


def _counting_store(url: str) -> RedisHistoryStore:
    pool = redis.ConnectionPool.from_url(
        url, connection_class=_CountingConnection, retry=Retry(NoBackoff(), 0), socket_timeout=5
    )
    return RedisHistoryStore(redis.Redis(connection_pool=pool))


def _samples(n_series: int, per_series: int) -> list[Sample]:
    keys = [SeriesKey(f"{i:016x}", f"c{i % 2}", "cpu" if i % 3 else "memory") for i in range(n_series)]
    return [Sample(key, v) for v in range(per_series) for key in keys]


def test_the_go_operators_key_schema_and_value_format(redis_server: RedisServer) -> None:
    with open_store(redis_server.url) as store:
        store.write_cycle(Cycle("kubernetesMetrics/1", T0, [Sample(CPU, 230), Sample(CPU, 1000), Sample(MEMORY, 7)]))
    raw = redis_server.client()
    assert sorted(raw.keys("ballast:metrics:*")) == [
        CPU_KEY,
        f"{CPU_KEY}:first_seen",
        f"{CPU_KEY}:ts",
        f"ballast:metrics:{HASH}:app:memory",
        f"ballast:metrics:{HASH}:app:memory:first_seen",
        f"ballast:metrics:{HASH}:app:memory:ts",
    ]
    # what the Go operator reads: LRANGE of bare decimal integers, GET first_seen in epoch ms
    assert raw.lrange(CPU_KEY, 0, -1) == ["230", "1000"]
    assert raw.get(f"{CPU_KEY}:first_seen") == str(T0)
    assert raw.lrange(f"{CPU_KEY}:ts", 0, -1) == [str(T0 // 1000)] * 2
    assert raw.type("ballast:cycle:kubernetesMetrics/1") == "string"
    assert 0 < raw.ttl("ballast:cycle:kubernetesMetrics/1") <= 86_400


@pytest.mark.parametrize(("n_series", "per_series"), [(1, 1), (40, 3), (1000, 10)])
def test_a_cycle_is_one_round_trip(redis_server: RedisServer, n_series: int, per_series: int) -> None:
    store = _counting_store(redis_server.url)
    store.ping()  # connect first: the handshake is not part of a cycle
    samples = _samples(n_series, per_series)
    before = _CountingConnection.sends
    assert store.write_cycle(Cycle("c1", T0, samples))
    assert _CountingConnection.sends - before == 1
    keys = sorted({sample.key for sample in samples}, key=str)[:32]
    before = _CountingConnection.sends
    series = store.read_many(keys)
    assert _CountingConnection.sends - before == 1
    assert all(len(s.values) == per_series for s in series)
    store.close()


def test_history_written_by_the_go_operator_is_read_as_is(redis_server: RedisServer) -> None:
    raw = redis_server.client()
    for value in (100, 200, 300):  # AddSample: RPUSH, LTRIM, SETNX first_seen — no times
        raw.rpush(CPU_KEY, value)
        raw.setnx(f"{CPU_KEY}:first_seen", T0)
    with open_store(redis_server.url) as store:
        assert store.read(CPU, with_times=True) == Series(CPU, (100, 200, 300), T0, (T0 // 1000,) * 3)
        store.write_cycle(Cycle("c1", T0 + DAY, [Sample(CPU, 400), Sample(CPU, 500)], reservoir_size=4))
        series = store.read(CPU, with_times=True)
    # the oldest value fell out of the reservoir; the undated ones stay dated at first_seen, which does not move
    assert series == Series(CPU, (200, 300, 400, 500), T0, (T0 // 1000,) * 2 + ((T0 + DAY) // 1000,) * 2)
    assert raw.llen(f"{CPU_KEY}:ts") == 2


@pytest.mark.parametrize(
    ("first_seen_age", "expected_values", "expected_first_seen"),
    [
        # older than the window: the Go operator's undated values are dated there and expire
        (3 * DAY, (1,), lambda now, cutoff: now),
        # inside the window: they stay
        (DAY // 2, (100, 200, 1), lambda now, cutoff: now - DAY // 2),
    ],
)
def test_go_history_under_a_retention_window(
    redis_server: RedisServer, first_seen_age: int, expected_values: tuple[int, ...], expected_first_seen: Any
) -> None:
    now = T0 + 10 * DAY
    raw = redis_server.client()
    raw.rpush(CPU_KEY, 100, 200)
    raw.set(f"{CPU_KEY}:first_seen", now - first_seen_age)
    with open_store(redis_server.url) as store:
        store.write_cycle(Cycle("c1", now, [Sample(CPU, 1)], retention=timedelta(days=1)))
        series = store.read(CPU)
    assert series.values == expected_values
    assert series.first_seen_ms == expected_first_seen(now, now - DAY)


def test_a_refused_cycle_writes_nothing(redis_server: RedisServer) -> None:
    raw = redis_server.client()
    with open_store(redis_server.url) as store:
        store.write_cycle(Cycle("c1", T0, [Sample(CPU, 1)]))
        raw.set(f"ballast:metrics:{HASH}:app:memory", "not a list")
        # CPU comes first in the cycle: its append must not survive the failure on MEMORY
        with pytest.raises(StoreError, match=f"ballast:metrics:{HASH}:app:memory: WRONGTYPE"):
            store.write_cycle(Cycle("c2", T0 + MINUTE, [Sample(CPU, 2), Sample(MEMORY, 3)]))
        assert store.read(CPU) == Series(CPU, (1,), T0)
        assert raw.exists("ballast:cycle:c2") == 0
        raw.delete(f"ballast:metrics:{HASH}:app:memory")
        assert store.write_cycle(Cycle("c2", T0 + MINUTE, [Sample(CPU, 2), Sample(MEMORY, 3)])) is True
        assert store.read(CPU).values == (1, 2)


@pytest.mark.parametrize(
    ("corrupt", "read_error", "write_error"),
    [
        ({f"{CPU_KEY}:first_seen": "yesterday"}, "not epoch milliseconds", "not epoch milliseconds"),
        ({CPU_KEY: ["12", "1.5"]}, "not a decimal integer", None),  # appending never parses old values
        ({CPU_KEY: ["12"], f"{CPU_KEY}:ts": ["soon"]}, "not a decimal integer", "not epoch seconds"),
    ],
)
def test_corrupt_history_is_an_error_not_a_silent_skip(
    redis_server: RedisServer, corrupt: dict[str, Any], read_error: str, write_error: str | None
) -> None:
    raw = redis_server.client()
    for name, value in corrupt.items():
        if isinstance(value, list):
            raw.rpush(name, *value)
        else:
            raw.set(name, value)
    with open_store(redis_server.url) as store:
        with pytest.raises(StoreError, match=read_error):
            store.read(CPU, with_times=True)
        if write_error is not None:
            with pytest.raises(StoreError, match=write_error):
                store.write_cycle(Cycle("c1", T0, [Sample(CPU, 1)], retention=timedelta(days=1)))
            assert raw.exists("ballast:cycle:c1") == 0


def test_purge_deletes_every_key_of_the_profile_and_nothing_else(redis_server: RedisServer) -> None:
    other = SeriesKey("b155686f88558bac", "app", "cpu")
    odd = SeriesKey(HASH, "app", "ts")  # a resource named like the times suffix is still a series
    with open_store(redis_server.url) as store:
        store.write_cycle(Cycle("c1", T0, [Sample(CPU, 1), Sample(MEMORY, 2), Sample(odd, 3), Sample(other, 4)]))
        assert store.purge(HASH) == 3
    raw = redis_server.client()
    assert sorted(raw.keys("*")) == [
        "ballast:cycle:c1",
        "ballast:metrics:b155686f88558bac:app:cpu",
        "ballast:metrics:b155686f88558bac:app:cpu:first_seen",
        "ballast:metrics:b155686f88558bac:app:cpu:ts",
    ]


@pytest.mark.alone  # asserts the error comes within the timeout + 0.5 s
def test_a_paused_server_gives_a_typed_error_within_the_timeout_and_a_restart_keeps_committed_history(
    redis_server: RedisServer,
) -> None:
    timeout = 0.5
    committed = Cycle("c1", T0, [Sample(CPU, 1), Sample(MEMORY, 2)])
    cut = Cycle("c2", T0 + MINUTE, [Sample(CPU, 3), Sample(MEMORY, 4)])
    with open_store(redis_server.url, timeout=timeout) as store:
        assert store.write_cycle(committed)
        redis_server.pause()
        began = time.monotonic()
        with pytest.raises(StoreUnavailableError, match="writing cycle c2"):
            store.write_cycle(cut)
        assert time.monotonic() - began < timeout + 0.5  # no hidden client retries
        with pytest.raises(StoreUnavailableError):
            store.read(CPU)
        # crash while paused: the cut cycle never ran; the committed one is in the append-only file
        redis_server.kill()
        with pytest.raises(StoreUnavailableError, match="unavailable"):
            store.ping()
        redis_server.start()
        assert store.read_many([CPU, MEMORY]) == [Series(CPU, (1,), T0), Series(MEMORY, (2,), T0)]
        assert store.write_cycle(cut) is True
        assert store.write_cycle(cut) is False
        assert store.read_many([CPU, MEMORY]) == [Series(CPU, (1, 3), T0), Series(MEMORY, (2, 4), T0)]


def test_a_cycle_that_timed_out_is_applied_once_whatever_the_server_did(redis_server: RedisServer) -> None:
    cut = Cycle("c1", T0, [Sample(CPU, 1), Sample(MEMORY, 2)])
    with open_store(redis_server.url, timeout=0.3) as store:
        store.ping()
        redis_server.pause()
        with pytest.raises(StoreUnavailableError):
            store.write_cycle(cut)
        redis_server.resume()  # the server may now run the request it had received, entirely
        store.write_cycle(cut)  # the collector's retry: applied now, or recognised as applied
        assert store.write_cycle(cut) is False
        assert store.read_many([CPU, MEMORY]) == [Series(CPU, (1,), T0), Series(MEMORY, (2,), T0)]


@pytest.mark.parametrize("username", [None, "ballast"])
def test_password_and_acl_user(start_redis_server: Callable[..., RedisServer], username: str | None) -> None:
    server = start_redis_server(username=username, password="s3cret-pw")
    with open_store(server.url) as store:
        assert store.write_cycle(Cycle("c1", T0, [Sample(CPU, 1)]))
        assert store.read(CPU).values == (1,)
    wrong = server.url.replace("s3cret-pw", "wrong-pw")
    with open_store(wrong, timeout=2) as store, pytest.raises(StoreUnavailableError) as caught:
        store.ping()
    assert "wrong-pw" not in str(caught.value)


def test_tls(start_redis_server: Callable[..., RedisServer], tls_files: TLSFiles) -> None:
    server = start_redis_server(tls=tls_files)
    assert server.url.startswith("rediss://")
    with open_store(server.url) as store:
        assert store.write_cycle(Cycle("c1", T0, [Sample(CPU, 1)]))
        assert store.read(CPU) == Series(CPU, (1,), T0)
    # a client that does not trust the CA is refused, as an unavailable store
    untrusted = server.url.split("?", 1)[0]
    with open_store(untrusted, timeout=2) as store, pytest.raises(StoreUnavailableError):
        store.ping()
