"""The simulator's figures on hand-made traces, each value worked out by hand, and a verdict that flips one clause
at a time."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pytest

from ballast.internal.fleetsim.figures import (
    ColdStartTime,
    Figures,
    Slack,
    figures,
    figures_json,
    verdict,
    verdict_json,
)
from ballast.internal.fleetsim.model import (
    App,
    Change,
    ColdStart,
    ContainerSpec,
    Fleet,
    NodeSpec,
    OomKill,
    PressureEviction,
    Trace,
    Workload,
    WorkloadTrace,
)

DAY = 288  # 5-minute windows
MIB = 2.0**20
NODE = NodeSpec("node-1", {"cpu": 8.0, "memory": 32 * 1024 * MIB})


def app(name: str = "web") -> App:
    container = ContainerSpec("app", {"cpu": 1.0, "memory": 256 * MIB}, {})
    return App(name, {"app.kubernetes.io/name": name}, (container,), {"app": "steady"})


def window_trace(
    key: str,
    reserved: Sequence[tuple[float, float]],
    usage: Sequence[tuple[float, float]],
    replicas: Sequence[float] | None = None,
    *,
    above: tuple[int, int, int] = (0, 0, 0),
    measured: tuple[int, int, int] = (0, 0, 0),
    throttled: int = 0,
    limited: int = 0,
) -> WorkloadTrace:
    """A workload's windows from (cpu, memory) pairs; ephemeral storage is zero throughout."""
    as_matrix = [[cpu, memory, 0.0] for cpu, memory in reserved]
    used = [[cpu, memory, 0.0] for cpu, memory in usage]
    running = [1.0] * len(reserved) if replicas is None else list(replicas)
    return WorkloadTrace(
        workload=key,
        reserved=np.array(as_matrix, dtype=np.float64),
        usage=np.array(used, dtype=np.float64),
        replicas=np.array(running, dtype=np.float64),
        above_request=np.array(above, dtype=np.int64),
        measured=np.array(measured, dtype=np.int64),
        throttled=throttled,
        limited=limited,
    )


def constant(key: str, windows: int, reserved: tuple[float, float], usage: tuple[float, float]) -> WorkloadTrace:
    return window_trace(key, [reserved] * windows, [usage] * windows)


def make_trace(
    workloads: Sequence[WorkloadTrace],
    days: float = 1,
    *,
    ooms: Sequence[OomKill] = (),
    changes: Sequence[Change] = (),
    recommender: str = "ballast",
) -> Trace:
    return Trace(
        recommender=recommender,
        duration_s=int(days * 86_400),
        allocatable=dict(NODE.allocatable),
        workloads={workload.workload: workload for workload in workloads},
        ooms=list(ooms),
        changes=list(changes),
    )


def make_fleet(keys: Sequence[str], days: float = 1, cold_starts: Sequence[ColdStart] = (), replicas: int = 1) -> Fleet:
    workloads = tuple(Workload(key.split("/")[0], app(key.split("/")[1]), replicas) for key in keys)
    return Fleet(workloads, (NODE,), int(days * 86_400), cold_starts=tuple(cold_starts))


def p95_by_hand(values: Sequence[float]) -> float:
    """The 95th percentile, interpolating linearly between the two closest ranks (numpy's default)."""
    ordered = sorted(values)
    rank = 0.95 * (len(ordered) - 1)
    below = math.floor(rank)
    return ordered[below] + (rank - below) * (ordered[below + 1] - ordered[below])


def test_relative_slack_of_one_workload_day_is_reserved_minus_p95_usage_over_reserved() -> None:
    usage = [(float(value), 500.0) for value in range(1, DAY + 1)]
    trace = make_trace([window_trace("a/web", [(400.0, 1000.0)] * DAY, usage)])

    result = figures(trace, make_fleet(["a/web"]))

    p95 = p95_by_hand([float(value) for value in range(1, DAY + 1)])
    assert p95 == pytest.approx(273.65)  # rank 0.95 × 287 = 272.65: between 273 and 274
    cpu = result.slack["cpu"]
    assert cpu.mean == pytest.approx((400 - p95) / 400)
    assert cpu.median == pytest.approx(0.315875)
    assert cpu.workload_days == 1
    assert result.slack["memory"] == Slack(mean=0.5, median=0.5, workload_days=1)
    assert result.workload_days == 1


