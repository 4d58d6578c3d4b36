"""Structured logging: key/value loggers, the JSON and text formatters, and setup_logging."""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from typing import Any

import orjson
import pytest

from ballast.runtime.log import (
    JSONFormatter,
    Logger,
    RateLimitedLog,
    TextFormatter,
    get_logger,
    setup_logging,
)


@pytest.fixture
def logger() -> Iterator[tuple[logging.Logger, io.StringIO]]:
    """A private logger writing to a buffer through a handler whose formatter each test sets."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    target = logging.getLogger(f"tests.runtime.log.{id(stream)}")
    target.addHandler(handler)
    target.setLevel(logging.DEBUG)
    target.propagate = False
    yield target, stream
    target.removeHandler(handler)


def _use(target: logging.Logger, formatter: logging.Formatter) -> None:
    target.handlers[0].setFormatter(formatter)


def test_json_lines_carry_values_and_extras(logger: tuple[logging.Logger, io.StringIO]) -> None:
    target, stream = logger
    _use(target, JSONFormatter())
    log = Logger(target, {"controller": "profiles"}).with_values(namespace="shop", name="web")
    log.info("reconciled %s", "web", extra={"took": 0.25})
    entry = orjson.loads(stream.getvalue())
    assert entry["level"] == "info"
    assert entry["logger"] == target.name
    assert entry["msg"] == "reconciled web"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", entry["ts"])
    assert {k: entry[k] for k in ("controller", "namespace", "name", "took")} == {
        "controller": "profiles", "namespace": "shop", "name": "web", "took": 0.25,
    }  # fmt: skip
    assert "kv" not in entry
    assert "args" not in entry
    assert "levelno" not in entry


@pytest.mark.parametrize("key", ["name", "args", "module", "levelname", "message", "exc_info"])
def test_keys_named_like_log_record_attributes_do_not_collide(
    logger: tuple[logging.Logger, io.StringIO], key: str
) -> None:
    target, stream = logger
    _use(target, JSONFormatter())
    Logger(target).with_values(**{key: "from-values"}).warning("hello")
    Logger(target).warning("again", extra={key: "from-extra"})
    first, second = (orjson.loads(line) for line in stream.getvalue().splitlines())
    assert first["logger"] == second["logger"] == target.name  # the record's own attributes are intact
    assert first["level"] == "warning"
    assert first[key] == "from-values"
    assert second[key] == "from-extra"


def test_with_values_returns_a_child_and_extras_override(logger: tuple[logging.Logger, io.StringIO]) -> None:
    target, stream = logger
    _use(target, JSONFormatter())
    parent = Logger(target, {"a": 1})
    child = parent.with_values(b=2, a=3)
    parent.info("parent")
    child.info("child", extra={"b": 4})
    parent_entry, child_entry = (orjson.loads(line) for line in stream.getvalue().splitlines())
    assert (parent_entry["a"], "b" in parent_entry) == (1, False)
    assert (child_entry["a"], child_entry["b"]) == (3, 4)


def test_json_errors_carry_the_traceback_and_unencodable_values_become_strings(
    logger: tuple[logging.Logger, io.StringIO],
) -> None:
    target, stream = logger
    _use(target, JSONFormatter())
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        Logger(target).with_values(thing=object()).exception("failed")
    entry = orjson.loads(stream.getvalue())
    assert entry["level"] == "error"
    assert "RuntimeError: boom" in entry["error"]
    assert entry["error"].startswith("Traceback")
    assert entry["thing"].startswith("<object object at")


def test_text_lines(logger: tuple[logging.Logger, io.StringIO]) -> None:
    target, stream = logger
    _use(target, TextFormatter())
    Logger(target).with_values(namespace="shop", name="web").info("reconciled", extra={"took": 1})
    Logger(target).debug("bare")
    first, second = stream.getvalue().splitlines()
    assert re.fullmatch(rf"\S+ INFO  {re.escape(target.name)} reconciled namespace=shop name=web took=1", first), first
    assert re.fullmatch(rf"\S+ DEBUG {re.escape(target.name)} bare", second), second


def test_text_errors_put_the_traceback_on_following_lines(logger: tuple[logging.Logger, io.StringIO]) -> None:
    target, stream = logger
    _use(target, TextFormatter())
    try:
        raise ValueError("bad")
    except ValueError:
        Logger(target).exception("failed")
    lines = stream.getvalue().splitlines()
    assert lines[0].endswith(f"ERROR {target.name} failed")
    assert lines[1] == "Traceback (most recent call last):"
    assert lines[-1] == "ValueError: bad"


def test_a_plain_logger_with_extra_is_formatted_too(logger: tuple[logging.Logger, io.StringIO]) -> None:
    target, stream = logger
    _use(target, JSONFormatter())
    target.info("plain", extra={"informer": "pods"})
    assert orjson.loads(stream.getvalue())["informer"] == "pods"


def test_get_logger_attaches_values() -> None:
    log = get_logger("ballast.tests.runtime", controller="c")
    assert log.logger is logging.getLogger("ballast.tests.runtime")
    assert log.extra == {"controller": "c"}


# ------------------------------------------------------------------------------------ setup_logging


@pytest.fixture
def root_logger() -> Iterator[logging.Logger]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield root
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    logging.getLogger("ballast.tests.runtime.levels").setLevel(logging.NOTSET)


@pytest.mark.parametrize(("format_", "formatter"), [("json", JSONFormatter), ("text", TextFormatter)])
def test_setup_logging_installs_one_handler(
    root_logger: logging.Logger, format_: str, formatter: type[logging.Formatter]
) -> None:
    stream = io.StringIO()
    setup_logging(format_, "WARN", {"ballast.tests.runtime.levels": "debug"}, stream=stream)
    assert len(root_logger.handlers) == 1
    assert isinstance(root_logger.handlers[0].formatter, formatter)
    assert root_logger.level == logging.WARNING
    assert logging.getLogger("ballast.tests.runtime.levels").level == logging.DEBUG
    get_logger("ballast.tests.runtime.levels").debug("shown")
    get_logger("ballast.tests.runtime.other").info("hidden")
    assert "shown" in stream.getvalue()
    assert "hidden" not in stream.getvalue()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"format": "xml"}, "unknown log format 'xml'"),
        ({"level": "loud"}, "unknown log level 'loud'"),
        ({"levels": {"x": "verbose"}}, "unknown log level 'verbose'"),
    ],
)
def test_setup_logging_refuses_unknown_names(root_logger: logging.Logger, kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        setup_logging(**kwargs)


def test_a_rate_limited_warning_is_written_once_per_interval_and_key_then_says_how_many_were_left_out(
    logger: tuple[logging.Logger, io.StringIO],
) -> None:
    target, stream = logger
    _use(target, JSONFormatter())
    now = [100.0]
    log = RateLimitedLog(Logger(target), interval=10.0, clock=lambda: now[0])
    written = [log.warning("refused %s", "x", key="/a", extra={"n": n}) for n in range(5)]
    written.append(log.warning("refused %s", "y", key="/b"))
    now[0] += 10.0
    written.append(log.warning("refused %s", "z", key="/a"))
    entries = [orjson.loads(line) for line in stream.getvalue().splitlines()]
    assert written == [True, False, False, False, False, True, True]
    assert [(e["level"], e["msg"], e.get("n"), e.get("suppressed")) for e in entries] == [
        ("warning", "refused x", 0, None),
        ("warning", "refused y", None, None),
        ("warning", "refused z", None, 4),
    ]


def test_a_rate_limited_log_needs_a_positive_interval(logger: tuple[logging.Logger, io.StringIO]) -> None:
    with pytest.raises(ValueError, match="interval must be positive"):
        RateLimitedLog(Logger(logger[0]), interval=0)
