"""`ballast simulate`: one seed gives byte-identical JSON, another seed different figures; bad input is refused
naming what was wrong."""

from __future__ import annotations

import contextlib
import errno
import multiprocessing
import socket
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from ballast.internal.cmd import simulate as simulate_cmd
from ballast.internal.cmd.ballast import main
from ballast.runtime.envtest.wait import poll_until

SMALL = ["--apps", "3", "--namespaces", "2", "--days", "1", "--jobs", "2"]


def simulate(out: Path, *flags: str) -> dict[str, bytes]:
    assert main(["simulate", *SMALL, "--out", str(out), *flags]) == 0
    return {path.name: path.read_bytes() for path in sorted(out.glob("*.json"))}


@pytest.mark.timeout(300)
def test_one_seed_gives_byte_identical_json_serial_or_parallel_and_another_seed_different(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = simulate(tmp_path / "a", "--seed", "7", "--jobs", "3")  # every recommender in its own process
    printed = capsys.readouterr().out
    second = simulate(tmp_path / "b", "--seed", "7", "--jobs", "1")  # one after the other in one worker
    other = simulate(tmp_path / "c", "--seed", "8")
    assert set(first) == {"figures.json", "verdict.json", "trace-ballast.json", "trace-none.json", "trace-vpa.json"}
    assert first == second
    assert first["figures.json"] != other["figures.json"]
    assert (tmp_path / "a" / "report.md").read_text().count("| ") > 20
    assert "verdict:" in printed
    assert "wall time" in printed


@pytest.mark.timeout(300)
def test_a_failure_while_runs_go_on_waits_for_the_workers_before_it_is_raised(tmp_path: Path) -> None:
    scenario = simulate_cmd.Scenario(apps=3, namespaces=2, days=1)
    settings = simulate_cmd.RunSettings(f"sqlite:///{tmp_path / 'history.db'}")
    taken: list[str] = []

    def finished(name: str, trace: object) -> None:
        taken.append(name)
        raise RuntimeError("the report failed")

    with pytest.raises(RuntimeError, match="the report failed"):
        simulate_cmd._run_all(scenario, settings, 2, ("ballast", "vpa", "none"), finished=finished)

    assert len(taken) == 1  # the first run to end, while another still ran
    assert multiprocessing.active_children() == []  # no worker left writing in the caller's scratch directory


BACKGROUND_PROBE = """
import os
from ballast.internal.cmd.simulate import _in_background
before = os.sched_getscheduler(0)
with _in_background(True):
    during = os.sched_getscheduler(0)
after = os.sched_getscheduler(0)
with _in_background(False):
    foreground = os.sched_getscheduler(0)
try:  # whether this process may take its policy back at all (privileged, or a raised RLIMIT_NICE)
    os.sched_setscheduler(0, before, os.sched_param(0))
    may = 1
except PermissionError:
    may = 0
print(before, during, after, foreground, os.SCHED_IDLE, may)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="SCHED_IDLE is Linux's")
def test_a_background_run_takes_idle_time_only_and_gives_the_policy_back_where_it_may() -> None:
    # In a process of its own: an unprivileged one cannot take its normal policy back.
    probe = subprocess.run([sys.executable, "-c", BACKGROUND_PROBE], capture_output=True, text=True, check=True)
    before, during, after, foreground, idle, may = map(int, probe.stdout.split())

    assert during == idle
    assert after == (before if may else idle)
    assert foreground == after


def descendants(pid: int) -> set[int]:
    """Every process below `pid`, from /proc (children of each of its threads)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            for child in map(int, (task / "children").read_text().split()):
                found |= {child, *descendants(child)}
    return found


def running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"  # a zombie has ended, whoever reaps it


@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.timeout(120)
def test_killing_the_command_ends_its_workers(tmp_path: Path) -> None:
    entry = "import sys; from ballast.internal.cmd.ballast import main; sys.exit(main())"
    flags = ["--apps", "20", "--namespaces", "2", "--days", "3", "--out", str(tmp_path)]
    command = subprocess.Popen([sys.executable, "-P", "-c", entry, "simulate", *flags], stdout=subprocess.DEVNULL)
    try:

        def all_started() -> set[int] | None:
            # the resource tracker, the progress queue's manager, two workers, Ballast's second process (with a
            # core to spare)
            found = descendants(command.pid)
            return found if len(found) >= (5 if simulate_cmd._cores() > 1 else 4) else None

        workers = poll_until(all_started, timeout=60, what="the command's worker processes")
    finally:
        command.kill()
        command.wait()

    assert poll_until(lambda: not any(running(pid) for pid in workers), timeout=30, what="the workers to end")


def test_usage_without_its_side_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--usage", str(tmp_path / "usage.csv"), "--out", str(tmp_path)]) == 1
    assert "--usage and --side go together" in capsys.readouterr().err


def test_a_malformed_replay_row_is_refused_with_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = Path(__file__).parents[3] / "data" / "replay"
    usage = tmp_path / "usage.csv"
    lines = (data / "usage.csv").read_text().splitlines()
    lines[3] = ",".join([*lines[3].split(",")[:5], "12x"])
    usage.write_text("\n".join(lines) + "\n")
    assert main(["simulate", "--usage", str(usage), "--side", str(data / "side.yaml"), "--out", str(tmp_path)]) == 1
    assert 'usage.csv:4: column "value": not a number: "12x"' in capsys.readouterr().err
    assert not (tmp_path / "report.md").exists()


def test_long_needs_five_days(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--long", "--days", "3", "--out", str(tmp_path)]) == 1
    assert "--long needs --days 5 or more" in capsys.readouterr().err
    assert not (tmp_path / "report.md").exists()


def test_compare_oom_adds_the_oom_floor_off_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flags = ["--apps", "3", "--namespaces", "2", "--replicas", "1", "--days", "1", "--compare-oom"]
    assert main(["simulate", *flags, "--out", str(tmp_path)]) == 0
    figures = orjson.loads((tmp_path / "figures.json").read_bytes())
    assert set(figures) == {"ballast", "ballast-oom-off", "vpa", "none"}
    assert (tmp_path / "trace-ballast-oom-off.json").exists()
    verdict = orjson.loads((tmp_path / "verdict.json").read_bytes())
    assert "ballast-oom-off" not in orjson.dumps(verdict).decode()  # the verdict judges the default policy only
    assert "ballast-oom-off" in capsys.readouterr().out


def test_compare_oom_refuses_a_shared_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = f"sqlite:///{tmp_path / 'h.db'}"
    assert main(["simulate", "--compare-oom", "--store", store, "--out", str(tmp_path / "out")]) == 1
    assert "--compare-oom runs two Ballast policies" in capsys.readouterr().err


@pytest.mark.timeout(600)
def test_long_adds_the_production_policy_as_its_own_column(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    flags = ["--apps", "3", "--namespaces", "2", "--replicas", "1", "--jobs", "2", "--long"]
    assert main(["simulate", *flags, "--out", str(tmp_path)]) == 0
    figures = orjson.loads((tmp_path / "figures.json").read_bytes())
    assert set(figures) == {"ballast", "ballast-production", "vpa", "none"}
    default, production = figures["ballast"], figures["ballast-production"]
    # p99 x 1.15 reserves more than the default's mean x 1.25, so usage crosses the request less often.
    assert production["slack"]["cpu"]["mean"] > default["slack"]["cpu"]["mean"]
    assert production["above_request"]["cpu"] < default["above_request"]["cpu"]
    assert production["changes"] > 0  # it did act: 72 h of history are reached within the five days
    trace = orjson.loads((tmp_path / "trace-ballast-production.json").read_bytes())
    assert trace["duration_s"] == 5 * 86400
    header = (tmp_path / "report.md").read_text().splitlines()
    assert any("ballast-production" in line for line in header)
    assert "ballast-production" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--out", "/proc/nope"], "ballast: --out /proc/nope: cannot write there: No such file or directory"),
        (
            ["--store", "banana://x"],
            "ballast: --store: store URL 'banana://x': unsupported scheme 'banana'; use one of redis, rediss, "
            "redis+sentinel, rediss+sentinel, redis+cluster, rediss+cluster, sqlite",
        ),
        (
            ["--store", "sqlite:////proc/nope/h.db"],
            "ballast: --store /proc/nope: cannot write there: No such file or directory",
        ),
        (["--usage", "/nope.csv", "--side", "/nope.yaml"], "ballast: --usage /nope.csv: No such file or directory"),
        (["--apps", "0"], "ballast: --apps must be at least 1, got 0"),
        (["--days", "-1"], "ballast: --days must be at least 1, got -1"),
    ],
)
def test_every_argument_is_checked_before_anything_is_simulated(
    flags: list[str], message: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(simulate_cmd, "_run_all", lambda *_, **__: pytest.fail("simulated before checking"))
    assert main(["simulate", *flags]) == 1
    assert capsys.readouterr().err.splitlines() == [message]


def test_a_store_that_does_not_answer_is_refused_before_anything_is_simulated(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(simulate_cmd, "_run_all", lambda *_, **__: pytest.fail("simulated before checking"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    assert main(["simulate", "--store", f"redis://127.0.0.1:{port}/15"]) == 1
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"ballast: --store: ping: Redis at 127.0.0.1:{port} is unavailable: "), line


@pytest.mark.timeout(300)
def test_the_figures_are_printed_before_the_report_is_written_and_a_write_failure_names_the_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ballast.internal.fleetsim import report  # noqa: PLC0415

    def disk_full(out_dir: Path, *_: object, **__: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(out_dir / "figures.json"))

    monkeypatch.setattr(report, "write_report", disk_full)
    assert main(["simulate", *SMALL, "--out", str(tmp_path / "out")]) == 1
    printed = capsys.readouterr()
    assert "verdict:" in printed.out
    written = tmp_path / "out" / "figures.json"
    assert printed.err == f"ballast: writing the report to {written}: No space left on device\n"
