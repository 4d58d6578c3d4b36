"""Helpers of the Balancer controller's unit tests."""

from __future__ import annotations

from ballast.runtime import Context, RealClock, Request
from ballast.runtime.log import get_logger


def context(namespace: str = "shop", name: str = "nginx") -> Context:
    """A reconcile context as a controller's worker makes one."""
    logger = get_logger("test.balancer")
    return Context("balancer", Request(namespace, name), "test", logger, RealClock())
