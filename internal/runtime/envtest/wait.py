"""Polling with a deadline, the way envtest waits for readiness (100 ms steps by default)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from .errors import EnvtestError, ProcessStartError

T = TypeVar("T")


class WaitTimeoutError(EnvtestError):
    """A condition did not hold within its timeout."""


def poll_until(
    condition: Callable[[], T | None],
    *,
    timeout: float,
    what: str,
    interval: float = 0.1,
    last_error: Callable[[], str] | None = None,
) -> T:
    """Call `condition` every `interval` seconds until it returns something truthy, and return that.

    Exceptions from `condition` count as "not yet" (their text is kept for the timeout message), except
    ProcessStartError: a process that died will not become ready.
    Raises WaitTimeoutError naming `what` after `timeout` seconds.
    """
    deadline = time.monotonic() + timeout
    failure = ""
    while True:
        try:
            result = condition()
            if result:
                return result
        except ProcessStartError:
            raise
        except Exception as exc:
            failure = f"{type(exc).__name__}: {exc}"
        if time.monotonic() >= deadline:
            detail = last_error() if last_error else failure
            suffix = f" (last: {detail})" if detail else ""
            raise WaitTimeoutError(f"timed out after {timeout:g}s waiting for {what}{suffix}")
        time.sleep(interval)


__all__ = [
    "WaitTimeoutError",
    "poll_until",
]
