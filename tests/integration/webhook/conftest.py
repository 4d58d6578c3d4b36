"""What the admission suites share: a typed client of the session's API server with our CRDs installed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ballast.api.scheme import add_to_scheme
from ballast.runtime import RESTConfig, Scheme
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.rest import Transport
from tests.paths import CRD_DIR


@pytest.fixture(scope="module")
def client(envtest: Environment) -> Iterator[APIServerClient]:
    """An APIServerClient reading our kinds as models (field owner `webhook-tests`), CRDs installed first."""
    envtest.install_crds([CRD_DIR])
    made = APIServerClient(
        Transport(RESTConfig(envtest.client_configuration())),
        scheme=add_to_scheme(Scheme()),
        field_owner="webhook-tests",
    )
    yield made
    made.close()
