"""The `store` fixture that runs the shared contract suite against both backends (Redis on a real
redis-server), and more servers on demand (credentials, TLS)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ballast.internal.history import HistoryStore, RedisHistoryStore, SQLiteHistoryStore
from ballast.runtime.envtest.certs import TinyCA
from tests.integration.redis_server import RedisServer, TLSFiles, redis_server_or_skip


@pytest.fixture
def start_redis_server(tmp_path: Path) -> Iterator[Callable[..., RedisServer]]:
    """Start more servers, e.g. with credentials or TLS: `start_redis_server(password=…, tls=…)`; all are stopped
    after the test."""
    binary = redis_server_or_skip()
    started: list[RedisServer] = []

    def start(**options: Any) -> RedisServer:
        directory = tmp_path / f"redis-{len(started)}"
        directory.mkdir()
        server = RedisServer(binary, directory, **options)
        started.append(server)
        server.start()
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def tls_files(tmp_path: Path) -> TLSFiles:
    """A CA and a serving certificate for localhost / 127.0.0.1."""
    ca = TinyCA("ballast-store-test-ca")
    cert, key = ca.issue("localhost", hosts=("localhost", "127.0.0.1"), server=True).write(tmp_path / "tls")
    ca_path = tmp_path / "tls" / "ca.crt"
    ca_path.write_bytes(ca.cert_pem)
    return TLSFiles(cert, key, ca_path)


@pytest.fixture(params=["sqlite", "redis"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[HistoryStore]:
    """The same history store contract, once per backend (Redis against a real redis-server)."""
    backend: HistoryStore
    if request.param == "redis":
        server: RedisServer = request.getfixturevalue("redis_server")
        backend = RedisHistoryStore.from_url(server.url, timeout=5)
    else:
        backend = SQLiteHistoryStore(tmp_path / "history.db")
    with backend:
        yield backend
