"""`ballastd --webhook-max-body-bytes/--webhook-max-connections` reach the admission server; bad values name
the flag."""

from __future__ import annotations

import pytest

from ballast.internal.cmd import ballastd
from ballast.runtime import WebhookServer
from ballast.runtime.webhook import MAX_BODY_BYTES


def _server(*flags: str) -> WebhookServer:
    server: WebhookServer = ballastd.webhook_server(ballastd.build_parser().parse_args(["run", *flags]))
    return server


def test_the_defaults_are_the_servers() -> None:
    server = _server()
    assert server.max_body_bytes == MAX_BODY_BYTES == 4 * 1024 * 1024
    assert server.limits.max_connections == 10_000
    assert server.port == 9443


def test_the_flags_set_the_limits() -> None:
    server = _server("--webhook-max-body-bytes=1048576", "--webhook-max-connections=200")
    assert (server.max_body_bytes, server.limits.max_body_bytes, server.limits.max_connections) == (
        1048576,
        1048576,
        200,
    )


@pytest.mark.parametrize("flag", ["--webhook-max-body-bytes", "--webhook-max-connections"])
def test_a_value_below_one_names_the_flag(flag: str) -> None:
    with pytest.raises(ValueError, match=f"{flag}: 0 must be positive"):
        _server(f"{flag}=0")
