"""Decoding a WorkloadProfile into its typed model (`WireModel.from_wire`), side by side with another revision.

What the collector and the resize lane pay for each profile that changed: a profile of two containers with three
resources each (usage statistics, recommendations, conditions). `--baseline REF` decodes the same payload with the
code of git revision REF (its tree extracted to a scratch directory, first on a child's `PYTHONPATH`); runs of the
two codes alternate, each in a fresh child process, and the medians are reported. These machines are shared: read
the ratio.

    .venv/bin/python benchmarks/typed_decode.py [--baseline REF] [--runs 7] [--decodes 5000]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from machine import cpu_model

REPO = Path(__file__).resolve().parent.parent


def profile_payload() -> dict[str, Any]:
    usage = {"samples": 1440, "timeSpan": "24h0m0s", "p50": "85m", "p75": "92m", "p90": "101m", "p95": "110m",
             "p99": "130m", "mean": "88m", "stdDev": "12m", "cv": "0.136"}  # fmt: skip
    usage["lastUpdated"] = "2026-12-07T10:00:00Z"
    containers = [
        {
            "name": name,
            "usageStats": [{**usage, "resource": r, "source": "kubernetes-metrics"} for r in ("cpu", "memory")]
            + [{**usage, "resource": "ephemeral-storage", "source": "kubelet-summary"}],
            "recommendations": {"cpu": {"request": "110m"}, "memory": {"request": "176Mi", "limit": "211Mi"}},
        }
        for name in ("app", "sidecar")
    ]
    conditions = [
        {"type": t, "status": "True", "reason": "Ready", "message": "m", "lastTransitionTime": "2026-12-07T09:00:00Z"}
        for t in ("Ready", "Orphaned", "InPlaceResize")
    ]
    managers: list[dict[str, Any]] = [
        {"manager": m, "operation": "Apply", "apiVersion": "ballast.tightlinesoftware.com/v1", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:status": {}}, "subresource": "status", "time": "2026-12-07T10:00:00Z"}
        for m in ("ballast-collector", "ballast-profiles", "ballast-oom")
    ]  # fmt: skip
    labels = {"app.kubernetes.io/name": "checkout", "app.kubernetes.io/component": "api"}
    return {
        "apiVersion": "ballast.tightlinesoftware.com/v1",
        "kind": "WorkloadProfile",
        "metadata": {"name": "checkout--api--default-a9696153", "uid": "u", "resourceVersion": "42", "generation": 1,
                     "managedFields": managers},
        "spec": {},
        "status": {"tupleLabels": labels, "selectorLabels": labels, "measurementHash": "8746f67fe9f3d343",
                   "policyRef": {"kind": "ClusterResourcePolicy", "name": "default"}, "activeWorkloads": 5,
                   "contributingNamespaces": {"count": 5, "names": ["team-a", "team-b", "team-c", "team-d", "team-e"]},
                   "meetsThreshold": True, "state": "Sufficient", "containers": containers, "conditions": conditions},
    }  # fmt: skip


def child(decodes: int) -> None:
    """Print the microseconds one decode takes, with the `ballast` this process imports."""
    from ballast.api.ballast.v1 import WorkloadProfile  # noqa: PLC0415 - the code under test is chosen by PYTHONPATH

    payload = profile_payload()
    WorkloadProfile.from_wire(payload)  # the validator is built on first use
    began = time.perf_counter()
    for _ in range(decodes):
        WorkloadProfile.from_wire(payload)
    print((time.perf_counter() - began) / decodes * 1e6)


def timed(code: Path, decodes: int) -> float:
    env = {**os.environ, "PYTHONPATH": str(code)}
    command = [sys.executable, __file__, "--child", str(decodes)]
    return float(subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", metavar="REF", help="git revision to time side by side")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--decodes", type=int, default=5000)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    with tempfile.TemporaryDirectory() as scratch:
        codes = {"this checkout": REPO}
        if args.baseline:
            archive = subprocess.run(
                ["git", "-C", str(REPO), "archive", args.baseline], check=True, capture_output=True
            )
            subprocess.run(["tar", "-x", "-C", scratch], input=archive.stdout, check=True)
            codes[args.baseline] = Path(scratch)
        runs: dict[str, list[float]] = {name: [] for name in codes}
        for _ in range(args.runs):
            for name, code in codes.items():
                runs[name].append(timed(code, args.decodes))
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    print(f"{cpu_model()}, CPython {platform.python_version()}, {now}; median of {args.runs} children")
    base = statistics.median(runs[args.baseline]) if args.baseline else None
    print("| code | µs per WorkloadProfile decode |" + (f" × {args.baseline} |" if base else ""))
    print("|---|---|" + ("---|" if base else ""))
    for name, values in runs.items():
        median = statistics.median(values)
        print(f"| {name} | {median:.1f} |" + (f" {median / base:.2f} |" if base else ""))


if __name__ == "__main__":
    main()
