"""`ballast simulate`: days of a fleet in seconds — the operator's own code, a VPA-recommender baseline and the
manifests as written, on the same usage — and a report of what each would reserve, waste and OOM-kill.

    ballast simulate [--seed 1] [--apps 40] [--namespaces 5] [--replicas 2] [--days 3] [--out demo]
    ballast simulate --usage usage.csv --side side.yaml [--out DIR]   # replay a recorded fleet
    ballast simulate --from-cluster side.yaml                         # write the side file from a live cluster

Each recommender runs in its own process (`--jobs`, 2 by default: one for Ballast, one for VPA and "none"), over
the same fleet rebuilt from the same seed or files; Ballast's side (`simulate_operator`) keeps its history in a
fresh SQLite file, or in `--store` (e.g. `redis://localhost:6379/15`, which it writes to). The report goes to
`--out` (docs/simulate.md): `report.md`, JSON files of every figure (byte-identical for one seed: no wall time in
them) and PNG charts. Timing goes to stdout only. Exit 0 whatever the verdict; 1 for bad input (a replay file,
a flag, a store that cannot be opened, an output directory that cannot be written), named before anything runs,
or for a report that could not be written (naming the path; the figures are printed first).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import multiprocessing
import multiprocessing.connection
import os
import queue
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.managers import SyncManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ballast.internal.cmd.ballast import connect, fail
from ballast.internal.fleetsim.model import DAY_SECONDS, STEP_SECONDS, Fleet, Recommender, Trace, Usage

if TYPE_CHECKING:
    from ballast.internal.fleetsim.figures import Figures

RECOMMENDERS = ("ballast", "vpa", "none")
PRODUCTION = "ballast-production"
"""`--long`: the Ballast seed's production policy too, over the same fleet."""
LONG_RECOMMENDERS = ("ballast", PRODUCTION, "vpa", "none")
OOM_OFF = "ballast-oom-off"
"""`--compare-oom`: the default policy with OOM kills ignored, the Go operator's behaviour (difference 62)."""
BACKGROUND = ("vpa", "none")
"""The runs that yield the cores to Ballast's (`_in_background`): a fraction of their cost."""
OWN_STORE = (PRODUCTION, OOM_OFF)
"""The further Ballast columns: a policy over the preset's, each in a history store of its own."""
LONG_MIN_DAYS = 5
"""The production policy is ready after 72 h of history: `--long` runs at least this long to show it act."""
DEFAULT_OUT = "demo"
DEFAULT_IDENTITY = ("app.kubernetes.io/name", "app.kubernetes.io/component")
"""The identity labels of a side file written from a cluster without a BallastConfig (the chart's default)."""


@dataclass(frozen=True, slots=True)
class Scenario:
    """What a run simulates, small enough to hand to a worker process, which rebuilds the fleet from it."""

    seed: int = 1
    apps: int = 40
    namespaces: int = 5
    replicas: int = 2
    days: int = 3
    usage_csv: Path | None = None
    side_file: Path | None = None

    def load(self) -> tuple[Fleet, Usage, list[str]]:
        """The fleet, its usage and the plain lines describing it. Raises ValueError (ReplayError) for bad input."""
        if self.usage_csv is not None and self.side_file is not None:
            from ballast.internal.fleetsim.replay import load_replay  # noqa: PLC0415

            replay = load_replay(self.usage_csv, self.side_file)
            fleet = replay.fleet
            lines = [
                f"replay of {self.usage_csv.name} with {self.side_file.name}: {len(fleet.workloads)} workloads, "
                f"{len(replay.usage.slots)} container streams, {fleet.duration_s / 3600:.1f} h",
                *(f"pod {pod} has no sample: not replayed" for pod in replay.unsampled_pods),
            ]
            return fleet, replay.usage, lines
        from ballast.internal.fleetsim.fleet import default_fleet, describe  # noqa: PLC0415
        from ballast.internal.fleetsim.usage import SyntheticUsage  # noqa: PLC0415

        fleet = default_fleet(
            self.seed, apps=self.apps, namespaces=self.namespaces, replicas=self.replicas, days=self.days
        )
        return fleet, SyntheticUsage(fleet), describe(fleet)