def test_slack_is_averaged_over_workload_days_and_a_day_with_less_than_an_hour_does_not_count() -> None:
    # a/web: day 0 slack 0.1, day 1 slack 0.6; b/api: day 0 slack 0.2, day 1 only 11 windows (55 min).
    web = window_trace("a/web", [(10.0, 10.0)] * 2 * DAY, [(9.0, 9.0)] * DAY + [(4.0, 4.0)] * DAY)
    api_replicas = [1.0] * DAY + [1.0] * 11 + [0.0] * (DAY - 11)
    api_reserved = [(10.0, 10.0)] * (DAY + 11) + [(0.0, 0.0)] * (DAY - 11)
    api_usage = [(8.0, 8.0)] * DAY + [(1.0, 1.0)] * 11 + [(0.0, 0.0)] * (DAY - 11)
    api = window_trace("b/api", api_reserved, api_usage, api_replicas)

    result = figures(make_trace([web, api], days=2), make_fleet(["a/web", "b/api"], days=2))

    assert result.workload_days == 3
    assert result.slack["cpu"].mean == pytest.approx((0.1 + 0.6 + 0.2) / 3)
    assert result.slack["cpu"].median == pytest.approx(0.2)
    assert result.slack["cpu"].workload_days == 3


def test_an_hour_exactly_counts_and_reserved_is_the_mean_over_the_windows_that_ran() -> None:
    # 12 windows (1 h) running: reserved 100 for 6 windows and 300 for 6 (mean 200), usage 50; the rest not running.
    replicas = [1.0] * 12 + [0.0] * (DAY - 12)
    reserved = [(100.0, 100.0)] * 6 + [(300.0, 300.0)] * 6 + [(0.0, 0.0)] * (DAY - 12)
    usage = [(50.0, 50.0)] * 12 + [(0.0, 0.0)] * (DAY - 12)
    trace = make_trace([window_trace("a/web", reserved, usage, replicas)])

    result = figures(trace, make_fleet(["a/web"]))

    assert result.workload_days == 1
    assert result.slack["cpu"].mean == pytest.approx((200 - 50) / 200)


def test_a_workload_day_without_requests_has_no_relative_slack() -> None:
    trace = make_trace([constant("a/web", DAY, (0.0, 100.0), (1.0, 50.0))])

    result = figures(trace, make_fleet(["a/web"]))

    assert result.slack["cpu"] == Slack(mean=None, median=None, workload_days=0)
    assert result.slack["memory"] == Slack(mean=0.5, median=0.5, workload_days=1)


def test_waste_is_reserved_minus_usage_in_node_equivalents_per_day() -> None:
    # Day 0: 3 cores and 8 GiB reserved and unused; day 1: none. One node has 8 cores and 32 GiB.
    gib = 1024 * MIB
    reserved = [(4.0, 16 * gib)] * DAY + [(2.0, 8 * gib)] * DAY
    usage = [(1.0, 8 * gib)] * DAY + [(2.0, 8 * gib)] * DAY
    trace = make_trace([window_trace("a/web", reserved, usage)], days=2)

    result = figures(trace, make_fleet(["a/web"], days=2))

    assert result.waste_nodes_per_day["cpu"] == pytest.approx((3 / 8, 0.0))
    assert result.waste_nodes_per_day["memory"] == pytest.approx((8 / 32, 0.0))
    assert result.waste_nodes["cpu"] == pytest.approx(3 / 16)
    assert result.waste_nodes["memory"] == pytest.approx(1 / 8)


def test_waste_of_a_partial_last_day_is_over_that_day_s_length() -> None:
    # 1.5 days, 2 cores unused throughout: 2 / 8 nodes on both days, and over the run.
    windows = DAY + DAY // 2
    trace = make_trace([constant("a/web", windows, (3.0, 1.0), (1.0, 1.0))], days=1.5)

    result = figures(trace, make_fleet(["a/web"], days=1.5))

    assert result.waste_nodes_per_day["cpu"] == pytest.approx((0.25, 0.25))
    assert result.waste_nodes["cpu"] == pytest.approx(0.25)


def oom(workload: str, at_s: int) -> OomKill:
    return OomKill(at_s=at_s, pod=f"{workload}-0", workload=workload, container="app", request=1.0, limit=1.0)


