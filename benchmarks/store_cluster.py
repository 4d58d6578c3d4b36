"""One collection cycle into a 3-shard local Redis Cluster against the same cycle into one redis-server, side by
side in one run; and the history's memory per profile at the default reservoir (docs/install.md, sizing).

Write: 10,000 pods in profiles of 10, 2 containers × cpu+memory each = 40,000 samples, 4,000 series, 1,000
profiles. The baseline is the single-instance backend (one EVAL per cycle); the cluster backend sends one
WRITE_GROUP per bucket of profiles (≤ 256, docs/design.md, difference 76), pipelined per primary — and, for the
contrast, one per profile (a tag per profile, the layout before difference 76: `keys.BUCKET_DIGITS` set to the
whole hash). No server persists anything (no append-only file, no RDB), the baseline's and the shards' alike.
Round trips are counted on the client (pipelines put on the wire), client CPU by `time.process_time`, server CPU
from INFO summed over the primaries. Steady state: every series
exists before the measured cycles (median of --runs).
Sizing: --sizing-profiles profiles × 4 series filled to the default reservoir (10,000 values and times each) in
one redis-server; `used_memory` grows by the bytes per profile.

    .venv/bin/python benchmarks/store_cluster.py [--pods 10000] [--pods-per-profile 10] [--runs 5]
"""

from __future__ import annotations

import argparse
import datetime
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repo root, for the test harness

from store_cycle import CountingConnection, counting_client, make_cycle, server_cpu

from ballast.internal.history import (
    DEFAULT_RESERVOIR_SIZE,
    ClusterHistoryStore,
    Cycle,
    RedisHistoryStore,
    Sample,
    SeriesKey,
    open_store,
)
from ballast.internal.history import keys as history_keys
from ballast.internal.history.keys import BUCKET_DIGITS
from tests.integration.redis_topology import LocalCluster

from machine import cpu_model, redis_server

T0 = 1_732_900_000_000
GIB = 1 << 30


def cluster_cpu(cluster: LocalCluster) -> float:
    return sum(server_cpu(redis.Redis("127.0.0.1", port)) for port in cluster.primary_ports())


def measure(write: Any, cpu_of_servers: Any, round_trips: Any, cycles: list[Cycle]) -> dict[str, float]:
    rows = []
    for cycle in cycles:
        server, sends = cpu_of_servers(), round_trips()
        wall, cpu = time.perf_counter(), time.process_time()
        assert write(cycle)
        rows.append(
            {
                "wall": time.perf_counter() - wall,
                "cpu": time.process_time() - cpu,
                "server_cpu": cpu_of_servers() - server,
                "round_trips": round_trips() - sends,
            }
        )
    return {name: statistics.median(row[name] for row in rows) for name in rows[0]}


def total(row: dict[str, float]) -> float:
    return row["cpu"] + row["server_cpu"]


def cluster_row(
    args: argparse.Namespace, warm_up: Cycle, measured: list[Cycle], bucket_digits: int
) -> dict[str, float]:
    """The cluster backend's figures with a hash tag of `bucket_digits` hex digits of each measurement hash."""
    history_keys.BUCKET_DIGITS = bucket_digits
    try:
        with tempfile.TemporaryDirectory() as work:
            cluster = LocalCluster("redis-server", Path(work), primaries=args.shards, replicas_each=0, persistent=False)
            try:
                cluster.start()
                store = open_store(cluster.url, timeout=60)
                assert isinstance(store, ClusterHistoryStore)
                store.write_cycle(warm_up)
                row = measure(
                    store.write_cycle, lambda: cluster_cpu(cluster), lambda: store.round_trips.count, measured
                )
                store.close()
            finally:
                cluster.stop()
    finally:
        history_keys.BUCKET_DIGITS = BUCKET_DIGITS
    return row


def sizing(url: str, profiles: int) -> tuple[float, int]:
    """Bytes per profile (4 series full at the default reservoir) in one redis-server, and profiles per GiB."""
    client = redis.Redis.from_url(url)
    store = RedisHistoryStore.from_url(url, timeout=120)
    before = int(client.info("memory")["used_memory"])
    for profile in range(profiles):
        keys = [SeriesKey(f"{profile + 1:016x}", c, r) for c in ("app", "sidecar") for r in ("cpu", "memory")]
        samples = [
            Sample(key, (1 + i * 37) % 4000 if key.resource == "cpu" else 200_000_000 + (i * 4099) % (1 << 28))
            for key in keys
            for i in range(DEFAULT_RESERVOIR_SIZE)
        ]
        store.write_cycle(Cycle(f"sizing/{profile}", T0 + profile, samples))
    per_profile = (int(client.info("memory")["used_memory"]) - before) / profiles
    store.close()
    client.close()
    return per_profile, int(GIB // per_profile)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--pods-per-profile", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--shards", type=int, default=3)
    parser.add_argument("--sizing-profiles", type=int, default=20)
    args = parser.parse_args()
    cycles = [
        make_cycle(f"run-{run}", T0 + (run + 1) * 60_000, args.pods, args.pods_per_profile, salt=1)
        for run in range(args.runs + 1)
    ]
    warm_up, measured = cycles[0], cycles[1:]

    with redis_server() as url:
        single = RedisHistoryStore(counting_client(url))
        probe = redis.Redis.from_url(url)
        single.write_cycle(warm_up)
        baseline = measure(single.write_cycle, lambda: server_cpu(probe), lambda: CountingConnection.sends, measured)
        single.close()
        probe.close()
        per_profile, per_gib = sizing(url, args.sizing_profiles)

    per_profile_tags = cluster_row(args, warm_up, measured, bucket_digits=16)
    sharded = cluster_row(args, warm_up, measured, bucket_digits=BUCKET_DIGITS)

    profiles = args.pods // args.pods_per_profile
    print(f"# store_cluster.py — {datetime.date.today()} — {cpu_model()}, {platform.python_version()}")
    print(
        f"write: {args.pods} pods, {profiles} profiles, {len(warm_up.samples)} samples per cycle "
        f"(median of {args.runs})"
    )
    print(f"  {'':44} {'wall':>9} {'client CPU':>11} {'server CPU':>11} {'round trips':>12}")
    rows = (
        ("one redis-server (baseline)", baseline),
        (f"cluster, {args.shards} shards, tag per profile", per_profile_tags),
        (f"cluster, {args.shards} shards, tag per bucket", sharded),
    )
    for label, row in rows:
        print(
            f"  {label:44} {row['wall'] * 1000:7.0f}ms {row['cpu'] * 1000:9.0f}ms "
            f"{row['server_cpu'] * 1000:9.0f}ms {row['round_trips']:12.0f}"
        )
    for label, row in (("tag per profile", per_profile_tags), ("tag per bucket", sharded)):
        print(
            f"  cluster ({label}) / baseline: client CPU {row['cpu'] / baseline['cpu']:.2f}×, "
            f"client+server CPU {total(row) / total(baseline):.2f}×, wall {row['wall'] / baseline['wall']:.2f}×"
        )
    print(
        f"sizing: {per_profile / 1024:.0f} KiB per profile (4 series × {DEFAULT_RESERVOIR_SIZE} values and times), "
        f"{per_profile / 4 / 1024:.0f} KiB per series; {per_gib:,} profiles per GiB of used_memory; "
        f"a {args.shards}-shard cluster holds {args.shards}× that"
    )


if __name__ == "__main__":
    main()
