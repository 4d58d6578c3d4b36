"""A MetricsSource stored with `pollInterval: banana` (before validation existed) on the real API server is not
polled, and the profile it feeds says so in its `Ready` condition instead of staying True (docs/design.md,
difference 26); fixing it resumes collection."""

from __future__ import annotations

import time
from typing import Any

from ballast.api.ballast.v1 import MetricsSource
from ballast.internal.enrollment import MODE_LABEL
from ballast.internal.history import HistoryStore
from ballast.internal.naming import measurement_hash, policy_key
from ballast.runtime.envtest import Environment
from tests.integration.controllers.collector.conftest import Cluster, MetricsServer, RunOperator, eventually
from tests.integration.lax_schema import store_invalid

BANANA = 'spec.config.pollInterval: invalid duration "banana": must be a Go duration such as "60s", "15m" or "1h30m"'


def _ready(cluster: Cluster, profile: str) -> dict[str, Any] | None:
    conditions = cluster.get_profile(profile).get("status", {}).get("conditions", [])
    found: dict[str, Any] | None = {c["type"]: c for c in conditions}.get("Ready")
    return found


def test_an_invalid_source_is_not_polled_and_its_profile_is_not_ready(
    envtest: Environment, cluster: Cluster, metrics_server: MetricsServer, run_operator: RunOperator,
    sqlite_store: HistoryStore,
) -> None:  # fmt: skip
    source, policy, app = f"metrics-{cluster.suffix}", f"policy-{cluster.suffix}", f"api-{cluster.suffix}"
    cluster.source(source, "kubernetesMetrics", poll="1s")
    cluster.policy(policy, [{"resource": "cpu", "field": "request", "source": source, "aggregation": "p95"}],
                   {"minDataPoints": 2, "minTimeSpan": "1s"})  # fmt: skip
    profile = f"{app}--{policy}"
    cluster.profile(
        profile, policy, measurement_hash({"app": app}, policy_key("ClusterResourcePolicy", "", policy)), app
    )
    enrolled = {"app": app, MODE_LABEL: "measure"}
    cluster.pod("api-1", enrolled, profile)
    metrics_server.set_pod(cluster.namespace, "api-1", enrolled, {"app": {"cpu": "250m", "memory": "100Mi"}})
    run_operator(sqlite_store)
    eventually(lambda: (c := _ready(cluster, profile)) and c["status"] == "True", "the profile Ready")

    store_invalid(envtest, MetricsSource, source, {"type": "kubernetesMetrics", "config": {"pollInterval": "banana"}})

    ready = eventually(lambda: (c := _ready(cluster, profile)) and c["status"] == "False" and c, "Ready=False")
    assert ready["reason"] == "InvalidSource"
    assert (
        ready["message"]
        == f'No samples in the latest collection cycle for: cpu; MetricsSource "{source}" is invalid: {BANANA}'
    )
    polled = len(metrics_server.lists)
    time.sleep(3)  # three of its former poll intervals
    assert len(metrics_server.lists) == polled

    cluster.rest.apply(f"/apis/ballast.tightlinesoftware.com/v1/metricssources/{source}", {
        "apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "MetricsSource", "metadata": {"name": source},
        "spec": {"type": "kubernetesMetrics", "config": {"pollInterval": "1s"}},
    }, field_manager="before-validation")  # fmt: skip
    eventually(lambda: (c := _ready(cluster, profile)) and c["status"] == "True", "Ready again once fixed")
    assert len(metrics_server.lists) > polled