def test_ooms_per_workload_day_and_the_share_of_oom_free_workload_days() -> None:
    # 4 workload-days; a/web is killed twice on day 0, b/api once on day 1: 2 of 4 workload-days are OOM-free.
    workloads = [constant(key, 2 * DAY, (2.0, 2.0), (1.0, 1.0)) for key in ("a/web", "b/api")]
    ooms = [oom("a/web", 100), oom("a/web", 5_000), oom("b/api", 86_400 + 10)]
    trace = make_trace(workloads, days=2, ooms=ooms)

    result = figures(trace, make_fleet(["a/web", "b/api"], days=2))

    assert (result.workload_days, result.ooms) == (4, 3)
    assert result.ooms_per_workload_day == pytest.approx(0.75)
    assert result.oom_free_share == pytest.approx(0.5)


def test_ooms_are_counted_by_the_killed_containers_usage_shape() -> None:
    leaky = Workload("a", App("cache", {"app.kubernetes.io/name": "cache"}, (CONTAINER, SIDECAR), SHAPES), 1)
    fleet = Fleet((leaky, Workload("b", app("web"), 1)), (NODE,), 86_400)
    kills = [oom("a/cache", 10), oom("b/web", 20), oom("a/cache", 30)]
    kills.append(OomKill(at_s=40, pod="a/cache-0", workload="a/cache", container="shipper", request=1.0, limit=1.0))
    trace = make_trace([constant(key, DAY, (2.0, 2.0), (1.0, 1.0)) for key in ("a/cache", "b/web")], ooms=kills)

    result = figures(trace, fleet)

    assert result.ooms_by_shape == {"idle": 1, "leak": 2, "steady": 1}
    assert figures_json(result)["ooms_by_shape"] == {"idle": 1, "leak": 2, "steady": 1}


CONTAINER = ContainerSpec("app", {"cpu": 1.0, "memory": 256 * MIB}, {})
SIDECAR = ContainerSpec("shipper", {"cpu": 0.1, "memory": 64 * MIB}, {})
SHAPES = {"app": "leak", "shipper": "idle"}


def test_share_of_steps_above_request_and_throttled() -> None:
    web = window_trace("a/web", [(1.0, 1.0)] * DAY, [(1.0, 1.0)] * DAY, above=(3, 5, 9), measured=(10, 10, 10),
                       throttled=2, limited=6)  # fmt: skip
    api = window_trace("b/api", [(1.0, 1.0)] * DAY, [(1.0, 1.0)] * DAY, above=(1, 0, 0), measured=(10, 10, 10),
                       throttled=0, limited=2)  # fmt: skip

    result = figures(make_trace([web, api]), make_fleet(["a/web", "b/api"]))

    assert result.above_request == {"cpu": pytest.approx(4 / 20), "memory": pytest.approx(5 / 20)}
    assert result.throttled_share == pytest.approx(2 / 8)


def test_nothing_measured_and_nothing_limited_give_no_share() -> None:
    result = figures(make_trace([constant("a/web", DAY, (1.0, 1.0), (1.0, 1.0))]), make_fleet(["a/web"]))

    assert result.above_request == {"cpu": None, "memory": None}
    assert result.throttled_share is None


def change(at_s: int, pod: str, kind: str, cpu: float, memory: float, workload: str = "new/web") -> Change:
    # Two containers, so that a pod's request is their sum.
    requests = {"app": {"cpu": cpu - 0.1, "memory": memory - 10 * MIB}, "sidecar": {"cpu": 0.1, "memory": 10 * MIB}}
    return Change(at_s=at_s, pod=pod, workload=workload, kind=kind, requests=requests)  # type: ignore[arg-type]


START = 43_200
COLD = ColdStart(workload="new/web", at_s=START, kind="new-namespace", reference="ref/web")


