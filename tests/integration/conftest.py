"""Integration tests run against the real kube-apiserver + etcd of the `envtest` fixture."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from ballast.runtime.envtest import Environment
from tests.integration.redis_server import RedisServer, redis_server_or_skip


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(item.path).parents:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def api_client(envtest: Environment) -> Iterator[Any]:
    """The official `kubernetes` client configured from the harness's admin credentials."""
    api: Any = client.ApiClient(envtest.client_configuration())
    yield api
    api.close()


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisServer]:
    """A started redis-server with append-only persistence, stopped after the test."""
    server = RedisServer(redis_server_or_skip(), tmp_path)
    server.start()
    yield server
    server.stop()
