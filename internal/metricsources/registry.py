"""Which plugin serves which MetricsSource `spec.type` (the Go operator implements two; unknown types are skipped)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from ballast.runtime.client import APIServerClient

from . import kubelet_summary, kubernetes_metrics
from .base import Source

SourceFactory = Callable[[APIServerClient], Source]
"""Builds a source from the live client (the manager's `api_reader`)."""

SOURCE_TYPES: Mapping[str, SourceFactory] = MappingProxyType(
    {
        kubernetes_metrics.TYPE: kubernetes_metrics.KubernetesMetricsSource,
        kubelet_summary.TYPE: lambda client: kubelet_summary.KubeletSummarySource(client.transport),
    }
)
