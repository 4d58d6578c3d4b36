"""An API server that accepts connections and never answers, one that refuses them, and kubeconfigs that cannot
be loaded: each ends in an error naming the server (and the deadline that passed) or the file.

The silent server is a loopback socket that accepts and reads nothing; the deadlines are short and the tests
assert what the error says and how many connections were tried, never how long it took.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client as kubernetes_client

from ballast.runtime import RESTConfig, apierrors
from ballast.runtime.rest import ConfigLoadError, Transport, UnreachableError, deadline
from tests.unit.internal.runtime.silent import SilentServer, silent_server


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    with silent_server() as server:
        yield server


def transport_to(url: str, **options: object) -> Transport:
    configuration = kubernetes_client.Configuration()
    configuration.host = url
    configuration.verify_ssl = False
    return Transport(RESTConfig(configuration, **options))  # type: ignore[arg-type]


def test_a_silent_server_fails_within_the_request_budget_naming_server_and_deadline(silent: SilentServer) -> None:
    transport = transport_to(silent.url, timeout=1.0)
    with pytest.raises(UnreachableError) as error:
        transport.request("GET", "/api/v1/namespaces")
    assert str(error.value) == (
        f"the API server {silent.url} did not answer within 1s (GET /api/v1/namespaces): "
        "no answer (TCP connect, TLS handshake or response)"
    )
    assert (error.value.server, error.value.deadline) == (silent.url, 1.0)
    assert isinstance(error.value, ConnectionError)  # what callers already catch
    assert len(silent.accepted) == 1  # the budget left no time for a second attempt


def test_the_connect_timeout_bounds_the_tls_handshake_without_a_request_budget(silent: SilentServer) -> None:
    transport = transport_to(silent.url, timeout=0, connect_timeout=0.5, retry_timeouts=False)
    with pytest.raises(UnreachableError, match=r"did not answer within 0\.5s \(GET /version\)") as error:
        transport.request("GET", "/version")
    assert error.value.deadline == 0.5


def test_timeouts_are_retried_only_when_asked(silent: SilentServer) -> None:
    with pytest.raises(UnreachableError):
        transport_to(silent.url, timeout=0, connect_timeout=0.2, max_retries=3).request("GET", "/version")
    assert len(silent.accepted) == 3
    silent.accepted.clear()
    with pytest.raises(UnreachableError):
        transport_to(silent.url, timeout=0, connect_timeout=0.2, max_retries=3, retry_timeouts=False).request(
            "GET", "/version"
        )
    assert len(silent.accepted) == 1


def test_a_watch_connects_within_the_connect_timeout(silent: SilentServer) -> None:
    transport = transport_to(silent.url, connect_timeout=0.3, retry_timeouts=False)
    with pytest.raises(UnreachableError, match=r"did not answer within 0\.3s \(GET /api/v1/pods\)"):
        transport.stream("GET", "/api/v1/pods", params={"watch": "1"}, read_timeout=300)


def test_a_refused_connection_names_the_server_and_no_deadline() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        url = f"https://127.0.0.1:{probe.getsockname()[1]}"
    with pytest.raises(UnreachableError) as error:
        transport_to(url, max_retries=1).request("GET", "/version")
    assert str(error.value) == f"cannot reach the API server {url} (GET /version): connection refused"
    assert error.value.deadline is None


def test_the_callers_deadline_passing_before_any_attempt_stays_a_deadline_error(silent: SilentServer) -> None:
    with deadline(0), pytest.raises(apierrors.DeadlineExceededError):
        transport_to(silent.url).request("GET", "/version")
    assert silent.accepted == []


def test_a_kubeconfig_that_is_not_text_is_named(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.kubeconfig"
    garbage.write_bytes(b"\xca\xfe\xba\xbe" + bytes(range(256)))
    with pytest.raises(ConfigLoadError) as error:
        RESTConfig.from_kubeconfig(str(garbage))
    assert str(error.value) == (
        f'error loading config file "{garbage}": not a text file (byte 0xca at offset 0 is not UTF-8)'
    )


def test_a_missing_kubeconfig_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "nonexistent"
    with pytest.raises(ConfigLoadError) as error:
        RESTConfig.from_kubeconfig(str(missing))
    assert str(error.value) == f'error loading config file "{missing}": no such file'


def test_a_kubeconfig_from_the_environment_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = tmp_path / "wrong.kubeconfig"
    wrong.write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n")
    monkeypatch.setenv("KUBECONFIG", str(wrong))
    with pytest.raises(ConfigLoadError, match=rf'^error loading config file "{wrong}": '):
        RESTConfig.load()


def test_the_timeouts_travel_to_a_child_process() -> None:
    configuration = kubernetes_client.Configuration()
    configuration.host = "https://127.0.0.1:6443"
    config = RESTConfig(configuration, timeout=3.0, connect_timeout=2.0, retry_timeouts=False)
    copy = RESTConfig.from_portable(config.portable())
    assert (copy.timeout, copy.connect_timeout, copy.retry_timeouts) == (3.0, 2.0, False)
