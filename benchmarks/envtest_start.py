"""How long `Environment` takes to start with cached binaries, against the binaries' own start-up.

Baseline, measured in the same run: etcd + kube-apiserver launched directly with the harness's flags and
certificates (copied from a previous start), timed until `/readyz` answers 200 — the irreducible cost of the
binaries. The harness adds certificate generation, the watchdog process and the `default` namespace wait.

    .venv/bin/python benchmarks/envtest_start.py [--runs 7]
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import urllib3

from ballast.runtime.envtest import Environment, find_assets
from ballast.runtime.envtest.process import ControlPlaneProcess

from machine import cpu_model


def time_environment() -> float:
    began = time.perf_counter()
    env = Environment(network_mode="loopback")
    env.start()
    elapsed = time.perf_counter() - began
    env.stop()
    return elapsed


def bare_commands(into: Path) -> list[tuple[str, list[str]]]:
    """The harness's etcd and kube-apiserver command lines, re-pointed at certificates copied into `into`."""
    with Environment(network_mode="loopback") as env:
        shutil.copytree(env.work_dir / "pki", into / "pki")
        old = str(env.work_dir)
        return [(p.name, [arg.replace(old, str(into)) for arg in p.argv]) for p in env.processes]


def time_bare_binaries() -> float:
    with tempfile.TemporaryDirectory() as work:
        commands = bare_commands(Path(work))
        etcd_argv, apiserver_argv = (dict(commands)[name] for name in ("etcd", "kube-apiserver"))
        etcd_url = next(a.split("=", 1)[1] for a in etcd_argv if a.startswith("--listen-client-urls="))
        port = next(a.split("=", 1)[1] for a in apiserver_argv if a.startswith("--secure-port="))
        http = urllib3.PoolManager(cert_reqs="CERT_NONE", retries=False, timeout=2.0)
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        began = time.perf_counter()
        etcd = ControlPlaneProcess("etcd", etcd_argv, Path(work) / "etcd.log")
        etcd.start()
        etcd.wait_ready(lambda: http.request("GET", f"{etcd_url}/health").status == 200, 30)
        apiserver = ControlPlaneProcess("kube-apiserver", apiserver_argv, Path(work) / "apiserver.log")
        apiserver.start()
        # /readyz needs no credentials (system:public-info-viewer), so no client certificate is required.
        apiserver.wait_ready(lambda: http.request("GET", f"https://127.0.0.1:{port}/readyz").status == 200, 60)
        elapsed = time.perf_counter() - began
        apiserver.stop()
        etcd.stop()
        return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description="Environment start-up time against the bare binaries")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    assets = find_assets(build=False)
    time_environment()  # warm-up: page cache, imports
    harness, bare = [], []
    for _ in range(args.runs):  # interleaved, so drift affects both alike
        harness.append(time_environment())
        bare.append(time_bare_binaries())
    ratios = [h / b for h, b in zip(harness, bare, strict=True)]
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"date: {datetime.date.today().isoformat()}; binaries: {assets.directory}; runs: {args.runs}")
    for name, values, unit in (
        ("Environment.start()", harness, " s"),
        ("bare etcd+apiserver", bare, " s"),
        ("ratio harness/bare", ratios, ""),
    ):
        print(
            f"{name:20}  median {statistics.median(values):5.2f}{unit:2}  "
            f"min {min(values):5.2f}{unit:2}  max {max(values):5.2f}{unit}"
        )


if __name__ == "__main__":
    main()
