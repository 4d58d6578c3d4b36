"""Lease renewal latency, idle and while four threads decode JSON flat out (issue 5: renewal must not starve).

Each sample is one renewal of the leader's Lease against a real kube-apiserver (envtest): `LeaseLeaderElector` on a
thread of the loaded process, and `ProcessLeaderElector` (what ballastd runs), whose child times its own
renewals. The baseline is the same loop on an idle process, measured in the same run; the figures are the
ratios, and the margin left against the renew deadline (10 s by default).

    .venv/bin/python benchmarks/leader_renew.py [--samples 200]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import threading
import time

import orjson

from ballast.runtime import (
    LeaderElectionConfig,
    LeaseLeaderElector,
    ProcessLeaderElector,
    RESTConfig,
    new_client,
)
from ballast.runtime.envtest import Environment

from machine import cpu_model


def renew_latencies(elector: LeaseLeaderElector, samples: int) -> list[float]:
    latencies = []
    for _ in range(samples):
        began = time.perf_counter()
        assert elector.try_acquire_or_renew(), "lost the lease"
        latencies.append(time.perf_counter() - began)
        time.sleep(0.01)
    return latencies


def child_latencies(rest_config: RESTConfig, samples: int) -> list[float]:
    """`samples` renewals by a ProcessLeaderElector renewing every 20 ms (as timed in its child)."""
    config = LeaderElectionConfig(name="bench-child", namespace="default", retry_period=0.02, release_on_cancel=True)
    elector = ProcessLeaderElector(rest_config, config)
    stop = threading.Event()
    lost: list[bool] = []
    runner = threading.Thread(target=elector.run, args=(stop, lambda: None, lambda: lost.append(not stop.is_set())))
    runner.start()
    while len(elector.renew_latencies) < samples and runner.is_alive():
        time.sleep(0.05)
    stop.set()
    runner.join()
    assert lost == [False], "the child lost the lease"
    return elector.renew_latencies[:samples]


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description="Lease renewal latency under CPU load")
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    # ~3.7 MB of JSON: one decode holds the GIL for ~50 ms, as a large informer LIST would.
    body = orjson.dumps(
        [{"metadata": {"name": f"pod-{i}", "labels": {"app": "x" * 20}}, "spec": {"n": i}} for i in range(40_000)]
    )
    stop = threading.Event()
    decoded = [0]

    def burn() -> None:
        while not stop.is_set():
            orjson.loads(body)
            decoded[0] += 1

    with Environment(network_mode="loopback") as env:
        rest_config = RESTConfig(env.client_configuration())
        client = new_client(rest_config)
        elector = LeaseLeaderElector(client, LeaderElectionConfig(name="bench", namespace="default"))
        assert elector.try_acquire_or_renew()
        elector._leading.set()  # measure the leader's renew path (the fast path with the cached lease)
        elector._leading_until = float("inf")
        idle = renew_latencies(elector, args.samples)
        child_idle = child_latencies(rest_config, args.samples)
        burners = [threading.Thread(target=burn, daemon=True) for _ in range(4)]
        for burner in burners:
            burner.start()
        loaded = renew_latencies(elector, args.samples)
        child_loaded = child_latencies(rest_config, args.samples)
        stop.set()
        for burner in burners:
            burner.join()
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"date: {datetime.date.today().isoformat()}, load average {os.getloadavg()[0]:.2f}; samples: {args.samples}")
    print(f"decodes of a 3.7 MB body during the loaded run: {decoded[0]}")
    print("| renewal latency | median | p99 | max |")
    print("|---|---|---|---|")
    rows = (
        ("in-process, idle", idle),
        ("in-process, 4 threads decoding", loaded),
        ("child process, idle", child_idle),
        ("child process, 4 threads decoding", child_loaded),
    )
    for name, values in rows:
        print(
            f"| {name} | {statistics.median(values) * 1000:.1f} ms | {percentile(values, 99) * 1000:.1f} ms | "
            f"{max(values) * 1000:.1f} ms |"
        )
    for name, under_load, baseline in (("in-process", loaded, idle), ("child process", child_loaded, child_idle)):
        print(
            f"{name}: ratio loaded/idle (median) {statistics.median(under_load) / statistics.median(baseline):.1f}×, "
            f"p99 {percentile(under_load, 99) / percentile(baseline, 99):.1f}×; worst case uses "
            f"{max(under_load) / 10 * 100:.1f} % of the 10 s renew deadline"
        )


if __name__ == "__main__":
    main()
