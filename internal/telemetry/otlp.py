"""OTLP metrics push (`--otel-metrics-endpoint`), as the Go operator's `internal/metrics/provider.go` does it.

Every metric lives in one Prometheus registry (served on `/metrics`); this exporter reads that registry every
`interval` and pushes it with the OpenTelemetry SDK's OTLP exporters (gRPC or HTTP/protobuf):

- `ballast_*` families go out under the Go operator's instrument names (`ballast.samples.collected`, …) with
  **delta** temporality, as its periodic reader is configured;
- everything else (controller-runtime, workqueue, client, webhook, leader election) is bridged as the Go
  operator bridges the controller-runtime registry: cumulative, under the Prometheus family name;
- resource `service.name=ballast`, `service.version`, `service.namespace=tightlinesoftware.com`, each overridden
  by `OTEL_SERVICE_NAME` / `OTEL_RESOURCE_ATTRIBUTES`.

The SDK is an optional dependency (`pip install 'ballast[otel]'`); asking for export without it is a clear error.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from prometheus_client.registry import CollectorRegistry

from ballast.runtime.log import get_logger
from ballast.runtime.metrics import REGISTRY

from .metrics import OTEL_NAMES

PROTOCOLS = ("grpc", "http/protobuf")
SERVICE_NAMESPACE = "tightlinesoftware.com"
_log = get_logger("ballast.telemetry.otlp")
Labels = frozenset[tuple[str, str]]


@dataclass(frozen=True)
class OTLPSettings:
    """`--otel-metrics-endpoint host:port`, `--otel-metrics-protocol`, `--otel-metrics-interval`, `-insecure`."""

    endpoint: str
    protocol: str = "grpc"
    interval: float = 30.0
    insecure: bool = False

    def __post_init__(self) -> None:
        if not self.endpoint:
            raise ValueError("--otel-metrics-endpoint: empty (host:port, e.g. otel-collector:4317)")
        if self.protocol not in PROTOCOLS:
            raise ValueError(f"--otel-metrics-protocol: {self.protocol!r} is not one of {', '.join(PROTOCOLS)}")
        if self.interval <= 0:
            raise ValueError(f"--otel-metrics-interval: {self.interval:g}s must be positive")

    def http_url(self, signal: str = "metrics") -> str:
        """The OTLP/HTTP URL of `signal`: `host:port` gets http(s):// and the default path `/v1/<signal>`; a URL
        with a path is kept for metrics (logs then go to `/v1/logs` on the same origin)."""
        endpoint = self.endpoint
        if "://" not in endpoint:
            endpoint = f"{'http' if self.insecure else 'https'}://{endpoint}"
        parts = urlsplit(endpoint)
        if parts.path not in ("", "/") and signal == "metrics":
            return endpoint
        return f"{parts.scheme}://{parts.netloc}/v1/{signal}"


# --------------------------------------------------------------------------------------- the conversion


class MetricsConverter:
    """Turns registry snapshots into OTLP metrics; remembers the last cumulative values for delta temporality."""

    def __init__(self, started_ns: int) -> None:
        self._started_ns = started_ns
        self._last_ns = started_ns
        self._last: dict[tuple[str, Labels], float] = {}

    def convert(self, families: Iterable[Any], now_ns: int) -> list[Any]:
        """`families` as `CollectorRegistry.collect()` yields them → SDK `Metric`s (empty families dropped)."""
        from opentelemetry.sdk.metrics.export import Metric  # noqa: PLC0415 - optional dependency

        metrics = []
        for family in families:
            data = self._data(family, now_ns)
            if data is not None and data.data_points:
                name = OTEL_NAMES.get(family.name, family.name)
                metrics.append(Metric(name=name, description=family.documentation, unit=family.unit or "", data=data))
        self._last_ns = now_ns
        return metrics

    def _data(self, family: Any, now_ns: int) -> Any:
        from opentelemetry.sdk.metrics.export import AggregationTemporality, Gauge, Sum  # noqa: PLC0415

        if family.type == "histogram":
            return self._histogram(family, now_ns)
        if family.type == "counter":
            samples = [s for s in family.samples if s.name.endswith("_total")]
            delta = family.name in OTEL_NAMES
            points = [self._point(family.name, s.labels, s.value, now_ns, delta=delta) for s in samples]
            temporality = AggregationTemporality.DELTA if delta else AggregationTemporality.CUMULATIVE
            return Sum(data_points=points, aggregation_temporality=temporality, is_monotonic=True)
        if family.type in ("gauge", "untyped"):
            integer = family.name in OTEL_NAMES
            return Gauge(data_points=[_gauge_point(s.labels, s.value, now_ns, integer) for s in family.samples])
        return None  # summaries, infos, state sets: not exported (none are registered)

    def _point(self, family: str, labels: Mapping[str, str], value: float, now_ns: int, *, delta: bool) -> Any:
        from opentelemetry.sdk.metrics.export import NumberDataPoint  # noqa: PLC0415

        if not delta:
            return NumberDataPoint(dict(labels), self._started_ns, now_ns, float(value))  # bridged: doubles
        key = (family, frozenset(labels.items()))
        previous = self._last.get(key, 0.0)
        self._last[key] = value
        change = value - previous if value >= previous else value  # a lower value: the counter was reset
        return NumberDataPoint(dict(labels), self._last_ns, now_ns, _number(change, integer=True))

    def _histogram(self, family: Any, now_ns: int) -> Any:
        from opentelemetry.sdk.metrics.export import (  # noqa: PLC0415
            AggregationTemporality,
            Histogram,
            HistogramDataPoint,
        )

        series: dict[Labels, dict[str, Any]] = {}
        for sample in family.samples:
            labels = {k: v for k, v in sample.labels.items() if k != "le"}
            entry = series.setdefault(frozenset(labels.items()), {"labels": labels, "buckets": [], "sum": 0.0})
            if sample.name.endswith("_bucket"):
                entry["buckets"].append((float(sample.labels["le"]), sample.value))
            elif sample.name.endswith("_count"):
                entry["count"] = sample.value
            elif sample.name.endswith("_sum"):
                entry["sum"] = sample.value
        points = []
        for entry in series.values():
            buckets = sorted(entry["buckets"])
            bounds = [bound for bound, _ in buckets if bound != float("inf")]
            cumulative = [count for _, count in buckets]
            counts = [int(c - p) for c, p in zip(cumulative, [0.0, *cumulative[:-1]], strict=True)]
            count = int(entry.get("count", cumulative[-1] if cumulative else 0))
            points.append(
                HistogramDataPoint(
                    attributes=entry["labels"],
                    start_time_unix_nano=self._started_ns,
                    time_unix_nano=now_ns,
                    count=count,
                    sum=entry["sum"],
                    bucket_counts=counts,
                    explicit_bounds=bounds,
                    # Prometheus keeps no min/max; None leaves these optional OTLP fields unset.
                    min=None,  # type: ignore[arg-type]
                    max=None,  # type: ignore[arg-type]
                )
            )
        return Histogram(data_points=points, aggregation_temporality=AggregationTemporality.CUMULATIVE)


def _number(value: float, *, integer: bool) -> int | float:
    """The Go operator's `ballast.*` instruments are Int64 (as_int on the wire); bridged families are doubles."""
    return int(value) if integer and float(value).is_integer() else float(value)


