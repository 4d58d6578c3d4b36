"""The simulator's figures and its verdict: what one run of each recommender is judged on (docs/simulate.md).

The figures are Autopilot's (EuroSys 2020), as the project adopted them, computed from a `Trace` alone (and the
`Fleet` it ran) so that every number in a report can be recomputed from `trace-*.json` and the change log:

- relative slack per workload-day, `(reserved − p95 usage) / reserved` over 5-minute windows, cpu and memory;
- absolute waste, Σ (reserved − usage) in node-equivalents (how many nodes' worth is reserved and not used);
- OOM kills per workload-day and the share of OOM-free workload-days;
- the share of container-steps above request, and of cpu-limited steps throttled;
- the share of windows in which the fleet's Σ requests were below its Σ usage (what a scheduler packing on those
  requests overcommits);
- cold start: how long a new workload's pods take to reach its established twin's steady-state requests;
- applied changes per workload-day and the restarts the recommender caused (evictions);
- node-pressure evictions (the kubelet's, `pressure`), and disruptions: OOM kills + the recommender's restarts +
  node-pressure evictions, each a restart of a container or a pod, per workload-day.

The `Verdict` compares Ballast with VPA (and the manifests as written) on fixed clauses; nothing in it is tuned to
the run it judges. Pure numpy, no wall time: the same traces give the same figures, and `figures_json` gives the
same text.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .model import (
    BUCKET_SECONDS,
    CPU,
    DAY_SECONDS,
    MEMORY,
    RECORDED_SHAPE,
    Change,
    ColdStart,
    Fleet,
    Trace,
    WorkloadTrace,
)

FIGURE_RESOURCES: tuple[str, ...] = ("cpu", "memory")
"""The resources the figures are given for (ephemeral storage is recorded, never recommended)."""
_COLUMNS: Mapping[str, int] = {"cpu": CPU, "memory": MEMORY}
WINDOWS_PER_DAY = DAY_SECONDS // BUCKET_SECONDS
MIN_RUN_SECONDS_PER_DAY = 3_600
"""A workload-day counts when the workload ran at least this long that day (a few windows say nothing of a day)."""
SLACK_PERCENTILE = 95.0
COLD_START_TOLERANCE = 0.15
"""Cold start ends when every running pod's requests are within this fraction of the steady state."""
STEADY_STATE_SECONDS = 6 * 3_600
"""The steady state is the reference workload's mean per-pod request over the run's last 6 hours."""
SIGNIFICANT_DIGITS = 6
LEAK_SHAPE = "leak"
"""The usage shape that OOMs under any fixed limit (`usage.SHAPES`): the one shape the verdict allows OOM kills of."""


@dataclass(frozen=True, slots=True)
class Slack:
    """Relative slack of one resource over the workload-days it could be computed for (reserved > 0)."""

    mean: float | None
    median: float | None
    workload_days: int


@dataclass(frozen=True, slots=True)
class ColdStartTime:
    """One `ColdStart` under one recommender: `seconds` from `at_s` until reached; None: not within the run
    (compares as +∞, `sort_seconds`). `steady` is the per-pod target (cpu, memory); None when the reference did not
    run in the last 6 hours."""

    workload: str
    kind: str
    reference: str
    at_s: int
    steady: Mapping[str, float] | None
    seconds: int | None

    @property
    def sort_seconds(self) -> float:
        return math.inf if self.seconds is None else float(self.seconds)


