"""What `pip install` of the wheel brings: the framework alone against the framework with `ballast[operator]`.

Builds the wheel once, then for each variant creates a clean venv and times `pip install` from the same package
index and pip cache (so both are measured alike; the first run of a machine also downloads), and counts the
distributions installed besides pip. Run from the repository: `.venv/bin/python benchmarks/install.py [--runs N]`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from datetime import UTC, datetime
from pathlib import Path

from machine import cpu_model

REPOSITORY = Path(__file__).resolve().parent.parent
VARIANTS = {"framework": "", "framework + operator": "[operator]"}


def build_wheel(out: Path) -> Path:
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(REPOSITORY)],
                   check=True, capture_output=True)  # fmt: skip
    (wheel,) = out.glob("ballast-*.whl")
    return wheel


def install(wheel: Path, extra: str, root: Path) -> tuple[float, int]:
    """Seconds `pip install` took in a fresh venv, and how many distributions it left besides pip."""
    venv.create(root, with_pip=True)
    pip = str(root / "bin" / "pip")
    started = time.perf_counter()
    subprocess.run([pip, "install", "--quiet", "--disable-pip-version-check", f"{wheel}{extra}"], check=True)
    seconds = time.perf_counter() - started
    listed = subprocess.run([pip, "list", "--format=json"], check=True, capture_output=True, text=True).stdout
    return seconds, sum(1 for dist in json.loads(listed) if dist["name"] != "pip")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="installs per variant, alternated (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        wheel = build_wheel(Path(scratch) / "dist")
        times: dict[str, list[float]] = {name: [] for name in VARIANTS}
        counts: dict[str, int] = {}
        for run in range(args.runs):
            for name, extra in VARIANTS.items():
                seconds, count = install(wheel, extra, Path(scratch) / f"venv-{run}-{len(times[name])}{extra}")
                times[name].append(seconds)
                counts[name] = count
    print(f"{datetime.now(UTC):%Y-%m-%d}, {cpu_model()}, Python {sys.version.split()[0]}, {args.runs} runs each")
    base = statistics.median(times["framework + operator"])
    for name in VARIANTS:
        median = statistics.median(times[name])
        print(f"{name:22} {counts[name]:3} packages  pip install {median:5.1f} s median "
              f"({min(times[name]):.1f}–{max(times[name]):.1f})  ×{median / base:.2f} of with-operator")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
