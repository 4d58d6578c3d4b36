"""The report's PNG charts: the seed picture, the cold-start comparison, and slack and OOM kills per recommender.

Only `report` imports this module: matplotlib is heavy and only the report needs it. Charts are drawn on
`matplotlib.figure.Figure` objects with the Agg canvas — never pyplot, whose global state would make two reports in
one process depend on each other — and saved without the `Software` metadata, so that a PNG names no version. They
read the figures and series and never change them: the JSON a report writes is the same with or without charts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from .figures import COLD_START_TOLERANCE, FIGURE_RESOURCES, Figures, FleetSeries, RequestSteps
from .model import BUCKET_SECONDS, DAY_SECONDS

GIB = 2.0**30
HOUR_SECONDS = 3_600
UNITS: Mapping[str, tuple[str, float]] = {"cpu": ("cores", 1.0), "memory": ("GiB", GIB)}
"""How each resource is drawn: its axis unit and what one unit is in the trace's units."""
COLOURS: Mapping[str, str] = {"none": "tab:gray", "vpa": "tab:orange", "ballast": "tab:blue"}
DPI = 100


def _colour(recommender: str) -> str:
    return COLOURS.get(recommender, "tab:green")


def _save(figure: Figure, path: Path) -> Path:
    FigureCanvasAgg(figure)
    figure.savefig(path, format="png", dpi=DPI, metadata={"Software": None})
    return path


def _label(axes: Axes, resource: str, xlabel: str) -> None:
    unit, _ = UNITS[resource]
    axes.set_title(resource)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(unit)
    axes.grid(visible=True, alpha=0.3)
    axes.legend(loc="best", fontsize="small")


def seed_chart(
    path: Path, ballast: FleetSeries, as_written: FleetSeries | None, allocatable: Mapping[str, float]
) -> Path:
    """Allocatable, Σ requests and Σ usage over the run under Ballast, cpu and memory; "none" (the manifests as
    written) as a dashed Σ requests line when it ran."""
    figure = Figure(figsize=(11, 4.5), layout="constrained")
    for axes, resource in zip(figure.subplots(1, 2), FIGURE_RESOURCES, strict=True):
        _, scale = UNITS[resource]
        days = np.arange(ballast.reserved[resource].shape[0]) * BUCKET_SECONDS / DAY_SECONDS
        axes.axhline(allocatable.get(resource, 0.0) / scale, color="black", linewidth=1, label="allocatable")
        if as_written is not None:
            axes.plot(
                days,
                as_written.reserved[resource] / scale,
                color=_colour("none"),
                linestyle="--",
                label="Σ requests as written",
            )
        axes.plot(days, ballast.reserved[resource] / scale, color=_colour("ballast"), label="Σ requests (ballast)")
        axes.plot(days, ballast.usage[resource] / scale, color="tab:red", linewidth=0.8, label="Σ usage")
        _label(axes, resource, "days")
    return _save(figure, path)


def cold_start_chart(
    path: Path,
    workload: str,
    at_s: int,
    duration_s: int,
    steps: Mapping[str, RequestSteps],
    steady: Mapping[str, Mapping[str, float] | None],
) -> Path:
    """`workload`'s per-pod request from its cold start to the end of the run, per recommender, with each
    recommender's steady state as a dotted line in its ±15 % band."""
    figure = Figure(figsize=(11, 4.5), layout="constrained")
    figure.suptitle(f"cold start of {workload}")
    for axes, resource in zip(figure.subplots(1, 2), FIGURE_RESOURCES, strict=True):
        _, scale = UNITS[resource]
        for recommender, series in steps.items():
            if not series.at_s:
                continue
            hours, values = _step_line(series.at_s, series.per_pod[resource], at_s, duration_s)
            axes.step(hours, np.asarray(values) / scale, where="post", color=_colour(recommender), label=recommender)
            target = steady.get(recommender)
            if target is not None:
                steady_value = target[resource] / scale
                colour = _colour(recommender)
                axes.axhline(steady_value, color=colour, linestyle=":", label=f"steady state ({recommender})")
                # The band the cold start must reach: within the tolerance of the steady state.
                low, high = steady_value * (1 - COLD_START_TOLERANCE), steady_value * (1 + COLD_START_TOLERANCE)
                axes.axhspan(low, high, color=colour, alpha=0.08)
        _label(axes, resource, "hours since the cold start")
    return _save(figure, path)


def _step_line(
    instants: Sequence[int], values: Sequence[float], at_s: int, duration_s: int
) -> tuple[list[float], list[float]]:
    """The step's points in hours since `at_s`, held until the end of the run."""
    hours = [(instant - at_s) / HOUR_SECONDS for instant in instants] + [(duration_s - at_s) / HOUR_SECONDS]
    return hours, [*values, values[-1]]


def slack_oom_chart(path: Path, figures: Mapping[str, Figures]) -> Path:
    """Mean relative slack (cpu, memory) and disruptions — OOM kills, evictions by the recommender and node-pressure
    evictions, stacked — one bar per recommender (a missing slack draws none)."""
    names = list(figures)
    colours = [_colour(name) for name in names]
    figure = Figure(figsize=(11, 4), layout="constrained")
    panels = figure.subplots(1, 3)
    for axes, resource in zip(panels[:2], FIGURE_RESOURCES, strict=True):
        means = [figures[name].slack[resource].mean for name in names]
        axes.bar(names, [0.0 if mean is None else mean for mean in means], color=colours)
        axes.set_title(f"{resource} relative slack (mean)")
        axes.set_ylabel("(reserved − p95 usage) / reserved")
    bottom = [0.0] * len(names)
    parts = (
        ("OOM kills", [figures[name].ooms for name in names], None),
        ("evictions", [figures[name].evictions for name in names], "//"),
        ("node-pressure evictions", [figures[name].pressure_evictions for name in names], ".."),
    )
    for label, counts, hatch in parts:
        panels[2].bar(names, counts, bottom=bottom, color=colours, hatch=hatch, edgecolor="black", label=label)
        bottom = [b + c for b, c in zip(bottom, counts, strict=True)]
    panels[2].set_title("disruptions")
    panels[2].set_ylabel("in the run")
    panels[2].legend(fontsize="small", loc="upper left")
    panels[2].yaxis.set_major_locator(MaxNLocator(integer=True))
    for axes in panels:
        axes.grid(visible=True, axis="y", alpha=0.3)
    return _save(figure, path)
