"""One collection cycle into a real redis-server, and reading history back for statistics, against the Go
operator's access pattern measured side by side in the same run.

Write: one cycle of 10k pods × 2 containers × cpu+memory = 40,000 samples. Ours is one EVAL (one round trip);
the baseline is the Go operator's AddSample per sample — RPUSH, LTRIM, SETNX, each a round trip
(docs/compatibility.md) — and, for reference, the same 120,000 commands in one pipeline. Round trips are counted
on the client (requests put on the wire), server CPU from INFO.
Read: 1,000 series of 10,000 samples, then a sorted()-based percentile/mean/stddev per series. Ours is
`read_many` (one EVAL per 32 series); the baseline is the Go operator's LRANGE 0 -1 + GET first_seen per series.

    .venv/bin/python benchmarks/store_cycle.py [--pods 10000] [--pods-per-profile 10] [--series 1000]
"""

from __future__ import annotations

import argparse
import datetime
import math
import os
import platform
import random
import resource
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, ClassVar

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from ballast.internal.history import Cycle, RedisHistoryStore, Sample, SeriesKey, SQLiteHistoryStore
from ballast.internal.history.keys import first_seen_key, times_key, values_key

from machine import cpu_model, redis_server

RESERVOIR = 10_000
T0 = 1_732_900_000_000
ANCHOR_WRITE = "Go operator: RPUSH+LTRIM+SETNX per sample"
ANCHOR_READ_STATS = "Go operator: LRANGE + GET per series + stats"
ANCHOR_READ = "Go operator: LRANGE + GET per series only"


class CountingConnection(redis.Connection):
    """Counts requests put on the wire (one per command, one per pipeline)."""

    sends: ClassVar[int] = 0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        type(self).sends += 1
        super().send_packed_command(command, check_health)  # type: ignore[no-untyped-call]


def counting_client(url: str) -> redis.Redis:
    pool = redis.ConnectionPool.from_url(
        url, connection_class=CountingConnection, retry=Retry(NoBackoff(), 0), socket_timeout=60
    )
    return redis.Redis(connection_pool=pool)


def server_cpu(client: redis.Redis) -> float:
    info: dict[str, Any] = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def server_version(client: redis.Redis) -> str:
    info: dict[str, Any] = client.info("server")
    return str(info["redis_version"])


def make_cycle(cycle_id: str, at_ms: int, pods: int, pods_per_profile: int, salt: int) -> Cycle:
    rng = random.Random(salt)
    keys: dict[tuple[int, str, str], SeriesKey] = {}
    samples = []
    for pod in range(pods):
        profile = pod // pods_per_profile
        for container in ("app", "sidecar"):
            for resource_name, high in (("cpu", 4000), ("memory", 8 << 30)):
                key = keys.get((profile, container, resource_name))
                if key is None:
                    key = SeriesKey(f"{salt:04x}{profile:012x}", container, resource_name)
                    keys[(profile, container, resource_name)] = key
                samples.append(Sample(key, rng.randrange(1, high)))
    return Cycle(cycle_id, at_ms, samples, RESERVOIR)


@contextmanager
def measured() -> Iterator[dict[str, float]]:
    figures: dict[str, float] = {}
    wall, cpu, sends = time.perf_counter(), time.process_time(), CountingConnection.sends
    yield figures
    figures["wall"] = time.perf_counter() - wall
    figures["cpu"] = time.process_time() - cpu
    figures["round_trips"] = CountingConnection.sends - sends


def anchor_add_samples(client: redis.Redis, cycle: Cycle, *, pipelined: bool) -> None:
    """The Go operator's AddSample for every sample: RPUSH; LTRIM -N -1; SETNX first_seen."""
    target: Any = client.pipeline(transaction=False) if pipelined else client
    for sample in cycle.samples:
        name = values_key(sample.key)
        target.rpush(name, sample.value)
        target.ltrim(name, -cycle.reservoir_size, -1)
        target.setnx(name + ":first_seen", cycle.at_ms)
    if pipelined:
        target.execute()