def _gauge_point(labels: Mapping[str, str], value: float, now_ns: int, integer: bool) -> Any:
    from opentelemetry.sdk.metrics.export import NumberDataPoint  # noqa: PLC0415

    return NumberDataPoint(dict(labels), 0, now_ns, _number(value, integer=integer))


# ------------------------------------------------------------------------------------------ the pusher


def otel_resource(version: str) -> Any:
    from opentelemetry.sdk.resources import OTELResourceDetector, Resource  # noqa: PLC0415

    defaults = Resource({"service.name": "ballast", "service.version": version, "service.namespace": SERVICE_NAMESPACE})
    return defaults.merge(OTELResourceDetector().detect())  # the environment wins, as in the Go operator


# (protocol, signal) → the SDK exporter class, and the flag that asked for it (for the error without the SDK).
_EXPORTERS = {
    ("grpc", "metrics"): ("opentelemetry.exporter.otlp.proto.grpc.metric_exporter", "OTLPMetricExporter"),
    ("http/protobuf", "metrics"): ("opentelemetry.exporter.otlp.proto.http.metric_exporter", "OTLPMetricExporter"),
    ("grpc", "logs"): ("opentelemetry.exporter.otlp.proto.grpc._log_exporter", "OTLPLogExporter"),
    ("http/protobuf", "logs"): ("opentelemetry.exporter.otlp.proto.http._log_exporter", "OTLPLogExporter"),
}
_FLAGS = {"metrics": "--otel-metrics-endpoint", "logs": "--log-otel-enabled"}


