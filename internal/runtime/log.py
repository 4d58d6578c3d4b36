"""Structured logging on the stdlib: key/value loggers (logr's `WithValues`) and JSON or text output.

    log = get_logger("ballast.controller", controller="metricscollector")
    log.with_values(namespace="shop", name="web").info("reconciled", extra={"took": 0.12})

Every key/value attached with `with_values` or passed in `extra` becomes a field of the JSON record (or a
`key=value` pair in text). One formatter each; `setup_logging` installs one on the root logger.
`RateLimitedLog` keeps a line that a client can provoke at will (a malformed request) to one per interval.
"""

from __future__ import annotations

import datetime
import logging
import sys
import threading
import time
from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, TextIO

import orjson

_STANDARD = frozenset(vars(logging.LogRecord("", 0, "", 0, "", None, None)).keys() | {"message", "asctime", "taskName"})
LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "warning": logging.WARNING,
          "error": logging.ERROR}  # fmt: skip


def record_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The structured fields of a record: its `extra` attributes and the logger's `with_values`."""
    fields = {key: value for key, value in vars(record).items() if key not in _STANDARD and key != "kv"}
    fields.update(getattr(record, "kv", None) or {})
    return fields


def _timestamp(record: logging.LogRecord) -> str:
    return datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(timespec="milliseconds")


class JSONFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, msg, the structured fields, and `error` with a traceback."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": _timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        entry.update(record_fields(record))
        if record.exc_info:
            entry["error"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


class TextFormatter(logging.Formatter):
    """`ts LEVEL logger msg key=value ...`, with the traceback on following lines."""

    def format(self, record: logging.LogRecord) -> str:
        pairs = " ".join(f"{key}={value}" for key, value in record_fields(record).items())
        line = f"{_timestamp(record)} {record.levelname:<5} {record.name} {record.getMessage()}"
        if pairs:
            line = f"{line} {pairs}"
        if record.exc_info:
            line = f"{line}\n{self.formatException(record.exc_info)}"
        return line


class Logger(logging.LoggerAdapter[logging.Logger]):
    """A logger carrying key/values; `with_values` returns a child with more."""

    def __init__(self, logger: logging.Logger, values: Mapping[str, Any] | None = None) -> None:
        super().__init__(logger, dict(values or {}))

    def with_values(self, **values: Any) -> Logger:
        return Logger(self.logger, {**(self.extra or {}), **values})

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, MutableMapping[str, Any]]:
        values = dict(self.extra or {})
        values.update(kwargs.get("extra") or {})
        # Under one attribute: keys such as `name` would collide with LogRecord's own attributes.
        kwargs["extra"] = {"kv": values}
        return msg, kwargs


def get_logger(name: str, **values: Any) -> Logger:
    return Logger(logging.getLogger(name), values)


class RateLimitedLog:
    """Warnings that outsiders can trigger at will, at most one per `interval` seconds for each key.

        malformed = RateLimitedLog(get_logger("ballast.runtime.webhook"), interval=10.0)
        malformed.warning("malformed admission review", key="/mutate-v1-pod", extra={"error": message})

    The first record of a key is written at once; the others within `interval` are counted, not written, and
    the next record written for that key carries `suppressed=<count>`. Thread-safe; `clock` is monotonic seconds.
    """

    def __init__(self, logger: Logger, *, interval: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        if interval <= 0:
            raise ValueError(f"interval must be positive, got {interval}")
        self.logger = logger
        self.interval = interval
        self._clock = clock
        self._lock = threading.Lock()
        self._last: dict[str, float] = {}
        self._suppressed: dict[str, int] = {}

    def warning(self, msg: str, *args: Any, key: str = "", extra: Mapping[str, Any] | None = None) -> bool:
        """Log `msg % args` at warning level unless `key` was logged less than `interval` ago; whether it was."""
        now = self._clock()
        with self._lock:
            last = self._last.get(key)
            if last is not None and now - last < self.interval:
                self._suppressed[key] = self._suppressed.get(key, 0) + 1
                return False
            self._last[key] = now
            suppressed = self._suppressed.pop(key, 0)
        fields = dict(extra or {})
        if suppressed:
            fields["suppressed"] = suppressed
        self.logger.warning(msg, *args, extra=fields)
        return True


def setup_logging(
    format: str = "text",
    level: str = "info",
    levels: Mapping[str, str] | None = None,
    stream: TextIO | None = None,
) -> None:
    """Install one handler on the root logger with the JSON or text formatter.

    `levels` sets per-logger levels (e.g. {"ballast.webhook": "debug"}). Raises ValueError on an unknown
    format or level name.
    """
    formatters: dict[str, type[logging.Formatter]] = {"json": JSONFormatter, "text": TextFormatter}
    if format not in formatters:
        raise ValueError(f"unknown log format {format!r}: expected 'json' or 'text'")
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(formatters[format]())
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(_level(level))
    for name, value in (levels or {}).items():
        logging.getLogger(name).setLevel(_level(value))


def _level(name: str) -> int:
    try:
        return LEVELS[name.lower()]
    except KeyError:
        raise ValueError(f"unknown log level {name!r}: expected one of {', '.join(LEVELS)}") from None


__all__ = [
    "LEVELS",
    "JSONFormatter",
    "Logger",
    "RateLimitedLog",
    "TextFormatter",
    "get_logger",
    "record_fields",
    "setup_logging",
]
