"""The simulator's report: what `ballast simulate` leaves in its output directory, and the table it prints.

    report.md              the scenario, one table (rows: figures; columns: none, vpa, ballast) and the verdict
    figures.json           every recommender's figures (`figures.figures_json`)
    verdict.json           the verdict's clauses, each with its figures and whether it held
    trace-<name>.json      the fleet per 5-minute window (Σ reserved, Σ usage) and the cold starts' requests
    seed.png, cold-start.png, slack-ooms.png   the charts (`charts`)

Every JSON file is orjson with sorted keys and 2-space indents, floats to 6 significant digits and nothing about
the host, the version or the time: the same traces give the same bytes, so two runs of one seed can be compared
with `cmp` and a change of a figure shows in a diff. Charts are drawn after the JSON and only read it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import orjson
from numpy.typing import NDArray

from .figures import (
    FIGURE_RESOURCES,
    Figures,
    Verdict,
    figures,
    figures_json,
    fleet_series,
    request_steps,
    round_figure,
    verdict,
    verdict_json,
)
from .model import BUCKET_SECONDS, ColdStart, Fleet, Trace

COLUMN_ORDER: tuple[str, ...] = ("none", "vpa", "ballast")
"""The table's columns, the baseline first: other recommenders follow in name order."""
JSON_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2


@dataclass(frozen=True, slots=True)
class Summary:
    """The figures of one simulation, its verdict and its table: what is printed before any file is written."""

    names: tuple[str, ...]
    figures: Mapping[str, Figures]
    verdict: Verdict
    table: tuple[tuple[str, ...], ...]

    def table_text(self) -> str:
        """The table as aligned plain text, then the verdict, for stdout."""
        return "\n".join([*aligned(self.table), "", *self.verdict.lines()]) + "\n"


def summarise(
    traces: Mapping[str, Trace], fleet: Fleet, poll_interval_s: int, known: Mapping[str, Figures] | None = None
) -> Summary:
    """The figures of `traces` (by recommender; "ballast" and "vpa" are required), their verdict and table.
    `known`: figures already computed from some of the same traces."""
    missing = [name for name in ("ballast", "vpa") if name not in traces]
    if missing:
        raise ValueError(f"the verdict needs the traces of ballast and vpa; missing: {', '.join(missing)}")
    names = recommender_order(traces)
    known = known or {}
    results = {name: known[name] if name in known else figures(traces[name], fleet) for name in names}
    judged = verdict(results["ballast"], results["vpa"], poll_interval_s, results.get("none"))
    return Summary(tuple(names), results, judged, figures_table(results, names))


@dataclass(frozen=True, slots=True)
class Report:
    """What `write_report` wrote, and the figures behind it."""

    report_md: Path
    figures_json: Path
    verdict_json: Path
    traces: Mapping[str, Path]
    charts: tuple[Path, ...]
    figures: Mapping[str, Figures]
    verdict: Verdict
    table: tuple[tuple[str, ...], ...]
    """The figures table, header first (rows: metrics; columns: recommenders)."""

    def table_text(self) -> str:
        """The table as aligned plain text, then the verdict, for stdout."""
        return "\n".join([*aligned(self.table), "", *self.verdict.lines()]) + "\n"


def write_report(
    out_dir: Path,
    fleet_lines: Sequence[str],
    traces: Mapping[str, Trace],
    fleet: Fleet,
    poll_interval_s: int,
    *,
    charts: bool = True,
    summary: Summary | None = None,
) -> Report:
    """Write the report of one simulation (`traces` by recommender; "ballast" and "vpa" are required, "none" is
    drawn and tabled when present) into `out_dir`, created if missing; `summary`: `summarise`'s, if already made."""
    summary = summary or summarise(traces, fleet, poll_interval_s)
    out_dir.mkdir(parents=True, exist_ok=True)
    names, results, judged, table = list(summary.names), summary.figures, summary.verdict, summary.table
    figures_path = _write_json(out_dir / "figures.json", {name: figures_json(results[name]) for name in names})
    verdict_path = _write_json(out_dir / "verdict.json", verdict_json(judged))
    trace_paths = {name: _write_json(out_dir / f"trace-{name}.json", trace_json(traces[name], fleet)) for name in names}
    chart_paths = _write_charts(out_dir, traces, fleet, results) if charts else ()
    report_path = out_dir / "report.md"
    report_path.write_text(report_markdown(fleet_lines, table, judged, chart_paths), encoding="utf-8")
    return Report(report_path, figures_path, verdict_path, trace_paths, chart_paths, results, judged, table)


