"""Behind Sentinel on real processes (1 primary, 2 replicas, 3 sentinels on loopback): the primary SIGKILLed
while cycles are written, a replica promoted, and every sample present exactly once (difference 67)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ballast.internal.collection import HeldCycle, PendingCycles
from ballast.internal.history import (
    Cycle,
    HistoryStore,
    RedisHistoryStore,
    Sample,
    SeriesKey,
    StoreNotReplicatedError,
    StoreUnavailableError,
    open_store,
)
from tests.figures import write_figures
from tests.integration.redis_server import redis_server_or_skip
from tests.integration.redis_topology import SentinelGroup

CPU = SeriesKey("0123456789abcdef", "app", "cpu")
MEMORY = SeriesKey("0123456789abcdef", "app", "memory")
T0 = 1_732_900_000_000


@pytest.fixture
def group(tmp_path: Path) -> Iterator[SentinelGroup]:
    sentinels = SentinelGroup(redis_server_or_skip(), tmp_path, down_after_ms=1000)
    try:
        sentinels.start()
        yield sentinels
    finally:
        sentinels.stop()


def cycle(n: int) -> Cycle:
    return Cycle(f"kubernetesMetrics/{T0 + n * 1000}", T0 + n * 1000, [Sample(CPU, n), Sample(MEMORY, 1000 + n)])


def collect(store: HistoryStore, pending: PendingCycles, write: Cycle) -> bool:
    """The collector's order (controllers/collector.py): the held cycles first, oldest first, then this one;
    whatever the store did not acknowledge is held."""
    while (held := pending.oldest()) is not None:
        try:
            store.write_cycle(held.cycle)
        except StoreUnavailableError:
            pending.hold(HeldCycle(write, "kubernetesMetrics"))
            return False
        pending.written()
    try:
        store.write_cycle(write)
    except StoreUnavailableError:
        pending.hold(HeldCycle(write, "kubernetesMetrics"))
        return False
    return True


def test_primary_killed_under_collection_loses_no_sample(group: SentinelGroup) -> None:
    store = open_store(group.url, timeout=1.0)
    assert isinstance(store, RedisHistoryStore)
    assert store.min_replicas == 1
    pending = PendingCycles()
    old_port = group.primary_port()
    written, n, most_held = 0, 0, 0
    killed_at, resumed_at = 0.0, 0.0
    with store:
        while written < 10:  # cycles written after the promotion
            n += 1
            ok = collect(store, pending, cycle(n))
            most_held = max(most_held, pending.cycles)
            if n == 10:
                group.server_on(old_port).kill()  # SIGKILL: the primary's unsent writes die with it
                killed_at = time.monotonic()
            if killed_at and ok and n > 10:
                written += 1
                resumed_at = resumed_at or time.monotonic()
            assert n < 400, "no primary answered within 40 s of the kill"
            time.sleep(0.1)
        failover_s = resumed_at - killed_at
        new_port = group.primary_port()
        assert new_port != old_port
        assert store.primary() == f"127.0.0.1:{new_port}"
        assert most_held > 0, "the outage held no cycle: the kill was not under collection"
        assert pending.cycles == 0
        cpu, memory = store.read_many([CPU, MEMORY])
    # every sample of every cycle, once, in order: none lost in the failover, none written twice
    assert cpu.values == tuple(range(1, n + 1))
    assert memory.values == tuple(1000 + i for i in range(1, n + 1))
    assert failover_s < 30
    write_figures(
        "sentinel_failover",
        {
            "samples_lost": 2 * n - len(set(cpu.values)) - len(set(memory.values)),
            "cycles_written_twice": len(cpu.values) - len(set(cpu.values)),
            "failover_seconds": round(failover_s, 2),
            "down_after_ms": 1000,
            "cycles_held": most_held,
        },
        source="tests/integration/internal/history/test_sentinel.py",
    )


def test_a_write_no_replica_acknowledged_is_retried_without_applying_twice(group: SentinelGroup) -> None:
    replicas = [server for server in group.servers if server.port != group.primary_port()]
    with open_store(group.url, timeout=1.0) as store:
        assert store.write_cycle(cycle(1))
        for replica in replicas:
            replica.pause()
        try:
            with pytest.raises(StoreNotReplicatedError, match="0 of the 1 replicas wanted acknowledged it"):
                store.write_cycle(cycle(2))
        finally:
            for replica in replicas:
                replica.resume()
        # the retry finds the marker, applies nothing, and its WAIT covers the first attempt's write
        assert store.write_cycle(cycle(2)) is False
        assert store.read(CPU).values == (1, 2)
        replica_view = RedisHistoryStore.from_url(replicas[0].url)
        deadline = time.monotonic() + 5
        while replica_view.read(CPU).values != (1, 2) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert replica_view.read(CPU).values == (1, 2)
