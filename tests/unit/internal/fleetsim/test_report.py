"""The simulator's report on three hand-made traces: the files it writes, JSON that is the same bytes for the same
input (and differs when a figure does), the table and the verdict in report.md, and charts that exist."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import orjson
import pytest

from ballast.internal.fleetsim.figures import figures
from ballast.internal.fleetsim.model import (
    App,
    Change,
    ColdStart,
    ContainerSpec,
    Fleet,
    NodeSpec,
    OomKill,
    Trace,
    Workload,
    WorkloadTrace,
)
from ballast.internal.fleetsim.report import Report, summarise, write_report

DAY = 288
HALF = DAY // 2
NODE = NodeSpec("node-1", {"cpu": 8.0, "memory": 64.0})
START = 43_200
COLD = ColdStart(workload="new/web", at_s=START, kind="new-namespace", reference="ref/web")
APP = App(
    "web",
    {"app.kubernetes.io/name": "web"},
    (ContainerSpec("app", {"cpu": 2.0, "memory": 4.0}, {}),),
    {"app": "steady"},
)
FLEET = Fleet(
    workloads=(Workload("ref", APP, 1), Workload("new", APP, 1, created_s=START)),
    nodes=(NODE, NodeSpec("node-2", {"cpu": 8.0, "memory": 64.0})),
    duration_s=86_400,
    cold_starts=(COLD,),
)
SCENARIO = ["fleet: 2 workloads on 2 nodes for 1 day", "seed 7"]


def workload(key: str, reserved: tuple[float, float], usage: tuple[float, float], first: int = 0) -> WorkloadTrace:
    """One pod from window `first` to the end of the day, with constant requests and usage."""
    running = np.array([0.0] * first + [1.0] * (DAY - first))
    return WorkloadTrace(
        workload=key,
        reserved=np.array([[reserved[0], reserved[1], 0.0]] * DAY) * running[:, None],
        usage=np.array([[usage[0], usage[1], 0.0]] * DAY) * running[:, None],
        replicas=running,
        above_request=np.array([1, 0, 0], dtype=np.int64),
        measured=np.array([4, 4, 4], dtype=np.int64),
    )


def admission(at_s: int, pod: str, cpu: float, memory: float) -> Change:
    return Change(at_s, pod, "new/web", "admission", {"app": {"cpu": cpu, "memory": memory}})


def resize(at_s: int, pod: str, cpu: float, memory: float) -> Change:
    return Change(at_s, pod, "new/web", "resize", {"app": {"cpu": cpu, "memory": memory}})


def trace(name: str, reserved: tuple[float, float], changes: Sequence[Change], ooms: int = 0) -> Trace:
    """ref/web and new/web reserve `reserved` and use (1 core, 2 units of memory) each."""
    workloads = {
        "ref/web": workload("ref/web", reserved, (1.0, 2.0)),
        "new/web": workload("new/web", reserved, (1.0, 2.0), first=HALF),
    }
    kills = [OomKill(600 * (i + 1), "ref-0", "ref/web", "app", reserved[1], reserved[1]) for i in range(ooms)]
    return Trace(name, 86_400, {"cpu": 16.0, "memory": 128.0}, workloads, kills, list(changes))


def traces(ballast_ooms: int = 0) -> dict[str, Trace]:
    """Ballast reaches new/web's steady state at its first resize (5 min), VPA after 2 hours, "none" at admission
    (the manifest's requests are its own steady state)."""
    ballast = [admission(START, "b-1", 1.0, 4.0), resize(START + 300, "b-1", 1.25, 4.0)]
    vpa = [admission(START, "v-1", 1.0, 4.0), resize(START + 7_200, "v-1", 2.0, 5.0)]
    return {
        "ballast": trace("ballast", (1.25, 4.0), ballast, ooms=ballast_ooms),
        "vpa": trace("vpa", (2.0, 5.0), vpa, ooms=1),
        "none": trace("none", (2.0, 8.0), [admission(START, "n-1", 2.0, 8.0)]),
    }


def write(out_dir: Path, given: dict[str, Trace] | None = None, *, charts: bool = False) -> Report:
    return write_report(out_dir, SCENARIO, traces() if given is None else given, FLEET, 300, charts=charts)


JSON_FILES = ("figures.json", "verdict.json", "trace-ballast.json", "trace-none.json", "trace-vpa.json")


def json_bytes(out_dir: Path) -> dict[str, bytes]:
    return {name: (out_dir / name).read_bytes() for name in JSON_FILES}


def test_the_report_writes_its_files_and_charts(tmp_path: Path) -> None:
    report = write(tmp_path / "out", charts=True)

    written = sorted(path.name for path in (tmp_path / "out").iterdir())
    assert written == sorted([*JSON_FILES, "report.md", "seed.png", "cold-start.png", "slack-ooms.png"])
    assert [path.name for path in report.charts] == ["seed.png", "cold-start.png", "slack-ooms.png"]
    for chart in report.charts:
        assert chart.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
        assert chart.stat().st_size > 10_000
    assert report.traces == {name: tmp_path / "out" / f"trace-{name}.json" for name in ("none", "vpa", "ballast")}
    assert "![seed](seed.png)" in report.report_md.read_text()


def test_the_json_is_the_same_bytes_for_the_same_input_with_or_without_charts(tmp_path: Path) -> None:
    write(tmp_path / "one", charts=True)
    write(tmp_path / "two")

    assert json_bytes(tmp_path / "one") == json_bytes(tmp_path / "two")


def test_the_json_differs_when_a_figure_changes(tmp_path: Path) -> None:
    write(tmp_path / "before")
    write(tmp_path / "after", traces(ballast_ooms=2))

    before, after = json_bytes(tmp_path / "before"), json_bytes(tmp_path / "after")
    assert [name for name in JSON_FILES if before[name] != after[name]] == ["figures.json", "verdict.json"]
    assert orjson.loads(after["figures.json"])["ballast"]["ooms"] == 2


def test_figures_and_verdict_json_hold_every_recommender_and_each_clause(tmp_path: Path) -> None:
    report = write(tmp_path)

    figures = orjson.loads(report.figures_json.read_bytes())
    verdict = orjson.loads(report.verdict_json.read_bytes())
    assert sorted(figures) == ["ballast", "none", "vpa"]
    # (1.25 − 1) / 1.25 on both workload-days (new/web ran 12 h, enough to count).
    assert figures["ballast"]["slack"]["cpu"] == {"mean": 0.2, "median": 0.2, "workload_days": 2}
    assert figures["ballast"]["cold_starts"][0]["seconds"] == 300
    assert figures["vpa"]["cold_starts"][0]["seconds"] == 7_200
    assert figures["none"]["cold_starts"][0]["seconds"] == 0
    assert verdict["passed"] is True
    assert [clause["name"] for clause in verdict["clauses"]] == [
        "cpu waste",
        "memory waste",
        "cpu slack",
        "memory slack",
        "disruptions",
        "OOM kills outside leak",
        "leak OOM kills",
        "node-pressure evictions",
        "memory under-requested windows",
        "new-namespace cold start",
    ]
    assert figures["vpa"]["disruptions"] == 1
    assert figures["vpa"]["disruptions_per_workload_day"] == 0.5
    assert report.report_md.read_bytes().endswith(b"**Verdict: passed**\n")


def test_a_trace_file_holds_the_fleet_per_window_and_the_cold_start_s_requests(tmp_path: Path) -> None:
    report = write(tmp_path)

    series = orjson.loads(report.traces["ballast"].read_bytes())
    assert (series["recommender"], series["window_s"], series["duration_s"]) == ("ballast", 300, 86_400)
    assert series["allocatable"] == {"cpu": 16.0, "memory": 128.0}
    # One workload in the morning, two in the afternoon.
    assert series["reserved"]["cpu"] == [1.25] * HALF + [2.5] * HALF
    assert series["usage"]["memory"] == [2.0] * HALF + [4.0] * HALF
    assert series["cold_starts"] == [
        {
            "workload": "new/web",
            "kind": "new-namespace",
            "at_s": START,
            "instants_s": [START, START + 300],
            "per_pod": {"cpu": [1.0, 1.25], "memory": [4.0, 4.0]},
        }
    ]


def test_report_md_has_the_scenario_the_table_rows_and_the_verdict(tmp_path: Path) -> None:
    text = write(tmp_path, traces(ballast_ooms=2)).report_md.read_text()

    assert "```text\nfleet: 2 workloads on 2 nodes for 1 day\nseed 7\n```" in text
    assert "| metric | none | vpa | ballast |\n| --- | ---: | ---: | ---: |\n" in text
    assert "| cpu relative slack, mean | 0.500 | 0.500 | 0.200 |\n" in text
    assert "| memory relative slack, mean | 0.750 | 0.600 | 0.500 |\n" in text
    assert "| OOM kills | 0 | 1 | 2 |\n" in text
    assert "| cpu waste (node-equivalents) | 0.19 | 0.19 | 0.05 |\n" in text  # 1.5, 1.5 and 0.375 cores of 8
    assert "| OOM-free workload-days | 100.00 % | 50.00 % | 50.00 % |\n" in text
    assert "| cpu steps above request | 25.00 % | 25.00 % | 25.00 % |\n" in text  # 2 of 8 container-steps
    assert "| cold start new/web (new-namespace) | 0 s | 2.0 h | 5 min |\n" in text
    assert "| node-pressure evictions | 0 | 0 | 0 |\n" in text
    assert "| disruptions (OOM kills + evictions + node-pressure) | 0 | 1 | 2 |\n" in text
    assert "| disruptions per workload-day | 0.0000 | 0.5000 | 1.0000 |\n" in text
    assert "| windows with Σ memory requests < Σ usage | 0.00 % | 0.00 % | 0.00 % |\n" in text
    assert "- OOM kills outside the leak shape 2 = 0 (steady 2): no\n" in text
    assert "- cpu slack 0.2 < 0.5 (VPA, mean relative slack): yes\n" in text
    assert text.endswith("**Verdict: failed**\n")
    assert "## Charts" not in text  # none were drawn


def test_table_text_aligns_the_figures_and_ends_with_the_verdict(tmp_path: Path) -> None:
    lines = write(tmp_path).table_text().splitlines()

    header = lines[0].split()
    assert header == ["metric", "none", "vpa", "ballast"]
    widths = {len(line) for line in lines[: lines.index("")]}
    assert len(widths) == 1  # every row as wide as the header: the figures are right-aligned
    rows = {line.split("  ")[0]: line for line in lines[1 : lines.index("")]}
    assert rows["OOM kills"].split()[2:] == ["0", "1", "0"]
    assert rows["OOM-free workload-days"].split()[2:] == ["100.00", "%", "50.00", "%", "100.00", "%"]
    assert rows["OOM kills by usage shape"].split()[-4:] == ["-", "steady", "1", "-"]
    assert lines[-1] == "verdict: passed"


def test_figures_computed_early_for_some_runs_give_the_same_summary() -> None:
    given = traces()
    early = {name: figures(given[name], FLEET) for name in ("vpa", "none")}  # the runs that ended first

    summary = summarise(given, FLEET, 300, known=early)

    assert summary == summarise(given, FLEET, 300)
    assert summary.figures["vpa"] is early["vpa"]


def test_the_verdict_needs_ballast_and_vpa(tmp_path: Path) -> None:
    given = traces()
    del given["vpa"]

    with pytest.raises(ValueError, match="missing: vpa"):
        write(tmp_path, given)


def test_a_run_without_a_new_namespace_cold_start_draws_no_cold_start_chart(tmp_path: Path) -> None:
    redeploy = dataclasses.replace(COLD, kind="redeploy")
    fleet = dataclasses.replace(FLEET, cold_starts=(redeploy,))

    report = write_report(tmp_path, SCENARIO, traces(), fleet, 300)

    assert [path.name for path in report.charts] == ["seed.png", "slack-ooms.png"]
    assert report.verdict.passed  # the cold-start clause has nothing to measure: n/a, not a failure
    assert "new-namespace cold start: n/a (no new namespace in the run)" in report.verdict.lines()
