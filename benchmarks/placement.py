"""What one `place` call costs over 100 targets (µs per call), against a trivial baseline in the same run.

Cases, each with 100 targets (min 0–2, every fourth with a max, priorities in reverse name order, weights 1–9):

- priority, 1,000 replicas, 10 targets with late pods;
- proportional, 1,000 replicas, no late pods; and with 10 targets with late pods (two highest-averages passes);
- proportional, 1,000,000 replicas (the threshold search does not loop per replica).

Baseline: an even split of the same replicas over the same target mappings (one dict comprehension), the floor
of any function that reads 100 targets and returns 100 counts. Also timed: the input checks alone
(`check_inputs`, which every `place` call runs) and, for reference, the one-seat-at-a-time D'Hondt loop
(upstream's algorithm, restated) on the 1,000-replica proportional case. Calls are timed in batches, runs
interleaved; the median µs per call is reported. These machines are shared, so read the ratios.

    .venv/bin/python benchmarks/placement.py [--runs 7]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Any

from ballast.internal.balancer import PodSummary, place
from ballast.internal.balancer.inputs import check_inputs

from machine import cpu_model

TARGETS = 100


def targets() -> list[dict[str, Any]]:
    return [
        {"name": f"zone-{i:03d}", "min_replicas": i % 3, "max_replicas": 20 + i if i % 4 == 0 else None}
        for i in range(TARGETS)
    ]


TARGET_LIST = targets()
NAMES = [t["name"] for t in TARGET_LIST]
PRIORITY = {"name": "priority", "target_order": NAMES[::-1]}
PROPORTIONAL = {"name": "proportional", "target_proportions": {n: 1 + i % 9 for i, n in enumerate(NAMES)}}
LATE = {n: PodSummary(5, 2, 2) for n in NAMES[::10]}


def even_split(replicas: int) -> dict[str, int]:
    share, extra = divmod(replicas, len(TARGET_LIST))
    return {t["name"]: share + (i < extra) for i, t in enumerate(TARGET_LIST)}


def one_seat_at_a_time(replicas: int) -> dict[str, int]:
    """Upstream's loop: mins, then each seat to the strictly greatest weight / (1 + placed), names in order."""
    placed = {t["name"]: t["min_replicas"] for t in TARGET_LIST}
    caps = {t["name"]: t["max_replicas"] for t in TARGET_LIST}
    weights = PROPORTIONAL["target_proportions"]
    assert isinstance(weights, dict)
    seats = replicas - sum(placed.values())
    names = sorted(placed)
    while seats > 0:
        best, winner = Fraction(0), None
        for name in names:
            cap = caps[name]
            if cap is not None and placed[name] >= cap:
                continue
            rank = Fraction(weights[name], 1 + placed[name])
            if rank > best:
                best, winner = rank, name
        if winner is None:
            break
        placed[winner] += 1
        seats -= 1
    return placed


CASES: dict[str, tuple[Callable[[], object], int]] = {
    "even split, 1,000 replicas (baseline)": (lambda: even_split(1000), 2000),
    "checking the inputs alone (`check_inputs`, priority, 10 late targets)": (
        lambda: check_inputs(1000, TARGET_LIST, PRIORITY, LATE),
        500,
    ),
    "priority, 1,000 replicas, 10 late targets": (lambda: place(1000, TARGET_LIST, PRIORITY, LATE), 500),
    "proportional, 1,000 replicas": (lambda: place(1000, TARGET_LIST, PROPORTIONAL), 100),
    "proportional, 1,000 replicas, 10 late targets": (lambda: place(1000, TARGET_LIST, PROPORTIONAL, LATE), 100),
    "proportional, 1,000,000 replicas": (lambda: place(1_000_000, TARGET_LIST, PROPORTIONAL), 100),
    "one-seat-at-a-time loop, 1,000 replicas (reference)": (lambda: one_seat_at_a_time(1000), 2),
}


def microseconds_per_call(call: Callable[[], object], calls: int) -> float:
    began = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - began) / calls * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    print(f"machine: {cpu_model()}, {os.cpu_count()} cores ({len(os.sched_getaffinity(0))} usable)")
    print(f"python: {platform.python_implementation()} {platform.python_version()} ({platform.platform()})")
    print(f"date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, load average {os.getloadavg()}")
    print(f"runs: {args.runs} interleaved, {TARGETS} targets")

    # The loop and `place` agree on the case they share, so the comparison is of equals.
    assert place(1000, TARGET_LIST, PROPORTIONAL).placement == dict(sorted(one_seat_at_a_time(1000).items()))
    results: dict[str, list[float]] = {label: [] for label in CASES}
    for _ in range(args.runs):
        for label, (call, calls) in CASES.items():
            results[label].append(microseconds_per_call(call, calls))

    baseline = statistics.median(results[next(iter(results))])
    print("\n| case | median µs/call | min | max | × baseline |")
    print("|---|---|---|---|---|")
    for label, values in results.items():
        median = statistics.median(values)
        print(f"| {label} | {median:,.1f} | {min(values):,.1f} | {max(values):,.1f} | {median / baseline:.1f} |")


if __name__ == "__main__":
    main()
