"""OTLP receivers for tests: what an OpenTelemetry collector would get, decoded with opentelemetry-proto."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2


class Received:
    def __init__(self) -> None:
        self.requests: list[metrics_service_pb2.ExportMetricsServiceRequest] = []
        self.logs: list[logs_service_pb2.ExportLogsServiceRequest] = []
        self.arrived = threading.Event()
        self.logs_arrived = threading.Event()

    def add_logs(self, request: logs_service_pb2.ExportLogsServiceRequest) -> None:
        self.logs.append(request)
        self.logs_arrived.set()

    def log_records(self) -> list[Any]:
        return [
            record
            for request in self.logs
            for resource in request.resource_logs
            for scope in resource.scope_logs
            for record in scope.log_records
        ]

    def add(self, request: metrics_service_pb2.ExportMetricsServiceRequest) -> None:
        self.requests.append(request)
        self.arrived.set()

    def metric_names(self) -> set[str]:
        return {
            metric.name
            for request in self.requests
            for resource in request.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
        }


@contextlib.contextmanager
def http_receiver(host: str = "127.0.0.1") -> Iterator[tuple[str, Received]]:
    """An OTLP/HTTP receiver (metrics on /v1/metrics, logs on /v1/logs); yields its `host:port` and what came."""
    received = Received()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if self.path == "/v1/logs":
                logs = logs_service_pb2.ExportLogsServiceRequest()
                logs.ParseFromString(body)
                received.add_logs(logs)
                answer = logs_service_pb2.ExportLogsServiceResponse().SerializeToString()
            else:
                request = metrics_service_pb2.ExportMetricsServiceRequest()
                request.ParseFromString(body)
                received.add(request)
                answer = metrics_service_pb2.ExportMetricsServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((host, 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"{host}:{server.server_address[1]}", received
    finally:
        server.shutdown()
        server.server_close()
