"""The client Protocols: the API client, the manager's delegating client and the fake all implement them (mypy
checks the assignments below), and the manager's client reads from the cache and writes to the API server."""

from __future__ import annotations

import pytest

from ballast.runtime import FakeAPI, Manager, interfaces, labels
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
        with pytest.raises(ValueError, match=r"index=.*v1/Secret is uncached and the live API has no indexes"):
            manager.client.list("v1/Secret", "shop", index=("field", "value"))


# ------------------------------------------------------------------------------- one reader signature


READERS = ["client", "api_reader", "manager.client", "manager.cache"]


@pytest.fixture
def seeded(api: FakeAPI) -> FakeAPI:
    writer = api.client()
    for namespace in ("shop", "blog"):
        writer.create(configmap("a", namespace, labels={"tier": "front"}))
        writer.create(configmap("b", namespace, labels={"tier": "back"}))
    return api


def _reader(which: str, api: FakeAPI, manager: Manager) -> interfaces.Reader:
    readers: dict[str, interfaces.Reader] = {
        "client": api.client(),
        "api_reader": manager.api_reader,
        "manager.client": manager.client,
        "manager.cache": manager.cache,
    }
    return readers[which]


def _keys(listed: interfaces.ObjectList) -> list[str]:
    return sorted(f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in listed)


@pytest.mark.parametrize("which", READERS)
def test_every_reader_takes_the_same_list_options_and_returns_an_object_list(seeded: FakeAPI, which: str) -> None:
    manager = Manager(client=seeded.client())
    with running(manager):
        reader = _reader(which, seeded, manager)
        listed = reader.list("v1/ConfigMap")
        assert isinstance(listed, interfaces.ObjectList)
        assert len(listed) == 4
        assert len(listed.items) == 4
        assert listed.resource_version  # the list's (or the informer's last synced) resourceVersion
        assert listed[0] is listed.items[0]
        assert listed[1:] == listed.items[1:]
        assert [o["metadata"]["name"] for o in listed] == [o["metadata"]["name"] for o in listed.items]
        back = ["blog/b", "shop/b"]
        assert _keys(reader.list("v1/ConfigMap", label_selector="tier=back")) == back
        assert _keys(reader.list("v1/ConfigMap", label_selector={"tier": "back"})) == back  # a dict
        assert _keys(reader.list("v1/ConfigMap", label_selector=labels.parse("tier in (back)"))) == back
        assert _keys(reader.list("v1/ConfigMap", "shop", field_selector="metadata.name=a")) == ["shop/a"]
        assert _keys(reader.list("v1/ConfigMap", field_selector={"metadata.namespace": "blog"})) == [
            "blog/a",
            "blog/b",
        ]
        assert _keys(reader.list("v1/ConfigMap", "shop", field_selector="metadata.name!=a")) == ["shop/b"]
        assert len(reader.list("v1/ConfigMap", limit=3)) == 3


@pytest.mark.parametrize("which", ["client", "api_reader"])
def test_the_live_reader_refuses_an_index_and_points_to_the_cache(seeded: FakeAPI, which: str) -> None:
    manager = Manager(client=seeded.client())
    reader = _reader(which, seeded, manager)
    with pytest.raises(
        ValueError, match=r"index=\('tier', 'back'\): the live API has no indexes; read through the cache"
    ):
        reader.list("v1/ConfigMap", index=("tier", "back"))
    first = reader.list("v1/ConfigMap", limit=3)  # the live reader pages
    assert len(first) == 3
    assert first.continue_
    rest = reader.list("v1/ConfigMap", limit=3, continue_=first.continue_)
    assert len(rest) == 1
    assert not rest.continue_


@pytest.mark.parametrize("which", ["manager.client", "manager.cache"])
def test_the_cache_answers_indexes_and_indexed_fields_and_refuses_what_it_cannot(seeded: FakeAPI, which: str) -> None:
    manager = Manager(client=seeded.client())
    manager.cache.index_field("v1/ConfigMap", "metadata.labels.tier", lambda o: [o["metadata"]["labels"]["tier"]])
    with running(manager):
        reader = _reader(which, seeded, manager)
        assert _keys(reader.list("v1/ConfigMap", index=("metadata.labels.tier", "front"))) == ["blog/a", "shop/a"]
        assert _keys(reader.list("v1/ConfigMap", field_selector="metadata.labels.tier=front")) == ["blog/a", "shop/a"]
        assert _keys(reader.list("v1/ConfigMap", "blog", field_selector="metadata.labels.tier!=front")) == ["blog/b"]
        with pytest.raises(ValueError, match="continue_: the cache has no pages"):
            reader.list("v1/ConfigMap", continue_="4")
        with pytest.raises(ValueError, match=r"field_selector 'data.key': .*index_field\(v1/ConfigMap, 'data.key'"):
            reader.list("v1/ConfigMap", field_selector="data.key=value")
        with pytest.raises(ValueError, match=r"index=\('nope', 'x'\): v1/ConfigMap has no index named 'nope'"):
            reader.list("v1/ConfigMap", index=("nope", "x"))


def test_a_selector_of_the_wrong_type_is_refused_naming_the_argument(seeded: FakeAPI) -> None:
    reader: interfaces.Reader = seeded.client()
    with pytest.raises(
        TypeError, match=r"label_selector must be a str, a dict of labels or a labels\.Selector, not int"
    ):
        reader.list("v1/ConfigMap", label_selector=3)  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="field_selector must be a str or a dict"):
        reader.list("v1/ConfigMap", field_selector=["metadata.name=a"])  # type: ignore[call-overload]