def recommender_order(traces: Mapping[str, object]) -> list[str]:
    known = [name for name in COLUMN_ORDER if name in traces]
    return known + sorted(name for name in traces if name not in COLUMN_ORDER)


def _write_json(path: Path, value: object) -> Path:
    path.write_bytes(orjson.dumps(value, option=JSON_OPTIONS) + b"\n")
    return path


def run_allocatable(trace: Trace) -> dict[str, float]:
    """Σ allocatable over the run's nodes, per figure resource (the seed picture's ceiling)."""
    return {resource: trace.allocatable.get(resource, 0.0) for resource in FIGURE_RESOURCES}


def trace_json(trace: Trace, fleet: Fleet) -> dict[str, object]:
    """The fleet-level series of one run: Σ reserved and Σ usage per window, and each cold-start workload's
    per-pod request at every instant it changed."""
    series = fleet_series(trace)
    return {
        "recommender": trace.recommender,
        "duration_s": trace.duration_s,
        "window_s": BUCKET_SECONDS,
        "allocatable": {resource: round_figure(value) for resource, value in run_allocatable(trace).items()},
        "reserved": {resource: _rounded(values) for resource, values in series.reserved.items()},
        "usage": {resource: _rounded(values) for resource, values in series.usage.items()},
        "cold_starts": [_cold_start_series(trace, fleet, cold) for cold in fleet.cold_starts],
    }


def _rounded(values: Iterable[float] | NDArray[np.float64]) -> list[float]:
    return [round_figure(float(value)) for value in values]


def _cold_start_series(trace: Trace, fleet: Fleet, cold: ColdStart) -> dict[str, object]:
    steps = request_steps(trace, fleet, cold)
    return {
        "workload": cold.workload,
        "kind": cold.kind,
        "at_s": cold.at_s,
        "instants_s": list(steps.at_s),
        "per_pod": {resource: _rounded(values) for resource, values in steps.per_pod.items()},
    }


def _write_charts(
    out_dir: Path, traces: Mapping[str, Trace], fleet: Fleet, results: Mapping[str, Figures]
) -> tuple[Path, ...]:
    from . import charts  # noqa: PLC0415 - matplotlib is imported only when charts are drawn

    as_written = fleet_series(traces["none"]) if "none" in traces else None
    ballast = traces["ballast"]
    paths = [charts.seed_chart(out_dir / "seed.png", fleet_series(ballast), as_written, run_allocatable(ballast))]
    first = next((cold for cold in fleet.cold_starts if cold.kind == "new-namespace"), None)
    if first is not None:
        compared = ("ballast", "vpa")
        steps = {name: request_steps(traces[name], fleet, first) for name in compared}
        steady = {name: _steady_of(results[name], first) for name in compared}
        path = out_dir / "cold-start.png"
        paths.append(charts.cold_start_chart(path, first.workload, first.at_s, fleet.duration_s, steps, steady))
    paths.append(charts.slack_oom_chart(out_dir / "slack-ooms.png", results))
    return tuple(paths)


def _steady_of(result: Figures, cold: ColdStart) -> Mapping[str, float] | None:
    return next((time.steady for time in result.cold_starts if time.workload == cold.workload), None)


Cell = Callable[[Figures], str]


def _fixed(digits: int, value: float | None) -> str:
    return "n/a" if value is None else f"{value:.{digits}f}"


def _percent(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f} %"


def duration_text(seconds: int | None) -> str:
    """A cold-start time as a reader wants it: seconds below 2 minutes, minutes below 2 hours, hours above."""
    if seconds is None:
        return "not within the run"
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7_200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3_600:.1f} h"


def _slack_cell(resource: str, median: bool) -> Cell:
    def cell(fig: Figures) -> str:
        slack = fig.slack[resource]
        return _fixed(3, slack.median if median else slack.mean)

    return cell


