"""`ballastd`'s first contact with the API server: say where it connects, and wait for an answer with backoff.

Building the manager already asks the API server (discovery, for the informers' resources), so a silent or
refused server would otherwise hang the process without a word and without probes. Until the server answers,
`/healthz` answers ok (the process is alive and trying; restarting it would not help) and `/readyz` fails with
the reason, on the address the manager's probes will use.
"""

from __future__ import annotations

import logging
import threading
from http.server import ThreadingHTTPServer
from typing import TYPE_CHECKING

import tenacity

if TYPE_CHECKING:
    from collections.abc import Callable

    from ballast.runtime import RESTConfig

LOG = logging.getLogger("ballast.startup")
VERSION_PATH = "/version"
"""What the wait asks for: served to every authenticated user (system:public-info-viewer), and cheap."""
MAX_BACKOFF = 30.0
"""Seconds between two attempts at most (the first waits 1 s, then doubling, with jitter)."""
CHECK_NAME = "api-server"


class APIServerProbe:
    """The readiness check while waiting: fails with the last reason the API server could not be reached."""

    def __init__(self, server: str) -> None:
        self.reason = f"connecting to {server}"

    def __call__(self) -> None:
        raise RuntimeError(self.reason)


def await_api_server(
    config: RESTConfig,
    *,
    health_address: tuple[str, int] | None,
    stop: threading.Event,
    sleep: Callable[[float], None] | None = None,
) -> bool:
    """Log "connecting to <server>" and retry `GET /version` with backoff until the server answers (any HTTP
    status counts: it is there) or `stop` is set; serve `/healthz` and `/readyz` on `health_address` meanwhile.
    Returns whether it answered. `sleep` waits between attempts (default: on `stop`, so a signal ends it)."""
    from ballast.runtime import APIStatusError  # noqa: PLC0415
    from ballast.runtime.rest import Transport  # noqa: PLC0415

    LOG.info("connecting to %s", config.host)
    probe = APIServerProbe(config.host)
    server = _probe_server(health_address, probe)
    transport = Transport(config)

    def ask() -> None:
        try:
            transport.request("GET", VERSION_PATH)
        except APIStatusError:  # refused or unauthorised, but there: the manager's requests will say the rest
            return

    def waiting(state: tenacity.RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        probe.reason = str(error)  # an UnreachableError names the server and the deadline
        delay = state.next_action.sleep if state.next_action else 0.0
        LOG.warning("%s; retrying (attempt %d, next in %.0fs)", probe.reason, state.attempt_number, delay)

    def wait(seconds: float) -> None:
        stop.wait(seconds)  # a signal ends the wait at once

    retrying = tenacity.Retrying(
        retry=tenacity.retry_if_exception_type((ConnectionError, TimeoutError)),
        wait=tenacity.wait_exponential_jitter(initial=1.0, max=MAX_BACKOFF, jitter=1.0),
        stop=tenacity.stop_when_event_set(stop),
        sleep=sleep or wait,
        before_sleep=waiting,
        reraise=True,
    )
    try:
        retrying(ask)
    except (ConnectionError, TimeoutError):  # stopped (a signal) while still waiting
        return False
    finally:
        transport.close()
        if server is not None:
            server.shutdown()
            server.server_close()
    LOG.info("connected to %s", config.host)
    return True


def _probe_server(address: tuple[str, int] | None, probe: APIServerProbe) -> ThreadingHTTPServer | None:
    from ballast.runtime import ping  # noqa: PLC0415
    from ballast.runtime.healthz import Checks, handler_for  # noqa: PLC0415
    from ballast.runtime.httpserver import QuietHTTPServer  # noqa: PLC0415

    if address is None:
        return None
    healthz, readyz = Checks(), Checks()
    healthz.add("ping", ping)
    readyz.add(CHECK_NAME, probe)

    class OneRequestPerConnection(handler_for({"/healthz": healthz, "/readyz": readyz})):  # type: ignore[misc]
        # A kept-alive connection would outlive this server and answer "not ready" for ever after.
        protocol_version = "HTTP/1.0"

    server = QuietHTTPServer(address, OneRequestPerConnection)
    threading.Thread(target=server.serve_forever, name="startup-probes", daemon=True).start()
    return server
