"""The scoped informer pool against the real API server: each pooled informer lists and watches only what its
selector matches (the API server filters), a label change that moves an object out of a selector reaches its
users as a delete, and the last release stops the watch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ballast.runtime import Cache, GroupVersionKind, Request
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.informerpool import ScopedInformerPool
from tests.unit.internal.runtime.support import RecordingQueue

CONFIGMAP = GroupVersionKind("", "v1", "ConfigMap")
WEB, DB = Request("pool", "web-user"), Request("pool", "db-user")


def configmap(name: str, namespace: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace,
                                                                   "labels": labels}}  # fmt: skip


@pytest.fixture
def cache(client: APIServerClient) -> Iterator[Cache]:
    made = Cache(client, sync_timeout=30.0)
    made.start()
    yield made
    made.stop()


def names(informer: Any) -> list[str]:
    return sorted(obj["metadata"]["name"] for obj in informer.store.values())


def test_pooled_informers_hold_what_their_selector_matches(
    client: APIServerClient, cache: Cache, envtest_namespace: str
) -> None:
    namespace = envtest_namespace
    for name, app in (("w1", "web"), ("w2", "web"), ("d1", "db"), ("other", "none")):
        client.create(configmap(name, namespace, app=app))
    pool = ScopedInformerPool(cache, CONFIGMAP)
    queue = RecordingQueue()
    pool.start(queue)
    found = pool.use(WEB, namespace, ["app=web"]) | pool.use(DB, namespace, ["app=db"])
    web, db = found["app=web"], found["app=db"]
    assert web.wait_for_sync(30.0)
    assert db.wait_for_sync(30.0)
    assert (names(web), names(db)) == (["w1", "w2"], ["d1"])
    assert queue.added == []

    moved = client.get(CONFIGMAP, "w2", namespace)
    moved["metadata"]["labels"] = {"app": "db"}
    client.update(moved)
    poll_until(lambda: names(web) == ["w1"] and names(db) == ["d1", "w2"], timeout=30.0, what="w2 moved over")
    poll_until(lambda: {r for r, _ in queue.added} == {WEB, DB}, timeout=30.0, what="both users requeued")

    pool.release_all(WEB)
    assert web.stopped
    assert not db.stopped
    assert pool.selectors() == {(namespace, "app=db"): [DB]}
    pool.stop()
