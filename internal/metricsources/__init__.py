"""Metric sources: usage samples of pods' containers as the cluster reports them, polled once per cycle.

    source = SOURCE_TYPES["kubernetesMetrics"](manager.api_reader)          # or "kubeletSummary"
    polled = PolledSource("metrics-server", "kubernetesMetrics", source, clock)   # 1 s … 5 min backoff
    result = polled.fetch(FetchTarget(now_ms, nodes=frozenset({"node-a"})))       # FetchError on failure

- `kubernetesMetrics` (cpu, memory): one LIST of metrics.k8s.io PodMetrics per cycle, label-selected to
  enrolled pods; `kubeletSummary` (ephemeral-storage): the Summary API of the nodes hosting enrolled pods.

`validate_metrics_source(spec)` lists what makes a MetricsSource unusable (an unknown type, a pollInterval that is
not a Go duration longer than 0), each problem named by its field path.

A source knows nothing of profiles: attributing samples to profiles and turning history into status is
`ballast.internal.collection`.
"""

from .backoff import INITIAL_BACKOFF, MAX_BACKOFF, Backoff, PolledSource
from .base import BackingOffError, FetchError, FetchResult, FetchTarget, Source, UsageSample
from .kubelet_summary import KubeletSummarySource, summary_samples
from .kubernetes_metrics import KubernetesMetricsSource
from .registry import SOURCE_TYPES, SourceFactory
from .units import usage_units
from .validation import validate_metrics_source

__all__ = [
    "INITIAL_BACKOFF",
    "MAX_BACKOFF",
    "SOURCE_TYPES",
    "BackingOffError",
    "Backoff",
    "FetchError",
    "FetchResult",
    "FetchTarget",
    "KubeletSummarySource",
    "KubernetesMetricsSource",
    "PolledSource",
    "Source",
    "SourceFactory",
    "UsageSample",
    "summary_samples",
    "usage_units",
    "validate_metrics_source",
]
