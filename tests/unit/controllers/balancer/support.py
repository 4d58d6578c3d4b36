"""Helpers of the Balancer controller's unit tests."""

from __future__ import annotations

import logging

from ballast.internal.runtime import Context, RealClock, Request


def context(namespace: str = "shop", name: str = "nginx") -> Context:
    """A reconcile context as a controller's worker makes one."""
    logger = logging.LoggerAdapter(logging.getLogger("test.balancer"), {})
    return Context("balancer", Request(namespace, name), "test", logger, RealClock())
