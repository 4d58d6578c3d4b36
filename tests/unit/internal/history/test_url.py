"""Opening stores by URL, without a server: schemes, SQLite paths, errors that never echo credentials."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

from ballast.internal.history import (
    RedisHistoryStore,
    SQLiteHistoryStore,
    StoreUnavailableError,
    StoreURLError,
    open_store,
    sqlite_path,
)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("sqlite:///history.db", Path("history.db")),
        ("sqlite:///data/history.db", Path("data/history.db")),
        ("sqlite:////var/lib/ballast/history.db", Path("/var/lib/ballast/history.db")),
    ],
)
def test_sqlite_path(url: str, expected: Path) -> None:
    assert sqlite_path(url) == expected


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sqlite://", "names no database file"),
        ("sqlite:///", "names no database file"),
        ("sqlite:///data/", "names no database file"),
        ("sqlite://host/history.db", "no host, query or fragment"),
        ("sqlite:///history.db?mode=ro", "no host, query or fragment"),
    ],
)
def test_bad_sqlite_urls(url: str, message: str) -> None:
    with pytest.raises(StoreURLError, match=message):
        open_store(url)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("memcached://cache:11211", "unsupported scheme 'memcached'; use one of redis, rediss, redis\\+sentinel"),
        ("valkey", "unsupported scheme ''"),
        ("redis://127.0.0.1:notaport/0", "store URL"),
        ("redis://127.0.0.1:6379/zero", "database 'zero' is not a number"),
        ("redis://127.0.0.1:6379/0?socket_timeout=soon", "socket_timeout"),
    ],
)
def test_bad_urls(url: str, message: str) -> None:
    with pytest.raises(StoreURLError, match=message) as caught:
        open_store(url)
    assert isinstance(caught.value, ValueError)


def test_unsupported_scheme_error_hides_credentials() -> None:
    with pytest.raises(StoreURLError) as caught:
        open_store("postgres://admin:hunter2@db:5432/ballast")
    assert "hunter2" not in str(caught.value)


def test_open_store_picks_the_backend(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path}/h.db") as store:
        assert isinstance(store, SQLiteHistoryStore)
    assert (tmp_path / "h.db").exists()
    for url in ("redis://127.0.0.1:6379/0", "rediss://user:pw@cache.example:6380/2", "REDIS://localhost"):
        with open_store(url) as store:  # nothing is sent until the first call
            assert isinstance(store, RedisHistoryStore)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


def test_an_unreachable_redis_is_unavailable_at_the_first_call_and_hides_the_password() -> None:
    with open_store(f"redis://:hunter2@127.0.0.1:{_closed_port()}/0", timeout=1) as store:
        began = time.monotonic()
        with pytest.raises(StoreUnavailableError, match=r"ping: Redis at 127\.0\.0\.1:\d+ is unavailable") as caught:
            store.ping()
        assert time.monotonic() - began < 1.5  # no hidden client retries
    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize("timeout", [0, -1.5])
def test_bad_timeouts(timeout: float, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="timeout"):
        open_store("redis://localhost", timeout=timeout)
    with pytest.raises(ValueError, match="busy_timeout"):
        open_store(f"sqlite:///{tmp_path}/h.db", timeout=timeout)
