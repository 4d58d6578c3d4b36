"""The synthetic usage: deterministic per (seed, step, ages) whatever was asked before, each shape doing what its
name says, and cheap enough to be asked ~17,000 times a run."""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np
import pytest
from numpy.typing import NDArray

from ballast.internal.fleetsim.fleet import default_fleet
from ballast.internal.fleetsim.model import (
    CPU,
    DAY_SECONDS,
    EPHEMERAL,
    MEMORY,
    STEP_SECONDS,
    App,
    ContainerSpec,
    Fleet,
    NodeSpec,
    Slot,
    Workload,
)
from ballast.internal.fleetsim.usage import SHAPES, STARTUP_STEPS, SyntheticUsage

GI = 2**30
HOUR_STEPS = 3600 // STEP_SECONDS
DAY_STEPS = DAY_SECONDS // STEP_SECONDS
FLEET = default_fleet()


def one_shape(
    shape: str, *, limits: Mapping[str, float] | None = None, replicas: int = 2, seed: int = 1, cpu: float = 1.0
) -> Fleet:
    """One workload of one container with `shape`, requesting `cpu` cores and 1 GiB."""
    spec = ContainerSpec("main", {"cpu": cpu, "memory": float(GI)}, dict(limits or {}))
    app = App(f"{shape}-app", {"app": f"{shape}-app"}, (spec,), {"main": shape})
    node = NodeSpec("node-1", {"cpu": 8.0, "memory": 32.0 * GI})
    return Fleet((Workload("team-a", app, replicas),), (node,), 3 * DAY_SECONDS, seed=seed)


def ages(usage: SyntheticUsage, age: int) -> NDArray[np.int64]:
    return np.full(len(usage.slots), age, dtype=np.int64)


def series(usage: SyntheticUsage, steps: range, age: int = 10_000) -> NDArray[np.float64]:
    """`(steps, slots, resources)`: every slot at a fixed age, so only time moves."""
    return np.stack([usage.at(step, ages(usage, age)) for step in steps])


# ------------------------------------------------------------------------------------------- determinism


def test_the_same_seed_gives_the_same_matrices_whatever_was_asked_before() -> None:
    first, second = SyntheticUsage(FLEET), SyntheticUsage(default_fleet())
    age = np.arange(len(first.slots), dtype=np.int64)
    forward = [first.at(step, age).copy() for step in (0, 1, 500, 9_000)]
    first.at(12_345, age * 3)  # an unrelated question in between changes nothing
    backward = [second.at(step, age) for step in (9_000, 500, 1, 0)][::-1]
    for expected, got in zip(forward, backward, strict=True):
        np.testing.assert_array_equal(expected, got)
    np.testing.assert_array_equal(first.at(500, age), forward[2])


def test_another_seed_gives_other_usage() -> None:
    one, two = SyntheticUsage(FLEET), SyntheticUsage(default_fleet(2))
    age = ages(one, 100)
    assert one.slots == two.slots
    assert not np.allclose(one.at(100, age), two.at(100, age))


def test_consecutive_steps_differ() -> None:
    usage = SyntheticUsage(FLEET)
    age = ages(usage, 100)
    assert not np.array_equal(usage.at(100, age)[:, CPU], usage.at(101, age)[:, CPU])


def test_slots_are_workloads_then_replicas_then_containers() -> None:
    usage = SyntheticUsage(FLEET)
    first = FLEET.workloads[0]
    names = [c.name for c in first.app.containers]
    assert names == ["app", "log-shipper"]
    assert list(usage.slots[:4]) == [
        Slot(first.key, 0, "app"),
        Slot(first.key, 0, "log-shipper"),
        Slot(first.key, 1, "app"),
        Slot(first.key, 1, "log-shipper"),
    ]
    assert usage.slots[-1].workload == FLEET.workloads[-1].key
    assert usage.at(0, ages(usage, 0)).shape == (len(usage.slots), 3)
    assert usage.at(0, ages(usage, 0)).dtype == np.float64