@dataclass(frozen=True, slots=True)
class Figures:
    """Everything one recommender's run is judged on. Per-workload-day ratios are None when no workload-day
    counted; `above_request` per resource and `throttled_share` are None when nothing was measured."""

    recommender: str
    workload_days: int
    slack: Mapping[str, Slack]
    waste_nodes: Mapping[str, float]
    waste_nodes_per_day: Mapping[str, tuple[float, ...]]
    ooms: int
    ooms_by_shape: Mapping[str, int]
    ooms_per_workload_day: float | None
    oom_free_share: float | None
    above_request: Mapping[str, float | None]
    throttled_share: float | None
    cold_starts: tuple[ColdStartTime, ...]
    changes: int
    changes_per_workload_day: float | None
    evictions: int
    pressure_evictions: int = 0
    under_requested_windows: Mapping[str, float | None] | None = None
    """Per resource, the share of windows (with a running pod) where Σ requests < Σ usage; None: not computed."""

    @property
    def disruptions(self) -> int:
        """OOM kills + restarts by the recommender (evictions) + node-pressure evictions."""
        return self.ooms + self.evictions + self.pressure_evictions

    @property
    def disruptions_per_workload_day(self) -> float | None:
        return _ratio(self.disruptions, self.workload_days)

    @property
    def pressure_evictions_per_workload_day(self) -> float | None:
        return _ratio(self.pressure_evictions, self.workload_days)

    @property
    def ooms_outside_leak(self) -> int:
        return sum(count for shape, count in self.ooms_by_shape.items() if shape != LEAK_SHAPE)

    @property
    def leak_ooms(self) -> int:
        return self.ooms_by_shape.get(LEAK_SHAPE, 0)


def figures(trace: Trace, fleet: Fleet) -> Figures:
    """The figures of one recommender's run of `fleet`."""
    days = counted_days(trace)
    workload_days = sum(len(ran) for ran in days.values())
    applied = [change for change in trace.changes if change.kind != "admission"]
    return Figures(
        recommender=trace.recommender,
        workload_days=workload_days,
        slack={resource: relative_slack(trace, days, resource) for resource in FIGURE_RESOURCES},
        waste_nodes={resource: waste_nodes(trace, fleet, resource) for resource in FIGURE_RESOURCES},
        waste_nodes_per_day={resource: waste_nodes_per_day(trace, fleet, resource) for resource in FIGURE_RESOURCES},
        ooms=len(trace.ooms),
        ooms_by_shape=ooms_by_shape(trace, fleet),
        ooms_per_workload_day=_ratio(len(trace.ooms), workload_days),
        oom_free_share=oom_free_share(trace, days),
        above_request={resource: above_request_share(trace, resource) for resource in FIGURE_RESOURCES},
        throttled_share=throttled_share(trace),
        cold_starts=tuple(cold_start_time(trace, fleet, cold) for cold in fleet.cold_starts),
        changes=len(applied),
        changes_per_workload_day=_ratio(len(applied), workload_days),
        evictions=sum(1 for change in applied if change.kind == "eviction"),
        pressure_evictions=len(trace.pressure_evictions),
        under_requested_windows={resource: under_requested_share(trace, resource) for resource in FIGURE_RESOURCES},
    )


def day_count(trace: Trace) -> int:
    """Days of the run, the last one possibly partial."""
    return max(1, math.ceil(trace.duration_s / DAY_SECONDS))


def day_windows(day: int) -> slice:
    return slice(day * WINDOWS_PER_DAY, (day + 1) * WINDOWS_PER_DAY)


def counted_days(trace: Trace) -> dict[str, list[int]]:
    """The days each workload ran at least `MIN_RUN_SECONDS_PER_DAY` (windows with a running pod)."""
    return {
        key: [day for day in range(day_count(trace)) if _ran_seconds(workload, day) >= MIN_RUN_SECONDS_PER_DAY]
        for key, workload in trace.workloads.items()
    }


def _ran_seconds(workload: WorkloadTrace, day: int) -> int:
    return int(np.count_nonzero(workload.replicas[day_windows(day)] > 0)) * BUCKET_SECONDS


