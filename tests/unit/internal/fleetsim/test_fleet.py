"""The synthetic fleet's promises: its size, requests riding the ceiling while usage stays under half of it, the
cold starts and redeploys it is judged on, and a plain description."""

from __future__ import annotations

import numpy as np
import pytest

from ballast.internal.fleetsim.fleet import (
    NEW_NAMESPACE,
    allocatable,
    clock,
    default_fleet,
    describe,
    requests_at_start,
)
from ballast.internal.fleetsim.model import DAY_SECONDS, STEP_SECONDS, Fleet
from ballast.internal.fleetsim.run import AsWritten
from ballast.internal.fleetsim.usage import SHAPES, SyntheticUsage
from ballast.internal.fleetsim.world import World

FLEET = default_fleet()


def test_the_same_seed_gives_the_same_fleet_and_another_seed_other_rollouts() -> None:
    assert default_fleet(1) == FLEET
    other = default_fleet(2)
    assert other.workloads == FLEET.workloads
    assert other.seed == 2
    assert [e for e in other.events if e.kind == "rollout"] != [e for e in FLEET.events if e.kind == "rollout"]


def test_every_app_runs_in_every_namespace_with_at_least_two_replicas() -> None:
    established = [w for w in FLEET.workloads if w.namespace != NEW_NAMESPACE]
    assert len(established) == 40 * 5
    assert len({w.app.name for w in established}) == 40
    assert {w.namespace for w in established} == {"team-a", "team-b", "team-c", "team-d", "team-e"}
    assert min(w.replicas for w in FLEET.workloads) == 2
    assert len({w.key for w in FLEET.workloads}) == len(FLEET.workloads)


def test_apps_carry_the_identity_labels_and_one_or_two_containers_of_known_shapes() -> None:
    assert FLEET.identity_labels == ("app.kubernetes.io/name", "app.kubernetes.io/component")
    for workload in FLEET.workloads:
        app = workload.app
        assert app.labels["app.kubernetes.io/name"] == app.name == app.labels["app"]
        assert app.labels["app.kubernetes.io/component"]
        assert 1 <= len(app.containers) <= 2
        assert set(app.shapes) == {c.name for c in app.containers}
        assert set(app.shapes.values()) <= set(SHAPES)
    shapes = {shape for w in FLEET.workloads for shape in w.app.shapes.values()}
    assert shapes == set(SHAPES)
    assert sum(1 for w in FLEET.workloads if "log-shipper" in w.app.shapes) > 0


def test_most_containers_state_no_cpu_limit_and_the_leak_has_a_memory_limit() -> None:
    specs = [(c, w.app.shapes[c.name]) for w in FLEET.workloads for c in w.app.containers]
    with_cpu_limit = sum(1 for c, _ in specs if "cpu" in c.limits)
    assert 0 < with_cpu_limit < len(specs) / 4
    assert all("memory" in c.limits for c, shape in specs if shape == "leak")


def test_requests_ride_the_ceiling_at_the_start() -> None:
    requests, capacity = requests_at_start(FLEET), allocatable(FLEET)
    for resource in ("cpu", "memory"):
        assert 0.80 <= requests[resource] / capacity[resource] <= 0.95, resource
    assert {node.allocatable["cpu"] for node in FLEET.nodes} == {8.0}
    assert len(FLEET.nodes) == 25