def reference_trace(changes: Sequence[Change], recommender: str = "ballast") -> Trace:
    """ref/web: 2 pods of 1 core and 200 MiB for 18 h, then of 0.5 core and 100 MiB for the last 6 h (the steady
    state); new/web runs from noon."""
    reserved = [(2.0, 400 * MIB)] * (DAY - 72) + [(1.0, 200 * MIB)] * 72
    ref = window_trace("ref/web", reserved, [(0.5, 100 * MIB)] * DAY, [2.0] * DAY)
    new_replicas = [0.0] * (DAY // 2) + [2.0] * (DAY // 2)
    new = window_trace("new/web", [(1.0, 200 * MIB)] * DAY, [(0.5, 100 * MIB)] * DAY, new_replicas)
    return make_trace([ref, new], changes=changes, recommender=recommender)


COLD_FLEET = make_fleet(["ref/web", "new/web"], cold_starts=[COLD], replicas=2)


def cold_time(changes: Sequence[Change]) -> ColdStartTime:
    (result,) = figures(reference_trace(changes), COLD_FLEET).cold_starts
    return result


def test_cold_start_ends_when_every_running_pod_is_within_15_percent_of_the_steady_state() -> None:
    changes = [
        change(START, "new-1", "admission", 0.1, 100 * MIB),
        change(START, "new-2", "admission", 0.1, 100 * MIB),
        change(START + 300, "new-1", "resize", 0.5, 100 * MIB),  # new-2 is still at 0.1 core
        change(START + 900, "new-2", "resize", 0.575, 115 * MIB),  # exactly 15 % above, both resources
    ]

    result = cold_time(changes)

    assert result.steady == pytest.approx({"cpu": 0.5, "memory": 100 * MIB})
    assert result.seconds == 900
    assert result.sort_seconds == 900.0


def test_cold_start_not_reached_within_the_run_is_none_and_compares_as_infinity() -> None:
    changes = [
        change(START, "new-1", "admission", 0.5, 100 * MIB),
        change(START, "new-2", "admission", 0.5, 120 * MIB),  # memory 20 % above the steady state
        change(START + 300, "new-2", "resize", 0.4, 100 * MIB),  # cpu 20 % below
    ]

    result = cold_time(changes)

    assert result.seconds is None
    assert result.sort_seconds == math.inf


def test_an_eviction_replaces_the_oldest_pod_and_changes_before_the_cold_start_do_not_count() -> None:
    changes = [
        change(100, "new-0", "admission", 0.5, 100 * MIB),  # before the cold start: not one of its pods
        change(START, "new-1", "admission", 2.0, 100 * MIB),
        change(START, "new-2", "admission", 0.5, 100 * MIB),
        change(START + 300, "new-0", "resize", 0.5, 100 * MIB),  # still not one of its pods
        change(START + 600, "new-3", "eviction", 0.45, 95 * MIB),  # replaces new-1, the oldest
    ]

    assert cold_time(changes).seconds == 600


def test_a_pod_far_from_the_steady_state_keeps_the_cold_start_going() -> None:
    changes = [
        change(START, "new-1", "admission", 0.5, 100 * MIB),
        change(START, "new-2", "admission", 2.0, 100 * MIB),
        change(START + 600, "new-3", "eviction", 0.45, 95 * MIB),  # replaces new-1: new-2 is still at 2 cores
        change(START + 1_200, "new-2", "resize", 0.5, 100 * MIB),
    ]

    assert cold_time(changes).seconds == 1_200


def test_pods_admitted_at_the_cold_start_reach_it_at_once() -> None:
    changes = [change(START, f"new-{i}", "admission", 0.5, 100 * MIB) for i in (1, 2)]

    assert cold_time(changes).seconds == 0


def test_applied_changes_per_workload_day_and_the_restarts_the_recommender_caused() -> None:
    changes = [
        change(0, "web-1", "admission", 1.0, 100 * MIB, "a/web"),
        change(600, "web-1", "resize", 0.5, 100 * MIB, "a/web"),
        change(900, "web-2", "eviction", 0.5, 100 * MIB, "a/web"),
        change(86_400 + 600, "web-2", "resize", 0.4, 100 * MIB, "a/web"),
    ]
    trace = make_trace([constant("a/web", 2 * DAY, (1.0, 1.0), (1.0, 1.0))], days=2, changes=changes)

    result = figures(trace, make_fleet(["a/web"], days=2))

    assert (result.changes, result.evictions) == (3, 1)
    assert result.changes_per_workload_day == pytest.approx(1.5)


def test_the_share_of_windows_with_requests_below_usage_counts_only_windows_where_something_ran() -> None:
    # 288 windows; none ran in the last 88. Memory: a reserves 1.0 and uses 0.5; b reserves 1.0 and uses 2.0 in
    # windows 0-49, 0.5 after: Σ requests 2.0 < Σ usage 2.5 in 50 of the 200 windows that ran.
    ran = [1.0] * 200 + [0.0] * 88
    a = window_trace("a/web", [(1.0, 1.0)] * DAY, [(0.5, 0.5)] * DAY, ran)
    b_usage = [(0.5, 2.0)] * 50 + [(0.5, 0.5)] * (DAY - 50)
    b = window_trace("b/web", [(1.0, 1.0)] * DAY, b_usage, ran)
    pressure = [PressureEviction(600, "web-1", "a/web", "node-1", 2.0, 1.0)]
    trace = dataclasses.replace(make_trace([a, b]), pressure_evictions=pressure)

    result = figures(trace, make_fleet(["a/web", "b/web"]))

    assert result.under_requested_windows == {"cpu": 0.0, "memory": pytest.approx(50 / 200)}
    assert (result.pressure_evictions, result.disruptions) == (1, 1)


def test_figures_json_is_plain_values_to_six_significant_digits() -> None:
    usage = [(float(value), 500.0) for value in range(1, DAY + 1)]
    web = window_trace("a/web", [(400.0, 1000.0)] * DAY, usage, above=(1, 2, 0), measured=(3, 3, 3))
    trace = make_trace([web], ooms=[oom("a/web", 10)])

    text = figures_json(figures(trace, make_fleet(["a/web"])))

    assert text["slack"] == {
        "cpu": {"mean": 0.315875, "median": 0.315875, "workload_days": 1},
        "memory": {"mean": 0.5, "median": 0.5, "workload_days": 1},
    }
    assert text["above_request"] == {"cpu": 0.333333, "memory": 0.666667}
    assert text["waste_nodes"] == {"cpu": 255.5 / 8, "memory": pytest.approx(500 / (32 * 1024 * MIB), rel=1e-6)}
    assert (text["ooms"], text["oom_free_share"], text["throttled_share"]) == (1, 0.0, None)
    assert (text["pressure_evictions"], text["disruptions"], text["disruptions_per_workload_day"]) == (0, 1, 1.0)
    assert text["under_requested_windows"] == {"cpu": 0.0, "memory": 0.0}
    assert sorted(text) == [
        "above_request", "changes", "changes_per_workload_day", "cold_starts", "disruptions",
        "disruptions_per_workload_day", "evictions", "oom_free_share", "ooms", "ooms_by_shape",
        "ooms_per_workload_day", "pressure_evictions", "pressure_evictions_per_workload_day", "recommender", "slack",
        "throttled_share", "under_requested_windows", "waste_nodes", "waste_nodes_per_day", "workload_days",
    ]  # fmt: skip


def judged(seconds: int | None, kind: str = "new-namespace") -> tuple[ColdStartTime, ...]:
    return (ColdStartTime("new/web", kind, "ref/web", START, {"cpu": 0.5, "memory": 1.0}, seconds),)


def summary(
    cpu: float | None,
    memory: float | None,
    cold: tuple[ColdStartTime, ...],
    *,
    waste: tuple[float, float],
    ooms_by_shape: Mapping[str, int],
    evictions: int = 0,
    pressure: int = 0,
    under_requested: float | None = 0.0,
    recommender: str = "ballast",
) -> Figures:
    slack: Mapping[str, Slack] = {"cpu": Slack(cpu, cpu, 10), "memory": Slack(memory, memory, 10)}
    ooms = sum(ooms_by_shape.values())
    return Figures(
        recommender=recommender,
        workload_days=10,
        slack=slack,
        waste_nodes={"cpu": waste[0], "memory": waste[1]},
        waste_nodes_per_day={"cpu": (waste[0],), "memory": (waste[1],)},
        ooms=ooms,
        ooms_by_shape=dict(ooms_by_shape),
        ooms_per_workload_day=ooms / 10,
        oom_free_share=1.0,
        above_request={"cpu": 0.0, "memory": 0.0},
        throttled_share=None,
        cold_starts=cold,
        changes=evictions,
        changes_per_workload_day=evictions / 10,
        evictions=evictions,
        pressure_evictions=pressure,
        under_requested_windows={"cpu": 0.0, "memory": under_requested},
    )


BALLAST = summary(0.21, 0.15, judged(300), waste=(1.0, 1.5), ooms_by_shape={"leak": 1}, under_requested=0.1)
VPA = summary(
    0.34, 0.25, judged(3_600), waste=(2.0, 3.0), ooms_by_shape={}, evictions=20, pressure=1, under_requested=0.2,
    recommender="vpa",
)  # fmt: skip
AS_WRITTEN = summary(0.6, 0.5, judged(None), waste=(9.0, 9.0), ooms_by_shape={"leak": 5}, recommender="none")
POLL = 300


def test_the_verdict_passes_when_every_clause_holds_and_says_so_in_one_line_each() -> None:
    result = verdict(BALLAST, VPA, POLL, AS_WRITTEN)

    assert result.passed
    assert result.lines() == [
        "cpu waste 1 < 2 (VPA, node-equivalents): yes",
        "memory waste 1.5 < 3 (VPA, node-equivalents): yes",
        "cpu slack 0.21 < 0.34 (VPA, mean relative slack): yes",
        "memory slack 0.15 < 0.25 (VPA, mean relative slack): yes",
        "disruptions per workload-day 0.1 < 2.1 (VPA): yes — Ballast 1 OOM kills + 0 evictions + 0 node-pressure"
        " evictions over 10 workload-days; VPA 0 OOM kills + 20 evictions + 1 node-pressure evictions over 10"
        " workload-days",
        "OOM kills outside the leak shape 0 = 0: yes",
        "leak OOM kills 1 < 5 (as written): yes",
        "node-pressure evictions 0 <= 1 (VPA): yes",
        "windows with Σ memory requests < Σ memory usage 10.00 % <= 20.00 % (VPA): yes",
        "new-namespace cold start 300 s <= 300 s (poll interval) and < 3600 s (VPA): yes",
        "verdict: passed",
    ]


def replaced(figures: Figures, **changes: object) -> Figures:
    return dataclasses.replace(figures, **changes)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("ballast", "vpa", "failed", "line"),
    [
        (replaced(BALLAST, waste_nodes={"cpu": 2.0, "memory": 1.5}), VPA, "cpu waste",
         "cpu waste 2 < 2 (VPA, node-equivalents): no"),
        (BALLAST, replaced(VPA, waste_nodes={"cpu": 2.0, "memory": 1.0}), "memory waste",
         "memory waste 1.5 < 1 (VPA, node-equivalents): no"),
        (replaced(BALLAST, slack={**BALLAST.slack, "cpu": Slack(0.34, 0.1, 10)}), VPA, "cpu slack",
         "cpu slack 0.34 < 0.34 (VPA, mean relative slack): no"),
        (BALLAST, replaced(VPA, slack={**VPA.slack, "memory": Slack(None, None, 0)}), "memory slack",
         "memory slack 0.15 < n/a (VPA, mean relative slack): no"),
        (BALLAST, replaced(VPA, evictions=0, pressure_evictions=1), "disruptions",
         "disruptions per workload-day 0.1 < 0.1 (VPA): no — Ballast 1 OOM kills + 0 evictions + 0 node-pressure"
         " evictions over 10 workload-days; VPA 0 OOM kills + 0 evictions + 1 node-pressure evictions over 10"
         " workload-days"),
        (replaced(BALLAST, ooms=2, ooms_by_shape={"leak": 1, "spiky": 1}), VPA, "OOM kills outside leak",
         "OOM kills outside the leak shape 1 = 0 (spiky 1): no"),
        (replaced(BALLAST, ooms=5, ooms_by_shape={"leak": 5}), VPA, "leak OOM kills",
         "leak OOM kills 5 < 5 (as written): no"),
        (replaced(BALLAST, pressure_evictions=2), replaced(VPA, evictions=30), "node-pressure evictions",
         "node-pressure evictions 2 <= 1 (VPA): no"),
        (replaced(BALLAST, under_requested_windows={"cpu": 0.0, "memory": 0.3333}), VPA,
         "memory under-requested windows",
         "windows with Σ memory requests < Σ memory usage 33.33 % <= 20.00 % (VPA): no"),
        (replaced(BALLAST, cold_starts=judged(301)), VPA, "new-namespace cold start",
         "new-namespace cold start 301 s <= 300 s (poll interval) and < 3600 s (VPA): no"),
        (BALLAST, replaced(VPA, cold_starts=judged(300)), "new-namespace cold start",
         "new-namespace cold start 300 s <= 300 s (poll interval) and < 300 s (VPA): no"),
        (replaced(BALLAST, cold_starts=judged(None)), replaced(VPA, cold_starts=judged(None)),
         "new-namespace cold start",
         "new-namespace cold start not within the run <= 300 s (poll interval) and < not within the run (VPA): no"),
    ],
)  # fmt: skip
def test_each_clause_failing_alone_fails_the_verdict(ballast: Figures, vpa: Figures, failed: str, line: str) -> None:
    result = verdict(ballast, vpa, POLL, AS_WRITTEN)

    assert not result.passed
    assert result.failed == [failed]
    assert line in result.lines()
    assert result.lines()[-1] == f"verdict: failed ({failed})"


