"""The history store's primary SIGKILLed under collection: `ballastd` collects one profile every second from the
real metrics-server into a Sentinel group (a primary, 2 replicas, 3 sentinels, `requirepass`, short Sentinel
timeouts) on the namespace's loopback, and the primary is killed with SIGKILL (docs/design.md, difference 67).
What is asserted: `tests/e2e/store_failover.py`; `tests/load/test_store_failover.py` does the same with 1,000 pods.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from ballast.internal.enrollment import MODE_LABEL
from ballast.runtime.envtest import MiniCluster, usage_annotation
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.figures import record
from tests.e2e.store_failover import Scene, cpu_samples, kill_primary_under_collection, statuses
from tests.e2e.support import Operator, Replicas, create_namespace, deployment
from tests.integration.redis_server import redis_server_or_skip
from tests.integration.redis_topology import SentinelGroup

NAME = "failover"
IDENTITY = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/component": "api"}
POLL_SECONDS = 1.0  # the suite's MetricsSource pollInterval
DOWN_AFTER_MS = 1000  # Sentinel's down-after-milliseconds (failover-timeout is three times it)


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


def test_the_store_primary_killed_under_collection_loses_no_sample(
    cluster: MiniCluster, operator: Operator, group: SentinelGroup
) -> None:
    namespace = create_namespace(cluster, "store-failover")
    usage = {usage_annotation("cpu", "app"): "150m", usage_annotation("memory", "app"): "80Mi"}
    body = deployment(NAME, replicas=1, cpu="500m", labels={**IDENTITY, MODE_LABEL: "measure"}, annotations=usage)
    cluster.env.rest.create(f"/apis/apps/v1/namespaces/{namespace}/deployments", body)
    scene = Scene(f"{NAME}--api--", profiles=1, pods_per_profile=1, namespaces=[namespace], poll_seconds=POLL_SECONDS)
    with Replicas(cluster, operator, group.url, count=1) as replicas:
        (replica,) = replicas.replicas
        assert replica is not None
        poll_until(lambda: any(cpu_samples(s) >= 4 for s in statuses(cluster, scene.prefix).values()), timeout=180,
                   interval=0.5, what="4 samples in the status", last_error=replica.output)  # fmt: skip
        figures = kill_primary_under_collection(cluster, replica, group, scene)
    record("store_failover", {**figures, "down_after_ms": DOWN_AFTER_MS})
