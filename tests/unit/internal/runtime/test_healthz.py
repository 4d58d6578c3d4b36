"""Health endpoints over HTTP: aggregate, verbose, exclude, single checks, and 500 on failure."""

from __future__ import annotations

import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import ThreadingHTTPServer

import pytest

from ballast.runtime import healthz, ping
from ballast.runtime.healthz import Checks, evaluate, handler_for


def _broken() -> None:
    raise RuntimeError("informers have not synced yet")


class Flag:
    """A check whose outcome the test flips."""

    def __init__(self) -> None:
        self.healthy = True

    def __call__(self) -> bool:
        return self.healthy


@pytest.fixture
def readiness() -> Flag:
    return Flag()


@pytest.fixture
def base_url(readiness: Flag) -> Iterator[str]:
    healthz, readyz = Checks(), Checks()
    healthz.add("ping", ping)
    readyz.add("ping", ping)
    readyz.add("cache-sync", readiness)
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for({"/healthz": healthz, "/readyz": readyz}))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.01,), daemon=True)  # quick shutdown
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()
    thread.join(5)


def _get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode(), response.headers["Content-Type"]
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(), error.headers["Content-Type"]


@pytest.mark.parametrize(
    ("path", "healthy", "status", "body"),
    [
        ("/healthz", True, 200, "ok"),
        ("/healthz/", True, 200, "ok"),
        ("/readyz", True, 200, "ok"),
        ("/readyz?verbose", True, 200, "[+]ping ok\n[+]cache-sync ok\nreadyz check passed\n"),
        ("/readyz", False, 500, "[+]ping ok\n[-]cache-sync failed: check returned false\nreadyz check failed\n"),
        ("/readyz?exclude=cache-sync", False, 200, "ok"),
        (
            "/readyz?exclude=cache-sync&verbose=1",
            False,
            200,
            "[+]ping ok\n[+]cache-sync excluded: ok\nreadyz check passed\n",
        ),
        ("/readyz/ping", False, 200, "ok"),
        ("/readyz/cache-sync", False, 500, "[-]cache-sync failed: check returned false\nreadyz check failed\n"),
        ("/readyz/cache-sync?verbose", True, 200, "[+]cache-sync ok\nreadyz check passed\n"),
        ("/readyz/missing", True, 404, "no check named 'missing'\n"),
        ("/livez", True, 404, "not found\n"),
    ],
)
def test_endpoints(base_url: str, readiness: Flag, path: str, healthy: bool, status: int, body: str) -> None:
    readiness.healthy = healthy
    assert _get(base_url + path) == (status, body, "text/plain; charset=utf-8")


def test_the_answer_follows_the_check(base_url: str, readiness: Flag) -> None:
    assert _get(base_url + "/readyz")[0] == 200
    readiness.healthy = False
    assert _get(base_url + "/readyz")[0] == 500
    readiness.healthy = True
    assert _get(base_url + "/readyz")[0] == 200


def test_evaluate_reports_the_reason_of_a_raising_check() -> None:
    healthy, lines = evaluate({"ping": ping, "sync": _broken, "none": lambda: None}, set())
    assert not healthy
    assert lines == ["[+]ping ok", "[-]sync failed: informers have not synced yet", "[+]none ok"]
    assert evaluate({"sync": _broken}, {"sync"}) == (True, ["[+]sync excluded: ok"])


def test_check_names_are_unique_and_snapshots_are_copies() -> None:
    checks = Checks()
    checks.add("ping", ping)
    with pytest.raises(ValueError, match="a check named 'ping' already exists"):
        checks.add("ping", ping)
    snapshot = checks.snapshot()
    checks.add("later", ping)
    assert list(snapshot) == ["ping"]
    assert list(checks.snapshot()) == ["ping", "later"]


def test_ping_is_exported_from_the_root_and_always_healthy() -> None:
    assert ping is healthz.ping  # the check every manager's /healthz has
    assert evaluate({"ping": ping}, set()) == (True, ["[+]ping ok"])