def workload_day_slack(workload: WorkloadTrace, day: int, resource: str) -> float | None:
    """`(mean reserved − p95 usage) / mean reserved` over the day's windows where the workload ran; None when it
    reserved nothing (the ratio is undefined, e.g. a manifest without requests)."""
    windows = day_windows(day)
    ran = workload.replicas[windows] > 0
    column = _COLUMNS[resource]
    reserved = workload.reserved[windows, column][ran]
    usage = workload.usage[windows, column][ran]
    if reserved.size == 0:
        return None
    mean_reserved = float(reserved.mean())
    if mean_reserved <= 0:
        return None
    return (mean_reserved - float(np.percentile(usage, SLACK_PERCENTILE))) / mean_reserved


def relative_slack(trace: Trace, days: Mapping[str, Sequence[int]], resource: str) -> Slack:
    values = [
        slack
        for key, counted in days.items()
        for day in counted
        if (slack := workload_day_slack(trace.workloads[key], day, resource)) is not None
    ]
    if not values:
        return Slack(mean=None, median=None, workload_days=0)
    return Slack(mean=float(np.mean(values)), median=float(np.median(values)), workload_days=len(values))


def node_allocatable(fleet: Fleet, resource: str) -> float:
    """One node's allocatable: the mean over the fleet's nodes (the node, when they are all alike)."""
    if not fleet.nodes:
        raise ValueError("the fleet has no nodes: waste in node-equivalents is undefined")
    return sum(node.allocatable.get(resource, 0.0) for node in fleet.nodes) / len(fleet.nodes)


def _waste_per_window(trace: Trace, resource: str) -> NDArray[np.float64]:
    """Σ over workloads of (reserved − usage) per window, counting only windows where a workload ran."""
    column = _COLUMNS[resource]
    windows = math.ceil(trace.duration_s / BUCKET_SECONDS)
    total = np.zeros(windows, dtype=np.float64)
    for workload in trace.workloads.values():
        ran = workload.replicas[:windows] > 0
        gap = (workload.reserved[:windows, column] - workload.usage[:windows, column]) * ran
        total[: gap.shape[0]] += gap
    return total


def waste_nodes_per_day(trace: Trace, fleet: Fleet, resource: str) -> tuple[float, ...]:
    """Per day: Σ (reserved − usage) × 300 s over the day's windows, divided by the day's length and one node's
    allocatable — how many nodes' worth was reserved and not used, on average over the day."""
    per_window = _waste_per_window(trace, resource) * BUCKET_SECONDS
    allocatable = node_allocatable(fleet, resource)
    days = []
    for day in range(day_count(trace)):
        length_s = min(DAY_SECONDS, trace.duration_s - day * DAY_SECONDS)
        days.append(float(per_window[day_windows(day)].sum()) / (length_s * allocatable))
    return tuple(days)


def waste_nodes(trace: Trace, fleet: Fleet, resource: str) -> float:
    """The run's mean of `waste_nodes_per_day` weighted by the days' lengths (a short last day weighs less)."""
    total = float(_waste_per_window(trace, resource).sum()) * BUCKET_SECONDS
    return total / (trace.duration_s * node_allocatable(fleet, resource))


def under_requested_share(trace: Trace, resource: str) -> float | None:
    """The share of windows, among those with a running pod, in which the fleet's Σ requests were below its Σ
    usage: a scheduler packing on those requests would overcommit the nodes' `resource` then."""
    series = fleet_series(trace)
    ran = np.zeros(series.reserved[resource].shape[0], dtype=np.bool_)
    for workload in trace.workloads.values():
        replicas = workload.replicas[: ran.shape[0]]
        ran[: replicas.shape[0]] |= replicas > 0
    below = (series.reserved[resource] < series.usage[resource]) & ran
    return _ratio(int(np.count_nonzero(below)), int(np.count_nonzero(ran)))


def ooms_by_shape(trace: Trace, fleet: Fleet) -> dict[str, int]:
    """OOM kills by the usage shape of the killed container (`usage.SHAPES`), shapes in name order."""
    shapes = {workload.key: workload.app.shapes for workload in fleet.workloads}
    counts = Counter(shapes[oom.workload].get(oom.container, "unknown") for oom in trace.ooms)
    return dict(sorted(counts.items()))


