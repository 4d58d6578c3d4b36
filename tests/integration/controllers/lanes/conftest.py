"""Run the operator's core lanes (kill switch, enrollment, profiles, policy status) against the real API server."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ballast.api.scheme import add_to_scheme
from ballast.internal.cmd.wiring import CONTROLLERS, Dependencies, add_core_lanes, new_manager
from ballast.internal.history import HistoryStore, open_store
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.operator import OperatorOptions
from ballast.runtime import Manager, RESTConfig, Scheme
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.rest import Transport
from tests.unit.internal.runtime.support import running

IDENTITY = ["app.kubernetes.io/name", "app.kubernetes.io/component"]
OPERATOR_NAMESPACE = "ballast-system"
CRP = "/apis/ballast.tightlinesoftware.com/v1/clusterresourcepolicies"


@dataclass
class Operator:
    manager: Manager
    client: APIServerClient
    kill_switch: KillSwitchState
    store: HistoryStore
    options: OperatorOptions


@pytest.fixture
def operator_client(envtest: Environment) -> APIServerClient:
    return APIServerClient(
        Transport(RESTConfig(envtest.client_configuration())), scheme=add_to_scheme(Scheme()), field_owner="tests"
    )


@pytest.fixture(scope="module")
def operator_namespace(envtest: Environment) -> str:
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": OPERATOR_NAMESPACE}}
    with contextlib.suppress(Exception):
        envtest.rest.create("/api/v1/namespaces", body)
    return OPERATOR_NAMESPACE


@pytest.fixture
def operator(envtest: Environment, operator_namespace: str, tmp_path: Path) -> Iterator[Operator]:
    """The core lanes on a manager of their own, with a SQLite history store."""
    client = APIServerClient(
        Transport(RESTConfig(envtest.client_configuration())), scheme=add_to_scheme(Scheme()), field_owner="ballastd"
    )
    manager = new_manager(client, namespace=operator_namespace)
    options = OperatorOptions(operator_namespace=operator_namespace)
    kill_switch = KillSwitchState()
    store = open_store(f"sqlite:///{tmp_path / 'history.db'}")
    add_core_lanes(manager, set(CONTROLLERS), Dependencies(store=store, kill_switch=kill_switch, options=options))
    with running(manager, stop_timeout=40):
        yield Operator(manager, client, kill_switch, store, options)
    store.close()


def ballast_config(
    identity: list[str] | None = None, orphan_ttl: str = "168h", suspended: bool = False
) -> dict[str, Any]:
    return {
        "apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "BallastConfig", "metadata": {"name": "ballast"},
        "spec": {"identityLabels": identity or IDENTITY, "orphanTTL": orphan_ttl, "suspended": suspended},
    }  # fmt: skip


def pod(
    name: str, namespace: str, labels: dict[str, str], mode: str | None = "measure", **extra: Any
) -> dict[str, Any]:
    all_labels = dict(labels)
    if mode is not None:
        all_labels["ballast.tightlinesoftware.com/mode"] = mode
    body: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": all_labels, **extra},
        "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]},
    }  # fmt: skip
    return body


@pytest.fixture
def apply_config(envtest: Environment) -> Iterator[Any]:
    """Apply BallastConfig `ballast` (cluster-wide, so tests using it run one at a time in this process)."""

    def apply(body: dict[str, Any]) -> None:
        envtest.rest.apply("/apis/ballast.tightlinesoftware.com/v1/ballastconfigs/ballast", body)

    yield apply
    with contextlib.suppress(Exception):
        envtest.rest.delete("/apis/ballast.tightlinesoftware.com/v1/ballastconfigs/ballast")


@pytest.fixture
def new_namespace(envtest: Environment) -> Iterator[Callable[[str], str]]:
    """Creates a namespace `<prefix>-<6 hex>` per call; every one is deleted after the test."""
    made: list[str] = []

    def create(prefix: str) -> str:
        name = f"{prefix}-{uuid.uuid4().hex[:6]}"
        envtest.rest.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        made.append(name)
        return name

    yield create
    for name in made:
        with contextlib.suppress(Exception):
            envtest.rest.delete(f"/api/v1/namespaces/{name}")


@pytest.fixture
def default_policy(envtest: Environment) -> Iterator[str]:
    """The catch-all ClusterResourcePolicy `default` (priority 0, defaults for everything); its name."""
    body = {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "ClusterResourcePolicy",
            "metadata": {"name": "default"}, "spec": {"priority": 0}}  # fmt: skip
    envtest.rest.apply(f"{CRP}/default", body)
    yield "default"
    with contextlib.suppress(Exception):
        envtest.rest.delete(f"{CRP}/default")