def test_an_unknown_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="'recorded' is not one of"):
        SyntheticUsage(one_shape("recorded"))


def test_every_shape_is_described() -> None:
    assert set(SHAPES) == {"diurnal", "steady-growth", "spiky", "idle", "leak", "jvm", "startup"}
    assert all(description for description in SHAPES.values())


# ------------------------------------------------------------------------------------------------ shapes


def test_diurnal_cpu_peaks_in_the_afternoon_at_two_to_three_times_the_night() -> None:
    usage = SyntheticUsage(one_shape("diurnal"))
    day = series(usage, range(DAY_STEPS, 2 * DAY_STEPS, 4))
    hour = np.arange(day.shape[0]) * 4 // HOUR_STEPS
    cpu = day[:, :, CPU].mean(axis=1)
    hourly = np.array([cpu[hour == h].mean() for h in range(24)])
    assert 13 <= int(np.argmax(hourly)) <= 18
    afternoon, night = hourly[14:17].mean(), hourly[2:5].mean()
    assert 1.8 < afternoon / night < 3.2
    memory = day[:, :, MEMORY]
    assert memory.std(axis=0).max() / memory.mean() < 0.02


def test_typical_cpu_is_a_quarter_to_a_half_of_the_request() -> None:
    usage = SyntheticUsage(one_shape("diurnal", replicas=4))
    mean_cpu = series(usage, range(0, DAY_STEPS, 8))[:, :, CPU].mean()
    assert 0.2 < mean_cpu < 0.5


def test_replicas_of_a_workload_are_similar_but_not_identical() -> None:
    usage = SyntheticUsage(one_shape("steady-growth", replicas=4))
    means = series(usage, range(0, DAY_STEPS, 16)).mean(axis=0)
    for column in (CPU, MEMORY):
        spread = means[:, column] / means[:, column].mean()
        assert np.all(np.abs(spread - 1) < 0.3)
        assert len(set(spread.round(6))) == 4


def test_steady_growth_memory_grows_slowly_with_time() -> None:
    usage = SyntheticUsage(one_shape("steady-growth"))
    first = usage.at(0, ages(usage, 0))[:, MEMORY]
    third = usage.at(2 * DAY_STEPS, ages(usage, 0))[:, MEMORY]
    growth = third / first - 1
    assert np.all((growth > 0.04) & (growth < 0.14))


def test_leak_memory_grows_with_age_to_the_limit_and_starts_over_at_age_zero() -> None:
    limit = 1.5 * GI
    usage = SyntheticUsage(one_shape("leak", limits={"memory": limit}))
    young = usage.at(1_000, ages(usage, 0))[:, MEMORY]
    older = usage.at(1_000, ages(usage, 6 * HOUR_STEPS))[:, MEMORY]
    oldest = usage.at(1_000, ages(usage, 30 * HOUR_STEPS))[:, MEMORY]
    assert np.all(young < 0.5 * GI)
    assert np.all(young < older)
    assert np.all(older < oldest)
    assert np.all(oldest > limit)
    np.testing.assert_array_equal(usage.at(1_000, ages(usage, 0))[:, MEMORY], young)
    hours_to_limit = [_first_age_above(usage, slot, limit) / HOUR_STEPS for slot in range(2)]
    assert all(14 < hours < 27 for hours in hours_to_limit)


def _first_age_above(usage: SyntheticUsage, slot: int, limit: float) -> int:
    age_grid = np.arange(0, 40 * HOUR_STEPS, 20)
    memory = np.array([usage.at(500, ages(usage, int(age)))[slot, MEMORY] for age in age_grid])
    return int(age_grid[np.argmax(memory > limit)])