@dataclass(frozen=True, slots=True)
class RunSettings:
    store_url: str
    vpa_mode: str = "Recreate"
    own_stores: Mapping[str, str] = field(default_factory=dict)
    """The history store of each further Ballast column (`OWN_STORE`: `--long`, `--compare-oom`) by name: its own,
    never the default run's."""
    peer_store_url: str | None = None
    """When set, the "ballast" run is shared by two processes (`fleetsim.pair`), the second writing this store."""


def recommender(name: str, fleet: Fleet, settings: RunSettings) -> Recommender:
    """The recommender called `name`, set up for `fleet`."""
    if name == "ballast":
        from ballast.internal.fleetsim.operator import BallastOperator  # noqa: PLC0415

        return BallastOperator(fleet, store_url=settings.store_url)
    if name in OWN_STORE:
        from ballast.internal.fleetsim.operator import (  # noqa: PLC0415
            PRODUCTION_POLICY,
            BallastOperator,
            oom_floor_off_policy,
        )

        store = settings.own_stores.get(name)
        if not store:
            raise ValueError(f"{name} needs a history store of its own")
        policy = PRODUCTION_POLICY if name == PRODUCTION else oom_floor_off_policy()
        return BallastOperator(fleet, store_url=store, policies=[policy], name=name)
    if name == "vpa":
        from ballast.internal.fleetsim.vpa import VpaRecommender  # noqa: PLC0415

        return VpaRecommender(
            fleet, update_mode="InPlaceOrRecreate" if settings.vpa_mode == "InPlaceOrRecreate" else "Recreate"
        )
    from ballast.internal.fleetsim.run import AsWritten  # noqa: PLC0415

    return AsWritten()


def run_one(scenario: Scenario, name: str, settings: RunSettings, progress: Any = None) -> tuple[Trace, float]:
    """One recommender's run (in a worker process); returns its trace and the wall seconds it took, building the
    fleet included."""
    from ballast.internal.fleetsim.run import simulate  # noqa: PLC0415

    started = time.perf_counter()
    report: Callable[[int, int], None] | None = None
    if progress is not None:

        def report(step: int, steps: int) -> None:
            progress.put((name, step, steps))

    if name == "ballast" and settings.peer_store_url is not None:
        from ballast.internal.fleetsim.pair import simulate_pair  # noqa: PLC0415

        load = functools.partial(_fleet_and_usage, scenario)
        trace = simulate_pair(load, settings.store_url, settings.peer_store_url, report)
    else:
        fleet, usage, _ = scenario.load()
        with _in_background(name in BACKGROUND):
            trace = simulate(fleet, usage, recommender(name, fleet, settings), report)
    return trace, time.perf_counter() - started


@contextlib.contextmanager
def _in_background(background: bool) -> Iterator[None]:
    """A `BACKGROUND` run on the time Ballast's runs leave idle (Linux's SCHED_IDLE, for the calling thread, the
    one that simulates): those take the longest, and their two processes wait on each other at every poll; the
    others fit in those moments. The policy is put back after the run where the process may (an unprivileged one
    may not: its later runs stay idle-priority, which `_run_all`'s order makes background runs only). Elsewhere
    than on Linux, nothing changes."""
    if not background or sys.platform != "linux":
        yield
        return
    before = os.sched_getscheduler(0)
    os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    try:
        yield
    finally:
        with contextlib.suppress(PermissionError):
            os.sched_setscheduler(0, before, os.sched_param(0))


def _cores() -> int:
    """The cores this process may run on."""
    affinity = getattr(os, "sched_getaffinity", None)  # Linux's; elsewhere every core counts
    return len(affinity(0)) if affinity is not None else os.cpu_count() or 1


def _fleet_and_usage(scenario: Scenario) -> tuple[Fleet, Usage]:
    fleet, usage, _ = scenario.load()
    return fleet, usage


def poll_interval(fleet: Fleet) -> int:
    """The Ballast preset's shortest pollInterval (seconds), read as the operator reads it."""
    from ballast.api.ballast.v1 import MetricsSource  # noqa: PLC0415
    from ballast.internal.collection import poll_interval_seconds  # noqa: PLC0415
    from ballast.internal.dev.preset import SAMPLES_DIR, load_preset  # noqa: PLC0415
    from ballast.internal.fleetsim.operator import PRESET  # noqa: PLC0415

    sources = load_preset(SAMPLES_DIR / PRESET).of_kind(MetricsSource)
    return int(min(poll_interval_seconds(source.spec.config.poll_interval) for source in sources))


