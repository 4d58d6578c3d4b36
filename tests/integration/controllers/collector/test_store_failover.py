"""The collector on a real kube-apiserver writing to a Sentinel group of real redis-server processes (1 primary,
2 replicas, 3 sentinels): the primary SIGKILLed under collection, a replica promoted, every cycle the collector
counted stored exactly once, the cycles of the outage held and written after the promotion, statuses resumed
(docs/design.md, difference 67)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ballast.internal.history import SeriesKey, open_store
from ballast.internal.telemetry import (
    HISTORY_CYCLES_BUFFERED,
    HISTORY_CYCLES_DROPPED,
    HISTORY_WRITES_RETRIED,
    SAMPLES_COLLECTED,
)
from tests.integration.controllers.collector.conftest import Cluster, MetricsServer, RunOperator, eventually
from tests.integration.controllers.collector.test_collector import measured_profile, usage
from tests.integration.redis_server import redis_server_or_skip
from tests.integration.redis_topology import SentinelGroup


@pytest.fixture
def group(tmp_path: Path) -> Iterator[SentinelGroup]:
    directory = tmp_path / "store"
    directory.mkdir()
    sentinels = SentinelGroup(redis_server_or_skip(), directory, down_after_ms=1000)
    try:
        sentinels.start()
        yield sentinels
    finally:
        sentinels.stop()


def test_the_store_primary_killed_under_collection_loses_no_sample_and_statuses_resume(
    group: SentinelGroup, cluster: Cluster, metrics_server: MetricsServer, run_operator: RunOperator
) -> None:
    store = open_store(group.url, timeout=1.0)
    source, profile, hash_ = measured_profile(cluster, metrics_server)
    labels = {"profile": profile, "app": profile.split("--")[0], "source": source, "resource": "cpu",
              "container": "app"}  # fmt: skip
    counted_before = SAMPLES_COLLECTED.value(**labels)
    retried_before = HISTORY_WRITES_RETRIED.value(source=source)
    dropped_before = sum(HISTORY_CYCLES_DROPPED.value(source=source, reason=r) for r in ("buffer_full", "stopped"))
    key = SeriesKey(hash_, "app", "cpu")
    manager = run_operator(store)
    try:
        eventually(lambda: len(store.read(key).values) >= 3, "three cycles written")
        samples_at_kill = usage(cluster.get_profile(profile), "app", "cpu")
        old = group.primary_port()
        group.server_on(old).kill()
        killed = time.monotonic()
        group.wait_for_new_primary(old)
        floor = (samples_at_kill or {"samples": 0})["samples"] + 2
        resumed = eventually(
            lambda: (u := usage(cluster.get_profile(profile), "app", "cpu")) and u["samples"] > floor and u,
            "the profile's status to move on after the promotion",
        )
        resumed_after = time.monotonic() - killed
    finally:
        manager.stop()
    values = store.read(key).values
    counted = SAMPLES_COLLECTED.value(**labels) - counted_before
    assert HISTORY_WRITES_RETRIED.value(source=source) > retried_before, "no cycle was held during the outage"
    assert HISTORY_CYCLES_BUFFERED.value() == 0
    assert (
        sum(HISTORY_CYCLES_DROPPED.value(source=source, reason=r) for r in ("buffer_full", "stopped")) == dropped_before
    )
    # every cycle the collector counted as written is in the store once: none lost, none twice
    assert len(values) == counted
    assert set(values) == {250}
    assert resumed["samples"] <= len(values)
    assert resumed_after < 30
    store.close()