def write_benchmark(url: str, pods: int, pods_per_profile: int, runs: int) -> list[tuple[str, dict[str, float]]]:
    client = counting_client(url)
    store = RedisHistoryStore(counting_client(url))
    store.ping()
    client.ping()
    rows: list[tuple[str, dict[str, float]]] = []
    store.write_cycle(make_cycle("warm-up", T0, pods, pods_per_profile, salt=1))  # series exist, as in steady state
    ours = []
    for run in range(runs):
        cycle = make_cycle(f"run-{run}", T0 + (run + 1) * 60_000, pods, pods_per_profile, salt=1)
        before = server_cpu(client)
        with measured() as figures:
            assert store.write_cycle(cycle)
        figures["server_cpu"] = server_cpu(client) - before
        ours.append(figures)
    rows.append((f"ours: 1 EVAL per cycle (median of {runs})", median_figures(ours)))
    for pipelined in (False, True):
        salt = 3 if pipelined else 2
        anchor_add_samples(client, make_cycle("warm-up", T0, pods, pods_per_profile, salt=salt), pipelined=True)
        cycle = make_cycle("anchor", T0 + 60_000, pods, pods_per_profile, salt=salt)
        before = server_cpu(client)
        with measured() as figures:
            anchor_add_samples(client, cycle, pipelined=pipelined)
        figures["server_cpu"] = server_cpu(client) - before
        label = "Go-operator pattern, pipelined (reference)" if pipelined else ANCHOR_WRITE
        rows.append((label, figures))
    sqlite_figures = sqlite_write(pods, pods_per_profile)
    rows.append(("SQLite backend, same cycle (reference)", sqlite_figures))
    store.close()
    client.close()
    return rows


