"""Fixtures for the runtime's integration tests: our client configured from the envtest admin credentials."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ballast.runtime import RESTConfig
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.rest import Transport


@pytest.fixture
def rest_config(envtest: Environment) -> RESTConfig:
    return RESTConfig(envtest.client_configuration())


@pytest.fixture
def client(rest_config: RESTConfig) -> Iterator[APIServerClient]:
    client = APIServerClient(Transport(rest_config), field_owner="runtime-tests")
    yield client
    client.close()
