"""Lease renewal latency, idle and while four threads decode JSON flat out (issue 5: renewal must not starve).

Each sample is one `try_acquire_or_renew()` of the leader against a real kube-apiserver (envtest). The baseline
is the same loop on an idle process, measured in the same run; the figure is the ratio, and the margin left
against the renew deadline (10 s by default).

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
from pathlib import Path

import orjson

from ballast.internal.runtime import Client, LeaderElectionConfig, LeaderElector, RESTConfig
from ballast.internal.runtime.envtest import Environment


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def renew_latencies(elector: LeaderElector, samples: int) -> list[float]:
    latencies = []
    for _ in range(samples):
        began = time.perf_counter()
        assert elector.try_acquire_or_renew(), "lost the lease"
        latencies.append(time.perf_counter() - began)
        time.sleep(0.01)
    return latencies


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
    with Environment(network_mode="loopback") as env:
        client = Client.from_config(RESTConfig(env.client_configuration()))
        elector = LeaderElector(client, LeaderElectionConfig(name="bench", namespace="default"))
        assert elector.try_acquire_or_renew()
        elector._leading.set()  # measure the leader's renew path (the fast path with the cached lease)
        idle = renew_latencies(elector, args.samples)
        stop = threading.Event()
        decoded = [0]

        def burn() -> None:
            while not stop.is_set():
                orjson.loads(body)
                decoded[0] += 1

        burners = [threading.Thread(target=burn, daemon=True) for _ in range(4)]
        for burner in burners:
            burner.start()
        loaded = renew_latencies(elector, args.samples)
        stop.set()
        for burner in burners:
            burner.join()
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"date: {datetime.date.today().isoformat()}, load average {os.getloadavg()[0]:.2f}; samples: {args.samples}")
    print(f"decodes of a 3.7 MB body during the loaded run: {decoded[0]}")
    print("| renewal latency | median | p99 | max |")
    print("|---|---|---|---|")
    for name, values in (("idle", idle), ("4 threads decoding", loaded)):
        print(
            f"| {name} | {statistics.median(values) * 1000:.1f} ms | {percentile(values, 99) * 1000:.1f} ms | "
            f"{max(values) * 1000:.1f} ms |"
        )
    print(
        f"ratio loaded/idle (median): {statistics.median(loaded) / statistics.median(idle):.1f}×; "
        f"worst case uses {max(loaded) / 10 * 100:.1f} % of the 10 s renew deadline"
    )


if __name__ == "__main__":
    main()
