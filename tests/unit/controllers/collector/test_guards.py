"""What stops or skips a cycle: the kill switch, `--dry-run-measure`, a store outage, a failing source and its
backoff (docs/compatibility.md; docs/design.md, differences 3 and 19)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from ballast.internal.metricsources import FetchError, FetchResult, UsageSample
from ballast.internal.operator import DryRun
from ballast.internal.telemetry import (
    FETCH_ERRORS,
    HISTORY_BUFFERED_BYTES,
    HISTORY_CYCLES_BUFFERED,
    HISTORY_CYCLES_DROPPED,
    HISTORY_WRITES_RETRIED,
    SAMPLES_COLLECTED,
    STORE_ERRORS,
)
from tests.unit.controllers.collector.support import World, measured_by_two_sources


def pod_metrics_lists(world: World) -> int:
    return sum(1 for method, path in world.api.requests if method == "GET" and path.endswith("v1beta1/pods"))


def test_the_kill_switch_stops_fetching_and_writing(world: World) -> None:
    profile = measured_by_two_sources(world)
    world.kill_switch.update(configmap=True, suspended=False)

    result = world.cycle()

    assert result is not None
    assert result.requeue_after == 120.0
    assert pod_metrics_lists(world) == 0
    assert world.store.cycles == []
    assert world.store.reads == 0
    assert "containers" not in world.status(profile)
    assert "conditions" not in world.status(profile)


def test_dry_run_measure_fetches_but_writes_neither_samples_nor_status(tmp_path: Path) -> None:
    world = World(tmp_path, dry_run=DryRun.cascade(measure=True))
    try:
        profile = measured_by_two_sources(world)
        labels = {"profile": profile, "app": "api", "source": "metrics", "resource": "cpu", "container": "app"}
        before = SAMPLES_COLLECTED.value(**labels)

        result = world.cycle()

        assert result is not None
        assert result.requeue_after == 120.0
        assert pod_metrics_lists(world) == 1
        assert world.store.cycles == []
        assert "containers" not in world.status(profile)
        assert SAMPLES_COLLECTED.value(**labels) == before
    finally:
        world.close()


def test_a_store_outage_keeps_the_last_status_and_writes_the_held_cycle_once_after(world: World) -> None:
    profile = measured_by_two_sources(world)
    world.cycle()
    last = world.status(profile)

    world.store.down = True
    world.clock.advance(120)
    failed_before = STORE_ERRORS.value(source="metrics", operation="write")
    retried_before = HISTORY_WRITES_RETRIED.value(source="metrics")
    result = world.cycle()

    assert result is not None
    assert result.requeue_after == 120.0
    assert world.status(profile) == last
    assert STORE_ERRORS.value(source="metrics", operation="write") == failed_before + 1
    assert HISTORY_CYCLES_BUFFERED.value() == 1
    assert HISTORY_BUFFERED_BYTES.value() > 0
    world.clock.advance(120)
    world.cycle()  # still down: a second cycle held and counted, behind the first
    assert STORE_ERRORS.value(source="metrics", operation="write") == failed_before + 2
    assert HISTORY_CYCLES_BUFFERED.value() == 2
    world.store.down = False
    world.clock.advance(120)
    world.cycle()
    # the held cycles first, oldest first, then this one: no sample lost, none written twice (difference 67)
    assert world.usage(profile, "app", "cpu")["samples"] == 4
    assert HISTORY_CYCLES_BUFFERED.value() == 0
    assert HISTORY_WRITES_RETRIED.value(source="metrics") == retried_before + 2
    ids = [cycle.cycle_id for cycle in world.store.cycles]
    assert len(ids) == len(set(ids)) == 4
    assert [cycle.at_ms for cycle in world.store.cycles] == sorted(cycle.at_ms for cycle in world.store.cycles)


def test_a_cycle_no_replica_acknowledged_is_held_and_its_samples_counted_once(world: World) -> None:
    profile = measured_by_two_sources(world)
    labels = {"profile": profile, "app": "api", "source": "metrics", "resource": "cpu", "container": "app"}
    world.cycle()
    counted = SAMPLES_COLLECTED.value(**labels)

    world.store.unreplicated = True
    world.clock.advance(120)
    world.cycle()
    assert SAMPLES_COLLECTED.value(**labels) == counted  # on the primary, not yet acknowledged
    assert HISTORY_CYCLES_BUFFERED.value() == 1

    world.store.unreplicated = False
    world.clock.advance(120)
    world.cycle()
    # the retry found the cycle's marker (applied nothing twice) and now counts what the first attempt wrote
    assert world.usage(profile, "app", "cpu")["samples"] == 3
    assert SAMPLES_COLLECTED.value(**labels) == counted + 2
    assert HISTORY_CYCLES_BUFFERED.value() == 0


def test_a_full_buffer_drops_the_oldest_held_cycle_and_counts_it(tmp_path: Path) -> None:
    world = World(tmp_path, history_buffer_bytes=1)
    try:
        profile = measured_by_two_sources(world)
        world.cycle()
        dropped_before = HISTORY_CYCLES_DROPPED.value(source="metrics", reason="buffer_full")
        world.store.down = True
        world.clock.advance(120)
        world.cycle()
        assert HISTORY_CYCLES_DROPPED.value(source="metrics", reason="buffer_full") == dropped_before + 1
        assert HISTORY_CYCLES_BUFFERED.value() == 0
        world.store.down = False
        world.clock.advance(120)
        world.cycle()
        assert world.usage(profile, "app", "cpu")["samples"] == 2  # the dropped cycle's samples are missing
    finally:
        world.close()


def test_a_refused_cycle_is_skipped_not_held(world: World) -> None:
    measured_by_two_sources(world)
    world.store.refusing = True
    world.cycle()
    assert HISTORY_CYCLES_BUFFERED.value() == 0
    assert world.collector.pending.cycles == 0


def test_a_failing_source_is_logged_once_with_its_next_attempt_not_at_every_cycle_of_its_backoff(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    measured_by_two_sources(world)
    caplog.set_level(logging.INFO)
    world.kubelet.answers.append(FetchError("no node answered"))
    world.cycle("kubelet")
    for _ in range(5):  # cycles inside the backoff
        world.clock.advance(0.1)
        world.cycle("kubelet")
    lines = [
        r.getMessage() for r in caplog.records if r.levelno >= logging.INFO and "no node answered" in r.getMessage()
    ]
    backing_off = [r for r in caplog.records if r.levelno >= logging.INFO and "backing off" in r.getMessage()]
    assert lines == ["failed to fetch metrics: no node answered; next attempt in 1s"]
    assert backing_off == []


def test_a_failing_source_is_counted_per_profile_backs_off_and_reports_missing_samples(world: World) -> None:
    profile = measured_by_two_sources(world)
    world.kubelet.answers.append(FetchResult([UsageSample("shop", "api-1", "app", "ephemeral-storage", 4096, 0)]))
    world.cycle("kubelet")
    world.cycle("metrics")
    assert world.ready(profile)["status"] == "True"
    labels = {"profile": profile, "app": "api", "source": "kubelet"}
    before = FETCH_ERRORS.value(**labels)

    world.kubelet.answers.append(FetchError("no node answered"))
    world.clock.advance(30)
    world.cycle("kubelet")

    assert FETCH_ERRORS.value(**labels) - before == 1
    ready = world.ready(profile)
    assert (ready["status"], ready["reason"]) == ("False", "MissingSamples")
    assert ready["message"] == "No samples in the latest collection cycle for: ephemeral-storage"
    assert world.usage(profile, "app", "ephemeral-storage")["samples"] == 1  # history still reported

    calls = len(world.kubelet.calls)
    world.clock.advance(0.5)  # within the 1 s backoff: the source is not called at all
    world.cycle("kubelet")
    assert len(world.kubelet.calls) == calls
    assert FETCH_ERRORS.value(**labels) - before == 1

    world.kubelet.answers.append(FetchResult([UsageSample("shop", "api-1", "app", "ephemeral-storage", 8192, 0)]))
    world.clock.advance(1)
    world.cycle("kubelet")
    assert len(world.kubelet.calls) == calls + 1
    assert world.ready(profile)["status"] == "True"


def test_the_kubelet_source_is_asked_only_for_nodes_hosting_fed_pods(world: World) -> None:
    measured_by_two_sources(world)
    world.pod("api-2", "api", "api--default", node="node-b")
    world.pod("pending", "api", "api--default", node="")
    world.profile("web", policy=None)
    world.pod("web-1", "web", "web--nopolicy", node="node-c")

    world.cycle("kubelet")

    [target] = world.kubelet.calls
    assert target.nodes == frozenset({"node-a", "node-b"})


def test_held_cycles_are_counted_as_dropped_when_leadership_ends(world: World) -> None:
    measured_by_two_sources(world)
    world.store.down = True
    world.cycle()
    before = HISTORY_CYCLES_DROPPED.value(source="metrics", reason="stopped")
    assert world.collector.drop_held() == 1
    assert HISTORY_CYCLES_DROPPED.value(source="metrics", reason="stopped") == before + 1
    assert HISTORY_CYCLES_BUFFERED.value() == 0
