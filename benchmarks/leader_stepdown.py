"""Step-down after a partition: how long a leader that can no longer reach the API server keeps leading.

A leader renews its Lease on a real kube-apiserver (envtest) through a TCP proxy; at a random point of its
renewal cycle the proxy black-holes the connection (bytes dropped both ways, nothing refused). The figure is
the time from the start of its last successful renewal to its step-down (`on_stopped_leading`), for
`LeaseLeaderElector` (a thread) and `ProcessLeaderElector` (a child interpreter, what `ballastd` runs), with the
equality timings 4/3/1 and the defaults 15/10/2. The bound is retry period + renew deadline (client-go's);
the lease duration is when a standby may take over.

    .venv/bin/python benchmarks/leader_stepdown.py [--runs 3]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import random
import statistics
import threading
import time
from typing import Any

from ballast.runtime import (
    LeaderElectionConfig,
    LeaseLeaderElector,
    ProcessLeaderElector,
    RESTConfig,
    new_client,
)
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.blackhole import BlackHoleProxy, address_of, through
from ballast.runtime.envtest.wait import poll_until

from machine import cpu_model

TIMINGS = {"4/3/1": (4.0, 3.0, 1.0), "15/10/2": (15.0, 10.0, 2.0)}


def step_down_after_partition(configuration: Any, kind: str, timings: str, lease: str) -> tuple[float, float]:
    """One partition: seconds to the step-down from the start of the last successful renewal (the elector's own
    record) and from the cut (seen from outside)."""
    duration, renew, retry = TIMINGS[timings]
    config = LeaderElectionConfig(
        name=lease, namespace="default", lease_duration=duration, renew_deadline=renew, retry_period=retry
    )
    with BlackHoleProxy(address_of(configuration)) as proxy:
        rest = RESTConfig(through(proxy, configuration))
        elector: Any = (
            ProcessLeaderElector(rest, config) if kind == "process" else LeaseLeaderElector(new_client(rest), config)
        )
        stop, started, stopped = threading.Event(), threading.Event(), threading.Event()
        stopped_at: list[float] = []

        def on_stopped() -> None:
            stopped_at.append(time.monotonic())
            stopped.set()

        thread = threading.Thread(target=elector.run, args=(stop, started.set, on_stopped), daemon=True)
        thread.start()
        try:
            poll_until(started.is_set, timeout=30, what="leadership")
            poll_until(lambda: elector.renewals >= 1, timeout=30, what="a renewal")
            time.sleep(random.uniform(0, retry))  # a random point of the cycle
            proxy.cut()
            cut_at = time.monotonic()
            poll_until(stopped.is_set, timeout=duration + 30, what="the step-down")
            last_renewal: float = elector.leading_until - config.leading_grace
        finally:
            stop.set()
            thread.join(30)
    return stopped_at[0] - last_renewal, stopped_at[0] - cut_at


def main() -> None:
    parser = argparse.ArgumentParser(description="Leader step-down time after a partition")
    parser.add_argument("--runs", type=int, default=3, help="partitions per elector and timing set")
    args = parser.parse_args()
    rows = []
    with Environment(network_mode="loopback") as env:
        configuration = env.client_configuration()
        for timings, (duration, renew, retry) in TIMINGS.items():
            for kind in ("thread", "process"):
                figures = [
                    step_down_after_partition(
                        configuration, kind, timings, f"bench-{kind}-{index}-{timings.replace('/', '-')}"
                    )
                    for index in range(args.runs)
                ]
                rows.append((timings, kind, figures, retry + renew, duration))
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, load average {os.getloadavg()[0]:.2f}")
    print(f"runs per row: {args.runs}")
    print("| lease/renew/retry | elector | step-down after the last renewal | after the cut | bound | lease |")
    print("|---|---|---|---|---|---|")
    for timings, kind, figures, bound, duration in rows:
        after_renewal, after_cut = _spread([f[0] for f in figures]), _spread([f[1] for f in figures])
        print(f"| {timings} | {kind} | {after_renewal} | {after_cut} | {bound:g} s | {duration:g} s |")


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s ({min(values):.2f}–{max(values):.2f})"


if __name__ == "__main__":
    main()
