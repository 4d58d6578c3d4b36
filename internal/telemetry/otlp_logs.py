"""OTLP log export (`--log-otel-enabled`, on by default once `--otel-metrics-endpoint` is set), as the Go
operator ships its zap logs with otelzap: every record that reaches the root logger also goes to the collector,
its structured fields (`with_values`, `extra`) as log attributes, next to the usual stderr output.

Records of the OpenTelemetry SDK itself are not exported (an export failure must not log into the exporter).
"""

from __future__ import annotations

import logging
from typing import Any

from ballast.runtime.log import record_fields

from .otlp import OTLPSettings, new_exporter, otel_resource

_SEVERITIES = ((logging.CRITICAL, 21), (logging.ERROR, 17), (logging.WARNING, 13), (logging.INFO, 9))
_PRIMITIVES = (str, bool, int, float)


def _severity(levelno: int) -> Any:
    from opentelemetry._logs import SeverityNumber  # noqa: PLC0415 - optional dependency

    number = next((value for level, value in _SEVERITIES if levelno >= level), 5)  # else DEBUG
    return SeverityNumber(number)


def _attribute(value: Any) -> Any:
    return value if isinstance(value, _PRIMITIVES) else str(value)


class OTLPLogHandler(logging.Handler):
    """Sends each record to an OpenTelemetry `LoggerProvider` (batched and exported by its processor)."""

    def __init__(self, provider: Any, level: int = logging.NOTSET) -> None:
        super().__init__(level)
        self.provider = provider
        self._logger = provider.get_logger("ballast")
        self.addFilter(lambda record: not record.name.startswith("opentelemetry"))

    def emit(self, record: logging.LogRecord) -> None:
        try:
            attributes = {key: _attribute(value) for key, value in record_fields(record).items()}
            attributes["logger"] = record.name
            self._logger.emit(
                timestamp=int(record.created * 1e9),
                severity_number=_severity(record.levelno),
                severity_text=record.levelname.lower(),
                body=record.getMessage(),
                attributes=attributes,
                exception=record.exc_info[1] if record.exc_info else None,
            )
        except Exception:  # a logging handler must never raise into the code that logged
            self.handleError(record)

    def close(self) -> None:
        """Flush what is batched and stop the exporter."""
        try:
            self.provider.shutdown()
        finally:
            super().close()


def install_log_export(
    settings: OTLPSettings, *, version: str, exporter: Any = None, logger: logging.Logger | None = None
) -> OTLPLogHandler:
    """Attach an `OTLPLogHandler` to `logger` (default: the root logger); `handler.close()` flushes and stops."""
    from opentelemetry.sdk._logs import LoggerProvider  # noqa: PLC0415
    from opentelemetry.sdk._logs.export import BatchLogRecordProcessor  # noqa: PLC0415

    provider = LoggerProvider(resource=otel_resource(version))
    provider.add_log_record_processor(BatchLogRecordProcessor(exporter or new_exporter(settings, "logs")))
    handler = OTLPLogHandler(provider)
    (logger or logging.getLogger()).addHandler(handler)
    return handler
