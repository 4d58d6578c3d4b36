"""What the fleet simulator costs, per recommender and per simulated pod-day, and against the code before a change.

`ballast simulate` runs the same world (kubelet, scheduler, usage at 15 s steps) under each recommender, one
process per recommender. Here each recommender's run is one child process (`--child`), so each is timed alone:
wall seconds and the child's own CPU seconds (user + system, from `wait4`), which a busy shared machine disturbs
far less than wall time. The baseline is "none" (the manifests as written): the world and the usage alone, which
every recommender pays.

`--baseline REF` runs every case twice, side by side and alternating: with the code of git revision REF (its tree
extracted to a scratch directory and put first on the child's `PYTHONPATH`) and with this checkout's. The table
gives the ratio new / REF of CPU seconds per case, and checks that both wrote byte-identical trace JSON — a
speed-up must not change a figure. `--together` runs the two at the same time, one per core: a machine whose speed
drifts by a quarter from one minute to the next (a shared host) then slows both alike. `--grid` adds how the cost
grows with apps × days.

`--demo N` times `make demo` itself N times in a row: the `ballast simulate` command of this checkout, whole (start-up,
every recommender in its worker processes, the report and its charts), in wall seconds — the figure a user waits
for — with the CPU seconds of the command and its workers, and checks that each run's figures.json and
verdict.json are byte for byte those in docs/data/simulate-demo/. With `--baseline REF`, each of the N runs is a
pair, REF's command and this checkout's one after the other (in alternating order), with the ratio of their walls.

    .venv/bin/python benchmarks/simulate.py [--apps 8] [--namespaces 5] [--days 1 3] [--baseline main [--together]]
        [--grid] [--recommenders none vpa ballast ballast-no-read-cache]
    .venv/bin/python benchmarks/simulate.py --demo 3 [--baseline REF]
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from machine import cpu_model

REPO = Path(__file__).resolve().parent.parent
RECOMMENDERS = ("none", "vpa", "ballast")
UNCACHED = "ballast-no-read-cache"
"""Ballast without the SQLite store's read cache (ballastd's store), on request."""


@dataclass(frozen=True, slots=True)
class Case:
    recommender: str
    apps: int
    namespaces: int
    days: int


@dataclass(frozen=True, slots=True)
class Timing:
    case: Case
    code: str
    """"new" (this checkout) or the baseline revision."""
    pods: int
    wall_s: float
    cpu_s: float
    trace_sha: str

    @property
    def per_pod_day_ms(self) -> float:
        return self.cpu_s / (self.pods * self.case.days) * 1000


def child(recommender: str, apps: int, namespaces: int, days: int, out: Path) -> None:
    """One recommender's run with whatever `ballast` the PYTHONPATH gives; writes its trace JSON and pod count."""
    import orjson  # noqa: PLC0415

    from ballast.internal.cmd.simulate import RunSettings, Scenario, run_one  # noqa: PLC0415
    from ballast.internal.fleetsim.report import JSON_OPTIONS, trace_json  # noqa: PLC0415

    scenario = Scenario(apps=apps, namespaces=namespaces, days=days)
    fleet, usage, _ = scenario.load()
    with tempfile.TemporaryDirectory(prefix="bench-simulate-store-") as scratch:
        store = f"sqlite:///{scratch}/history.db"
        if recommender == UNCACHED:  # ballastd's store: every poll reads every series whole
            from ballast.internal.fleetsim.operator import BallastOperator  # noqa: PLC0415
            from ballast.internal.fleetsim.run import simulate  # noqa: PLC0415

            trace = simulate(fleet, usage, BallastOperator(fleet, store_url=store, read_cache_samples=0))
        else:
            trace, _ = run_one(scenario, recommender, RunSettings(store_url=store))
    out.write_bytes(orjson.dumps(trace_json(trace, fleet), option=JSON_OPTIONS))
    print(sum(workload.replicas for workload in fleet.workloads))


@dataclass
class Running:
    """A child started for one case and code."""

    case: Case
    code: str
    out: Path
    process: subprocess.Popen[str]
    started: float