def test_startup_spikes_only_in_the_first_minutes_of_a_container() -> None:
    usage = SyntheticUsage(one_shape("startup"))
    step = 2_000
    starting = usage.at(step, ages(usage, 3))
    last_minute = usage.at(step, ages(usage, STARTUP_STEPS - 1))
    settled = usage.at(step, ages(usage, STARTUP_STEPS))
    later = usage.at(step, ages(usage, 10 * STARTUP_STEPS))
    np.testing.assert_allclose(starting[:, CPU] / settled[:, CPU], 6.0)
    np.testing.assert_array_equal(starting[:, CPU], last_minute[:, CPU])
    assert np.all(starting[:, MEMORY] > 1.5 * settled[:, MEMORY])
    np.testing.assert_array_equal(settled[:, :EPHEMERAL], later[:, :EPHEMERAL])


def test_idle_stays_near_zero() -> None:
    usage = SyntheticUsage(one_shape("idle", cpu=0.1))
    day = series(usage, range(0, DAY_STEPS, 4))
    assert day[:, :, CPU].max() < 0.01
    assert day[:, :, CPU].min() > 0


def test_spiky_bursts_are_rare_and_far_above_the_median() -> None:
    usage = SyntheticUsage(one_shape("spiky", replicas=4))
    cpu = series(usage, range(0, DAY_STEPS, 2))[:, :, CPU]
    median = np.median(cpu, axis=0)
    p99 = np.percentile(cpu, 99, axis=0)
    assert np.all(p99 > 3 * median)
    burst_share = (cpu > 3 * median).mean(axis=0)
    assert np.all((burst_share > 0.005) & (burst_share < 0.05))
    # Heavy-tailed, yet capped (25× the typical usage, times the day's cycle and the jitter).
    assert np.all((cpu.max(axis=0) > 10 * median) & (cpu.max(axis=0) < 50 * median))


def test_jvm_holds_a_high_flat_memory_floor() -> None:
    usage = SyntheticUsage(one_shape("jvm"))
    memory = series(usage, range(0, DAY_STEPS, 16))[:, :, MEMORY]
    assert np.all(memory.min(axis=0) > 0.45 * GI)
    assert np.all(memory.max(axis=0) / memory.min(axis=0) < 1.02)


def test_ephemeral_storage_is_small_grows_with_age_and_resets_on_restart() -> None:
    usage = SyntheticUsage(FLEET)
    fresh = usage.at(100, ages(usage, 0))[:, EPHEMERAL]
    old = usage.at(100, ages(usage, 3 * DAY_STEPS))[:, EPHEMERAL]
    assert np.all(fresh > 0)
    assert np.all(old > fresh)
    assert old.max() < 2 * GI
    np.testing.assert_array_equal(usage.at(100, ages(usage, 0))[:, EPHEMERAL], fresh)


def test_only_the_leak_passes_its_memory_limit_under_the_manifests_as_written() -> None:
    usage = SyntheticUsage(FLEET)
    limits = np.array([_memory_limit(FLEET, slot) for slot in usage.slots])
    leaking = np.array([FLEET.workload(s.workload).app.shapes[s.container] == "leak" for s in usage.slots])
    worst = np.zeros(len(usage.slots))
    # The end of the run (the most growth) at every age, including the startup minutes.
    for age in (0, 5, STARTUP_STEPS, DAY_STEPS, 3 * DAY_STEPS - 1):
        for step in range(3 * DAY_STEPS - 400, 3 * DAY_STEPS, 20):
            worst = np.maximum(worst, usage.at(step, ages(usage, age))[:, MEMORY])
    assert not np.any(worst[~leaking] > limits[~leaking])
    assert np.all(worst[leaking] > limits[leaking])


def _memory_limit(fleet: Fleet, slot: Slot) -> float:
    spec = next(c for c in fleet.workload(slot.workload).app.containers if c.name == slot.container)
    return spec.limits.get("memory", np.inf)


def test_a_step_costs_well_under_a_millisecond() -> None:
    usage = SyntheticUsage(FLEET)
    age = np.arange(len(usage.slots), dtype=np.int64)
    timings = []
    for step in range(200):
        started = time.perf_counter()
        usage.at(step, age)
        timings.append(time.perf_counter() - started)
    # Measured 30–40 µs for 524 slots; the bound leaves room for a busy shared machine.
    assert float(np.median(timings)) < 1e-3