def test_oom_kills_of_a_replay_have_no_shape_so_the_outside_leak_clause_reads_n_a() -> None:
    replay = replaced(BALLAST, ooms=3, ooms_by_shape={"recorded": 3})

    result = verdict(replay, VPA, POLL, AS_WRITTEN)

    clause = next(c for c in result.clauses if c.name == "OOM kills outside leak")
    assert (clause.passed, clause.applicable, clause.figures) == (True, False, {"ballast": None})
    assert clause.text == "OOM kills outside the leak shape: n/a (3 of recorded usage, which has no shape)"
    assert "OOM kills outside leak" not in result.failed


def test_a_synthetic_shape_outside_leak_still_fails_beside_recorded_usage() -> None:
    mixed = replaced(BALLAST, ooms=3, ooms_by_shape={"recorded": 2, "spiky": 1})

    clause = next(c for c in verdict(mixed, VPA, POLL, AS_WRITTEN).clauses if c.name == "OOM kills outside leak")

    assert (clause.passed, clause.applicable) == (False, True)
    assert clause.text == "OOM kills outside the leak shape 1 = 0 (recorded 2, spiky 1): no"


def test_a_cold_start_not_reached_by_vpa_is_slower_than_any_ballast_reaches() -> None:
    result = verdict(BALLAST, replaced(VPA, cold_starts=judged(None)), POLL, AS_WRITTEN)

    assert result.passed
    (clause,) = [clause for clause in result.clauses if clause.name == "new-namespace cold start"]
    assert clause.figures == {"ballast": 300.0, "vpa": None, "poll_interval_s": 300.0}