def test_mean_usage_stays_under_half_of_allocatable() -> None:
    usage = SyntheticUsage(FLEET)
    running = np.array([FLEET.workload(slot.workload).created_s == 0 for slot in usage.slots])
    capacity = allocatable(FLEET)
    # One sample every 20 minutes over the three days; containers of every age up to a day.
    ages = np.arange(len(usage.slots), dtype=np.int64) * 7 % (DAY_SECONDS // STEP_SECONDS)
    totals = np.array([usage.at(step, ages)[running].sum(axis=0) for step in range(0, 17_280, 80)])
    cpu_share = totals[:, 0].mean() / capacity["cpu"]
    memory_share = totals[:, 1].mean() / capacity["memory"]
    assert 0.15 < cpu_share < 0.5
    assert 0.2 < memory_share < 0.5


def test_the_new_namespace_cold_start_names_an_established_workload_of_the_same_labels() -> None:
    (cold,) = [c for c in FLEET.cold_starts if c.kind == "new-namespace"]
    newcomer, reference = FLEET.workload(cold.workload), FLEET.workload(cold.reference)
    assert newcomer.namespace == NEW_NAMESPACE
    assert cold.at_s == newcomer.created_s == 2 * DAY_SECONDS + 3600
    assert reference.created_s == 0
    assert reference.deleted_s is None
    assert newcomer.app.labels == reference.app.labels
    assert newcomer.namespace != reference.namespace


def test_each_redeployed_workload_is_deleted_before_its_redeploy_and_timed_from_it() -> None:
    redeploys = [e for e in FLEET.events if e.kind == "redeploy"]
    assert [e.vpa_cold for e in redeploys] == ["", "new-labels"]
    for event in redeploys:
        workload = FLEET.workload(event.workload)
        assert workload.deleted_s is not None
        assert 0 < workload.deleted_s < event.at_s < FLEET.duration_s
        (cold,) = [c for c in FLEET.cold_starts if c.workload == event.workload]
        assert (cold.kind, cold.at_s) == ("redeploy", event.at_s)
        reference = FLEET.workload(cold.reference)
        assert reference.app.labels == workload.app.labels
        assert reference.deleted_s is None


def test_rollouts_replace_a_tenth_of_the_workloads_a_day_in_working_hours() -> None:
    rollouts = [e for e in FLEET.events if e.kind == "rollout"]
    assert len(rollouts) == 3 * 20
    cold = {c.workload for c in FLEET.cold_starts}
    assert not cold & {e.workload for e in rollouts}
    assert all(9 * 3600 <= e.at_s % DAY_SECONDS < 17 * 3600 for e in rollouts)
    assert all(e.at_s % STEP_SECONDS == 0 for e in rollouts)
    assert [e.at_s for e in FLEET.events] == sorted(e.at_s for e in FLEET.events)
    assert [len([e for e in rollouts if e.at_s // DAY_SECONDS == day]) for day in range(3)] == [20, 20, 20]


def test_a_short_run_keeps_every_moment_inside_it() -> None:
    small = default_fleet(3, apps=12, namespaces=2, replicas=3, days=1)
    assert len(small.workloads) == 12 * 2 + 1
    assert {w.replicas for w in small.workloads} == {3}
    moments = [e.at_s for e in small.events] + [c.at_s for c in small.cold_starts]
    assert all(0 < at_s < small.duration_s for at_s in moments)
    assert len({c.workload for c in small.cold_starts}) == 3


def test_a_fleet_too_small_for_its_cold_starts_is_refused() -> None:
    with pytest.raises(ValueError, match="3 apps and 2 namespaces"):
        default_fleet(apps=2)
    with pytest.raises(ValueError, match="3 apps and 2 namespaces"):
        default_fleet(namespaces=1)


def test_the_scheduler_places_every_pod_of_the_manifests_as_written_the_newcomer_included() -> None:
    world = World(FLEET, SyntheticUsage(FLEET), AsWritten())
    world.advance(0)
    assert world.overcommitted == 0
    assert len(world.pods) == 400
    (cold,) = [c for c in FLEET.cold_starts if c.kind == "new-namespace"]
    world.advance(cold.at_s // STEP_SECONDS)  # the rollouts and the first redeploy due by then, and the newcomer
    assert world.overcommitted == 0
    assert sum(1 for pod in world.pods.values() if pod.namespace == NEW_NAMESPACE) == 2
    assert len(world.pods) == 402


def test_describe_states_the_scenario() -> None:
    lines = describe(FLEET)
    assert lines[0] == "seed 1, 3 days at 15 s steps"
    assert "workloads: 201, pods: 402, containers: 524" in lines
    assert "namespaces: 6 (team-a, team-b, team-c, team-d, team-e, team-new)" in lines
    assert "nodes: 25 × 8 cores / 32 GiB / 100 GiB ephemeral-storage" in lines
    assert "cpu requests at start: 176 of 200 cores allocatable (88%)" in lines
    assert "rollouts: 60 (54 workloads, every pod replaced)" in lines
    assert (
        "redeploy: team-e/checkout-frontend deleted at day 2 09:00, back at day 2 09:30, VPA starts cold (new-labels)"
        in lines
    )
    assert "new namespace: team-new/checkout-api (2 pods) at day 2 01:00, twin of team-a/checkout-api" in lines


def test_clock_counts_days_from_zero() -> None:
    assert clock(0) == "day 0 00:00"
    assert clock(2 * DAY_SECONDS + 3600 + 30 * 60) == "day 2 01:30"


def _slot_count(fleet: Fleet) -> int:
    return sum(w.replicas * len(w.app.containers) for w in fleet.workloads)


def test_the_default_fleet_has_a_few_hundred_usage_streams() -> None:
    assert len(SyntheticUsage(FLEET).slots) == _slot_count(FLEET) == 524
