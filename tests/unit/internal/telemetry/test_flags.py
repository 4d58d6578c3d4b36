"""`ballastd --otel-metrics-*`: the Go operator's flags build the OTLP pusher, and bad values are named."""

from __future__ import annotations

import argparse
import logging
import threading

import pytest

from ballast.internal.cmd import ballastd
from ballast.internal.telemetry.otlp import OTLPMetricsPusher
from ballast.internal.telemetry.otlp_logs import OTLPLogHandler
from tests.unit.config.dockerfile import REPO


def _args(*flags: str) -> argparse.Namespace:
    return ballastd.build_parser().parse_args(["run", *flags])


def test_the_flags_make_a_pusher_on_every_replica() -> None:
    args = _args(
        "--otel-metrics-endpoint=127.0.0.1:4318",
        "--otel-metrics-protocol=http/protobuf",
        "--otel-metrics-interval=1m30s",
        "--otel-metrics-insecure",
        "--no-log-otel-enabled",
    )
    (pusher,) = ballastd.otlp_runnables(args)
    assert isinstance(pusher, OTLPMetricsPusher)
    assert pusher.settings.http_url() == "http://127.0.0.1:4318/v1/metrics"
    assert pusher.settings.interval == 90
    assert not pusher.need_leader_election()


def test_the_defaults_are_the_go_operators() -> None:
    args = _args()
    assert (args.otel_metrics_endpoint, args.otel_metrics_protocol, args.otel_metrics_interval) == ("", "grpc", "30s")
    assert args.otel_metrics_insecure is False
    assert args.log_otel_enabled is True  # logs follow the metrics endpoint unless turned off


def test_logs_are_shipped_by_default_and_flushed_when_the_manager_stops() -> None:
    args = _args("--otel-metrics-endpoint=127.0.0.1:4318", "--otel-metrics-protocol=http/protobuf")
    pusher, logs = ballastd.otlp_runnables(args)
    handler = logs.resource
    try:
        assert isinstance(handler, OTLPLogHandler)
        assert handler in logging.getLogger().handlers
        assert not logs.need_leader_election()
        stop = threading.Event()
        stop.set()
        logs.start(stop)  # returns at once and closes (flushes) the handler
    finally:
        logging.getLogger().removeHandler(handler)
        pusher.exporter.shutdown()


def test_a_bad_interval_names_the_flag() -> None:
    args = _args("--otel-metrics-endpoint=c:4317", "--otel-metrics-interval=30")
    with pytest.raises(ValueError, match=r"--otel-metrics-interval: .*'30'"):
        ballastd.otlp_runnables(args)


def test_an_unknown_protocol_is_refused_by_the_parser(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _args("--otel-metrics-protocol=thrift")
    assert "--otel-metrics-protocol: invalid choice: 'thrift'" in capsys.readouterr().err


def test_the_image_installs_the_exporters() -> None:
    assert "'ballast[operator,otel]'" in (REPO / "Dockerfile").read_text()
