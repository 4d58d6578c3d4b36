"""Metric sources and collection: usage samples from the cluster, attributed to profiles, turned into status.

    source = new_source("kubernetesMetrics", manager.api_reader)          # or "kubeletSummary"
    polled = PolledSource("metrics-server", "kubernetesMetrics", source, clock)   # 1 s … 5 min backoff
    result = polled.fetch(FetchTarget(now_ms, nodes=frozenset({"node-a"})))       # FetchError on failure
    attributed = attribute(result.samples, pods)      # fail closed: unknown pods/containers/resources skipped

- `kubernetesMetrics` (cpu, memory): one LIST of metrics.k8s.io PodMetrics per cycle, label-selected to
  enrolled pods; `kubeletSummary` (ephemeral-storage): the Summary API of the nodes hosting enrolled pods.
- `attribution`: (namespace, pod, container, resource) → the profile's history series, through the cached pod.
- `usage`: a profile's `containers`, `meetsThreshold`, `state` and `Ready` condition from its series.
"""

from .attribution import Attribution, MeasuredPod, MeasuredProfile, PodKey, attribute, measured_pod
from .backoff import INITIAL_BACKOFF, MAX_BACKOFF, Backoff, PolledSource
from .base import BackingOffError, FetchError, FetchResult, FetchTarget, Source, UsageSample
from .kubelet_summary import KubeletSummarySource, summary_samples
from .kubernetes_metrics import KubernetesMetricsSource
from .registry import SOURCE_TYPES, SourceFactory, new_source
from .units import usage_units
from .usage import (
    ContainerState,
    Pair,
    PolicyView,
    ProfileStatus,
    ResourceStatus,
    is_stale,
    previously_missing,
    profile_status,
    ready_condition,
    resource_status,
    series_to_read,
    state_from_status,
)

__all__ = [
    "INITIAL_BACKOFF",
    "MAX_BACKOFF",
    "SOURCE_TYPES",
    "Attribution",
    "BackingOffError",
    "Backoff",
    "ContainerState",
    "FetchError",
    "FetchResult",
    "FetchTarget",
    "KubeletSummarySource",
    "KubernetesMetricsSource",
    "MeasuredPod",
    "MeasuredProfile",
    "Pair",
    "PodKey",
    "PolicyView",
    "PolledSource",
    "ProfileStatus",
    "ResourceStatus",
    "Source",
    "SourceFactory",
    "UsageSample",
    "attribute",
    "is_stale",
    "measured_pod",
    "new_source",
    "previously_missing",
    "profile_status",
    "ready_condition",
    "resource_status",
    "series_to_read",
    "state_from_status",
    "summary_samples",
    "usage_units",
]