def code_env(tree: Path | None) -> dict[str, str]:
    """This process's environment, with `tree` first on PYTHONPATH (its `ballast` imported first) when given."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def start(case: Case, code: str, tree: Path | None, scratch: Path) -> Running:
    out = scratch / f"{case.recommender}-{case.apps}-{case.days}-{code.replace('/', '_')}.json"
    env = code_env(tree)
    args = [sys.executable, __file__, "--child", case.recommender, str(case.apps), str(case.namespaces),
            str(case.days), str(out)]  # fmt: skip
    started = time.perf_counter()
    process = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return Running(case, code, out, process, started)


def finish(runnings: list[Running]) -> list[Timing]:
    """Wait for every child, taking each as it ends (its wall time stops then), in the order given. Reaps any
    child of this process (`wait4(-1)`): the only others, git and tar, are reaped by `subprocess.run`."""
    by_pid = {running.process.pid: running for running in runnings}
    ended: dict[int, tuple[int, float, float]] = {}
    while len(ended) < len(by_pid):
        pid, status, usage = os.wait4(-1, 0)
        if pid in by_pid:
            ended[pid] = (status, time.perf_counter(), usage.ru_utime + usage.ru_stime)
    timings = []
    for running in runnings:
        status, at, cpu = ended[running.process.pid]
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise SystemExit(f"{running.code} {running.case}: the child failed (exit {code})")
        pods = running.process.stdout.read() if running.process.stdout else ""
        sha = hashlib.sha256(running.out.read_bytes()).hexdigest()[:12]
        timings.append(Timing(running.case, running.code, int(pods.strip()), at - running.started, cpu, sha))
    return timings


DEMO_DATA = REPO / "docs" / "data" / "simulate-demo"
DEMO_FILES = ("figures.json", "verdict.json")


def demo(runs: int, baseline: tuple[str, Path] | None = None) -> None:
    """`make demo`'s command, `runs` times in a row; fails when a run's figures differ from the documented ones.
    With `baseline` (a revision and its extracted tree), each run is a pair: the baseline's command, then this
    checkout's, in alternating order from one pair to the next, with the ratio of their wall times."""
    codes: list[tuple[str, Path | None]] = [("new", None)] if baseline is None else [baseline, ("new", None)]
    walls: dict[str, list[float]] = {code: [] for code, _ in codes}
    for run in range(1, runs + 1):
        for code, tree in codes if run % 2 else codes[::-1]:
            wall = _demo_once(run, code, tree)
            walls[code].append(wall)
        if baseline is not None:
            ratio = walls["new"][-1] / walls[baseline[0]][-1]
            print(f"    pair {run}: new / {baseline[0]} = {ratio:.2f}", flush=True)
    for code, times in walls.items():
        print(f"\nmake demo ({code}): {min(times):.1f}–{max(times):.1f} s wall over {runs} runs, "
              f"median {statistics.median(times):.1f} s", end="")  # fmt: skip
    if baseline is not None:
        ratios = [new / old for new, old in zip(walls["new"], walls[baseline[0]], strict=True)]
        spread = f"{min(ratios):.2f}–{max(ratios):.2f}"
        print(f"\nnew / {baseline[0]}: median {statistics.median(ratios):.2f} (pairs {spread})")
    print()


def _demo_once(run: int, code: str, tree: Path | None) -> float:
    """One `ballast simulate --out` of `tree`'s code (this checkout's when None); its wall seconds."""
    env = code_env(tree)
    # -P: not the working directory first on the path (it may be a checkout), so PYTHONPATH picks the code
    entry = "import sys; from ballast.internal.cmd.ballast import main; sys.exit(main())"
    command = [sys.executable, "-P", "-c", entry, "simulate", "--out"]
    with tempfile.TemporaryDirectory(prefix="bench-demo-") as out, tempfile.TemporaryFile("w+") as errors:
        load = os.getloadavg()[0]
        started = time.perf_counter()
        # stderr to a file: a pipe nobody reads while waiting could fill and stall the command
        process = subprocess.Popen([*command, out], stdout=subprocess.DEVNULL, stderr=errors, text=True, env=env)
        try:
            _, status, usage = os.wait4(process.pid, 0)  # its CPU with its workers', reaped before it exits
        except BaseException:
            process.kill()
            process.wait()
            raise
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            errors.seek(0)
            failure = f"exit {process.returncode}): {errors.read()}"
            raise SystemExit(f"run {run} ({code}): ballast simulate failed ({failure}")
        same = all((Path(out) / name).read_bytes() == (DEMO_DATA / name).read_bytes() for name in DEMO_FILES)
    print(f"  run {run} {code:>8} at {datetime.datetime.now(datetime.UTC):%H:%M} UTC (load average {load:.1f}): "
          f"{wall:.1f} s wall, {usage.ru_utime + usage.ru_stime:.1f} s CPU, figures "
          f"{'as documented' if same else 'DIFFERENT'}", flush=True)  # fmt: skip
    if not same:
        raise SystemExit(f"run {run} ({code}): the figures differ from {DEMO_DATA.relative_to(REPO)}")
    return wall


