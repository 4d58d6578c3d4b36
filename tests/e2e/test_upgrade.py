"""Scenario 6: a rolling upgrade of a 2-replica operator under admission load. One replica is taken out (out of
the EndpointSlice, a drain pause, SIGTERM), started again with a new flag, then the other; meanwhile 200
enrolled pod admissions per second go through the API server, and `ballastd apply-crds` runs over the
installed CRDs, as an upgrade's hook would. The CRDs were installed the way a release installs them (`apply-crds`,
so its field manager owns them) and the team-zones sample policies are stored before the upgrade begins.

Asserted: zero failed admissions; never two leaders at one sample, and a leader again at the end; apply-crds
changes no CRD (their resourceVersions stay) and every stored Ballast object keeps its resourceVersion too.
"""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from ballast.runtime.envtest import MiniCluster
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.figures import record
from tests.e2e.load import AdmissionLoad
from tests.e2e.support import Operator, Replicas, create_namespace
from tests.e2e.test_failover import LeaderSamples
from tests.integration.redis_server import RedisServer
from tests.paths import REPOSITORY

pytestmark = pytest.mark.alone  # 200 admissions a second, and its rate and p99 go to RELIABILITY.md
RATE = 200.0
NEW_FLAG = "--stats-refresh-fraction=0.2"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
OURS = ("ballast.tightlinesoftware.com", "kupid.gardener.cloud", "balancer.x-k8s.io")


def versions(cluster: MiniCluster) -> dict[str, str]:
    """resourceVersion of every CRD of ours and of every object of its kinds."""
    seen: dict[str, str] = {}
    for crd in cluster.env.rest.get(CRDS)["items"]:
        group = crd["spec"]["group"]
        if group not in OURS:
            continue
        seen[crd["metadata"]["name"]] = crd["metadata"]["resourceVersion"]
        version = next(v["name"] for v in crd["spec"]["versions"] if v.get("storage"))
        for item in cluster.env.rest.get(f"/apis/{group}/{version}/{crd['spec']['names']['plural']}")["items"]:
            meta = item["metadata"]
            seen[f"{crd['metadata']['name']}/{meta.get('namespace', '')}/{meta['name']}"] = meta["resourceVersion"]
    return seen


def apply_crds(cluster: MiniCluster) -> None:
    applied = subprocess.run(
        [sys.executable, "-m", "ballast.internal.cmd.ballastd", "apply-crds",
         f"--kubeconfig={cluster.env.kubeconfig_path}"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert applied.returncode == 0, applied.stderr[-2000:]


def settled(cluster: MiniCluster) -> dict[str, str]:
    """versions() once two readings a second apart agree (the controllers have written their statuses)."""
    readings = [versions(cluster)]

    def steady() -> bool:
        time.sleep(1)
        readings.append(versions(cluster))
        return readings[-1] == readings[-2]

    poll_until(steady, timeout=60, what="the stored objects to settle")
    return readings[-1]


def test_a_rolling_upgrade_under_admission_load_fails_no_admission_and_keeps_one_leader(
    cluster: MiniCluster, operator: Operator, redis: RedisServer
) -> None:
    env = cluster.env
    namespace = create_namespace(cluster, "upgrade-load")
    apply_crds(cluster)  # as the release being upgraded installed them
    env.kubectl("apply", "-k", str(REPOSITORY / "config" / "samples" / "team-zones"))
    with Replicas(cluster, operator, redis.url) as replicas, LeaderSamples(replicas) as leaders:
        poll_until(lambda: len(replicas.leaders()) == 1, timeout=30, what="one leader")
        with AdmissionLoad(env, namespace, rate=RATE) as load:
            poll_until(lambda: load.sent >= RATE * 2, timeout=30, what="2 s of load first")
            for index in range(2):
                replicas.stop_gracefully(index)
                replicas.start(index, [NEW_FLAG])
                replicas.wait_ready(index)
                poll_until(lambda: len(replicas.leaders()) == 1, timeout=30, what="a leader after the restart")
            before = settled(cluster)
            apply_crds(cluster)
            after = versions(cluster)
        assert all(NEW_FLAG in list(r.process.args) for r in replicas.replicas if r is not None)  # type: ignore[arg-type]
    assert load.failures == [], load.failures[:5]
    assert max(len(sample) for _, sample in leaders.samples) == 1, "two leaders at once"
    changed = sorted(key for key in before if after.get(key) != before[key])
    assert changed == [], f"apply-crds changed {changed}"
    record("rolling_upgrade", {"admissions": load.sent, "failed": load.failed, "max_leaders": 1,
                               "rate_per_second": round(load.sent / load.elapsed), "p99_ms": round(load.p99() * 1e3, 1),
                               "objects_unchanged_by_apply_crds": len(before)})  # fmt: skip
