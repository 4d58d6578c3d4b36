"""The history store's primary SIGKILLed under collection: `ballastd` collects one profile every second from the
real metrics-server into a Sentinel group (a primary, 2 replicas, 3 sentinels, `requirepass`, short Sentinel
timeouts) on the namespace's loopback, and the primary is killed with SIGKILL (docs/design.md, difference 67).

Asserted: a replica is promoted; while none answers, the collector holds its cycles (`ballast_history_cycles_
buffered` > 0) and the profile keeps its last status; once one does, the held cycles are written (counted in
`ballast_history_writes_retried`) and none is dropped; every sample the collector counted as written is in the
new primary exactly once (one per cycle: no time twice), each equal to the usage metrics.k8s.io served; the
operator names the new primary (`ballast_history_primary`); and the profile's status moves again within one
poll interval of the promotion.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ballast.internal.enrollment import MODE_LABEL
from ballast.internal.history import HistoryStore, SeriesKey, open_store
from ballast.internal.quantity import to_units
from ballast.runtime.envtest import MiniCluster, usage_annotation
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.figures import record
from tests.e2e.support import Operator, Replicas, create_namespace, deployment
from tests.integration.internal.cmd.ballastd.conftest import Ballastd
from tests.integration.redis_server import redis_server_or_skip
from tests.integration.redis_topology import SentinelGroup

NAME = "failover"
IDENTITY = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/component": "api"}
SOURCE = "kubernetes-metrics"
POLL_SECONDS = 1.0  # the suite's MetricsSource pollInterval
DOWN_AFTER_MS = 1000  # Sentinel's down-after-milliseconds (failover-timeout is three times it)
CYCLES_AFTER = 5  # cycles written after the held ones, before the books are closed
PROFILES = "/apis/ballast.tightlinesoftware.com/v1/workloadprofiles"


@pytest.fixture
def group(tmp_path: Path) -> Iterator[SentinelGroup]:
    sentinels = SentinelGroup(
        redis_server_or_skip(), tmp_path, down_after_ms=DOWN_AFTER_MS, password=secrets.token_hex(16)
    )  # the password is found in the replica's --store URL and looked for in its log by the operator fixture
    try:
        sentinels.start()
        yield sentinels
    finally:
        sentinels.stop()


def profile(cluster: MiniCluster) -> dict[str, Any] | None:
    """The test's WorkloadProfile (its name carries a hash of the namespace), or None before it exists."""
    for item in cluster.env.rest.get(PROFILES).get("items") or []:
        if item["metadata"]["name"].startswith(f"{NAME}--api--"):
            return dict(item)
    return None


def cpu_samples(status: dict[str, Any]) -> int:
    """The cpu sample count in a profile's status (0 before any)."""
    for container in status.get("containers") or []:
        for stats in container.get("usageStats") or []:
            if stats.get("resource") == "cpu":
                return int(stats.get("samples") or 0)
    return 0


def status_samples(cluster: MiniCluster) -> int:
    """The cpu sample count in the profile's status, as the operator last wrote it (0 before any)."""
    try:
        found = profile(cluster)
    except APIError:  # a transient API answer: nothing known yet
        return 0
    return cpu_samples((found or {}).get("status") or {})


def total(replica: Ballastd, family: str, **labels: str) -> float:
    """The sum of every sample of `family` carrying `labels` (0 when there is none)."""
    wanted = [f'{key}="{value}"' for key, value in labels.items()]
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in replica.metrics().splitlines()
        if line.startswith((family + "{", family + " ")) and all(label in line for label in wanted)
    )


def served_usage(cluster: MiniCluster, namespace: str) -> dict[str, int]:
    """The usage metrics.k8s.io serves for the test's one pod's container `app`, in store units."""
    (item,) = cluster.env.rest.get(f"/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods")["items"]
    (container,) = [c for c in item["containers"] if c["name"] == "app"]
    return {resource: to_units(quantity, resource) for resource, quantity in container["usage"].items()}


def books_balance(replica: Ballastd, store: HistoryStore, key: SeriesKey) -> tuple[float, int, int]:
    """(cpu samples the collector counted as written, samples stored, distinct sample times stored), read between
    two equal readings of the counter, so no cycle lands in between."""
    for _ in range(100):
        before = total(replica, "ballast_samples_collected_total", resource="cpu", source=SOURCE)
        series = store.read(key, with_times=True)
        if total(replica, "ballast_samples_collected_total", resource="cpu", source=SOURCE) == before:
            return before, len(series.values), len(set(series.times_s or ()))
    raise AssertionError("the collector's counter never held still for one store read")