def sqlite_write(pods: int, pods_per_profile: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as work, SQLiteHistoryStore(Path(work) / "h.db") as store:
        store.write_cycle(make_cycle("warm-up", T0, pods, pods_per_profile, salt=1))
        cycle = make_cycle("run", T0 + 60_000, pods, pods_per_profile, salt=1)
        with measured() as figures:
            store.write_cycle(cycle)
        del figures["round_trips"]
        return figures


def median_figures(runs: Sequence[dict[str, float]]) -> dict[str, float]:
    return {name: statistics.median(run[name] for run in runs) for name in runs[0]}


def stats(values: Sequence[int]) -> tuple[float, ...]:
    """Nearest-rank percentiles, population stddev (docs/compatibility.md), with a plain sorted()."""
    ordered = sorted(values)
    n = len(ordered)
    mean = sum(ordered) / n
    stddev = math.sqrt(sum((v - mean) ** 2 for v in ordered) / n)
    ranks = (min(max(math.ceil(p / 100 * n), 1), n) for p in (50, 75, 90, 95, 99))
    return (mean, stddev, *(ordered[rank - 1] for rank in ranks), ordered[-1])


def fill_series(url: str, n_series: int, samples: int) -> list[SeriesKey]:
    """History as a steady state leaves it: full lists of values and times, first_seen set."""
    client = redis.Redis.from_url(url)
    rng = random.Random(7)
    keys = [SeriesKey(f"{0xF000 + i:016x}", "app", "cpu") for i in range(n_series)]
    for start in range(0, n_series, 50):
        pipe = client.pipeline(transaction=False)
        for key in keys[start : start + 50]:
            pipe.rpush(values_key(key), *(rng.randrange(1, 4000) for _ in range(samples)))
            pipe.rpush(times_key(key), *range(T0 // 1000, T0 // 1000 + samples))
            pipe.set(first_seen_key(key), T0)
        pipe.execute()
    client.close()
    return keys


def read_benchmark(url: str, keys: Sequence[SeriesKey]) -> list[tuple[str, dict[str, float]]]:
    store = RedisHistoryStore(counting_client(url))
    client = counting_client(url)
    store.ping()
    client.ping()
    rows: list[tuple[str, dict[str, float]]] = []
    checksum: dict[str, float] = {}

    def run(label: str, read: Callable[[Sequence[SeriesKey]], list[list[int]]], with_stats: bool = True) -> None:
        total = 0.0
        before = server_cpu(client)
        with measured() as figures:
            for start in range(0, len(keys), 32):  # bounded memory: 32 series at a time
                for values in read(keys[start : start + 32]):
                    total += stats(values)[2] if with_stats else len(values)
        figures["server_cpu"] = server_cpu(client) - before
        checksum[f"{label} {with_stats}"] = total
        rows.append((label, figures))

    def ours(batch: Sequence[SeriesKey]) -> list[list[int]]:
        return [list(series.values) for series in store.read_many(batch)]

    def anchor(batch: Sequence[SeriesKey]) -> list[list[int]]:
        out = []
        for key in batch:
            raw: list[bytes] = client.lrange(values_key(key), 0, -1)  # type: ignore[assignment]
            client.get(first_seen_key(key))
            out.append([int(v) for v in raw])
        return out

    run("ours: read_many + stats", ours)
    run(ANCHOR_READ_STATS, anchor)
    run("ours: read_many only", ours, with_stats=False)
    run(ANCHOR_READ, anchor, with_stats=False)
    assert len({v for k, v in checksum.items() if k.endswith("True")}) == 1, f"the reads disagree: {checksum}"
    store.close()
    client.close()
    return rows


def print_rows(title: str, rows: list[tuple[str, dict[str, float]]], baselines: dict[str, str]) -> None:
    """Print the figures; `baselines` maps a row to the row it is compared with (wall time, baseline / row)."""
    by_label = dict(rows)
    print(f"\n{title}")
    print(f"  {'':44} {'wall':>9} {'client CPU':>11} {'server CPU':>11} {'round trips':>12}  speed-up vs")
    for label, figures in rows:
        server = f"{figures['server_cpu']:9.3f} s" if "server_cpu" in figures else f"{'-':>11}"
        trips = f"{int(figures['round_trips']):12,d}" if "round_trips" in figures else f"{'-':>12}"
        base = baselines.get(label)
        ratio = f"{by_label[base]['wall'] / figures['wall']:7.1f}× {base}" if base else ""
        print(f"  {label:44} {figures['wall']:7.3f} s {figures['cpu']:9.3f} s {server} {trips}  {ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description="Redis history store: one cycle write, and reads for stats")
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--pods-per-profile", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--series", type=int, default=1_000)
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--write-only", action="store_true", help="skip the read + stats part")
    args = parser.parse_args()
    with redis_server() as url:
        client = redis.Redis.from_url(url)
        version = server_version(client)
        client.close()
        print(f"machine: {cpu_model()}, {os.cpu_count()} cores; Python {platform.python_version()}")
        print(
            f"date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; redis-server {version} (no persistence)"
        )
        print(f"redis-py {redis.__version__} ({'hiredis' if redis.utils.HIREDIS_AVAILABLE else 'pure-Python'} parser)")
        samples = args.pods * 4
        series = args.pods // args.pods_per_profile * 4
        write_rows = write_benchmark(url, args.pods, args.pods_per_profile, args.runs)
        print_rows(
            f"write one cycle: {samples:,} samples ({args.pods:,} pods × 2 containers × cpu+memory) into {series:,} "
            f"series ({args.pods_per_profile} pods per profile), reservoir {RESERVOIR:,}",
            write_rows,
            {label: ANCHOR_WRITE for label, _ in write_rows if label != ANCHOR_WRITE},
        )
        if not args.write_only:
            keys = fill_series(url, args.series, args.samples)
            print_rows(
                f"read + stats: {args.series:,} series × {args.samples:,} samples "
                "(nearest-rank p50..p99, mean, population stddev, max; sorted())",
                read_benchmark(url, keys),
                {"ours: read_many + stats": ANCHOR_READ_STATS, "ours: read_many only": ANCHOR_READ},
            )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS of this process: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
