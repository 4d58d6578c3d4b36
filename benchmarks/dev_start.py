"""How long `make dev` takes from start to its cold-start admission, with cached control-plane binaries.

Each run is `python -m ballast.internal.cmd.dev --non-interactive --exit-after cold-start` as a fresh process,
timed from just before the process starts to the moment the API server answered the cold-start pod's CREATE
(`cold_start.admitted_at` in its `--report`), so interpreter start-up and imports count. The run is split into
its phases from the report: start-up (control plane, preset, metrics APIService, ballastd, webhook, workloads),
accrual (workloads created → every profile Sufficient) and the admission itself.

Baseline, from the same runs: the floor the `local-testing` preset sets on accrual — `minTimeSpan` (1 min) from
a profile's first sample, which comes at the collector's first poll after the pods exist (up to one 15 s
`pollInterval` later). Everything above that floor is what the harness, the operator and the demo add.
The one-time build of the binaries is not included (benchmarks/RESULTS.md: ≈ 6.5 min cold, ≈ 10 s with warm Go caches).

    .venv/bin/python benchmarks/dev_start.py [--runs 3]
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ballast.runtime.envtest import find_assets

from machine import cpu_model

PRESET_FLOOR_SECONDS = 60.0
"""local-testing readiness: minTimeSpan 1m between a profile's first sample and Sufficient."""
TARGET_SECONDS = 180.0


def one_run(work: Path, index: int) -> dict[str, float]:
    """One `make dev` run to its cold-start admission: total seconds and the phases."""
    report_path = work / f"run-{index}.json"
    argv = [sys.executable, "-m", "ballast.internal.cmd.dev", "--non-interactive", "--exit-after", "cold-start"]
    began_wall, began = time.time(), time.perf_counter()
    result = subprocess.run(
        [*argv, "--report", str(report_path)], capture_output=True, text=True, check=False, timeout=900
    )
    exited = time.perf_counter() - began
    if result.returncode != 0:
        raise SystemExit(f"run {index} failed ({result.returncode}):\n{result.stdout[-4000:]}{result.stderr[-2000:]}")
    report: dict[str, Any] = json.loads(report_path.read_text())
    steps = report["steps"]
    offset = report["started_at"] - began_wall  # process start → the demo's own clock
    total = report["cold_start"]["admitted_at"] - began_wall
    return {
        "total": total,
        "startup": offset + steps["workloads"]["at"],
        "accrual": steps["profiles"]["at"] - steps["workloads"]["at"],
        "admission": total - (offset + steps["profiles"]["at"]),
        "teardown": exited - total,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="make dev: start → cold-start admission (cached binaries)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    assets = find_assets(build=False)
    runs = []
    with tempfile.TemporaryDirectory(prefix="ballast-bench-dev-") as work:
        for index in range(args.runs):
            runs.append(one_run(Path(work), index))
            print(f"run {index + 1}: " + ", ".join(f"{k} {v:.1f} s" for k, v in runs[-1].items()), flush=True)
    load = os.getloadavg()[0]
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}, load {load:.1f}")
    print(f"date: {datetime.date.today().isoformat()}; binaries: {assets.directory}; runs: {args.runs}")
    for name, label in (
        ("total", "start → cold-start admission"),
        ("startup", "  start-up (control plane … workloads)"),
        ("accrual", "  accrual (workloads → Sufficient)"),
        ("admission", "  Sufficient → admitted"),
        ("teardown", "teardown after admission"),
    ):
        values = [run[name] for run in runs]
        print(
            f"{label:40}  median {statistics.median(values):6.1f} s  min {min(values):6.1f} s  max {max(values):6.1f} s"
        )
    accrual = statistics.median(run["accrual"] for run in runs)
    ratio = accrual / PRESET_FLOOR_SECONDS
    print(f"preset floor on accrual (minTimeSpan): {PRESET_FLOOR_SECONDS:.0f} s; accrual / floor {ratio:.2f}")
    total = statistics.median(run["total"] for run in runs)
    print(f"target: under {TARGET_SECONDS:.0f} s — {'met' if total < TARGET_SECONDS else 'NOT met'}")


if __name__ == "__main__":
    main()