def add_parser(subparsers: Any, common: argparse.ArgumentParser) -> None:
    """The `simulate` subcommand and its flags."""
    simulate = subparsers.add_parser(
        "simulate",
        parents=[common],
        help="simulate days of a fleet under Ballast, a VPA baseline and the manifests as written; report the figures",
        description=(
            "Run the operator's own code (policy resolution, statistics, readiness, recommendations, admission and "
            "in-place resize, the real history store) on a virtual clock over a synthetic fleet or a recorded one, "
            "next to a VPA-recommender baseline and the manifests as written, on the same usage; write report.md, "
            "JSON figures and PNG charts to --out and print the table and the verdict."
        ),
    )
    simulate.add_argument("--seed", type=int, default=1, help="the synthetic fleet's seed (default: 1)")
    simulate.add_argument("--apps", type=int, default=40, help="apps in the synthetic fleet (default: 40)")
    simulate.add_argument("--namespaces", type=int, default=5, help="namespaces each app runs in (default: 5)")
    simulate.add_argument("--replicas", type=int, default=2, help="replicas per workload (default: 2)")
    simulate.add_argument("--days", type=int, help=f"simulated days (default: 3, or {LONG_MIN_DAYS} with --long)")
    simulate.add_argument(
        "--long",
        action="store_true",
        help=(
            "also run the Ballast seed's production policy (p99 x 1.15 cpu, p99 x 1.25 memory, ready after 1000 "
            f"points over 72 h) as 'ballast-production'; needs --days {LONG_MIN_DAYS} or more. Not part of make demo"
        ),
    )
    simulate.add_argument(
        "--compare-oom",
        action="store_true",
        help=(
            f"also run the default policy with OOM kills ignored (the Go operator's behaviour) as '{OOM_OFF}', to "
            "show what the OOM floor changes. Not part of make demo"
        ),
    )
    simulate.add_argument("--usage", type=Path, metavar="CSV", help="replay this usage export instead (needs --side)")
    simulate.add_argument("--side", type=Path, metavar="YAML", help="the replayed pods and nodes (with --usage)")
    simulate.add_argument(
        "--from-cluster", type=Path, metavar="YAML", help="write the side file of the live cluster's pods and exit"
    )
    simulate.add_argument("--store", metavar="URL", help="Ballast's history store (default: a fresh SQLite file)")
    simulate.add_argument(
        "--vpa-mode", choices=["Recreate", "InPlaceOrRecreate"], default="Recreate", help="the VPA updater's mode"
    )
    simulate.add_argument("--jobs", type=int, default=2, help="worker processes (default: 2)")
    simulate.add_argument("--out", type=Path, default=Path(DEFAULT_OUT), help="report directory (default: demo)")


def run(args: argparse.Namespace) -> int:
    if args.from_cluster is not None:
        return _write_side_file(args)
    days = args.days if args.days is not None else (LONG_MIN_DAYS if args.long else 3)
    problem = _flag_problem(args, days) or _input_problem(args) or _store_problem(args.store)
    problem = problem or _writable_problem("--out", args.out)
    if problem:
        return fail(problem)
    recommenders = (*(LONG_RECOMMENDERS if args.long else RECOMMENDERS), *((OOM_OFF,) if args.compare_oom else ()))
    scenario = Scenario(args.seed, args.apps, args.namespaces, args.replicas, days, args.usage, args.side)
    try:
        fleet, _, lines = scenario.load()
    except ValueError as exc:
        return fail(exc)
    with tempfile.TemporaryDirectory(prefix="ballast-simulate-") as scratch:
        own_stores = {name: f"sqlite:///{Path(scratch) / f'history-{name}.db'}" for name in OWN_STORE}
        # Ballast's run takes two processes (half its profiles each) when there are cores and workers to spare and
        # its stores are the fresh SQLite files: a --store is one history, which two collectors cannot share.
        paired = args.jobs > 1 and _cores() > 1 and not args.store
        peer_store = f"sqlite:///{Path(scratch) / 'history-shard-1.db'}" if paired else None
        settings = RunSettings(
            args.store or f"sqlite:///{Path(scratch) / 'history.db'}", args.vpa_mode, own_stores, peer_store
        )
        started = time.perf_counter()
        early = _EarlyReport(fleet)
        traces, seconds = _run_all(scenario, settings, args.jobs, recommenders, finished=early.take)
    from ballast.internal.fleetsim.report import summarise, write_report  # noqa: PLC0415

    poll = early.poll if early.poll is not None else poll_interval(fleet)
    summary = summarise(traces, fleet, poll, known=early.figures)
    print("\n".join(lines))
    print()
    print(summary.table_text())  # before any file: a full disk or a vanished directory loses no figure
    try:
        report = write_report(args.out, lines, traces, fleet, poll, summary=summary)
    except OSError as exc:
        return fail(f"writing the report to {exc.filename or args.out}: {exc.strerror or exc}")
    timing = ", ".join(f"{name} {seconds[name]:.1f} s" for name in recommenders)
    print(f"wall time {time.perf_counter() - started:.1f} s ({timing}); report: {report.report_md}")
    return 0