def oom_free_share(trace: Trace, days: Mapping[str, Sequence[int]]) -> float | None:
    killed = {(oom.workload, oom.at_s // DAY_SECONDS) for oom in trace.ooms}
    counted = [(key, day) for key, ran in days.items() for day in ran]
    if not counted:
        return None
    return sum(1 for workload_day in counted if workload_day not in killed) / len(counted)


def above_request_share(trace: Trace, resource: str) -> float | None:
    column = _COLUMNS[resource]
    above = sum(int(workload.above_request[column]) for workload in trace.workloads.values())
    measured = sum(int(workload.measured[column]) for workload in trace.workloads.values())
    return _ratio(above, measured)


def throttled_share(trace: Trace) -> float | None:
    throttled = sum(workload.throttled for workload in trace.workloads.values())
    limited = sum(workload.limited for workload in trace.workloads.values())
    return _ratio(throttled, limited)


def _ratio(numerator: int, denominator: int) -> float | None:
    return numerator / denominator if denominator > 0 else None


def steady_state(trace: Trace, reference: str) -> dict[str, float] | None:
    """The reference workload's mean per-pod request (Σ requests / running pods, per window) over the run's last
    `STEADY_STATE_SECONDS`; None when it ran in none of those windows."""
    workload = trace.workloads[reference]
    first = max(0, math.ceil((trace.duration_s - STEADY_STATE_SECONDS) / BUCKET_SECONDS))
    replicas = workload.replicas[first:]
    ran = replicas > 0
    if not ran.any():
        return None
    return {
        resource: float((workload.reserved[first:, column][ran] / replicas[ran]).mean())
        for resource, column in _COLUMNS.items()
    }


def pod_request(requests: Mapping[str, Mapping[str, float]], resource: str) -> float:
    """A pod's request of `resource`: the sum over its containers (a container without one adds nothing)."""
    return sum(container.get(resource, 0.0) for container in requests.values())


def running_pod_requests(
    changes: Sequence[Change], workload: str, since_s: int, replicas: int
) -> Iterator[tuple[int, list[Mapping[str, Mapping[str, float]]]]]:
    """After each instant `t ≥ since_s` at which `workload`'s requests changed: `(t, the requests of each running
    pod)`.

    The running pods are the `replicas` most recently created since `since_s` (admissions and eviction
    replacements): a new pod replaces one for one, and as the change log does not name the pod that left, the
    oldest is taken — exact for a rollout, and for an eviction whenever the pods it could have evicted had the
    same requests (a cold start's first pods, admitted alike). A pod's requests hold until its next change;
    changes at the same instant are applied together.
    """
    requests: dict[str, Mapping[str, Mapping[str, float]]] = {}  # in creation order
    timed = [change for change in changes if change.workload == workload and change.at_s >= since_s]
    timed.sort(key=lambda change: change.at_s)  # stable: the log's order within one instant
    for index, change in enumerate(timed):
        if change.kind == "resize":
            if change.pod in requests:
                requests[change.pod] = change.requests
        else:
            requests.pop(change.pod, None)
            requests[change.pod] = change.requests
            if len(requests) > replicas:
                del requests[next(iter(requests))]  # the pod replaced, taken as the oldest
        if index + 1 < len(timed) and timed[index + 1].at_s == change.at_s:
            continue
        yield change.at_s, list(requests.values())


def within_tolerance(value: float, target: float) -> bool:
    # A relative margin on the bound: a request set to exactly 115 % of the target is within, despite rounding.
    return abs(value - target) <= COLD_START_TOLERANCE * target * (1 + 1e-9)


def cold_start_time(trace: Trace, fleet: Fleet, cold: ColdStart) -> ColdStartTime:
    """From `cold.at_s`, the time until every running pod of the workload has cpu and memory requests within
    `COLD_START_TOLERANCE` of the reference's steady state under this recommender."""
    steady = steady_state(trace, cold.reference)
    seconds = None
    if steady is not None:
        replicas = fleet.workload(cold.workload).replicas
        for at_s, pods in running_pod_requests(trace.changes, cold.workload, cold.at_s, replicas):
            if pods and all(
                within_tolerance(pod_request(pod, resource), steady[resource])
                for pod in pods
                for resource in FIGURE_RESOURCES
            ):
                seconds = at_s - cold.at_s
                break
    return ColdStartTime(cold.workload, cold.kind, cold.reference, cold.at_s, steady, seconds)


def round_figure(value: float) -> float:
    """`value` to `SIGNIFICANT_DIGITS` significant digits, so that the JSON text is stable across platforms."""
    return float(f"{value:.{SIGNIFICANT_DIGITS}g}")


def _plain(value: float | None) -> float | None:
    return None if value is None else round_figure(value)


def figures_json(fig: Figures) -> dict[str, object]:
    """`fig` as plain JSON values (floats to 6 significant digits); nothing about the host or the time."""
    return {
        "recommender": fig.recommender,
        "workload_days": fig.workload_days,
        "slack": {
            resource: {"mean": _plain(s.mean), "median": _plain(s.median), "workload_days": s.workload_days}
            for resource, s in fig.slack.items()
        },
        "waste_nodes": {resource: round_figure(value) for resource, value in fig.waste_nodes.items()},
        "waste_nodes_per_day": {
            resource: [round_figure(value) for value in days] for resource, days in fig.waste_nodes_per_day.items()
        },
        "ooms": fig.ooms,
        "ooms_by_shape": dict(fig.ooms_by_shape),
        "ooms_per_workload_day": _plain(fig.ooms_per_workload_day),
        "oom_free_share": _plain(fig.oom_free_share),
        "above_request": {resource: _plain(value) for resource, value in fig.above_request.items()},
        "throttled_share": _plain(fig.throttled_share),
        "cold_starts": [_cold_start_json(cold) for cold in fig.cold_starts],
        "changes": fig.changes,
        "changes_per_workload_day": _plain(fig.changes_per_workload_day),
        "evictions": fig.evictions,
        "pressure_evictions": fig.pressure_evictions,
        "pressure_evictions_per_workload_day": _plain(fig.pressure_evictions_per_workload_day),
        "disruptions": fig.disruptions,
        "disruptions_per_workload_day": _plain(fig.disruptions_per_workload_day),
        "under_requested_windows": {
            resource: _plain(value) for resource, value in (fig.under_requested_windows or {}).items()
        },
    }


def figures_from_json(data: Mapping[str, Any]) -> Figures:
    """The `Figures` that `figures_json` wrote (to its 6 significant digits): how a committed run's table and
    verdict are recomputed from its `figures.json` (`docs.py`)."""
    return Figures(
        recommender=data["recommender"],
        workload_days=data["workload_days"],
        slack={r: Slack(s["mean"], s["median"], s["workload_days"]) for r, s in data["slack"].items()},
        waste_nodes=dict(data["waste_nodes"]),
        waste_nodes_per_day={r: tuple(days) for r, days in data["waste_nodes_per_day"].items()},
        ooms=data["ooms"],
        ooms_by_shape=dict(data["ooms_by_shape"]),
        ooms_per_workload_day=data["ooms_per_workload_day"],
        oom_free_share=data["oom_free_share"],
        above_request=dict(data["above_request"]),
        throttled_share=data["throttled_share"],
        cold_starts=tuple(
            ColdStartTime(c["workload"], c["kind"], c["reference"], c["at_s"], c["steady"], c["seconds"])
            for c in data["cold_starts"]
        ),
        changes=data["changes"],
        changes_per_workload_day=data["changes_per_workload_day"],
        evictions=data["evictions"],
        pressure_evictions=data["pressure_evictions"],
        under_requested_windows=dict(data["under_requested_windows"]),
    )


def _cold_start_json(cold: ColdStartTime) -> dict[str, object]:
    steady = None if cold.steady is None else {resource: round_figure(v) for resource, v in cold.steady.items()}
    return {
        "workload": cold.workload,
        "kind": cold.kind,
        "reference": cold.reference,
        "at_s": cold.at_s,
        "steady": steady,
        "seconds": cold.seconds,
    }


@dataclass(frozen=True, slots=True)
class Clause:
    """One test of the verdict: its `name`, the figures it compared and whether it held; `text` says it in a line
    ("cpu slack 0.21 < 0.34 (VPA): yes"). A clause that does not apply to the run (`applicable` False: no such
    event in it) reads "n/a" and fails nothing."""

    name: str
    figures: Mapping[str, float | None]
    passed: bool
    text: str
    applicable: bool = True


@dataclass(frozen=True, slots=True)
class Verdict:
    clauses: tuple[Clause, ...]

    @property
    def passed(self) -> bool:
        return all(clause.passed for clause in self.clauses)

    @property
    def failed(self) -> list[str]:
        """The names of the clauses that did not hold, in the verdict's order."""
        return [clause.name for clause in self.clauses if not clause.passed]

    def lines(self) -> list[str]:
        """One line per clause, then the outcome."""
        outcome = "passed" if self.passed else "failed"
        last = f"verdict: {outcome}" + (f" ({', '.join(self.failed)})" if self.failed else "")
        return [clause.text for clause in self.clauses] + [last]


def verdict(ballast: Figures, vpa: Figures, poll_interval_s: int, as_written: Figures | None = None) -> Verdict:
    """Ballast against VPA, every clause fixed in advance (docs/simulate.md, "Verdict"):

    - below VPA on cpu and memory waste and on cpu and memory mean relative slack;
    - at fewer disruptions per workload-day than VPA;
    - no OOM kill outside the `leak` shape, and fewer leak OOM kills than the manifests as written (`as_written`;
      n/a when neither had one, or without that run);
    - under pressure: node-pressure evictions ≤ VPA's, and a share of windows with Σ memory requests < Σ memory
      usage ≤ VPA's;
    - the slowest new-namespace cold start within one poll interval and below VPA's (n/a without one in the run).
    """
    return Verdict(
        (
            _below_clause(ballast, vpa, "cpu waste", lambda fig: fig.waste_nodes["cpu"], "node-equivalents"),
            _below_clause(ballast, vpa, "memory waste", lambda fig: fig.waste_nodes["memory"], "node-equivalents"),
            _below_clause(ballast, vpa, "cpu slack", lambda fig: fig.slack["cpu"].mean, "mean relative slack"),
            _below_clause(ballast, vpa, "memory slack", lambda fig: fig.slack["memory"].mean, "mean relative slack"),
            _disruption_clause(ballast, vpa),
            _outside_leak_clause(ballast),
            _leak_clause(ballast, as_written),
            _pressure_clause(ballast, vpa),
            _under_requested_clause(ballast, vpa),
            _cold_start_clause(ballast, vpa, poll_interval_s),
        )
    )


def _yes(passed: bool) -> str:
    return "yes" if passed else "no"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def _percent_text(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.2f} %"


def _below_clause(
    ballast: Figures, vpa: Figures, name: str, value: Callable[[Figures], float | None], unit: str
) -> Clause:
    ours, theirs = value(ballast), value(vpa)
    passed = ours is not None and theirs is not None and ours < theirs
    text = f"{name} {_number(ours)} < {_number(theirs)} (VPA, {unit}): {_yes(passed)}"
    return Clause(name, {"ballast": ours, "vpa": theirs}, passed, text)


def _disruption_text(fig: Figures) -> str:
    return (
        f"{fig.ooms} OOM kills + {fig.evictions} evictions + {fig.pressure_evictions} node-pressure evictions"
        f" over {fig.workload_days} workload-days"
    )


def _disruption_clause(ballast: Figures, vpa: Figures) -> Clause:
    ours, theirs = ballast.disruptions_per_workload_day, vpa.disruptions_per_workload_day
    passed = ours is not None and theirs is not None and ours < theirs
    text = (
        f"disruptions per workload-day {_number(ours)} < {_number(theirs)} (VPA): {_yes(passed)}"
        f" — Ballast {_disruption_text(ballast)}; VPA {_disruption_text(vpa)}"
    )
    figures = {
        "ballast": ours,
        "vpa": theirs,
        "ballast_disruptions": float(ballast.disruptions),
        "vpa_disruptions": float(vpa.disruptions),
    }
    return Clause("disruptions", figures, passed, text)


def _outside_leak_clause(ballast: Figures) -> Clause:
    recorded = ballast.ooms_by_shape.get(RECORDED_SHAPE, 0)
    outside = ballast.ooms_outside_leak - recorded
    if recorded and not outside:  # a replay: its usage has no shape to tell a leak from anything else
        text = f"OOM kills outside the {LEAK_SHAPE} shape: n/a ({recorded} of recorded usage, which has no shape)"
        return Clause("OOM kills outside leak", {"ballast": None}, True, text, applicable=False)
    shapes = ", ".join(f"{shape} {count}" for shape, count in ballast.ooms_by_shape.items() if shape != LEAK_SHAPE)
    passed = outside == 0
    text = f"OOM kills outside the {LEAK_SHAPE} shape {outside} = 0" + (f" ({shapes})" if shapes else "")
    return Clause("OOM kills outside leak", {"ballast": float(outside)}, passed, f"{text}: {_yes(passed)}")


def _leak_clause(ballast: Figures, as_written: Figures | None) -> Clause:
    ours = ballast.leak_ooms
    if as_written is None:
        text = f"{LEAK_SHAPE} OOM kills {ours} < n/a (as written: not run): n/a"
        return Clause("leak OOM kills", {"ballast": float(ours), "as_written": None}, True, text, applicable=False)
    theirs = as_written.leak_ooms
    if ours == 0 and theirs == 0:
        text = f"{LEAK_SHAPE} OOM kills 0 < 0 (as written): n/a (no {LEAK_SHAPE} OOM kill in the run)"
        figures: dict[str, float | None] = {"ballast": 0.0, "as_written": 0.0}
        return Clause("leak OOM kills", figures, True, text, applicable=False)
    passed = ours < theirs
    text = f"{LEAK_SHAPE} OOM kills {ours} < {theirs} (as written): {_yes(passed)}"
    return Clause("leak OOM kills", {"ballast": float(ours), "as_written": float(theirs)}, passed, text)


def _pressure_clause(ballast: Figures, vpa: Figures) -> Clause:
    ours, theirs = ballast.pressure_evictions, vpa.pressure_evictions
    passed = ours <= theirs
    text = f"node-pressure evictions {ours} <= {theirs} (VPA): {_yes(passed)}"
    return Clause("node-pressure evictions", {"ballast": float(ours), "vpa": float(theirs)}, passed, text)


def _under_requested(fig: Figures) -> float | None:
    return (fig.under_requested_windows or {}).get("memory")


def _under_requested_clause(ballast: Figures, vpa: Figures) -> Clause:
    ours, theirs = _under_requested(ballast), _under_requested(vpa)
    passed = ours is not None and theirs is not None and ours <= theirs
    text = (
        f"windows with Σ memory requests < Σ memory usage {_percent_text(ours)} <= {_percent_text(theirs)} (VPA):"
        f" {_yes(passed)}"
    )
    return Clause("memory under-requested windows", {"ballast": ours, "vpa": theirs}, passed, text)


def new_namespace_seconds(fig: Figures) -> float:
    """The slowest new-namespace cold start (+∞: one not reached within the run, or none in the fleet)."""
    times = [cold.sort_seconds for cold in fig.cold_starts if cold.kind == "new-namespace"]
    return max(times) if times else math.inf


def has_new_namespace(fig: Figures) -> bool:
    return any(cold.kind == "new-namespace" for cold in fig.cold_starts)


def seconds_text(seconds: float | None) -> str:
    return "not within the run" if seconds is None or math.isinf(seconds) else f"{seconds:g} s"


def _cold_start_clause(ballast: Figures, vpa: Figures, poll_interval_s: int) -> Clause:
    if not has_new_namespace(ballast):
        text = "new-namespace cold start: n/a (no new namespace in the run)"
        figures_na: dict[str, float | None] = {"ballast": None, "vpa": None, "poll_interval_s": float(poll_interval_s)}
        return Clause("new-namespace cold start", figures_na, True, text, applicable=False)
    ours, theirs = new_namespace_seconds(ballast), new_namespace_seconds(vpa)
    passed = ours <= poll_interval_s and ours < theirs
    text = (
        f"new-namespace cold start {seconds_text(ours)} <= {poll_interval_s} s (poll interval)"
        f" and < {seconds_text(theirs)} (VPA): {_yes(passed)}"
    )
    figures = {
        "ballast": None if math.isinf(ours) else ours,
        "vpa": None if math.isinf(theirs) else theirs,
        "poll_interval_s": float(poll_interval_s),
    }
    return Clause("new-namespace cold start", figures, passed, text)


def verdict_json(result: Verdict) -> dict[str, object]:
    return {
        "passed": result.passed,
        "clauses": [
            {
                "name": clause.name,
                "passed": clause.passed,
                "applicable": clause.applicable,
                "text": clause.text,
                "figures": {key: _plain(value) for key, value in clause.figures.items()},
            }
            for clause in result.clauses
        ],
    }


@dataclass(frozen=True, slots=True)
class FleetSeries:
    """The fleet per window (`BUCKET_SECONDS`): Σ reserved and Σ usage over workloads, per figure resource."""

    reserved: Mapping[str, NDArray[np.float64]]
    usage: Mapping[str, NDArray[np.float64]]


def fleet_series(trace: Trace) -> FleetSeries:
    windows = math.ceil(trace.duration_s / BUCKET_SECONDS)
    workloads = list(trace.workloads.values())
    return FleetSeries(
        reserved={r: _column_total([w.reserved for w in workloads], c, windows) for r, c in _COLUMNS.items()},
        usage={r: _column_total([w.usage for w in workloads], c, windows) for r, c in _COLUMNS.items()},
    )


def _column_total(matrices: Sequence[NDArray[np.float64]], column: int, windows: int) -> NDArray[np.float64]:
    total = np.zeros(windows, dtype=np.float64)
    for matrix in matrices:
        values = matrix[:windows, column]
        total[: values.shape[0]] += values
    return total


@dataclass(frozen=True, slots=True)
class RequestSteps:
    """A workload's per-pod request (mean over its running pods) from each instant `at_s[i]` until the next."""

    at_s: tuple[int, ...]
    per_pod: Mapping[str, tuple[float, ...]]


def request_steps(trace: Trace, fleet: Fleet, cold: ColdStart) -> RequestSteps:
    """The cold-start workload's per-pod request over time, from `cold.at_s` (what the cold-start chart draws)."""
    replicas = fleet.workload(cold.workload).replicas
    instants: list[int] = []
    per_pod: dict[str, list[float]] = {resource: [] for resource in FIGURE_RESOURCES}
    for at_s, pods in running_pod_requests(trace.changes, cold.workload, cold.at_s, replicas):
        if not pods:
            continue
        instants.append(at_s)
        for resource in FIGURE_RESOURCES:
            per_pod[resource].append(sum(pod_request(pod, resource) for pod in pods) / len(pods))
    return RequestSteps(tuple(instants), {resource: tuple(values) for resource, values in per_pod.items()})
