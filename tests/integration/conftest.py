"""Integration tests run against the real kube-apiserver + etcd of the `envtest` fixture."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from ballast.internal.runtime.envtest import Environment


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