def extract(repository: Path, revision: str, into: Path) -> Path:
    """The tree of `revision` in `into` (importable as `ballast` from there, as the checkout is)."""
    archive = subprocess.run(["git", "-C", str(repository), "archive", revision], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", type=int, default=8)
    parser.add_argument("--namespaces", type=int, default=5)
    parser.add_argument("--days", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--recommenders", nargs="+", default=list(RECOMMENDERS), choices=[*RECOMMENDERS, UNCACHED])
    parser.add_argument("--baseline", metavar="REF", help="git revision to time side by side (e.g. main)")
    parser.add_argument("--git", type=Path, default=REPO, help="the repository REF is taken from (default: this one)")
    parser.add_argument("--grid", action="store_true", help="also Ballast at 2× and 4× the apps (growth)")
    parser.add_argument(
        "--together", action="store_true", help="with --baseline: run both codes of a case at once, a core each"
    )
    parser.add_argument("--demo", type=int, metavar="N", help="time `make demo` itself, N runs in a row")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.together and not args.baseline:
        parser.error("--together runs the baseline beside the new code: it needs --baseline REF")
    if args.demo is not None and args.demo < 1:
        parser.error("--demo N: N runs, at least 1")
    if args.demo is not None and (args.grid or args.together):
        parser.error("--demo times `make demo` whole, one command at a time: no --grid or --together")
    if args.child:
        recommender, apps, namespaces, days, out = args.child
        child(recommender, int(apps), int(namespaces), int(days), Path(out))
        return

    load = os.getloadavg()
    print(
        f"{cpu_model()}, {os.cpu_count()} cores, CPython {platform.python_version()}, "
        f"{datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, load average {load[0]:.1f} at the start"
    )
    if args.demo is not None:
        with tempfile.TemporaryDirectory(prefix="bench-demo-baseline-") as scratch:
            baseline = (args.baseline, extract(args.git, args.baseline, Path(scratch))) if args.baseline else None
            demo(args.demo, baseline)
    else:
        cases_of(args)


def cases_of(args: argparse.Namespace) -> None:
    """Every recommender's run (and the baseline's, with `--baseline`), timed and tabled."""
    cases = [Case(r, args.apps, args.namespaces, d) for d in args.days for r in args.recommenders]
    if args.grid:
        cases += [Case("ballast", args.apps * k, args.namespaces, d) for k in (2, 4) for d in args.days]
    timings: list[Timing] = []
    with tempfile.TemporaryDirectory(prefix="bench-simulate-") as scratch_dir:
        scratch = Path(scratch_dir)
        codes: list[tuple[str, Path | None]] = [("new", REPO)]  # this file's tree, whatever is installed
        if args.baseline:
            codes.insert(0, (args.baseline, extract(args.git, args.baseline, Path(tempfile.mkdtemp(dir=scratch)))))
        for case in cases:
            if args.together:  # at the same time, a core each: both see the same phase of the machine's speed
                done = finish([start(case, code, tree, scratch) for code, tree in codes])
            else:  # alternating: both see the same load, as far as a shared machine allows
                done = [timing for code, tree in codes for timing in finish([start(case, code, tree, scratch)])]
            for timing in done:
                timings.append(timing)
                print(f"  {timing.code:>8} {case.recommender}, {case.apps} apps, {case.days} d: "
                      f"{timing.wall_s:.1f} s wall, {timing.cpu_s:.1f} s CPU", flush=True)  # fmt: skip
    print(f"\nfleet: apps × {args.namespaces} namespaces (default seed); CPU = the run's own user + system seconds\n")
    header = "| recommender | apps | pods | days | wall | CPU | CPU ms per pod-day | × none |"
    if args.baseline:
        header += f" CPU × {args.baseline} | same trace |"
    print(header)
    print("|---" * (header.count("|") - 1) + "|")
    for timing in (t for t in timings if t.code == "new"):
        case = timing.case
        none = next((t for t in timings if t.code == "new" and t.case == Case("none", case.apps, case.namespaces,
                                                                             case.days)), None)  # fmt: skip
        row = (f"| {case.recommender} | {case.apps} | {timing.pods} | {case.days} | {timing.wall_s:.1f} s | "
               f"{timing.cpu_s:.1f} s | {timing.per_pod_day_ms:.1f} | "
               f"{f'{timing.cpu_s / none.cpu_s:.1f}' if none else '–'} |")  # fmt: skip
        if args.baseline:
            old = next(t for t in timings if t.code == args.baseline and t.case == case)
            row += f" {timing.cpu_s / old.cpu_s:.2f} | {'yes' if old.trace_sha == timing.trace_sha else 'NO'} |"
        print(row)
    if args.baseline and any(
        t.trace_sha != o.trace_sha for t in timings for o in timings if t.case == o.case and t.code != o.code
    ):
        raise SystemExit("the traces differ from the baseline's: the change is not a pure speed-up")


if __name__ == "__main__":
    main()