def test_a_run_without_a_new_namespace_or_a_leak_kill_reads_n_a_and_fails_nothing() -> None:
    ballast = replaced(BALLAST, cold_starts=judged(0, "redeploy"), ooms=0, ooms_by_shape={})
    as_written = replaced(AS_WRITTEN, ooms=0, ooms_by_shape={})

    result = verdict(ballast, replaced(VPA, cold_starts=judged(0, "redeploy")), POLL, as_written)

    assert result.passed
    not_applicable = [clause for clause in result.clauses if not clause.applicable]
    assert [clause.name for clause in not_applicable] == ["leak OOM kills", "new-namespace cold start"]
    assert "new-namespace cold start: n/a (no new namespace in the run)" in result.lines()
    assert "leak OOM kills 0 < 0 (as written): n/a (no leak OOM kill in the run)" in result.lines()


def test_leak_kills_where_the_manifests_as_written_had_none_fail() -> None:
    result = verdict(BALLAST, VPA, POLL, replaced(AS_WRITTEN, ooms=0, ooms_by_shape={}))

    assert result.failed == ["leak OOM kills"]


def test_disruptions_count_ooms_evictions_and_node_pressure_evictions_per_workload_day() -> None:
    assert VPA.disruptions == 21
    assert VPA.disruptions_per_workload_day == pytest.approx(2.1)
    assert BALLAST.disruptions == 1
    assert BALLAST.disruptions_per_workload_day == pytest.approx(0.1)


def test_verdict_json_lists_each_clause_with_its_figures() -> None:
    text = verdict_json(verdict(replaced(BALLAST, pressure_evictions=3), VPA, POLL, AS_WRITTEN))

    assert text["passed"] is False
    (clause,) = [c for c in text["clauses"] if c["name"] == "node-pressure evictions"]  # type: ignore[attr-defined]
    assert clause == {
        "name": "node-pressure evictions",
        "passed": False,
        "applicable": True,
        "text": "node-pressure evictions 3 <= 1 (VPA): no",
        "figures": {"ballast": 3.0, "vpa": 1.0},
    }