def _flag_problem(args: argparse.Namespace, days: int) -> str | None:
    """What is wrong with the flags of a simulation, if anything."""
    if (args.usage is None) != (args.side is None):
        return "--usage and --side go together: the usage export and the side file of its pods"
    if args.jobs < 1:
        return f"--jobs must be at least 1, got {args.jobs}"
    if args.long and args.usage is None and days < LONG_MIN_DAYS:
        return f"--long needs --days {LONG_MIN_DAYS} or more (the production policy waits for 72 h of history)"
    if (args.long or args.compare_oom) and args.store is not None:
        flag = "--long" if args.long else "--compare-oom"
        return f"{flag} runs two Ballast policies, each on a fresh SQLite store: leave --store out"
    return None


def _input_problem(args: argparse.Namespace) -> str | None:
    """Sizes below one, or a replay file that cannot be read."""
    for flag, value in (("--apps", args.apps), ("--namespaces", args.namespaces), ("--replicas", args.replicas),
                        ("--days", args.days)):  # fmt: skip
        if value is not None and value < 1:
            return f"{flag} must be at least 1, got {value}"
    for flag, path in (("--usage", args.usage), ("--side", args.side)):
        if path is None:
            continue
        try:
            with path.open("rb"):
                pass
        except OSError as exc:
            return f"{flag} {path}: {exc.strerror or exc}"
    return None


def _store_problem(url: str | None) -> str | None:
    """Why `--store` cannot be used: a URL it does not understand, or a store that does not answer."""
    if url is None:
        return None
    from ballast.internal.history import open_store  # noqa: PLC0415
    from ballast.internal.history.url import sqlite_path  # noqa: PLC0415

    try:
        if url.lower().startswith("sqlite:"):
            return _writable_problem("--store", sqlite_path(url).parent)
        store = open_store(url, timeout=5.0)
    except ValueError as exc:  # StoreURLError: the message names the URL without its credentials
        return f"--store: {exc}"
    try:
        store.ping()
    except Exception as exc:  # the backends raise their own unavailability errors; the message says which
        return f"--store: {exc}"
    finally:
        store.close()
    return None


