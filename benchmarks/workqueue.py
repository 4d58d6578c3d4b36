"""Workqueue throughput: add/get/done with metrics on, against a naive `queue.Queue` + set measured in the same run.

The performance contract (benchmarks/RESULTS.md) asks ≥ 200,000 add/get/done per second single-threaded with metrics
on. One "cycle" below is one add + one get + one done of a fresh key; the contract figure is cycles per second.

- cycle: add, get, done one key at a time (the queue stays at depth ≤ 1);
- backlog: add 10,000 distinct keys, then get + done them all (exercises the FIFO / heaps at depth 10,000);
- 4 workers: one thread adds keys while 4 worker threads get + done them (no-op work), until drained.

Baseline: `queue.Queue` with a set for de-duplication — no one-worker-per-key guarantee, no delays, no metrics.
Runs are interleaved and the median is reported; these machines are shared, so read the ratios.

    .venv/bin/python benchmarks/workqueue.py [--runs 5] [--cycles 200000]
"""

from __future__ import annotations

import argparse
import datetime
import itertools
import os
import platform
import queue
import statistics
import threading
import time
from collections.abc import Callable
from typing import Protocol

from ballast.runtime.metrics import REGISTRY
from ballast.runtime.priorityqueue import PriorityQueue
from ballast.runtime.workqueue import Queue, RateLimitingQueue

from machine import cpu_model

BACKLOG = 10_000
WORKERS = 4


class BenchQueue(Protocol):
    def add(self, item: int) -> None: ...

    def get(self, timeout: float | None = None) -> tuple[int | None, bool]: ...

    def done(self, item: int) -> None: ...

    def shutdown(self) -> None: ...


class NaiveQueue:
    """`queue.Queue` plus a set so a key waiting in the queue is not queued twice; the usual first attempt."""

    def __init__(self) -> None:
        self._queue: queue.Queue[int | None] = queue.Queue()
        self._queued: set[int] = set()
        self._lock = threading.Lock()

    def add(self, item: int) -> None:
        with self._lock:
            if item in self._queued:
                return
            self._queued.add(item)
        self._queue.put(item)

    def get(self, timeout: float | None = None) -> tuple[int | None, bool]:
        item = self._queue.get(timeout=timeout)
        if item is None:
            return None, True
        with self._lock:
            self._queued.discard(item)
        return item, False

    def done(self, item: int) -> None:
        return

    def shutdown(self) -> None:
        for _ in range(WORKERS):
            self._queue.put(None)


_names = itertools.count()
# The most recent metric name per kind of queue, to show the metrics were really recorded.
last_name: dict[str, str] = {}


def metric_name(label: str) -> str:
    name = last_name[label] = f"bench-{label}-{next(_names)}"
    return name


def plain_queue() -> BenchQueue:
    return Queue[int](name=metric_name("queue"))


def rate_limiting_queue() -> BenchQueue:
    return RateLimitingQueue[int](name=metric_name("ratelimiting"))


def priority_queue() -> BenchQueue:
    return PriorityQueue[int](name=metric_name("priority"))


def unnamed_rate_limiting_queue() -> BenchQueue:
    return RateLimitingQueue[int]()


def unnamed_priority_queue() -> BenchQueue:
    return PriorityQueue[int]()


QUEUES: dict[str, Callable[[], BenchQueue]] = {
    "naive queue.Queue + set (baseline)": NaiveQueue,
    "Queue, metrics on": plain_queue,
    "RateLimitingQueue, metrics on": rate_limiting_queue,
    "PriorityQueue, metrics on": priority_queue,
    "RateLimitingQueue, no metrics": unnamed_rate_limiting_queue,
    "PriorityQueue, no metrics": unnamed_priority_queue,
}


def cycles_per_second(make: Callable[[], BenchQueue], cycles: int) -> float:
    q = make()
    add, get, done = q.add, q.get, q.done
    began = time.perf_counter()
    for key in range(cycles):
        add(key)
        item, _ = get()
        assert item is not None
        done(item)
    elapsed = time.perf_counter() - began
    q.shutdown()
    return cycles / elapsed


def backlog_per_second(make: Callable[[], BenchQueue], keys: int) -> float:
    q = make()
    add, get, done = q.add, q.get, q.done
    began = time.perf_counter()
    for key in range(keys):
        add(key)
    for _ in range(keys):
        item, _ = get()
        assert item is not None
        done(item)
    elapsed = time.perf_counter() - began
    q.shutdown()
    return keys / elapsed


def workers_per_second(make: Callable[[], BenchQueue], keys: int) -> float:
    q = make()
    processed = [0] * WORKERS

    def work(index: int) -> None:
        count = 0
        while True:
            item, shutdown = q.get()
            if shutdown or item is None:
                break
            q.done(item)
            count += 1
        processed[index] = count

    threads = [threading.Thread(target=work, args=(index,)) for index in range(WORKERS)]
    began = time.perf_counter()
    for thread in threads:
        thread.start()
    for key in range(keys):
        q.add(key)
    q.shutdown()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    assert sum(processed) == keys, (sum(processed), keys)
    return keys / elapsed


def median_table(title: str, results: dict[str, list[float]], unit: str) -> None:
    baseline = statistics.median(results[next(iter(results))])
    print(f"\n{title}")
    print(f"| queue | median {unit} | min | max | × baseline |")
    print("|---|---|---|---|---|")
    for label, values in results.items():
        median = statistics.median(values)
        print(f"| {label} | {median:,.0f} | {min(values):,.0f} | {max(values):,.0f} | {median / baseline:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cycles", type=int, default=200_000)
    args = parser.parse_args()

    print(f"machine: {cpu_model()}, {os.cpu_count()} cores ({len(os.sched_getaffinity(0))} usable)")
    print(f"python: {platform.python_implementation()} {platform.python_version()} ({platform.platform()})")
    print(f"date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, load average {os.getloadavg()}")
    print(f"runs: {args.runs} interleaved; cycles per run: {args.cycles:,}; backlog: {BACKLOG:,}; workers: {WORKERS}")

    cycle: dict[str, list[float]] = {label: [] for label in QUEUES}
    backlog: dict[str, list[float]] = {label: [] for label in QUEUES}
    threaded: dict[str, list[float]] = {label: [] for label in QUEUES}
    for _ in range(args.runs):
        for label, make in QUEUES.items():
            cycle[label].append(cycles_per_second(make, args.cycles))
            backlog[label].append(backlog_per_second(make, BACKLOG))
            threaded[label].append(workers_per_second(make, args.cycles // 4))

    print()
    median_table("single thread, add + get + done of one key (cycles/s; ×3 for single operations/s)", cycle, "cycles/s")
    median_table(f"single thread, add {BACKLOG:,} keys then get + done them (keys/s)", backlog, "keys/s")
    median_table(f"1 producer + {WORKERS} worker threads, no-op work (keys/s)", threaded, "keys/s")

    # The metrics really were recorded: the last metered queues (the 4-worker runs) counted every add.
    for name in last_name.values():
        adds = REGISTRY.get_sample_value("workqueue_adds_total", {"name": name, "controller": name})
        print(f"check: workqueue_adds_total{{name={name!r}}} = {adds:,.0f} (expected {args.cycles // 4:,})")


if __name__ == "__main__":
    main()
