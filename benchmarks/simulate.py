"""What the fleet simulator costs per simulated pod-day, per recommender, against the harness alone in the same run.

`ballast simulate` runs the same world (kubelet, scheduler, usage at 15 s steps) under three recommenders. The
baseline is "none" (the manifests as written): the world and the usage alone, which every recommender pays. Each
recommender's run is timed in this process, one after the other, over the same synthetic fleet; cost per pod-day
is wall seconds ÷ (pods × simulated days). Ballast's side is timed twice: with the SQLite store's read cache the
simulator uses, and without it (ballastd's store: every poll reads every series whole), because its cost grows
with the history each poll re-reads — which is why the figure is given for more than one length of run.

    .venv/bin/python benchmarks/simulate.py [--apps 8] [--namespaces 5] [--days 1 3] [--no-uncached]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import resource
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ballast.internal.fleetsim.fleet import default_fleet
from ballast.internal.fleetsim.model import Fleet, Recommender
from ballast.internal.fleetsim.operator import READ_CACHE_SAMPLES, BallastOperator
from ballast.internal.fleetsim.run import AsWritten, simulate
from ballast.internal.fleetsim.usage import SyntheticUsage
from ballast.internal.fleetsim.vpa import VpaRecommender

from machine import cpu_model


@dataclass(frozen=True, slots=True)
class Timing:
    name: str
    days: int
    pods: int
    wall_s: float
    cpu_s: float

    @property
    def per_pod_day_ms(self) -> float:
        return self.wall_s / (self.pods * self.days) * 1000


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(name: str, fleet: Fleet, days: int, scratch: Path, cache: int) -> Timing:
    usage = SyntheticUsage(fleet)
    recommender: Recommender
    if name.startswith("ballast"):
        store = f"sqlite:///{scratch / f'{name}-{days}.db'}"
        recommender = BallastOperator(fleet, store_url=store, read_cache_samples=cache)
    elif name == "vpa":
        recommender = VpaRecommender(fleet)
    else:
        recommender = AsWritten()
    started_wall, started_cpu = time.perf_counter(), _cpu()
    simulate(fleet, usage, recommender)
    pods = sum(workload.replicas for workload in fleet.workloads)
    return Timing(name, days, pods, time.perf_counter() - started_wall, _cpu() - started_cpu)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", type=int, default=8)
    parser.add_argument("--namespaces", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--days", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--no-uncached", action="store_true", help="skip Ballast without the read cache")
    args = parser.parse_args()

    load = os.getloadavg()
    print(
        f"{cpu_model()}, {os.cpu_count()} cores, CPython {platform.python_version()}, "
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, load average {load[0]:.1f} at the start"
    )
    runs = [("none", 0), ("vpa", 0), ("ballast", READ_CACHE_SAMPLES)]
    if not args.no_uncached:
        runs.append(("ballast, no read cache", 0))
    timings: list[Timing] = []
    with tempfile.TemporaryDirectory(prefix="bench-simulate-") as scratch:
        for days in args.days:
            fleet = default_fleet(args.seed, apps=args.apps, namespaces=args.namespaces, days=days)
            for name, cache in runs:
                timing = timed(name, fleet, days, Path(scratch), cache)
                timings.append(timing)
                print(f"  {name}, {days} d: {timing.wall_s:.1f} s", flush=True)
    pods = timings[0].pods
    print(f"\nfleet: {args.apps} apps × {args.namespaces} namespaces, {pods} pods (seed {args.seed})\n")
    print("| recommender | simulated days | wall | process CPU | ms per pod-day | × none (same days) |")
    print("|---|---|---|---|---|---|")
    for timing in timings:
        baseline = next(t for t in timings if t.name == "none" and t.days == timing.days)
        print(
            f"| {timing.name} | {timing.days} | {timing.wall_s:.1f} s | {timing.cpu_s:.1f} s | "
            f"{timing.per_pod_day_ms:.1f} | {timing.wall_s / baseline.wall_s:.1f} |"
        )
    print(f"\npeak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
