"""Scenario 4: the history store goes away. `ballastd` on Redis (with `requirepass`) collects from the real
metrics-server; Redis is stopped for several collection cycles and started again from its append-only file,
then paused (SIGSTOP: connections accepted, nothing answered) as a Redis that answers slowly would be.

Asserted: the cycles in between are skipped with a logged, counted error (`ballast_store_errors_total`); the
profile keeps its last status meanwhile; no stored sample is lost (the profile's sample count never drops);
collection resumes once Redis is back; the paused Redis costs bounded time per call (no thread pile-up in
the operator); and the Redis password never appears in the operator's logs.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ballast.internal.enrollment import MODE_LABEL
from ballast.runtime.envtest import MiniCluster, usage_annotation
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.figures import record
from tests.e2e.support import Operator, Replicas, create_namespace, deployment
from tests.integration.redis_server import RedisServer, redis_server_or_skip

PASSWORD = "e2e-redis-secret-7Qx"  # a throw-away password, looked for in every log line afterwards
IDENTITY = {"app.kubernetes.io/name": "outage", "app.kubernetes.io/component": "api"}
PROFILE = "outage--api--default-a9696153"
OUTAGE_SECONDS = 8.0  # several 1 s collection cycles


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(redis_server_or_skip(), tmp_path, password=PASSWORD)
    server.start()
    yield server
    server.stop()


def status(cluster: MiniCluster) -> dict[str, Any]:
    profile = cluster.env.rest.get(f"/apis/ballast.tightlinesoftware.com/v1/workloadprofiles/{PROFILE}")
    return dict(profile.get("status") or {})


def samples(cluster: MiniCluster) -> int:
    """The cpu sample count of the profile's container, as the operator last wrote it (0 before any)."""
    try:
        containers = status(cluster).get("containers") or []
    except APIError:  # the profile is not created yet: no samples yet
        return 0
    for container in containers:
        for stats in container.get("usageStats") or []:
            if stats.get("resource") == "cpu":
                return int(stats.get("samples") or 0)
    return 0


def threads(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    raise AssertionError(f"no Threads line for pid {pid}")


def test_a_redis_outage_skips_cycles_loses_no_sample_and_collection_resumes(
    cluster: MiniCluster, operator: Operator, redis: RedisServer
) -> None:
    env = cluster.env
    namespace = create_namespace(cluster, "redis-outage")
    usage = {usage_annotation("cpu", "app"): "150m", usage_annotation("memory", "app"): "80Mi"}
    body = deployment("outage", replicas=2, cpu="500m", labels={**IDENTITY, MODE_LABEL: "measure"}, annotations=usage)
    env.rest.create(f"/apis/apps/v1/namespaces/{namespace}/deployments", body)
    with Replicas(cluster, operator, redis.url, count=1) as replicas:
        (replica,) = replicas.replicas
        assert replica is not None
        poll_until(lambda: samples(cluster) >= 4, timeout=180, interval=1.0, what="4 samples stored",
                   last_error=replica.output)  # fmt: skip
        threads_before = threads(replica.process.pid)

        # Stopped: cycles skipped and counted, the last status kept.
        redis.stop()
        stopped_at = time.monotonic()
        before = samples(cluster)
        last_status = status(cluster)
        errors_before = replica.metric("ballast_store_errors_total", operation="write")
        time.sleep(OUTAGE_SECONDS)
        errors_during = replica.metric("ballast_store_errors_total", operation="write")
        assert status(cluster)["containers"] == last_status["containers"]
        redis.start()
        back = time.monotonic()
        poll_until(lambda: samples(cluster) > before, timeout=60, interval=0.5,
                   what="a sample written after Redis came back", last_error=replica.output)  # fmt: skip
        resumed = time.monotonic() - back
        assert errors_during > errors_before, "the outage was never counted"
        assert samples(cluster) > before  # nothing stored was lost: the count went on from where it was

        # Paused: every call bounded by the store timeout; the operator's threads do not pile up.
        redis.pause()
        peak = threads_before
        try:
            deadline = time.monotonic() + OUTAGE_SECONDS
            while time.monotonic() < deadline:
                peak = max(peak, threads(replica.process.pid))
                time.sleep(0.2)
            assert replica.process.poll() is None
        finally:
            redis.resume()
        after_pause = samples(cluster)
        poll_until(lambda: samples(cluster) > after_pause, timeout=60, interval=0.5,
                   what="collection to resume after the pause")  # fmt: skip
        log = "\n".join(run.log_path.read_text(errors="replace") for run in operator.replica_runs)
    assert peak <= threads_before + 4, f"threads grew from {threads_before} to {peak} while Redis hung"
    assert PASSWORD not in log
    record("redis_outage", {"outage_seconds": OUTAGE_SECONDS, "skipped_cycles": int(errors_during - errors_before),
                            "samples_lost": 0, "resume_seconds": round(resumed, 1),
                            "outage_started_to_resumed_seconds": round(time.monotonic() - stopped_at, 1),
                            "threads_before": threads_before, "threads_peak_while_paused": peak})  # fmt: skip
