"""OTLP metrics push: the registry converted with the Go operator's names and temporalities, and delivered to
real OTLP receivers on loopback (HTTP/protobuf and gRPC)."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2, metrics_service_pb2_grpc
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from ballast.internal.telemetry.otlp import MetricsConverter, OTLPMetricsPusher, OTLPSettings
from ballast.internal.telemetry.otlp_logs import install_log_export
from ballast.runtime.log import get_logger
from tests.unit.internal.telemetry import receivers
from tests.unit.internal.telemetry.receivers import Received

DELTA, CUMULATIVE = 1, 2  # AggregationTemporality on the wire


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000_000

    def __call__(self) -> int:
        self.now += 1_000_000_000
        return self.now


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


def _by_name(metrics: list[Any]) -> dict[str, Any]:
    return {metric.name: metric for metric in metrics}


def test_ballast_counters_go_out_as_deltas_under_the_go_names(registry: CollectorRegistry) -> None:
    samples = Counter("ballast_samples_collected", "x", ["source"], registry=registry)
    reconciles = Counter("controller_runtime_reconcile", "x", ["controller"], registry=registry)
    converter = MetricsConverter(started_ns=10)
    samples.labels("metrics-server").inc(3)
    reconciles.labels("metricscollector").inc()
    first = _by_name(converter.convert(registry.collect(), 20))
    samples.labels("metrics-server").inc(2)
    reconciles.labels("metricscollector").inc(2)
    second = _by_name(converter.convert(registry.collect(), 30))

    for snapshot, delta, total in ((first, 3, 1), (second, 2, 3)):
        collected = snapshot["ballast.samples.collected"].data
        assert collected.aggregation_temporality == DELTA
        assert collected.is_monotonic
        assert [(p.attributes, p.value) for p in collected.data_points] == [({"source": "metrics-server"}, delta)]
        bridged = snapshot["controller_runtime_reconcile"].data
        assert bridged.aggregation_temporality == CUMULATIVE
        assert [p.value for p in bridged.data_points] == [total]
        assert type(collected.data_points[0].value) is int  # the Go operator's Int64 counters
        assert type(bridged.data_points[0].value) is float  # bridged Prometheus counters stay doubles
        assert bridged.data_points[0].start_time_unix_nano == 10
    assert second["ballast.samples.collected"].data.data_points[0].start_time_unix_nano == 20  # since the last push


def test_a_reset_counter_reports_its_new_value_as_the_delta(registry: CollectorRegistry) -> None:
    converter = MetricsConverter(started_ns=0)
    family = Counter("ballast_resize_applied", "x", registry=registry)
    family.inc(5)
    converter.convert(registry.collect(), 1)
    registry.unregister(family)
    Counter("ballast_resize_applied", "x", registry=registry).inc(2)  # a fresh counter: lower than before
    (metric,) = converter.convert(registry.collect(), 2)
    assert metric.data.data_points[0].value == 2


def test_gauges_and_histograms_are_bridged(registry: CollectorRegistry) -> None:
    Gauge("ballast_kill_switch_active", "x", ["reason"], registry=registry).labels("configmap").set(1)
    latency = Histogram("controller_runtime_webhook_latency_seconds", "x", buckets=(0.1, 1.0), registry=registry)
    for seconds in (0.05, 0.5, 0.7, 3.0):
        latency.observe(seconds)
    snapshot = _by_name(MetricsConverter(0).convert(registry.collect(), 5))
    (active,) = snapshot["ballast.kill_switch.active"].data.data_points
    assert (active.attributes, active.value) == ({"reason": "configmap"}, 1)
    (point,) = snapshot["controller_runtime_webhook_latency_seconds"].data.data_points
    assert list(point.explicit_bounds) == [0.1, 1.0]
    assert list(point.bucket_counts) == [1, 2, 1]  # per bucket, not cumulative
    assert point.count == 4
    assert point.sum == pytest.approx(4.25)


def test_settings_are_checked_and_http_endpoints_completed() -> None:
    assert (
        OTLPSettings("collector:4318", "http/protobuf", insecure=True).http_url() == "http://collector:4318/v1/metrics"
    )
    assert OTLPSettings("collector:4318", "http/protobuf").http_url() == "https://collector:4318/v1/metrics"
    assert OTLPSettings("http://c:4318/custom", "http/protobuf").http_url() == "http://c:4318/custom"
    assert OTLPSettings("http://c:4318/custom", "http/protobuf").http_url("logs") == "http://c:4318/v1/logs"
    with pytest.raises(ValueError, match="--otel-metrics-protocol: 'thrift' is not one of grpc, http/protobuf"):
        OTLPSettings("c:4317", "thrift")
    with pytest.raises(ValueError, match="--otel-metrics-interval: 0s must be positive"):
        OTLPSettings("c:4317", interval=0)
    with pytest.raises(ValueError, match="--otel-metrics-endpoint: empty"):
        OTLPSettings("")


# ------------------------------------------------------------------------------------------ receivers


@pytest.fixture
def http_receiver() -> Iterator[tuple[str, Received]]:
    with receivers.http_receiver() as served:
        yield served


@pytest.fixture
def grpc_receiver() -> Iterator[tuple[str, Received]]:
    received = Received()

    class Service(metrics_service_pb2_grpc.MetricsServiceServicer):
        def Export(self, request: Any, context: Any) -> Any:
            received.add(request)
            return metrics_service_pb2.ExportMetricsServiceResponse()

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Service(), server)  # type: ignore[no-untyped-call]
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}", received
    server.stop(0)


def _attributes(pb_attributes: Any) -> dict[str, str]:
    return {a.key: a.value.string_value for a in pb_attributes}


@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_pushes_reach_a_real_receiver(
    protocol: str,
    http_receiver: tuple[str, Received],
    grpc_receiver: tuple[str, Received],
    registry: CollectorRegistry,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "service.instance.id=ballast-0,service.version=1.2.3")
    endpoint, received = http_receiver if protocol == "http/protobuf" else grpc_receiver
    Counter("ballast_webhook_mutations", "Pod admissions", ["result"], registry=registry).labels("mutated").inc(4)
    pusher = OTLPMetricsPusher(
        OTLPSettings(endpoint, protocol, interval=5, insecure=True), version="0.1.0", registry=registry, clock=Clock()
    )
    assert pusher.push()
    assert received.arrived.wait(5)
    (resource_metrics,) = received.requests[0].resource_metrics
    resource = _attributes(resource_metrics.resource.attributes)
    assert resource["service.name"] == "ballast"
    assert resource["service.namespace"] == "tightlinesoftware.com"
    assert resource["service.version"] == "1.2.3"  # the environment wins
    assert resource["service.instance.id"] == "ballast-0"
    (scope,) = resource_metrics.scope_metrics
    assert scope.scope.name == "ballast"
    (metric,) = [m for m in scope.metrics if m.name == "ballast.webhook.mutations"]
    assert metric.sum.aggregation_temporality == DELTA
    (point,) = metric.sum.data_points
    assert (_attributes(point.attributes), point.as_int) == ({"result": "mutated"}, 4)


def test_an_unreachable_collector_is_logged_not_raised(registry: CollectorRegistry) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    Counter("ballast_fetch_errors", "x", registry=registry).inc()
    pusher = OTLPMetricsPusher(
        OTLPSettings(f"127.0.0.1:{port}", "http/protobuf", interval=0.5, insecure=True),
        version="0.1.0",
        registry=registry,
    )
    assert pusher.push() is False
    assert (pusher.exports, pusher.failures) == (0, 1)


def test_the_runnable_pushes_on_its_interval_and_once_more_at_shutdown(
    http_receiver: tuple[str, Received], registry: CollectorRegistry
) -> None:
    endpoint, received = http_receiver
    Counter("ballast_pods_processed", "x", registry=registry).inc()
    pusher = OTLPMetricsPusher(
        OTLPSettings(endpoint, "http/protobuf", interval=0.2, insecure=True), version="0", registry=registry
    )
    assert not pusher.need_leader_election()  # every replica pushes its own metrics
    stop = threading.Event()
    runner = threading.Thread(target=pusher.start, args=(stop,))
    runner.start()
    try:
        assert received.arrived.wait(5)
    finally:
        stop.set()
        runner.join(10)
    assert not runner.is_alive()
    assert pusher.exports >= 2  # at least one on the interval, one at shutdown
    assert len(received.requests) == pusher.exports


def test_logs_reach_the_receiver_with_their_fields(
    http_receiver: tuple[str, Received], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "service.instance.id=ballast-1")
    endpoint, received = http_receiver
    target = logging.getLogger("tests.otlp.logs")
    target.setLevel(logging.DEBUG)
    handler = install_log_export(OTLPSettings(endpoint, "http/protobuf", insecure=True), version="0", logger=target)
    try:
        log = get_logger("tests.otlp.logs").with_values(profile="checkout--api")
        log.info("reconciled", extra={"took": 0.25, "containers": ["app", "proxy"]})
        logging.getLogger("opentelemetry.sdk.test").error("never exported: the SDK's own records stay local")
        try:
            raise RuntimeError("boom")
        except RuntimeError:
            log.exception("reconciler error")
    finally:
        handler.close()  # flushes the batch
        target.removeHandler(handler)
    assert received.logs_arrived.wait(5)
    records = {record.body.string_value: record for record in received.log_records()}
    assert set(records) == {"reconciled", "reconciler error"}
    info = records["reconciled"]
    assert (info.severity_number, info.severity_text) == (9, "info")
    attributes = {a.key: a.value for a in info.attributes}
    assert attributes["profile"].string_value == "checkout--api"
    assert attributes["took"].double_value == 0.25
    assert attributes["containers"].string_value == "['app', 'proxy']"
    assert attributes["logger"].string_value == "tests.otlp.logs"
    failure = {a.key: a.value.string_value for a in records["reconciler error"].attributes}
    assert records["reconciler error"].severity_number == 17
    assert failure["exception.type"] == "RuntimeError"
    resource = _attributes(received.logs[0].resource_logs[0].resource.attributes)
    assert (resource["service.name"], resource["service.instance.id"]) == ("ballast", "ballast-1")
