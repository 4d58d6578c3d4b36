"""The `kubernetesMetrics` source: cpu and memory from metrics.k8s.io PodMetrics (metrics-server).

One LIST per cycle, all namespaces, with `labelSelector=<mode label>`: metrics-server honours label selectors, so
the answer scales with enrolled pods, not with the cluster (docs/design.md, difference 16; the Go operator lists
every PodMetrics in the cluster and filters client-side, docs/compatibility.md). One sample per pod, container
and resource in `usage`, in integer units.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ballast.internal.enrollment import MODE_LABEL
from ballast.internal.quantity import QuantityError
from ballast.runtime import APIStatusError, Client
from ballast.runtime.restmapper import NoKindMatchError

from .base import FetchError, FetchResult, FetchTarget, UsageSample
from .units import usage_units

TYPE = "kubernetesMetrics"
POD_METRICS = "metrics.k8s.io/v1beta1/PodMetrics"


class KubernetesMetricsSource:
    """Lists PodMetrics of enrolled pods through the API server (the aggregated metrics.k8s.io API).

    `client` must read live (the manager's `api_reader`): PodMetrics cannot be watched, so they are never cached.
    """

    def __init__(self, client: Client, *, label_selector: str = MODE_LABEL) -> None:
        self._client = client
        self._label_selector = label_selector

    def fetch(self, target: FetchTarget) -> FetchResult:
        """One LIST of PodMetrics. Raises `FetchError` when the API fails or the answer is not PodMetrics."""
        try:
            listed = self._client.list(POD_METRICS, label_selector=self._label_selector)
        except (APIStatusError, NoKindMatchError, ConnectionError, TimeoutError, ValueError) as exc:
            raise FetchError(f"listing {POD_METRICS}: {exc}") from exc
        problems: list[str] = []
        samples = list(_samples(listed.items, target.now_ms, problems))
        return FetchResult(samples, problems)


def _samples(items: Iterable[Any], now_ms: int, problems: list[str]) -> Iterable[UsageSample]:
    for item in items:
        if not isinstance(item, Mapping):
            raise FetchError(f"{POD_METRICS}: list item is not an object: {item!r:.80}")
        meta = item.get("metadata") or {}
        namespace, pod = meta.get("namespace") or "", meta.get("name") or ""
        for container in item.get("containers") or ():
            name = container.get("name") or ""
            for resource, quantity in (container.get("usage") or {}).items():
                try:
                    value = usage_units(quantity, resource)
                except (QuantityError, TypeError) as exc:
                    problems.append(f"{namespace}/{pod} container {name} {resource}: {exc}")
                    continue
                if value >= 0:
                    yield UsageSample(namespace, pod, name, resource, value, now_ms)