def _writable_problem(flag: str, directory: Path) -> str | None:
    """Why files cannot be written in `directory` (created if missing), found by writing one there."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as exc:
        return f"{flag} {directory}: cannot write there: {exc.strerror or exc}"
    return None


class _EarlyReport:
    """The report's work that need not wait for the slowest run (Ballast's): once a run ends, a core is free for
    the report's imports, the poll interval and that run's figures, done here while the others go on."""

    def __init__(self, fleet: Fleet) -> None:
        self.fleet = fleet
        self.poll: int | None = None
        self.figures: dict[str, Figures] = {}
        """Recommender → its `Figures`, for the runs that ended before the last."""

    def take(self, name: str, trace: Trace) -> None:
        from ballast.internal.fleetsim import charts  # noqa: F401, PLC0415  (matplotlib, imported before it is needed)
        from ballast.internal.fleetsim.figures import figures  # noqa: PLC0415

        if self.poll is None:
            self.poll = poll_interval(self.fleet)
        self.figures[name] = figures(trace, self.fleet)


def _run_all(
    scenario: Scenario,
    settings: RunSettings,
    jobs: int,
    recommenders: Sequence[str] = RECOMMENDERS,
    finished: Callable[[str, Trace], None] | None = None,
) -> tuple[dict[str, Trace], dict[str, float]]:
    """Every recommender's run in worker processes, with a progress bar (plain lines when not a terminal).
    `finished(name, trace)` is called for each run that ends while another still runs."""
    from rich.progress import Progress  # noqa: PLC0415

    context = multiprocessing.get_context("spawn")  # no threads of this process carried into the workers
    # The pool is shut down without waiting for its workers to exit: a worker that held a large simulation frees
    # its heap for a second or more, while the report is written.
    pool = ProcessPoolExecutor(jobs, mp_context=context, initializer=_end_with_parent)
    manager = SyncManager(ctx=context)
    manager.start(_end_with_parent)
    with _shut_down_later(pool), manager, Progress(
        transient=False, disable=not sys.stdout.isatty()
    ) as bar:  # fmt: skip
        updates = manager.Queue()
        # Ballast's runs first: a worker that ran a background run may not take its normal priority back.
        futures: dict[str, Future[tuple[Trace, float]]] = {
            name: pool.submit(run_one, scenario, name, settings, updates)
            for name in sorted(recommenders, key=lambda name: name in BACKGROUND)
        }
        tasks = {name: bar.add_task(name, total=None) for name in recommenders}
        days_shown = dict.fromkeys(recommenders, 0)
        taken: set[str] = set()
        while not all(future.done() for future in futures.values()):
            try:
                name, step, steps = updates.get(timeout=0.5)
            except queue.Empty:
                continue
            bar.update(tasks[name], completed=step, total=steps)
            day = step * STEP_SECONDS // DAY_SECONDS
            if bar.disable and day > days_shown[name]:  # not a terminal: a plain line per simulated day
                days_shown[name] = day
                print(f"{name}: day {day} of {steps * STEP_SECONDS // DAY_SECONDS} simulated", flush=True)
            if finished is not None:
                for done in [n for n, f in futures.items() if f.done() and n not in taken and not f.exception()]:
                    taken.add(done)
                    if not all(future.done() for future in futures.values()):
                        finished(done, futures[done].result()[0])
        results = {name: futures[name].result() for name in recommenders}
    return {name: trace for name, (trace, _) in results.items()}, {name: s for name, (_, s) in results.items()}


def _end_with_parent() -> None:
    """A worker's initializer: the worker ends when this command's process does, however it ends — killed, it
    would otherwise leave its workers running their simulations to the end."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="end-with-parent", daemon=True).start()


@contextlib.contextmanager
def _shut_down_later(pool: ProcessPoolExecutor) -> Iterator[ProcessPoolExecutor]:
    """Shut `pool` down on the way out: after every run ended, without waiting for its workers to exit (the
    interpreter joins them when it ends); on a failure, cancelling what has not started and waiting for the rest,
    so that no worker still writes in the scratch directory the caller removes next."""
    try:
        yield pool
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=False)


def _write_side_file(args: argparse.Namespace) -> int:
    """`--from-cluster`: the side file of every pod and node the kubeconfig can list."""
    from ballast.internal.fleetsim.replay import side_file_from_cluster, write_side_file  # noqa: PLC0415

    problem = _writable_problem("--from-cluster", args.from_cluster.parent)
    if problem:
        return fail(problem)
    try:
        client = connect(args, typed=False)
        pods = client.list("v1/Pod").items
        nodes = client.list("v1/Node").items
        configs = [c for c in client.list("ballast.tightlinesoftware.com/v1/BallastConfig").items
                   if c["metadata"]["name"] == "ballast"]  # fmt: skip
    except Exception as exc:  # an unreachable server or missing kubeconfig: the message says which
        return fail(f"reading the cluster: {exc}")
    identity = (configs[0].get("spec") or {}).get("identityLabels") if configs else None
    document = side_file_from_cluster(
        pods, nodes, identity or ["app.kubernetes.io/name", "app.kubernetes.io/component"]
    )
    try:
        write_side_file(document, args.from_cluster)
    except OSError as exc:
        return fail(f"writing {exc.filename or args.from_cluster}: {exc.strerror or exc}")
    print(
        f"wrote {args.from_cluster}: {len(document.get('pods') or [])} pods, {len(document.get('nodes') or [])} nodes"
    )
    return 0
