"""The runtime's Prometheus registry and the metrics controller-runtime exports, with its names and buckets.

Everything registers on `REGISTRY` (controller-runtime's `metrics.Registry`), which the manager serves on
`/metrics`. Names, labels and buckets follow controller-runtime so existing dashboards and alerts work.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable
from typing import Any, Protocol, cast

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

# Go clients export no `_created` series; dashboards built for controller-runtime don't expect them.
disable_created_metrics()  # type: ignore[no-untyped-call]

REGISTRY = CollectorRegistry(auto_describe=True)
for _collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
    REGISTRY.register(_collector)

# client-go workqueue: ExponentialBuckets(10e-9, 10, 12) for both duration histograms.
WORKQUEUE_BUCKETS = tuple(10e-9 * 10**i for i in range(12))
RECONCILE_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
    1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
)  # fmt: skip


class WorkqueueSeries(Protocol):
    """What a named queue (or the queues sharing a name) reports; read at scrape time."""

    name: str

    def totals(self) -> tuple[int, int, tuple[list[int], float], tuple[list[int], float]]:
        """(adds, retries, (queue-duration bucket counts, sum), (work-duration bucket counts, sum))."""
        ...

    def depths(self) -> dict[str, int]:
        """Ready items per `priority` label ("" for queues without priorities)."""
        ...

    def processing_ages(self) -> tuple[float, float]:
        """(sum, max) of how long the items being processed have been held."""
        ...


_WORKQUEUE_HELP = {
    "workqueue_depth": "Current depth of workqueue by workqueue and priority",
    "workqueue_adds": "Total number of adds handled by workqueue",
    "workqueue_retries": "Total number of retries handled by workqueue",
    "workqueue_queue_duration_seconds": "How long in seconds an item stays in workqueue before being requested",
    "workqueue_work_duration_seconds": "How long in seconds processing an item from workqueue takes.",
    "workqueue_unfinished_work_seconds": (
        "How many seconds of work has been done that is in progress and hasn't been observed by "
        "work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by "
        "observing the rate at which this increases."
    ),
    "workqueue_longest_running_processor_seconds": (
        "How many seconds has the longest running processor for workqueue been running."
    ),
}


class WorkqueueCollector(Collector):
    """The seven `workqueue_*` metrics (client-go's names, labels and buckets), computed when scraped.

    Queues count in plain integers under their own lock — per-operation `inc()`/`observe()` would cost more than
    the queue operation itself — and register a `WorkqueueSeries` here; the registry asks it at each scrape.
    """

    def __init__(self) -> None:
        self._series: list[WorkqueueSeries] = []
        self._lock = threading.Lock()

    def register(self, series: WorkqueueSeries) -> None:
        with self._lock:
            self._series.append(series)

    @staticmethod
    def _families() -> dict[str, Any]:
        def family(kind: Any, name: str, *extra: str) -> Any:
            return kind(name, _WORKQUEUE_HELP[name], labels=["name", "controller", *extra])

        return {
            "depth": family(GaugeMetricFamily, "workqueue_depth", "priority"),
            "adds": family(CounterMetricFamily, "workqueue_adds"),
            "retries": family(CounterMetricFamily, "workqueue_retries"),
            "queue": family(HistogramMetricFamily, "workqueue_queue_duration_seconds"),
            "work": family(HistogramMetricFamily, "workqueue_work_duration_seconds"),
            "unfinished": family(GaugeMetricFamily, "workqueue_unfinished_work_seconds"),
            "longest": family(GaugeMetricFamily, "workqueue_longest_running_processor_seconds"),
        }

    def describe(self) -> Iterable[Metric]:
        return list(self._families().values())

    def collect(self) -> Iterable[Metric]:
        families = self._families()
        with self._lock:
            series_list = list(self._series)
        for series in series_list:
            pair = [series.name, series.name]
            adds, retries, queue_duration, work_duration = series.totals()
            families["adds"].add_metric(pair, adds)
            families["retries"].add_metric(pair, retries)
            for key, (counts, total) in (("queue", queue_duration), ("work", work_duration)):
                cumulative, buckets = 0, []
                for bound, count in zip(WORKQUEUE_BUCKET_LABELS, counts, strict=True):
                    cumulative += count
                    buckets.append((bound, cumulative))
                families[key].add_metric(pair, buckets, total)
            for priority, depth in series.depths().items():
                families["depth"].add_metric([*pair, priority], depth)
            unfinished, longest = series.processing_ages()
            families["unfinished"].add_metric(pair, unfinished)
            families["longest"].add_metric(pair, longest)
        return list(families.values())


# The `le` labels of the workqueue histograms, formatted as prometheus_client's own histograms format them.
_format_bound = cast(Callable[[float], str], floatToGoString)  # untyped upstream
WORKQUEUE_BUCKET_LABELS = tuple(_format_bound(bound) for bound in (*WORKQUEUE_BUCKETS, math.inf))
WORKQUEUE_COLLECTOR = WorkqueueCollector()
REGISTRY.register(WORKQUEUE_COLLECTOR)

RECONCILE_TOTAL = Counter(
    "controller_runtime_reconcile", "Total number of reconciliations per controller",
    ["controller", "result"], registry=REGISTRY,
)  # fmt: skip
RECONCILE_ERRORS = Counter(
    "controller_runtime_reconcile_errors", "Total number of reconciliation errors per controller",
    ["controller"], registry=REGISTRY,
)  # fmt: skip
TERMINAL_RECONCILE_ERRORS = Counter(
    "controller_runtime_terminal_reconcile_errors", "Total number of terminal reconciliation errors per controller",
    ["controller"], registry=REGISTRY,
)  # fmt: skip
RECONCILE_PANICS = Counter(
    "controller_runtime_reconcile_panics", "Total number of reconciliation panics per controller",
    ["controller"], registry=REGISTRY,
)  # fmt: skip
RECONCILE_TIME = Histogram(
    "controller_runtime_reconcile_time_seconds", "Length of time per reconciliation per controller",
    ["controller"], buckets=RECONCILE_BUCKETS, registry=REGISTRY,
)  # fmt: skip
RECONCILE_TIMEOUTS = Counter(
    "controller_runtime_reconcile_timeouts", "Total number of reconciliation timeouts per controller",
    ["controller"], registry=REGISTRY,
)  # fmt: skip
MAX_CONCURRENT_RECONCILES = Gauge(
    "controller_runtime_max_concurrent_reconciles", "Maximum number of concurrent reconciles per controller",
    ["controller"], registry=REGISTRY,
)  # fmt: skip
ACTIVE_WORKERS = Gauge(
    "controller_runtime_active_workers", "Number of currently used workers per controller",
    ["controller"], registry=REGISTRY,
)  # fmt: skip

REST_CLIENT_REQUESTS = Counter(
    "rest_client_requests", "Number of HTTP requests, partitioned by status code, method, and host.",
    ["code", "method", "host"], registry=REGISTRY,
)  # fmt: skip
REST_CLIENT_REQUEST_DURATION = Histogram(
    "rest_client_request_duration_seconds", "Request latency in seconds. Broken down by verb, and host.",
    ["verb", "host"], buckets=(0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0),
    registry=REGISTRY,
)  # fmt: skip

LEADER_ELECTION_MASTER_STATUS = Gauge(
    "leader_election_master_status",
    "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. "
    "'name' is the string used to identify the lease. Please make sure to group by name.",
    ["name"], registry=REGISTRY,
)  # fmt: skip
LEADER_ELECTION_SLOWPATH = Counter(
    "leader_election_slowpath",
    "Total number of slow path exercised in renewing leader leases. 'name' is the string used to identify the lease.",
    ["name"], registry=REGISTRY,
)  # fmt: skip

WEBHOOK_REQUESTS = Counter(
    "controller_runtime_webhook_requests",
    "Total number of admission requests by HTTP status code.",
    ["webhook", "code"], registry=REGISTRY,
)  # fmt: skip
WEBHOOK_LATENCY = Histogram(
    "controller_runtime_webhook_latency_seconds",
    "Histogram of the latency of processing admission requests",
    ["webhook"], buckets=WORKQUEUE_BUCKETS, registry=REGISTRY,
)  # fmt: skip
WEBHOOK_IN_FLIGHT = Gauge(
    "controller_runtime_webhook_requests_in_flight",
    "Current number of admission requests being served.",
    ["webhook"], registry=REGISTRY,
)  # fmt: skip
WEBHOOK_PANICS = Counter("controller_runtime_webhook_panics", "Total number of webhook panics", registry=REGISTRY)
CERTWATCHER_READ = Counter("certwatcher_read_certificate", "Total number of certificate reads", registry=REGISTRY)
CERTWATCHER_READ_ERRORS = Counter(
    "certwatcher_read_certificate_errors", "Total number of certificate read errors", registry=REGISTRY
)

__all__ = [
    "ACTIVE_WORKERS",
    "CERTWATCHER_READ",
    "CERTWATCHER_READ_ERRORS",
    "LEADER_ELECTION_MASTER_STATUS",
    "LEADER_ELECTION_SLOWPATH",
    "MAX_CONCURRENT_RECONCILES",
    "RECONCILE_BUCKETS",
    "RECONCILE_ERRORS",
    "RECONCILE_PANICS",
    "RECONCILE_TIME",
    "RECONCILE_TIMEOUTS",
    "RECONCILE_TOTAL",
    "REGISTRY",
    "REST_CLIENT_REQUESTS",
    "REST_CLIENT_REQUEST_DURATION",
    "TERMINAL_RECONCILE_ERRORS",
    "WEBHOOK_IN_FLIGHT",
    "WEBHOOK_LATENCY",
    "WEBHOOK_PANICS",
    "WEBHOOK_REQUESTS",
    "WORKQUEUE_BUCKETS",
    "WORKQUEUE_BUCKET_LABELS",
    "WORKQUEUE_COLLECTOR",
    "WorkqueueCollector",
    "WorkqueueSeries",
]
