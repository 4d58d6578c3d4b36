"""The reconcile Context: its logger is a `log.Logger`, so `ctx.logger.with_values(...)` is typed and works,
whatever logger a test hands in."""

from __future__ import annotations

import logging

import pytest

from ballast.runtime import Context, FakeClock, Request
from ballast.runtime.log import Logger, get_logger


def _context(logger: Logger) -> Context:
    return Context("widgets", Request("shop", "w"), "id-1", logger, FakeClock())


def test_with_values_on_the_context_logger_adds_key_values() -> None:
    ctx = _context(get_logger("tests.reconcile", controller="widgets"))
    child: Logger = ctx.logger.with_values(step="apply")  # mypy --strict: Context.logger is a Logger
    assert child.extra == {"controller": "widgets", "step": "apply"}
    assert ctx.logger.extra == {"controller": "widgets"}  # the context's logger is unchanged


def test_a_plain_logger_or_adapter_is_wrapped_keeping_its_values(caplog: pytest.LogCaptureFixture) -> None:
    adapter = logging.LoggerAdapter(logging.getLogger("tests.reconcile"), {"controller": "widgets"})
    ctx = _context(adapter)  # type: ignore[arg-type]  # what an untyped caller may still pass
    assert isinstance(ctx.logger, Logger)
    with caplog.at_level(logging.INFO, "tests.reconcile"):
        ctx.logger.with_values(step="apply").info("applied")
    assert caplog.records[-1].kv == {"controller": "widgets", "step": "apply"}  # type: ignore[attr-defined]
    assert isinstance(_context(logging.getLogger("tests.reconcile")).logger, Logger)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Context\.logger must be a log\.Logger"):
        _context("not a logger")  # type: ignore[arg-type]
