"""kwok's configuration: the stock usage asked per container first, falling back to the stock expression."""

from __future__ import annotations

from ballast.runtime.envtest.kwok import usage_annotation, usage_per_container

STOCK = {
    "apiVersion": "kwok.x-k8s.io/v1alpha1",
    "kind": "ClusterResourceUsage",
    "metadata": {"name": "usage-from-annotation"},
    "spec": {"usages": [{"usage": {"cpu": {"expression": 'Quantity("1m")\n'}, "memory": {"expression": "X"}}}]},
}


def test_usage_annotations_name_the_resource_and_optionally_the_container() -> None:
    assert usage_annotation("cpu") == "kwok.x-k8s.io/usage-cpu"
    assert usage_annotation("memory", "sidecar") == "kwok.x-k8s.io/usage-memory-sidecar"


def test_each_resource_asks_the_containers_own_annotation_then_falls_back_to_the_stock_expression() -> None:
    usage = usage_per_container(STOCK)
    assert usage["metadata"] == {"name": "usage-per-container"}
    assert usage["kind"] == "ClusterResourceUsage"
    cpu = usage["spec"]["usages"][0]["usage"]["cpu"]["expression"]
    assert cpu == (
        '"kwok.x-k8s.io/usage-cpu-" + container.name in pod.metadata.annotations'
        ' ? Quantity(pod.metadata.annotations["kwok.x-k8s.io/usage-cpu-" + container.name])'
        ' : (Quantity("1m"))'
    )
    assert usage["spec"]["usages"][0]["usage"]["memory"]["expression"].endswith(": (X)")
    assert STOCK["metadata"] == {"name": "usage-from-annotation"}  # the stock object is left as it was
