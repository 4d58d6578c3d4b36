"""The collector on a real kube-apiserver: PodMetrics through the aggregation layer with the mode-label selector,
samples in the history store, status applied next to the other lanes' fields, the poll interval honoured,
recommendations of 0 or above the nodes' allocatable left out, and (in the private network) ephemeral-storage from a
fake kubelet through the node proxy."""

from __future__ import annotations

import itertools
import statistics
from typing import Any

import orjson
import pytest

from ballast.api.ballast.v1.workloadprofile import WorkloadProfileStatus
from ballast.internal.enrollment import MODE_LABEL
from ballast.internal.history import HistoryStore, SeriesKey
from ballast.internal.history.keys import first_seen_key, values_key
from ballast.internal.naming import measurement_hash, policy_key
from ballast.internal.stats.applicable import ready_recommendations
from ballast.runtime.envtest import Environment, json_handler
from tests.integration.controllers.collector.conftest import Cluster, MetricsServer, RunOperator, eventually

READINESS = {"minDataPoints": 2, "minTimeSpan": "1s"}


def by_type(profile: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in profile.get("status", {}).get("conditions", [])}


def usage(profile: dict[str, Any], container: str, resource: str) -> dict[str, Any] | None:
    for entry in profile.get("status", {}).get("containers", []):
        if entry["name"] == container:
            for stats in entry.get("usageStats", []):
                if stats["resource"] == resource:
                    return dict(stats)
    return None


def measured_profile(cluster: Cluster, metrics_server: MetricsServer) -> tuple[str, str, str]:
    """A source polled every second, a policy, a profile and its pods; returns (source, profile, hash)."""
    source, policy, app = f"metrics-{cluster.suffix}", f"policy-{cluster.suffix}", f"api-{cluster.suffix}"
    cluster.source(source, "kubernetesMetrics", poll="1s")
    cluster.policy(policy, [
        {"resource": "cpu", "field": "request", "source": source, "aggregation": "p95"},
        {"resource": "memory", "field": "limit", "source": source, "aggregation": "max", "headroom": "1.5"},
    ], READINESS)  # fmt: skip
    profile = f"{app}--{policy}"
    hash_ = measurement_hash({"app": app}, policy_key("ClusterResourcePolicy", "", policy))
    cluster.profile(profile, policy, hash_, app)
    enrolled = {"app": app, MODE_LABEL: "measure"}
    cluster.pod("api-1", enrolled, profile, sidecars=("proxy",), inits=("migrate",))
    cluster.pod("plain", {"app": app}, None)
    usage = {"app": {"cpu": "250m", "memory": "100Mi"}, "proxy": {"cpu": "10m", "memory": "20Mi"},
             "migrate": {"cpu": "1", "memory": "1Mi"}}  # fmt: skip
    metrics_server.set_pod(cluster.namespace, "api-1", enrolled, usage)
    metrics_server.set_pod(cluster.namespace, "plain", {"app": app}, {"app": {"cpu": "1", "memory": "1Mi"}})
    return source, profile, hash_


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
def test_the_collector_measures_through_the_aggregated_api_and_applies_its_status(
    backend: str, request: pytest.FixtureRequest, cluster: Cluster, metrics_server: MetricsServer,
    run_operator: RunOperator,
) -> None:  # fmt: skip
    redis_server: Any = None
    if backend == "redis":
        store, redis_server = request.getfixturevalue("redis_store")
    else:
        store = request.getfixturevalue("sqlite_store")
    _, profile, hash_ = measured_profile(cluster, metrics_server)

    run_operator(store)
    ready = eventually(
        lambda: (p := cluster.get_profile(profile)).get("status", {}).get("meetsThreshold") and p,
        "the profile to become Sufficient",
    )

    status = ready["status"]
    assert status["state"] == "Sufficient"
    assert [c["name"] for c in status["containers"]] == ["app", "proxy"]  # the init container is never measured
    app = {c["name"]: c for c in status["containers"]}["app"]
    assert app["recommendations"] == {"cpu": {"request": "250m"}, "memory": {"limit": "150Mi"}}
    conditions = by_type(ready)
    assert conditions["Ready"]["status"] == "True"
    assert conditions["Ready"]["reason"] == "SamplesCollected"
    # server-side apply: the other lanes' fields and their condition are still there
    assert conditions["Orphaned"]["status"] == "False"
    assert status["activeWorkloads"] == 1
    assert status["measurementHash"] == hash_
    owners = {
        entry["manager"]: orjson.dumps(entry.get("fieldsV1")).decode() for entry in ready["metadata"]["managedFields"]
    }
    assert '"f:containers"' in owners["ballast-collector"]
    assert '"k:{\\"type\\":\\"Ready\\"}"' in owners["ballast-collector"]
    assert '"f:activeWorkloads"' not in owners["ballast-collector"]
    # the backend was asked for enrolled pods only; the unenrolled pod's metrics never came back
    assert all(f"labelSelector={MODE_LABEL.replace('/', '%2F')}" in path for _, path in metrics_server.lists)
    series = store.read(SeriesKey(hash_, "app", "cpu"))
    assert series.values[:2] == (250, 250)
    assert not store.read(SeriesKey(hash_, "migrate", "cpu")).values
    if redis_server is not None:  # the Go operator's keys, readable by it after a migration back
        keys = redis_server.client()
        assert keys.lrange(values_key(SeriesKey(hash_, "app", "memory")), 0, 0) == [str(100 << 20)]
        assert keys.get(first_seen_key(SeriesKey(hash_, "app", "memory"))) is not None


