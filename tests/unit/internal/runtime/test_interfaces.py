"""The client Protocols: the API client, the manager's delegating client and the fake all implement them (mypy
checks the assignments below), and the manager's client reads from the cache and writes to the API server."""

from __future__ import annotations

import pytest

from ballast.internal.runtime import FakeAPI, Manager, interfaces
from tests.unit.internal.runtime.support import configmap, running


def test_every_client_is_an_interfaces_client(api: FakeAPI) -> None:
    manager = Manager(client=api.client(), uncached=["v1/Secret"])
    clients: list[interfaces.Client] = [api.client(), manager.client]
    readers: list[interfaces.Reader] = [*clients, manager.cache]
    writers: list[interfaces.Writer] = list(clients)
    assert len(readers) == 3
    assert len(writers) == 2


def test_the_managers_client_reads_the_cache_and_writes_the_server(api: FakeAPI) -> None:
    manager = Manager(client=api.client(), uncached=["v1/Secret"])
    writer: interfaces.Writer = manager.client
    with running(manager):
        manager.cache.wait_for_sync(10)
        writer.create(configmap("made", "shop", key="value"))
        assert [o["metadata"]["name"] for o in api.objects("v1/ConfigMap")] == ["made"]  # written to the server
        manager.client.status()  # subresource writers come from the API client
        api.client().create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "shop"}})
        assert manager.client.get("v1/Secret", "s", "shop")["metadata"]["name"] == "s"  # uncached: a live read
        with pytest.raises(ValueError, match="index lookups need a cached kind"):
            manager.client.list("v1/Secret", "shop", index=("field", "value"))
