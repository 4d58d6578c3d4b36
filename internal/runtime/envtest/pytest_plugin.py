"""pytest plugin (entry point `pytest11`): a session-scoped `envtest` fixture with a started Environment.

Any project that installs `ballast` gets it: declare the fixture and receive a running kube-apiserver.

    def test_configmap(envtest):
        api = kubernetes.client.CoreV1Api(kubernetes.client.ApiClient(envtest.client_configuration()))

Fixtures: `envtest` (session), `envtest_namespace` (a fresh namespace per test, deleted afterwards),
`private_network` (asserts the test runs inside `ballast-envtest netns`). Options: `--envtest-k8s-version`,
ini `envtest_crd_paths`. Binaries missing from the cache are built once, before the first test, with progress
on the terminal. When `CI=true`, a control plane that cannot be found or built, or a missing private network,
fails the test; elsewhere it skips with the reason.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from typing import NoReturn

import pytest

from .assets import Assets, find_assets
from .environment import Environment
from .errors import APIError, AssetsNotFoundError, BuildError, NetworkError
from .network import in_private_network, interfaces

_assets_key = pytest.StashKey[Assets | Exception]()


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


def unavailable(reason: str) -> NoReturn:
    """Skip the test for a missing real component (kube-apiserver, etcd, redis-server, helm) — or, under CI=true,
    fail it: there a missing component is a broken set-up, never a reason to skip."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: a missing real component is a failure, not a skip)", pytrace=False)
    pytest.skip(reason)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("envtest", "real kube-apiserver + etcd (ballast envtest)")
    group.addoption("--envtest-k8s-version", default=None, help="Kubernetes version of the envtest control plane")
    parser.addini("envtest_crd_paths", "CRD files or directories installed when envtest starts", type="paths")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "integration: needs the real kube-apiserver + etcd (envtest fixture)")
    config.addinivalue_line("markers", "private_network: needs `ballast-envtest netns` (TEST-NET-2 addresses)")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Find or build the binaries before any test runs, so a cold build is not counted in a test timeout."""
    if not any("envtest" in getattr(item, "fixturenames", ()) for item in session.items):
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    capture = session.config.pluginmanager.get_plugin("capturemanager")
    version = session.config.getoption("--envtest-k8s-version")
    try:
        if capture is not None:
            with capture.global_and_fixture_disabled():
                assets: Assets | Exception = find_assets(version)
        else:
            assets = find_assets(version)
    except (AssetsNotFoundError, BuildError) as exc:
        assets = exc
    session.config.stash[_assets_key] = assets
    if reporter is not None and isinstance(assets, Assets):
        reporter.write_line(f"envtest: control plane from {assets.directory} ({assets.origin})")


@pytest.fixture(scope="session")
def envtest(request: pytest.FixtureRequest) -> Iterator[Environment]:
    """A started Environment shared by the whole session."""
    assets = request.config.stash.get(_assets_key, None)
    if assets is None:
        try:
            assets = find_assets(request.config.getoption("--envtest-k8s-version"))
        except (AssetsNotFoundError, BuildError) as exc:
            assets = exc
    if isinstance(assets, Exception):
        unavailable(f"no envtest control plane: {assets}")
    crd_paths = [str(p) for p in request.config.getini("envtest_crd_paths")]
    environment = Environment(assets=assets, crd_paths=crd_paths)
    try:
        environment.start()
    except NetworkError as exc:
        unavailable(str(exc))
    try:
        yield environment
    finally:
        environment.stop()


@pytest.fixture
def envtest_namespace(envtest: Environment) -> Iterator[str]:
    """A fresh namespace for one test, deleted afterwards."""
    name = f"test-{uuid.uuid4().hex[:10]}"
    envtest.rest.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    try:
        yield name
    finally:
        with contextlib.suppress(APIError):
            envtest.rest.delete(f"/api/v1/namespaces/{name}")


@pytest.fixture
def private_network() -> None:
    """Fail (CI) or skip (elsewhere) unless the test runs inside the private test network."""
    if not in_private_network():
        unavailable(
            "this test needs the private test network; run it under `ballast-envtest netns -- pytest ...` "
            f"(current interfaces: {', '.join(interfaces())})"
        )


__all__ = [
    "envtest",
    "envtest_namespace",
    "in_ci",
    "private_network",
    "pytest_addoption",
    "pytest_collection_finish",
    "pytest_configure",
    "unavailable",
]