def test_the_poll_interval_is_honoured(
    cluster: Cluster, metrics_server: MetricsServer, run_operator: RunOperator, sqlite_store: HistoryStore
) -> None:
    source, profile, _ = measured_profile(cluster, metrics_server)
    cluster.rest.apply(
        f"/apis/ballast.tightlinesoftware.com/v1/metricssources/{source}",
        {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "MetricsSource", "metadata": {"name": source},
         "spec": {"type": "kubernetesMetrics", "config": {"pollInterval": "2s"}}},
    )  # fmt: skip
    before = len(metrics_server.lists)

    run_operator(sqlite_store)
    eventually(lambda: len(metrics_server.lists) - before >= 4, "four polls", timeout=20)

    times = [at for at, _ in metrics_server.lists[before:]]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    assert 1.7 <= statistics.median(gaps) <= 2.6, gaps  # 2 s between polls, not less (and not capped)
    samples = eventually(lambda: (u := usage(cluster.get_profile(profile), "app", "cpu")) and u["samples"] >= 3 and u,
                         "samples from several cycles")  # fmt: skip
    assert samples["source"] == source


def test_a_recommendation_of_0_or_above_the_nodes_allocatable_is_not_applied(
    cluster: Cluster, metrics_server: MetricsServer, run_operator: RunOperator, sqlite_store: HistoryStore
) -> None:
    """docs/design.md, difference 25: the values are left out of the status admission and resize read, and the
    `Ready` message says why."""
    source, policy, app = f"metrics-{cluster.suffix}", f"policy-{cluster.suffix}", f"big-{cluster.suffix}"
    node = f"node-{cluster.suffix}"
    cluster.create("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}})
    cluster.rest.patch_status(f"/api/v1/nodes/{node}", {"status": {"allocatable": {"cpu": "2", "memory": "1Gi"}}})
    cluster.source(source, "kubernetesMetrics", poll="1s")
    cluster.policy(policy, [
        {"resource": "cpu", "field": "request", "source": source, "aggregation": "max"},
        {"resource": "memory", "field": "request", "source": source, "aggregation": "max", "headroom": "4"},
    ], READINESS)  # fmt: skip
    profile = f"{app}--{policy}"
    cluster.profile(
        profile, policy, measurement_hash({"app": app}, policy_key("ClusterResourcePolicy", "", policy)), app
    )
    enrolled = {"app": app, MODE_LABEL: "apply"}
    cluster.pod("big-1", enrolled, profile, node=node, containers=("app", "idle"))
    usage = {"app": {"cpu": "250m", "memory": "300Mi"}, "idle": {"cpu": "0", "memory": "10Mi"}}  # 300Mi × 4 > 1Gi
    metrics_server.set_pod(cluster.namespace, "big-1", enrolled, usage)

    run_operator(sqlite_store)
    ready = eventually(
        lambda: (p := cluster.get_profile(profile)).get("status", {}).get("meetsThreshold") and p,
        "the profile to become Sufficient",
    )

    containers = {c["name"]: c for c in ready["status"]["containers"]}
    assert containers["app"]["recommendations"] == {"cpu": {"request": "250m"}}
    assert containers["idle"]["recommendations"] == {"memory": {"request": "40Mi"}}
    applied = ready_recommendations(WorkloadProfileStatus.model_validate(ready["status"]))  # admission's and resize's
    assert {c: {r: v.to_wire() for r, v in rs.items()} for c, rs in applied.items()} == {
        "app": {"cpu": {"request": "250m"}}, "idle": {"memory": {"request": "40Mi"}},
    }  # fmt: skip
    condition = by_type(ready)["Ready"]
    assert (condition["status"], condition["reason"]) == ("True", "SamplesCollected")
    assert condition["message"] == (
        "All policy resources produced samples in the latest collection cycle; recommendations not applied: "
        "app memory request 1200Mi is above 1Gi, the largest allocatable memory of the nodes its pods ran on; "
        "idle cpu request 0 is 0"
    )


@pytest.mark.private_network
@pytest.mark.usefixtures("private_network")
def test_ephemeral_storage_comes_from_the_kubelets_hosting_enrolled_pods(
    envtest: Environment, cluster: Cluster, run_operator: RunOperator, sqlite_store: HistoryStore
) -> None:
    source, policy, app = f"kubelet-{cluster.suffix}", f"storage-{cluster.suffix}", f"db-{cluster.suffix}"
    busy, idle = f"busy-{cluster.suffix}", f"idle-{cluster.suffix}"
    summary = {
        "node": {"nodeName": busy},
        "pods": [
            {"podRef": {"name": "db-1", "namespace": cluster.namespace, "uid": "u1"},
             "containers": [{"name": "db"}, {"name": "backup"}], "ephemeral-storage": {"usedBytes": 3001}},
            {"podRef": {"name": "other", "namespace": cluster.namespace, "uid": "u2"},
             "containers": [{"name": "x"}], "ephemeral-storage": {"usedBytes": 99}},
        ],
    }  # fmt: skip
    busy_handler = json_handler({"/stats/summary": summary})
    idle_handler = json_handler({"/stats/summary": {"pods": []}})
    cluster.source(source, "kubeletSummary", poll="1s")
    cluster.policy(policy, [{"resource": "ephemeral-storage", "field": "request", "source": source,
                             "aggregation": "max"}], READINESS)  # fmt: skip
    profile = f"{app}--{policy}"
    hash_ = measurement_hash({"app": app}, policy_key("ClusterResourcePolicy", "", policy))
    cluster.profile(profile, policy, hash_, app)
    cluster.pod("db-1", {"app": app, MODE_LABEL: "apply"}, profile, node=busy, containers=("db",), sidecars=("backup",))
    cluster.pod("other", {"app": "x"}, None, node=idle)

    with envtest.serve_kubelet(busy, busy_handler), envtest.serve_kubelet(idle, idle_handler):
        try:
            run_operator(sqlite_store)
            found = eventually(
                lambda: (p := cluster.get_profile(profile)).get("status", {}).get("meetsThreshold") and p,
                "ephemeral-storage to become ready",
            )
        finally:
            for node in (busy, idle):
                envtest.rest.delete(f"/api/v1/nodes/{node}")

    stats = usage(found, "db", "ephemeral-storage")
    assert stats is not None
    assert stats["p50"] == "1.46Ki"  # 3001 // 2 containers = 1500 bytes each
    assert by_type(found)["Ready"]["status"] == "True"
    assert sqlite_store.read(SeriesKey(hash_, "backup", "ephemeral-storage")).values[0] == 1500
    assert ("GET", "/stats/summary") in busy_handler.requests
    assert idle_handler.requests == []  # no enrolled pod there: never called