def new_exporter(settings: OTLPSettings, signal: str = "metrics") -> Any:
    """The SDK's OTLP exporter of `signal` ("metrics" or "logs") for `settings`; ValueError when the SDK is not
    installed."""
    module_name, class_name = _EXPORTERS[settings.protocol, signal]
    try:
        exporter_class = getattr(importlib.import_module(module_name), class_name)
    except ImportError as exc:
        raise ValueError(
            f"{_FLAGS[signal]} needs the OpenTelemetry exporters: pip install 'ballast[otel]' ({exc})"
        ) from exc
    if settings.protocol == "grpc":
        return exporter_class(endpoint=settings.endpoint, insecure=settings.insecure)
    return exporter_class(endpoint=settings.http_url(signal))


class OTLPMetricsPusher:
    """A manager runnable on every replica: push the registry every `interval`, and once more on shutdown."""

    name = "otlp-metrics"

    def __init__(
        self,
        settings: OTLPSettings,
        *,
        version: str,
        registry: CollectorRegistry = REGISTRY,
        exporter: Any = None,
        clock: Callable[[], int] = time.time_ns,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.exporter = exporter if exporter is not None else new_exporter(settings)
        self.clock = clock
        self.resource = otel_resource(version)
        self.converter = MetricsConverter(clock())
        self.exports = 0
        self.failures = 0

    def need_leader_election(self) -> bool:
        return False

    def push(self) -> bool:
        """Export one snapshot; False when the collector refused it or could not be reached (logged)."""
        from opentelemetry.sdk.metrics.export import (  # noqa: PLC0415
            MetricExportResult,
            MetricsData,
            ResourceMetrics,
            ScopeMetrics,
        )
        from opentelemetry.sdk.util.instrumentation import InstrumentationScope  # noqa: PLC0415

        metrics = self.converter.convert(self.registry.collect(), self.clock())
        scope = ScopeMetrics(InstrumentationScope("ballast"), metrics, schema_url="")
        data = MetricsData([ResourceMetrics(self.resource, [scope], schema_url="")])
        try:
            result = self.exporter.export(data, timeout_millis=self.settings.interval * 1000)
            ok = bool(result == MetricExportResult.SUCCESS)
        except Exception as exc:  # an exporter bug must not end the runnable (and with it the manager)
            _log.error("OTLP metrics export failed: %s", exc)
            ok = False
        self.exports += ok
        self.failures += not ok
        if not ok:
            _log.warning("OTLP metrics export to %s did not succeed", self.settings.endpoint)
        return ok

    def start(self, stop: threading.Event) -> None:
        _log.info(
            "pushing metrics over OTLP",
            extra={
                "endpoint": self.settings.endpoint,
                "protocol": self.settings.protocol,
                "interval": self.settings.interval,
            },
        )
        try:
            while not stop.wait(self.settings.interval):
                self.push()
            self.push()  # what happened since the last push
        finally:
            self.exporter.shutdown()
