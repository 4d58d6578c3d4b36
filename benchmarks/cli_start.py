"""How long a `ballast` command takes to start and answer: `ballast --help` and `ballast profiles` wall time.

Each command runs as a fresh process, as the console script runs it (`from ballast.internal.cmd.ballast import
main`), so interpreter start-up and imports count; `profiles` lists the WorkloadProfiles of a real
kube-apiserver (envtest, loopback, cached binaries) holding a few profiles, so discovery and the LIST count
too. Runs are interleaved; the median of `--runs` is reported.

Baseline, in the same run: `python -c pass` with the same interpreter (the floor any Python CLI pays); for
reference, `kubectl get workloadprofiles` against the same server. `--compare-tree PATH` also times the
commands from another checkout of the project (put first on `PYTHONPATH`), e.g. the commit before a change.

    .venv/bin/python benchmarks/cli_start.py [--runs 15] [--compare-tree /tmp/old-checkout]
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
from collections.abc import Sequence
from pathlib import Path

from ballast.internal.manifests.ballast_crds import all_crds
from ballast.runtime.envtest import Environment

from machine import cpu_model

TARGET_SECONDS = 0.5
PROFILES = 5
CONSOLE_SCRIPT = "import sys; from ballast.internal.cmd.ballast import main; sys.exit(main())"


def timed(argv: Sequence[str], env: dict[str, str]) -> float:
    """Wall seconds of one run of `argv`, from a directory outside any checkout (`python -c` puts the working
    directory first on `sys.path`); raises SystemExit when it fails."""
    began = time.perf_counter()
    result = subprocess.run(
        argv, capture_output=True, text=True, env=env, check=False, timeout=60, cwd=tempfile.gettempdir()
    )
    took = time.perf_counter() - began
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({result.returncode}):\n{result.stdout}{result.stderr}")
    return took


def profile(name: str) -> dict[str, object]:
    return {
        "apiVersion": "ballast.tightlinesoftware.com/v1",
        "kind": "WorkloadProfile",
        "metadata": {"name": name},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="ballast CLI start-up: --help and profiles, vs python -c pass")
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--compare-tree", type=Path, help="also time the commands from this checkout")
    args = parser.parse_args()
    base_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "KUBECONFIG")}
    with Environment(network_mode="loopback") as envtest:
        envtest.install_crds(all_crds())
        for index in range(PROFILES):
            envtest.rest.create(
                "/apis/ballast.tightlinesoftware.com/v1/workloadprofiles", profile(f"app{index}--api--default")
            )
        kubeconfig = str(envtest.kubeconfig_path)
        kubectl = str(envtest.assets.binary("kubectl"))
        python = sys.executable
        trees: list[tuple[str, dict[str, str]]] = [("", base_env)]
        if args.compare_tree is not None:
            trees.append((f" [{args.compare_tree}]", {**base_env, "PYTHONPATH": str(args.compare_tree)}))
        commands: dict[str, tuple[list[str], dict[str, str]]] = {
            "python -c pass (baseline)": ([python, "-c", "pass"], base_env)
        }
        for suffix, env in trees:
            commands[f"ballast --help{suffix}"] = ([python, "-c", CONSOLE_SCRIPT, "--help"], env)
            commands[f"ballast profiles{suffix}"] = (
                [python, "-c", CONSOLE_SCRIPT, "profiles", "--kubeconfig", kubeconfig],
                env,
            )
        commands["kubectl get workloadprofiles (reference)"] = (
            [kubectl, "--kubeconfig", kubeconfig, "get", "workloadprofiles"],
            base_env,
        )
        for argv, env in commands.values():  # warm the page cache and the .pyc files once
            timed(argv, env)
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.runs):
            for name, (argv, env) in commands.items():
                times[name].append(timed(argv, env))
    load = os.getloadavg()[0]
    print(f"machine: {cpu_model()}, {os.cpu_count()} cores, Python {platform.python_version()}, load {load:.1f}")
    print(f"date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; runs: {args.runs}, interleaved")
    baseline = statistics.median(times["python -c pass (baseline)"])
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"{name:56} median {median:6.3f} s  min {min(values):6.3f} s  max {max(values):6.3f} s  "
            f"× baseline {median / baseline:5.1f}"
        )
    for name in ("ballast --help", "ballast profiles"):
        median = statistics.median(times[name])
        print(f"target {name}: under {TARGET_SECONDS} s — {'met' if median < TARGET_SECONDS else 'NOT met'}")


if __name__ == "__main__":
    main()
