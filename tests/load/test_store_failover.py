"""Load: the history store's Sentinel primary SIGKILLed while `ballastd` collects 1,000 pods (100 profiles of
10 pods, kwok usage served by the real metrics-server) into a Sentinel group (a primary, 2 replicas, 3
sentinels, `requirepass`) on the namespace's loopback (docs/design.md, difference 67). The outcomes asserted are
`tests/e2e/store_failover.py`'s, as in the e2e scenario with one profile; the figures go to RELIABILITY.md.

`BALLAST_LOAD_STORE_PODS` runs it with fewer pods (a multiple of 10), e.g. on a machine that cannot hold 1,000;
the figures say how many.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest

from ballast.internal.enrollment import MODE_LABEL
from ballast.runtime.envtest import MiniCluster, usage_annotation
from ballast.runtime.envtest.ports import suggest_port
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.figures import record
from tests.e2e.store_failover import Scene, collector_log, cpu_samples, kill_primary_under_collection, statuses
from tests.e2e.support import MountedSecret, Operator, Replicas, create_namespace
from tests.integration.internal.cmd.ballastd.conftest import install_operator_objects
from tests.integration.redis_server import redis_server_or_skip
from tests.integration.redis_topology import SentinelGroup
from tests.load.conftest import NODES
from tests.load.pods import count_running, create_all, pod

PODS = int(os.environ.get("BALLAST_LOAD_STORE_PODS", "1000"))
PODS_PER_PROFILE = 10
NAMESPACES = 10
POLL = "2s"  # a cycle of 1,000 pods takes most of a second on two shared cores: the interval leaves room
POLL_SECONDS = 2.0
DOWN_AFTER_MS = 6000  # longer than a cycle of 1,000 pods here (3-4 s), so one falls in the outage
PREFIX = "storefo-"
ELECTION = ["--leader-elect-lease-duration=15", "--leader-elect-renew-deadline=10", "--leader-elect-retry-period=2"]
"""The defaults: the e2e suite's short lease is lost under this load, and the held cycles with it (counted)."""


@pytest.fixture
def group(tmp_path: Path) -> Iterator[SentinelGroup]:
    sentinels = SentinelGroup(
        redis_server_or_skip(), tmp_path, down_after_ms=DOWN_AFTER_MS, password=secrets.token_hex(16)
    )
    try:
        sentinels.start()
        yield sentinels
    finally:
        sentinels.stop()


def test_the_store_primary_killed_under_collection_of_1000_pods_loses_no_sample(
    cluster: MiniCluster, group: SentinelGroup, tmp_path: Path
) -> None:
    assert PODS % PODS_PER_PROFILE == 0, f"BALLAST_LOAD_STORE_PODS {PODS} must be a multiple of {PODS_PER_PROFILE}"
    env = cluster.env
    install_operator_objects(env)
    env.rest.apply(
        "/apis/ballast.tightlinesoftware.com/v1/metricssources/kubernetes-metrics",
        {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "MetricsSource",
         "metadata": {"name": "kubernetes-metrics"},
         "spec": {"type": "kubernetesMetrics", "config": {"pollInterval": POLL, "reservoirSize": 100_000}}},
    )  # fmt: skip  # every sample of the run stays in the reservoir, so the books can be balanced
    profiles = PODS // PODS_PER_PROFILE
    namespaces = [create_namespace(cluster, f"store-failover-{i}") for i in range(NAMESPACES)]
    usage = {usage_annotation("cpu", "app"): "150m", usage_annotation("memory", "app"): "80Mi"}
    bodies = []
    for i in range(PODS):
        labels = {"app.kubernetes.io/name": f"{PREFIX}{i % profiles}", "app.kubernetes.io/component": "api",
                  MODE_LABEL: "measure"}  # fmt: skip
        body = pod(f"{PREFIX}{i}", namespaces[i % NAMESPACES], f"kwok-node-{i % NODES}", labels, "100m")
        body["metadata"]["annotations"] = usage
        bodies.append(body)
    create_all(env, bodies)
    poll_until(lambda: count_running(env, namespaces) == PODS, timeout=600, interval=2,
               what=f"{PODS} pods Running")  # fmt: skip

    secret = MountedSecret(env, tmp_path / "webhook-certs", hosts=("localhost", "127.0.0.1"))
    port = suggest_port()
    stand_in = Operator(env, tmp_path, [f"--store=sqlite:///{tmp_path / 'history.db'}",
                                        f"--webhook-bind-address=127.0.0.1:{port}",
                                        f"--webhook-cert-path={secret.directory}"], port, secret)  # fmt: skip
    scene = Scene(f"{PREFIX}", profiles, PODS_PER_PROFILE, namespaces, POLL_SECONDS)
    try:
        with Replicas(cluster, stand_in, group.url, count=1, args=ELECTION) as replicas:
            (replica,) = replicas.replicas
            assert replica is not None

            def measured() -> bool:
                found = statuses(cluster, scene.prefix)
                return len(found) == profiles and all(cpu_samples(s) >= 2 * PODS_PER_PROFILE for s in found.values())

            poll_until(measured, timeout=600, interval=2, what=f"{profiles} profiles with samples",
                       last_error=lambda: collector_log(replica))  # fmt: skip
            figures = kill_primary_under_collection(cluster, replica, group, scene)
            log = replica.log()
    finally:
        stand_in.stop()
    assert group.password is not None
    assert group.password not in log, "the Redis password is in ballastd's log"
    record("store_failover_load", {**figures, "pods": PODS, "down_after_ms": DOWN_AFTER_MS})