def _waste_cell(resource: str) -> Cell:
    return lambda fig: _fixed(2, fig.waste_nodes[resource])


def _above_request_cell(resource: str) -> Cell:
    return lambda fig: _percent(fig.above_request[resource])


def _under_requested_cell(resource: str) -> Cell:
    return lambda fig: _percent((fig.under_requested_windows or {}).get(resource))


def _cold_start_cell(index: int) -> Cell:
    return lambda fig: duration_text(fig.cold_starts[index].seconds)


def _by_shape_cell(fig: Figures) -> str:
    return ", ".join(f"{shape} {count}" for shape, count in fig.ooms_by_shape.items()) or "-"


def metric_rows(results: Mapping[str, Figures]) -> list[tuple[str, Cell]]:
    """The table's rows: a metric's name and how a recommender's figures print it."""
    rows: list[tuple[str, Cell]] = [("workload-days", lambda fig: str(fig.workload_days))]
    for resource in FIGURE_RESOURCES:
        rows.append((f"{resource} relative slack, mean", _slack_cell(resource, median=False)))
        rows.append((f"{resource} relative slack, median", _slack_cell(resource, median=True)))
    rows += [(f"{resource} waste (node-equivalents)", _waste_cell(resource)) for resource in FIGURE_RESOURCES]
    rows += [
        ("OOM kills", lambda fig: str(fig.ooms)),
        ("OOM kills by usage shape", _by_shape_cell),
        ("OOM kills per workload-day", lambda fig: _fixed(4, fig.ooms_per_workload_day)),
        ("OOM-free workload-days", lambda fig: _percent(fig.oom_free_share)),
    ]
    rows += [(f"{resource} steps above request", _above_request_cell(resource)) for resource in FIGURE_RESOURCES]
    rows += [("cpu-limited steps throttled", lambda fig: _percent(fig.throttled_share))]
    rows += [
        (f"windows with Σ {resource} requests < Σ usage", _under_requested_cell(resource))
        for resource in FIGURE_RESOURCES
    ]
    rows += [
        ("applied changes per workload-day", lambda fig: _fixed(3, fig.changes_per_workload_day)),
        ("restarts by the recommender (evictions)", lambda fig: str(fig.evictions)),
        ("node-pressure evictions", lambda fig: str(fig.pressure_evictions)),
        ("disruptions (OOM kills + evictions + node-pressure)", lambda fig: str(fig.disruptions)),
        ("disruptions per workload-day", lambda fig: _fixed(4, fig.disruptions_per_workload_day)),
    ]
    # Every recommender ran the same fleet, so its cold starts come in the fleet's order.
    colds = next(iter(results.values())).cold_starts
    rows += [(f"cold start {cold.workload} ({cold.kind})", _cold_start_cell(i)) for i, cold in enumerate(colds)]
    return rows


def figures_table(results: Mapping[str, Figures], names: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    header = ("metric", *names)
    body = [(metric, *(cell(results[name]) for name in names)) for metric, cell in metric_rows(results)]
    return (header, *body)


def aligned(table: Sequence[Sequence[str]]) -> list[str]:
    """`table` (a header first) as plain text: the metric left-aligned, figures right-aligned, three spaces
    between columns."""
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return [
        "   ".join(
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        )
        for row in table
    ]


def markdown_table(table: Sequence[Sequence[str]]) -> list[str]:
    header, *body = table
    rule = ["---", *("---:" for _ in header[1:])]
    return ["| " + " | ".join(row) + " |" for row in (header, rule, *body)]


def report_markdown(
    fleet_lines: Sequence[str], table: Sequence[Sequence[str]], judged: Verdict, chart_paths: Sequence[Path]
) -> str:
    outcome = "passed" if judged.passed else "failed"
    lines = ["# Fleet simulation", "", "## Scenario", "", "```text", *fleet_lines, "```", ""]
    lines += ["## Figures", "", *markdown_table(table), ""]
    lines += ["## Verdict", "", *(f"- {clause.text}" for clause in judged.clauses), "", f"**Verdict: {outcome}**"]
    if chart_paths:
        lines += ["", "## Charts", "", *(f"![{path.stem}]({path.name})" for path in chart_paths)]
    return "\n".join(lines) + "\n"
