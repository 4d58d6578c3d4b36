"""The shared cache and the delegating client on the in-memory API server."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import msgspec
import pytest
from pydantic import BaseModel, ConfigDict, Field

from ballast.runtime import (
    Cache,
    CacheScope,
    FakeAPI,
    GroupVersionKind,
    NotFoundError,
    Projection,
    Scheme,
)
from ballast.runtime.cache import CacheNotStartedError, DelegatingClient
from ballast.runtime.client import APIServerClient
from ballast.runtime.labels import SelectorError
from ballast.runtime.objects import FrozenDict, name
from tests.unit.internal.runtime.support import configmap, eventually

CONFIGMAP = GroupVersionKind("", "v1", "ConfigMap")
WIDGET = GroupVersionKind("example.com", "v1", "Widget")


def pod(name_: str, namespace: str, node: str, **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name_, "namespace": namespace, "labels": labels},
        "spec": {"nodeName": node, "containers": [{"name": "main", "image": "nginx"}]},
    }


class _PodSpec(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    node_name: str = ""


class PodProjection(Projection, frozen=True):
    spec: _PodSpec = _PodSpec()


@pytest.fixture
def seeded(client: APIServerClient) -> APIServerClient:
    for namespace in ("shop", "blog"):
        client.create(configmap("a", namespace, labels={"tier": "front"}))
        client.create(configmap("b", namespace, labels={"tier": "back"}))
    client.create(pod("p1", "shop", "n1", mode="apply"))
    client.create(pod("p2", "shop", "n2"))
    return client


@pytest.fixture
def caches() -> Iterator[list[Cache]]:
    made: list[Cache] = []
    yield made
    for cache in made:
        cache.stop()


def _cache(client: APIServerClient, caches: list[Cache], **options: Any) -> Cache:
    cache = Cache(client, sync_timeout=5, **options)
    caches.append(cache)
    return cache


def _names(objs: Iterable[Any]) -> list[str]:
    return [name(obj) for obj in objs]


def test_reads_need_a_started_cache(seeded: APIServerClient, caches: list[Cache]) -> None:
    cache = _cache(seeded, caches)
    with pytest.raises(CacheNotStartedError, match="the cache is not started"):
        cache.get("v1/ConfigMap", "a", "shop")


def test_get_and_list_read_read_only_views(seeded: APIServerClient, caches: list[Cache]) -> None:
    cache = _cache(seeded, caches)
    cache.start()
    got = cache.get("v1/ConfigMap", "a", "shop")  # starts the informer on first use and waits for it
    assert isinstance(got, FrozenDict)
    assert got["metadata"]["labels"] == {"tier": "front"}
    with pytest.raises(TypeError):
        got["metadata"]["labels"]["tier"] = "x"
    assert _names(cache.list("v1/ConfigMap")) == ["a", "b", "a", "b"]
    assert [f"{o['metadata']['namespace']}/{name(o)}" for o in cache.list(CONFIGMAP, "shop")] == ["shop/a", "shop/b"]
    assert cache.has_synced()
    assert cache.wait_for_sync(1)


def test_a_removed_informer_is_replaced_on_the_next_read(seeded: APIServerClient, caches: list[Cache]) -> None:
    cache = _cache(seeded, caches)
    cache.start()
    first = cache.get_informer("v1/ConfigMap")
    assert cache.get_informer("v1/ConfigMap") is first
    assert cache.get_informer(CONFIGMAP) is first  # another reference to the same kind, the same informer

    assert cache.remove_informer(CONFIGMAP)
    seeded.create(configmap("c", "shop"))

    assert _names(cache.list("v1/ConfigMap", "shop")) == ["a", "b", "c"]  # read through a new informer
    assert cache.get_informer("v1/ConfigMap") is not first
    assert first.stopped


@pytest.mark.parametrize(
    ("namespace", "selector", "expected"),
    [
        (None, "tier=front", ["blog/a", "shop/a"]),
        ("shop", "tier=front", ["shop/a"]),
        (None, {"tier": "back"}, ["blog/b", "shop/b"]),
        ("blog", "tier notin (front)", ["blog/b"]),
        (None, "tier=none", []),
    ],
)
def test_list_by_label_selector(
    seeded: APIServerClient, caches: list[Cache], namespace: str | None, selector: Any, expected: list[str]
) -> None:
    cache = _cache(seeded, caches)
    cache.start()
    found = cache.list("v1/ConfigMap", namespace, label_selector=selector)
    assert sorted(f"{o['metadata']['namespace']}/{name(o)}" for o in found) == expected


def test_a_missing_object_is_not_found(seeded: APIServerClient, caches: list[Cache]) -> None:
    cache = _cache(seeded, caches)
    cache.start()
    with pytest.raises(NotFoundError, match="configmap 'shop/zzz' not found in the cache"):
        cache.get("v1/ConfigMap", "zzz", "shop")


def test_index_fields_before_and_after_the_informer_exists(seeded: APIServerClient, caches: list[Cache]) -> None:
    cache = _cache(seeded, caches)
    cache.index_field("v1/Pod", "node", lambda obj: [obj["spec"]["nodeName"]])
    cache.start()
    assert _names(cache.list("v1/Pod", index=("node", "n1"))) == ["p1"]
    cache.index_field("v1/ConfigMap", "tier", lambda obj: [obj["metadata"]["labels"]["tier"]])
    cache.list("v1/ConfigMap")  # the informer exists now
    cache.index_field("v1/ConfigMap", "name", lambda obj: [obj["metadata"]["name"]])  # added to a running one
    assert sorted(_names(cache.list("v1/ConfigMap", index=("tier", "back")))) == ["b", "b"]
    assert _names(cache.list("v1/ConfigMap", "blog", index=("name", "a"))) == ["a"]  # index and namespace
    assert cache.list("v1/ConfigMap", index=("name", "a"), label_selector="tier=back").items == []


def test_informers_are_shared_per_kind_and_scope(seeded: APIServerClient, caches: list[Cache]) -> None:
    cache = _cache(seeded, caches)
    first = cache.get_informer("v1/ConfigMap")
    assert cache.get_informer(CONFIGMAP) is first
    scoped = cache.get_informer("v1/ConfigMap", CacheScope(namespace="shop"))
    assert scoped is not first
    assert cache.get_informer("v1/ConfigMap", CacheScope(namespace="shop")) is scoped
    assert {informer.name for informer in cache.informers()} == {"configmap.core", "configmap.core,ns=shop"}
    cache.start()
    assert cache.wait_for_sync(5)
    assert sorted(scoped.store.keys()) == ["shop/a", "shop/b"]


def test_the_cache_follows_changes(seeded: APIServerClient, caches: list[Cache]) -> None:
    cache = _cache(seeded, caches)
    cache.start()
    assert cache.get("v1/ConfigMap", "a", "shop")
    seeded.patch(configmap("a", "shop"), {"data": {"mode": "x"}})
    eventually(lambda: cache.get("v1/ConfigMap", "a", "shop").get("data") == {"mode": "x"}, "the update")
    seeded.delete(configmap("a", "shop"))
    eventually(lambda: "a" not in _names(cache.list("v1/ConfigMap", "shop")), "the delete")


def test_a_label_scoped_kind_caches_only_what_matches(seeded: APIServerClient, caches: list[Cache]) -> None:
    cache = _cache(seeded, caches, by_kind={"v1/Pod": CacheScope(label_selector="mode=apply")})
    cache.start()
    assert _names(cache.list("v1/Pod")) == ["p1"]
    with pytest.raises(NotFoundError):
        cache.get("v1/Pod", "p2", "shop")  # exists, but outside the cache's scope
    seeded.patch(pod("p2", "shop", "n2"), {"metadata": {"labels": {"mode": "apply"}}})
    eventually(lambda: _names(cache.list("v1/Pod")) == ["p1", "p2"], "p2 to enter the selection")
    seeded.patch(pod("p1", "shop", "n1"), {"metadata": {"labels": {"mode": "off"}}})
    eventually(lambda: _names(cache.list("v1/Pod")) == ["p2"], "p1 to leave the selection as a delete")


def test_a_projection_scope_caches_frozen_structs(seeded: APIServerClient, caches: list[Cache]) -> None:
    cache = _cache(seeded, caches, by_kind={"v1/Pod": CacheScope(namespace="shop", projection=PodProjection)})
    cache.start()
    got = cache.get("v1/Pod", "p1", "shop")
    assert isinstance(got, PodProjection)
    assert got.spec.node_name == "n1"
    assert not hasattr(got, "status")
    assert [p.metadata.labels for p in cache.list("v1/Pod", label_selector="mode=apply")] == [{"mode": "apply"}]
    assert cache.scope_for("v1/Pod").projection is PodProjection
    assert cache.scope_for("v1/ConfigMap") == CacheScope()


class WidgetMeta(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    name: str
    namespace: str | None = None
    resource_version: str | None = Field(default=None, alias="resourceVersion")


class Widget(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore")
    api_version: str = Field(default="example.com/v1", alias="apiVersion")
    kind: str = "Widget"
    metadata: WidgetMeta
    size: int = 0


def test_registered_models_come_back_as_models(caches: list[Cache]) -> None:
    api = FakeAPI()
    api.register(WIDGET, "widgets", namespaced=True)
    scheme = Scheme()
    scheme.register(WIDGET, Widget)
    client = api.client(scheme=scheme)
    client.create(Widget(metadata=WidgetMeta(name="w", namespace="shop"), size=3))
    cache = _cache(client, caches)
    cache.start()
    got = cache.get(Widget, "w", "shop")
    assert isinstance(got, Widget)
    assert got.size == 3
    assert [w.metadata.name for w in cache.list(Widget)] == ["w"]


def test_the_delegating_client_reads_the_cache_and_writes_direct(
    api: FakeAPI, seeded: APIServerClient, caches: list[Cache]
) -> None:
    cache = _cache(seeded, caches)
    delegating = DelegatingClient(cache, seeded, uncached=["v1/Pod"])
    cache.start()
    assert delegating.get("v1/ConfigMap", "a", "shop")["metadata"]["name"] == "a"
    assert len(delegating.list("v1/ConfigMap", "shop", label_selector="tier=back")) == 1
    object_reads = [r for r in api.requests if r[0] == "GET" and r[1].endswith("/configmaps/a")]
    assert object_reads == []  # served from the informer's store
    pod_read = delegating.get("v1/Pod", "p2", "shop")
    assert isinstance(pod_read, dict)  # uncached: straight from the API server, a plain dict
    assert api.requests[-1] == ("GET", "/api/v1/namespaces/shop/pods/p2")
    assert _names(delegating.list("v1/Pod", "shop")) == ["p1", "p2"]
    created = delegating.create(configmap("c", "shop"))  # writes go to the API server at once
    assert created["metadata"]["resourceVersion"]
    assert api.requests[-1] == ("POST", "/api/v1/namespaces/shop/configmaps")
    eventually(lambda: "c" in _names(delegating.list("v1/ConfigMap", "shop")), "the write to reach the cache")
    delegating.status().update({**seeded.get("v1/Pod", "p1", "shop"), "status": {"phase": "Running"}})
    assert seeded.get("v1/Pod", "p1", "shop")["status"] == {"phase": "Running"}


def test_stop_stops_every_informer(seeded: APIServerClient, caches: list[Cache]) -> None:
    cache = _cache(seeded, caches)
    cache.start()
    cache.list("v1/ConfigMap")
    cache.list("v1/Pod")
    cache.stop()
    assert all(informer.stopped for informer in cache.informers())
    with pytest.raises(CacheNotStartedError):
        cache.list("v1/Pod")


def test_equal_selectors_written_differently_share_one_informer(api: FakeAPI) -> None:
    cache = Cache(api.client())
    written = CacheScope(label_selector="tier=web,app in (b,a)", field_selector="b=2,a=1")
    rewritten = CacheScope(label_selector="app in (a,b), tier=web", field_selector="a=1, b=2")
    first, second = cache.get_informer("v1/Pod", written), cache.get_informer("v1/Pod", rewritten)
    assert first is second
    assert len(cache.informers()) == 1
    assert CacheScope(label_selector=" ").label_selector is None
    with pytest.raises(SelectorError, match="invalid label key"):
        CacheScope(label_selector="a b=1")
