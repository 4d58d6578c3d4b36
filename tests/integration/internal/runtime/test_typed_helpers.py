"""The typed helpers on the real API server: a typed custom resource gets its finalizer, its status condition (Go's
call on a fresh object) and owns a ConfigMap made with create_or_update; the same with dicts."""

from __future__ import annotations

import datetime
from typing import Any, ClassVar

import pytest
from pydantic import Field

from ballast.runtime import FakeClock, RESTConfig, Scheme, controllerutil, set_controller_reference
from ballast.runtime.client import APIServerClient
from ballast.runtime.conditions import set_status_condition
from ballast.runtime.controllerutil import OperationResult, add_finalizer, remove_finalizer
from ballast.runtime.crd import ConditionList, Conditions, CustomResource, ObjectMeta, Scope, WireModel, crd_for
from ballast.runtime.envtest import Environment
from ballast.runtime.rest import Transport


class MemcachedSpec(WireModel):
    size: int = 1


class MemcachedStatus(WireModel):
    conditions: Conditions = ConditionList()


class Memcached(CustomResource):
    """A memcached, as in operator-sdk's tutorial."""

    GROUP, VERSION, KIND, PLURAL = "typed.ballast.example", "v1", "Memcached", "memcacheds"
    SCOPE: ClassVar[Scope] = "Namespaced"
    STATUS_SUBRESOURCE = True

    spec: MemcachedSpec = Field(default_factory=MemcachedSpec)
    status: MemcachedStatus = Field(default_factory=MemcachedStatus)


@pytest.fixture
def typed_client(envtest: Environment) -> Any:
    envtest.install_crds([crd_for(Memcached)])
    scheme = Scheme()
    Memcached.add_to_scheme(scheme)
    transport = Transport(RESTConfig(envtest.client_configuration()))
    client = APIServerClient(transport, scheme=scheme, field_owner="typed-helpers")
    yield client
    client.close()


def _configmap(name: str, namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}


def test_a_typed_resource_through_every_helper(typed_client: APIServerClient, envtest_namespace: str) -> None:
    clock = FakeClock(datetime.datetime(2026, 5, 6, 7, 8, 9, tzinfo=datetime.UTC))
    memcached = typed_client.create(Memcached(metadata=ObjectMeta(name="cache", namespace=envtest_namespace)))
    assert isinstance(memcached, Memcached)
    assert memcached.status.conditions == []

    assert add_finalizer(memcached, "cache.example.com/finalizer")
    memcached = typed_client.update(memcached)
    assert memcached.metadata.finalizers == ["cache.example.com/finalizer"]

    set_status_condition(
        memcached.status.conditions,
        {"type": "Available", "status": "Unknown", "reason": "Reconciling", "message": "Starting reconciliation"},
        clock=clock,
    )
    memcached = typed_client.status().update(memcached)
    [available] = memcached.status.conditions
    assert available.last_transition_time == clock.now()

    def own(configmap: dict[str, Any]) -> None:
        configmap["data"] = {"size": str(memcached.spec.size)}
        set_controller_reference(memcached, configmap)

    configmap = _configmap("cache", envtest_namespace)
    assert controllerutil.create_or_update(typed_client, configmap, own) is OperationResult.CREATED
    stored = typed_client.get("v1/ConfigMap", "cache", envtest_namespace)
    assert stored["metadata"]["ownerReferences"][0]["uid"] == memcached.metadata.uid

    def resize(current: Memcached) -> None:
        current.spec.size = 3

    again = Memcached(metadata=ObjectMeta(name="cache", namespace=envtest_namespace))
    assert controllerutil.create_or_patch(typed_client, again, resize) is OperationResult.UPDATED
    assert again.spec.size == 3
    assert again.metadata.finalizers == ["cache.example.com/finalizer"]

    assert remove_finalizer(again, "cache.example.com/finalizer")
    typed_client.update(again)
    assert typed_client.get(Memcached, "cache", envtest_namespace).metadata.finalizers is None


def test_the_same_helpers_on_dicts(typed_client: APIServerClient, envtest_namespace: str) -> None:
    owner = typed_client.create(_configmap("owner", envtest_namespace))
    assert add_finalizer(owner, "cache.example.com/finalizer")
    owner = typed_client.update(owner)

    def own(configmap: dict[str, Any]) -> None:
        set_controller_reference(owner, configmap)

    owned = _configmap("owned", envtest_namespace)
    assert controllerutil.create_or_patch(typed_client, owned, own) is OperationResult.CREATED
    assert owned["metadata"]["ownerReferences"][0]["name"] == "owner"
    assert remove_finalizer(owner, "cache.example.com/finalizer")
    assert "finalizers" not in typed_client.update(owner)["metadata"]
