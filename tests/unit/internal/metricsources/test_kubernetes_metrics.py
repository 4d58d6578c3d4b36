"""The kubernetesMetrics source on the in-memory API server: one label-selected LIST of PodMetrics per cycle."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ballast.internal.enrollment import MODE_LABEL
from ballast.internal.metricsources import SOURCE_TYPES, FetchError, FetchTarget, KubernetesMetricsSource, UsageSample
from ballast.runtime import FakeAPI, GroupVersionKind
from ballast.runtime.client import APIServerClient

POD_METRICS = GroupVersionKind("metrics.k8s.io", "v1beta1", "PodMetrics")


@pytest.fixture
def api() -> Iterator[FakeAPI]:
    fake = FakeAPI()
    fake.register(POD_METRICS, "pods", namespaced=True, status=False)
    yield fake
    fake.close()


def pod_metrics(name: str, namespace: str, labels: dict[str, str], **usage: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "metrics.k8s.io/v1beta1",
        "kind": "PodMetrics",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "timestamp": "2026-03-01T12:00:00Z",
        "window": "15s",
        "containers": [{"name": container, "usage": values} for container, values in usage.items()],
    }


def test_lists_enrolled_pods_metrics_in_every_namespace_once(api: FakeAPI) -> None:
    client = api.client()
    client.create(pod_metrics("a", "shop", {MODE_LABEL: "measure"}, app={"cpu": "2290178n", "memory": "12345Ki"}))
    client.create(pod_metrics("b", "blog", {MODE_LABEL: "apply"}, web={"cpu": "5m"}))
    client.create(pod_metrics("c", "blog", {"app": "not-enrolled"}, web={"cpu": "7m"}))
    api.requests.clear()

    result = KubernetesMetricsSource(client).fetch(FetchTarget(now_ms=1_000))

    assert sorted(result.samples) == [
        UsageSample("blog", "b", "web", "cpu", 5, 1_000),
        UsageSample("shop", "a", "app", "cpu", 3, 1_000),
        UsageSample("shop", "a", "app", "memory", 12345 * 1024, 1_000),
    ]
    assert result.problems == []
    assert api.requests == [("GET", "/apis/metrics.k8s.io/v1beta1/pods")]  # one LIST, all namespaces


def test_an_unparsable_quantity_is_reported_and_skipped(api: FakeAPI) -> None:
    client = api.client()
    client.create(pod_metrics("a", "shop", {MODE_LABEL: "measure"}, app={"cpu": "lots", "memory": "1Mi"}))

    result = KubernetesMetricsSource(client).fetch(FetchTarget(now_ms=0))

    assert result.samples == [UsageSample("shop", "a", "app", "memory", 1 << 20, 0)]
    assert len(result.problems) == 1
    assert "shop/a container app cpu" in result.problems[0]


def test_an_api_without_metrics_is_a_fetch_error() -> None:
    api = FakeAPI()  # no metrics.k8s.io served
    with pytest.raises(FetchError, match="PodMetrics"):
        KubernetesMetricsSource(api.client()).fetch(FetchTarget(now_ms=0))


def test_the_registry_builds_sources_by_type(api: FakeAPI) -> None:
    client: APIServerClient = api.client()
    assert isinstance(SOURCE_TYPES["kubernetesMetrics"](client), KubernetesMetricsSource)
    assert "prometheus" not in SOURCE_TYPES