def test_the_store_primary_killed_under_collection_loses_no_sample(
    cluster: MiniCluster, operator: Operator, group: SentinelGroup
) -> None:
    namespace = create_namespace(cluster, "store-failover")
    usage = {usage_annotation("cpu", "app"): "150m", usage_annotation("memory", "app"): "80Mi"}
    body = deployment(NAME, replicas=1, cpu="500m", labels={**IDENTITY, MODE_LABEL: "measure"}, annotations=usage)
    cluster.env.rest.create(f"/apis/apps/v1/namespaces/{namespace}/deployments", body)
    with Replicas(cluster, operator, group.url, count=1) as replicas, open_store(group.url, min_replicas=0) as store:
        (replica,) = replicas.replicas
        assert replica is not None
        poll_until(lambda: status_samples(cluster) >= 4, timeout=180, interval=0.5, what="4 samples in the status",
                   last_error=replica.output)  # fmt: skip
        found = profile(cluster)
        assert found is not None
        key = SeriesKey(found["status"]["measurementHash"], "app", "cpu")
        old_port = group.primary_port()

        group.server_on(old_port).kill()  # SIGKILL: whatever it had not sent to a replica dies with it
        killed = time.monotonic()
        held_peak, promoted, first_write = 0.0, 0.0, 0.0
        last_status: dict[str, Any] | None = None
        while not first_write:
            held = total(replica, "ballast_history_cycles_buffered")
            held_peak = max(held_peak, held)
            if not promoted and group.primary_port() != old_port:
                promoted = time.monotonic()
            status = (profile(cluster) or {})["status"]  # read before the counter: no write yet, no new status
            if total(replica, "ballast_history_writes_retried_total", source=SOURCE) > 0:
                first_write = time.monotonic()
            elif last_status is not None:
                assert status["containers"] == last_status["containers"], "the status moved with no primary"
            elif held:  # a cycle failed: the ones before it are done, status included
                last_status = status
            assert time.monotonic() - killed < 60, f"no held cycle written 60 s after the kill\n{replica.output()}"
            time.sleep(0.05)
        assert last_status is not None, "no cycle was held: the kill was not under collection"
        new_port = group.wait_for_new_primary(old_port)
        promoted = promoted or time.monotonic()
        samples_then = cpu_samples(last_status)
        poll_until(lambda: status_samples(cluster) > samples_then, timeout=30, interval=0.05,
                   what="the status to move after the promotion", last_error=replica.output)  # fmt: skip
        status_resumed = time.monotonic() - promoted
        written = total(replica, "ballast_samples_collected_total", resource="cpu", source=SOURCE)
        poll_until(lambda: total(replica, "ballast_samples_collected_total", resource="cpu", source=SOURCE)
                   >= written + CYCLES_AFTER, timeout=60, interval=0.2, what=f"{CYCLES_AFTER} more cycles written",
                   last_error=replica.output)  # fmt: skip

        counted, stored, distinct_times = books_balance(replica, store, key)
        values = set(store.read(key).values)
        memory = set(store.read(SeriesKey(key.measurement_hash, "app", "memory")).values)
        served = served_usage(cluster, namespace)
        retried = total(replica, "ballast_history_writes_retried_total", source=SOURCE)
        dropped = total(replica, "ballast_history_cycles_dropped_total")
        held_after = total(replica, "ballast_history_cycles_buffered")
        primary = total(replica, "ballast_history_primary", address=f"127.0.0.1:{new_port}")
    assert new_port != old_port
    assert retried >= held_peak, f"{held_peak:.0f} cycles held, {retried:.0f} written after the promotion"
    assert (dropped, held_after) == (0, 0), "held cycles dropped, or still held"
    assert stored == counted, f"{counted:.0f} samples counted as written, {stored} stored"
    assert distinct_times == stored, f"{stored - distinct_times} cycles stored twice"  # one sample per cycle
    assert values == {served["cpu"]}, f"cpu stored {values}; served {served}"
    assert memory == {served["memory"]}, f"memory stored {memory}; served {served}"
    assert primary == 1, "ballast_history_primary does not name the promoted replica"
    assert status_resumed <= POLL_SECONDS + 1.0, f"the status moved {status_resumed:.1f} s after the promotion"
    record(
        "store_failover",
        {
            "samples_lost": int(counted - stored),
            "cycles_written_twice": stored - distinct_times,
            "promotion_seconds": round(promoted - killed, 2),
            "failover_seconds": round(first_write - killed, 2),
            "status_resumed_seconds": round(status_resumed, 2),
            "cycles_buffered": int(held_peak),
            "samples_checked": stored,
            "down_after_ms": DOWN_AFTER_MS,
            "poll_seconds": POLL_SECONDS,
        },
    )
