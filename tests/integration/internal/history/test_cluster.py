"""A real 3-shard Cluster (3 primaries + 3 replicas, `redis-cli --cluster create`, loopback): the tagged layout,
one round trip per shard per cycle, one script per bucket of profiles, per-bucket idempotency, and a resharding
under collection (differences 68 and 76)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from redis.crc import key_slot

from ballast.internal.collection import HeldCycle, PendingCycles
from ballast.internal.history import ClusterHistoryStore, Cycle, Sample, SeriesKey, StoreUnavailableError, open_store
from ballast.internal.history.keys import GROUP_MARKERS, bucket_of, group_marker_key, tagged_values_key
from tests.integration.redis_server import redis_server_or_skip
from tests.integration.redis_topology import LocalCluster

T0 = 1_732_900_000_000
PROFILES = [f"{index:016x}" for index in range(1, 61)]
KEYS = [SeriesKey(digest, "app", resource) for digest in PROFILES for resource in ("cpu", "memory")]


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    local = LocalCluster(redis_server_or_skip(), tmp_path)
    try:
        local.start()
        yield local
    finally:
        local.stop()


@pytest.fixture
def store(cluster: LocalCluster) -> Iterator[ClusterHistoryStore]:
    opened = open_store(cluster.url, timeout=5)
    assert isinstance(opened, ClusterHistoryStore)
    with opened:
        yield opened


def cycle(n: int, keys: list[SeriesKey] = KEYS) -> Cycle:
    return Cycle(f"kubernetesMetrics/{T0 + n * 1000}", T0 + n * 1000, [Sample(key, n) for key in keys])


def test_a_cycle_is_one_round_trip_per_shard_and_spreads_over_every_shard(
    cluster: LocalCluster, store: ClusterHistoryStore
) -> None:
    assert store.write_cycle(cycle(1))  # loads the scripts on each primary (same round trip)
    before = store.round_trips.count
    assert store.write_cycle(cycle(2))
    assert store.round_trips.count - before == cluster.primaries == 3
    before = store.round_trips.count
    series = store.read_many(KEYS)
    assert store.round_trips.count - before == 3
    assert [s.values for s in series] == [(1, 2)] * len(KEYS)
    # every primary holds part of the history
    for port in cluster.primary_ports():
        assert redis.Redis("127.0.0.1", port).dbsize() > 0


def test_keys_carry_the_bucket_as_hash_tag_and_one_bounded_marker_list(
    cluster: LocalCluster, store: ClusterHistoryStore
) -> None:
    for n in range(1, GROUP_MARKERS + 6):
        store.write_cycle(cycle(n, KEYS[:2]))
    client = redis.RedisCluster("127.0.0.1", cluster.servers[0].port, decode_responses=True)
    assert tagged_values_key(KEYS[0]) == f"ballast:metrics:{{01}}{PROFILES[0]}:app:cpu"
    assert client.llen(tagged_values_key(KEYS[0])) == GROUP_MARKERS + 5
    assert client.exists(tagged_values_key(KEYS[0]) + ":ts", tagged_values_key(KEYS[0]) + ":first_seen") == 2
    marker = group_marker_key(bucket_of(PROFILES[0]))
    assert client.llen(marker) == GROUP_MARKERS  # one list per bucket, not a key per cycle
    assert client.ttl(marker) > 0
    assert client.lindex(marker, 0) == f"kubernetesMetrics/{T0 + (GROUP_MARKERS + 5) * 1000}"
    client.close()


def test_a_cycle_sends_one_script_per_bucket_of_profiles(cluster: LocalCluster, store: ClusterHistoryStore) -> None:
    # 600 profiles, whose hashes end in 256 different digit pairs: 256 scripts, not 600 (difference 76)
    profiles = [f"{index:016x}" for index in range(1, 601)]
    keys = [SeriesKey(digest, "app", "cpu") for digest in profiles]
    assert len({bucket_of(digest) for digest in profiles}) == 256
    store.write_cycle(cycle(1, keys))  # loads the scripts
    calls: list[int] = []
    primaries = [redis.Redis("127.0.0.1", port) for port in cluster.primary_ports()]
    for node in primaries:
        node.config_resetstat()
    assert store.write_cycle(cycle(2, keys))
    for node in primaries:
        calls.append(int(node.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0)))
        node.close()
    assert sum(calls) == 256
    assert all(count > 0 for count in calls)  # every shard holds some buckets
    assert {s.values for s in store.read_many(keys)} == {(1, 2)}
    # two profiles of one bucket: one slot
    assert bucket_of(profiles[0]) == bucket_of(profiles[256])
    slots = {key_slot(tagged_values_key(k).encode()) for k in (keys[0], keys[256])}
    assert len(slots) == 1


def test_a_retried_cycle_applies_nothing_twice(store: ClusterHistoryStore) -> None:
    assert store.write_cycle(cycle(1)) is True
    assert store.write_cycle(cycle(1)) is False
    assert {s.values for s in store.read_many(KEYS)} == {(1,)}


def test_purge_and_listing_walk_every_shard(store: ClusterHistoryStore) -> None:
    store.write_cycle(cycle(1))
    assert store.measurement_hashes() == set(PROFILES)
    assert store.purge(PROFILES[0]) == 2
    assert store.measurement_hashes() == set(PROFILES[1:])
    assert store.read(KEYS[0]).values == ()


def test_resharding_under_collection_loses_nothing(cluster: LocalCluster, store: ClusterHistoryStore) -> None:
    source, target, _ = cluster.primary_ports()
    stop = threading.Event()
    written: list[int] = []

    def collect() -> None:
        n = 0
        while not stop.is_set():
            n += 1
            store.write_cycle(cycle(n))  # a StoreError here fails the test: retries are the store's job
            written.append(n)

    collector = threading.Thread(target=collect)
    collector.start()
    try:
        cluster.reshard(source, target, 2000)
    finally:
        stop.set()
        collector.join(30)
    assert written, "no cycle was written during the resharding"
    expected = tuple(range(1, written[-1] + 1))
    assert all(series.values == expected for series in store.read_many(KEYS))
    # it cannot pass without meeting a slot in migration
    assert store.round_trips.asks + store.round_trips.tryagains > 0, store.round_trips


def test_copy_history_moves_a_single_instance_history_once_and_resumes(
    cluster: LocalCluster, store: ClusterHistoryStore, tmp_path: Path
) -> None:
    from ballast.internal.cmd.ballastd import build_parser, copy_history  # noqa: PLC0415
    from tests.integration.redis_server import RedisServer  # noqa: PLC0415

    directory = tmp_path / "single"
    directory.mkdir()
    single = RedisServer(redis_server_or_skip(), directory)
    single.start()
    try:
        with open_store(single.url) as source:
            for n in (1, 2, 3):
                source.write_cycle(cycle(n, KEYS[:20]))
            expected = source.read_many(KEYS[:20], with_times=True)
        # one profile already written by a collector pointed at the cluster: left as it is
        store.write_cycle(cycle(9, KEYS[:2]))
        args = build_parser().parse_args(["copy-history", "--from", single.url, "--to", cluster.url])
        out = (tmp_path / "out.txt").open("w")
        assert copy_history(args, out) == 0
        assert copy_history(args, out) == 0  # run again: nothing copied twice
        out.close()
        lines = (tmp_path / "out.txt").read_text().splitlines()
        assert (
            lines[-3]
            == "done: 9 profiles copied (18 series, 54 samples), 1 already in the cluster and left as they were"
        )
        assert (
            lines[-1]
            == "done: 0 profiles copied (0 series, 0 samples), 10 already in the cluster and left as they were"
        )
        copied = store.read_many(KEYS[:20], with_times=True)
        assert [s.values for s in copied[:2]] == [(9,), (9,)]
        assert copied[2:] == expected[2:]
    finally:
        single.stop()


def test_a_shard_primary_killed_under_collection_loses_nothing(tmp_path: Path) -> None:
    # two replicas per shard: after the promotion a replica is still there to acknowledge (WAIT 1)
    cluster = LocalCluster(redis_server_or_skip(), tmp_path, replicas_each=2)
    cluster.start()
    try:
        _kill_a_primary_under_collection(cluster)
    finally:
        cluster.stop()


def _kill_a_primary_under_collection(cluster: LocalCluster) -> None:
    store = open_store(cluster.url, timeout=1.0, min_replicas=1)
    assert isinstance(store, ClusterHistoryStore)
    pending = PendingCycles()

    def collect(write: Cycle) -> bool:  # the collector's order: held cycles first, oldest first
        pending.hold(HeldCycle(write, "metrics"))
        while (held := pending.oldest()) is not None:
            try:
                store.write_cycle(held.cycle)
            except StoreUnavailableError:
                return False
            pending.written()
        return True

    victim = cluster.primary_ports()[0]
    n, after, most_held = 0, 0, 0
    with store:
        while after < 5:
            n += 1
            ok = collect(cycle(n))
            most_held = max(most_held, pending.cycles)
            if n == 5:
                next(s for s in cluster.servers if s.port == victim).kill()
            after += 1 if ok and n > 5 and most_held else 0
            assert n < 300, "the shard's replica was not promoted"
            time.sleep(0.1)
        assert most_held > 0, "the kill was not under collection"
        assert victim not in cluster.primary_ports_alive()
        assert {s.values for s in store.read_many(KEYS)} == {tuple(range(1, n + 1))}
