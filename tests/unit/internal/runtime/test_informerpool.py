"""The scoped informer pool on the in-memory API server: one informer per (namespace, canonical selector), shared
by its users; the last release removes it from the cache and stops it; `use` holds exactly the selectors given;
events requeue the users of the informer that saw them, relevant updates only, initial lists never."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ballast.runtime import Cache, FakeAPI, GroupVersionKind, Request
from ballast.runtime.client import APIServerClient
from ballast.runtime.informerpool import PoolKey, ScopedInformerPool
from ballast.runtime.labels import SelectorError
from tests.unit.internal.runtime.support import RecordingQueue, configmap, eventually

CONFIGMAP = GroupVersionKind("", "v1", "ConfigMap")
ALICE, BOB = Request("shop", "alice"), Request("shop", "bob")


@pytest.fixture
def cache(client: APIServerClient) -> Iterator[Cache]:
    made = Cache(client, sync_timeout=5.0)
    made.start()
    yield made
    made.stop()


def pooled(cache: Cache) -> list[str]:
    return sorted(informer.name for informer in cache.informers())


def test_one_informer_per_namespace_and_canonical_selector_shared_by_its_users(cache: Cache) -> None:
    pool = ScopedInformerPool(cache, CONFIGMAP)
    first = pool.acquire(ALICE, "shop", "b=2,a=1")
    assert pool.acquire(BOB, "shop", "a=1, b=2") is first
    assert pool.acquire(ALICE, "shop", "a=1,b=2") is first  # a second acquire by one user is one reference
    assert pool.acquire(ALICE, "blog", "a=1,b=2") is not first
    assert pool.selectors() == {("shop", "a=1,b=2"): [ALICE, BOB], ("blog", "a=1,b=2"): [ALICE]}
    assert pool.users(PoolKey("shop", "a=1,b=2")) == [ALICE, BOB]
    assert pool.key("shop", "b=2,a=1") == PoolKey("shop", "a=1,b=2")
    assert len(pooled(cache)) == 2


def test_the_last_release_removes_and_stops_the_informer(cache: Cache) -> None:
    pool = ScopedInformerPool(cache, CONFIGMAP)
    informer = pool.acquire(ALICE, "shop", "app=web")
    pool.acquire(BOB, "shop", "app=web")
    assert pool.release(ALICE, "shop", "app=web") is False
    assert pool.release(ALICE, "shop", "app=web") is False  # not held any more
    assert pool.selectors() == {("shop", "app=web"): [BOB]}
    assert pool.release(BOB, "shop", "app=web") is True
    assert informer.stopped
    assert pool.selectors() == {}
    assert pooled(cache) == []
    assert pool.acquire(ALICE, "shop", "app=web") is not informer  # a new one, after the last release


def test_use_holds_exactly_the_selectors_given(cache: Cache) -> None:
    pool = ScopedInformerPool(cache, CONFIGMAP)
    found = pool.use(ALICE, "shop", ["app=web", "app=db"])
    assert set(found) == {"app=web", "app=db"}
    pool.use(BOB, "shop", ["app=db"])
    again = pool.use(ALICE, "shop", ["app=db"])
    assert again["app=db"] is found["app=db"]
    assert found["app=web"].stopped
    assert pool.selectors() == {("shop", "app=db"): [ALICE, BOB]}
    pool.release_all(BOB)
    pool.use(ALICE, "shop", [])
    assert pool.selectors() == {}
    assert found["app=db"].stopped


def test_a_bad_selector_is_refused_and_nothing_is_acquired(cache: Cache) -> None:
    pool = ScopedInformerPool(cache, CONFIGMAP)
    with pytest.raises(SelectorError):
        pool.acquire(ALICE, "shop", "app in (")
    assert pool.selectors() == {}


def test_events_requeue_the_users_of_the_informer_that_saw_them(api: FakeAPI, cache: Cache) -> None:
    def data_changed(old: Any, new: Any) -> bool:
        return bool(old.get("data") != new.get("data"))

    client = api.client()
    client.create(configmap("before", "shop", {"app": "web"}))
    pool = ScopedInformerPool(cache, CONFIGMAP, relevant_update=data_changed)
    queue = RecordingQueue()
    pool.start(queue)  # after the first acquire's informer too: start registers every pooled informer
    web = pool.acquire(ALICE, "shop", "app=web")
    db = pool.acquire(BOB, "shop", "app=db")
    assert web.wait_for_sync(5.0)
    assert db.wait_for_sync(5.0)
    assert queue.added == []  # the initial list requeues nobody

    client.create(configmap("one", "shop", {"app": "web"}))
    eventually(lambda: (ALICE, 0) in queue.added, "the add requeues alice")
    assert all(request == ALICE for request, _ in queue.added)

    queue.added.clear()
    found = client.get(CONFIGMAP, "one", "shop")
    found["metadata"]["annotations"] = {"seen": "yes"}
    client.update(found)
    client.create(configmap("two", "shop", {"app": "db"}))
    eventually(lambda: (BOB, 0) in queue.added, "bob's informer saw its add")
    assert ALICE not in [request for request, _ in queue.added]  # an irrelevant update

    pool.stop()
    queue.added.clear()
    client.delete(configmap("one", "shop"))
    client.create(configmap("three", "shop", {"app": "db"}))
    eventually(lambda: "three" in [o["metadata"]["name"] for o in db.store.values()], "bob's informer saw it")
    assert queue.added == []  # a stopped source requeues nothing


def test_registered_on_start_when_acquired_before(cache: Cache, api: FakeAPI) -> None:
    pool = ScopedInformerPool(cache, CONFIGMAP)
    informer = pool.acquire(ALICE, "shop", "")
    assert informer.wait_for_sync(5.0)
    queue = RecordingQueue()
    pool.start(queue)
    api.client().create(configmap("late", "shop"))
    eventually(lambda: queue.added == [(ALICE, 0)], "an informer acquired before start requeues its user")
    assert pool.wait_for_sync(0.0)
