"""Shared informers on the in-memory API server: delivery, relists after 410, late handlers, failing handlers."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from ballast.runtime import FakeAPI, FakeClock, GroupVersionKind, NotFoundError, Projection
from ballast.runtime._decode import DictDecoder, ProjectionDecoder
from ballast.runtime._store import NAMESPACE_INDEX
from ballast.runtime.apierrors import BadRequestError, TooManyRequestsError
from ballast.runtime.client import APIServerClient, ListerWatcher, WatchStream
from ballast.runtime.informer import FuncHandler, SharedIndexInformer
from tests.unit.internal.runtime.support import configmap, eventually

CONFIGMAP = GroupVersionKind("", "v1", "ConfigMap")


class Recorder:
    """Informer callbacks as (event, name, detail) tuples; detail: is_initial_list, or (old RV, new RV)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, Any]] = []
        self.objects: list[Any] = []
        self._lock = threading.Lock()
        self.handler = FuncHandler(
            add=lambda obj, initial: self._record("add", obj, initial),
            update=lambda old, new: self._record(
                "update", new, (old["metadata"]["resourceVersion"], new["metadata"]["resourceVersion"])
            ),
            delete=lambda obj: self._record("delete", obj, None),
        )

    def _record(self, event: str, obj: Any, detail: Any) -> None:
        with self._lock:
            self.events.append((event, obj["metadata"]["name"], detail))
            self.objects.append(obj)

    def snapshot(self) -> list[tuple[str, str, Any]]:
        with self._lock:
            return list(self.events)

    def wait_for(self, count: int) -> list[tuple[str, str, Any]]:
        def enough() -> list[tuple[str, str, Any]] | None:
            events = self.snapshot()
            return events if len(events) >= count else None

        return eventually(enough, f"{count} informer events")


class GatedListerWatcher:
    """Wraps a ListerWatcher: records LIST versions, and can hold new watches until released."""

    def __init__(self, inner: ListerWatcher, *, fail_streaming_list: bool = False) -> None:
        self.inner = inner
        self.list_versions: list[str | None] = []
        self.fail_streaming_list = fail_streaming_list
        self.open = threading.Event()
        self.open.set()
        self.held = threading.Event()
        self.refusals: list[Exception] = []  # raised, in order, by the next watch opens
        self.watch_versions: list[str] = []

    def list(self, *, resource_version: str | None, limit: int | None, continue_: str | None) -> bytes:
        self.list_versions.append(resource_version)
        return self.inner.list(resource_version=resource_version, limit=limit, continue_=continue_)

    def watch(self, **options: Any) -> WatchStream:
        if options["send_initial_events"] and self.fail_streaming_list:
            raise BadRequestError(400, "BadRequest", "sendInitialEvents is not supported")
        if not self.open.is_set():
            self.held.set()
            self.open.wait(10)
        self.watch_versions.append(options["resource_version"])
        if self.refusals:
            raise self.refusals.pop(0)
        return self.inner.watch(**options)


def stored(informer: SharedIndexInformer, key: str) -> Any:
    obj = informer.store.get(key)
    assert obj is not None, f"{key} is not in the store"
    return obj


@pytest.fixture
def started() -> Iterator[list[SharedIndexInformer]]:
    informers: list[SharedIndexInformer] = []
    yield informers
    for informer in informers:
        informer.stop()


def _informer(lister_watcher: ListerWatcher, started: list[SharedIndexInformer], **options: Any) -> SharedIndexInformer:
    informer = SharedIndexInformer(lister_watcher, DictDecoder(CONFIGMAP), name="test", **options)
    started.append(informer)
    return informer


def test_list_then_watch_delivers_every_change_with_final_state(
    client: APIServerClient, started: list[SharedIndexInformer]
) -> None:
    client.create(configmap("before", "shop", mode="x"))
    informer = _informer(client.lister_watcher(CONFIGMAP), started)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler)
    informer.start()
    assert informer.wait_for_sync(5)
    assert informer.has_synced()
    assert recorder.snapshot() == [("add", "before", True)]
    created = client.create(configmap("after", "shop", mode="1"))
    updated = client.patch(created, {"data": {"mode": "2"}})
    client.delete(updated)
    events = recorder.wait_for(4)
    assert events[1:] == [
        ("add", "after", False),
        ("update", "after", (created["metadata"]["resourceVersion"], updated["metadata"]["resourceVersion"])),
        ("delete", "after", None),
    ]
    assert recorder.objects[-1]["data"] == {"mode": "2"}  # a delete carries the last state
    before = stored(informer, "shop/before")
    assert before["kind"] == "ConfigMap"
    assert before["apiVersion"] == "v1"
    assert informer.store.keys() == ["shop/before"]
    assert informer.store.index_keys(NAMESPACE_INDEX, "shop") == ["shop/before"]
    deleted_version = str(int(updated["metadata"]["resourceVersion"]) + 1)
    eventually(lambda: informer.last_sync_resource_version == deleted_version, "the version of the last event")


def test_a_410_relists_from_the_last_version_and_delivers_the_difference(started: list[SharedIndexInformer]) -> None:
    api = FakeAPI(history=2)
    client = api.client()
    for name in "abc":
        client.create(configmap(name, "shop"))
    gated = GatedListerWatcher(client.lister_watcher(CONFIGMAP, "shop"))
    informer = _informer(gated, started)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler)
    informer.start()
    assert informer.wait_for_sync(5)
    assert informer.last_sync_resource_version == "3"
    gated.open.clear()
    api.close()  # the watch ends; the informer re-watches and is held there
    eventually(gated.held.is_set, "the informer to re-watch")
    a = client.patch(client.get(CONFIGMAP, "a", "shop"), {"data": {"v": "2"}})  # 4
    client.delete(configmap("b", "shop"))  # 5
    d = client.create(configmap("d", "shop"))  # 6
    client.patch(d, {"data": {"v": "1"}})  # 7: history keeps only 6 and 7, so a watch from 3 is expired
    gated.open.set()
    events = recorder.wait_for(6)
    assert events[3:] == [("update", "a", ("1", a["metadata"]["resourceVersion"])), ("add", "d", False),
                          ("delete", "b", None)]  # fmt: skip
    assert gated.list_versions == ["0", "3"]  # first from the watch cache, then from the last synced version
    assert informer.relists == 1
    assert sorted(informer.store.keys()) == ["shop/a", "shop/c", "shop/d"]
    assert stored(informer, "shop/d")["data"] == {"v": "1"}
    client.create(configmap("e", "shop"))  # and it watches again
    assert recorder.wait_for(7)[-1] == ("add", "e", False)


def test_an_unreachable_or_throttling_server_costs_watches_from_the_same_version_not_a_relist(
    started: list[SharedIndexInformer],
) -> None:
    api = FakeAPI()
    client = api.client()
    client.create(configmap("a", "shop"))
    gated = GatedListerWatcher(client.lister_watcher(CONFIGMAP, "shop"))
    informer = _informer(gated, started)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler)
    informer.start()
    assert informer.wait_for_sync(5)
    gated.refusals = [ConnectionError("GET /api/v1/namespaces/shop/configmaps: connection refused"),
                      TooManyRequestsError(429, "TooManyRequests", "slow down")]  # fmt: skip
    api.close()  # the watch ends; re-opening it fails twice
    client.create(configmap("b", "shop"))  # made while the informer could not watch
    assert recorder.wait_for(2)[-1] == ("add", "b", False)
    assert gated.list_versions == ["0"]  # never relisted
    assert informer.relists == 0
    assert gated.watch_versions == ["1", "1", "1", "1"]  # first watch, two refused, the one that worked


def test_a_handler_added_late_gets_the_cache_as_initial_adds(
    client: APIServerClient, started: list[SharedIndexInformer]
) -> None:
    for name in "ab":
        client.create(configmap(name, "shop"))
    informer = _informer(client.lister_watcher(CONFIGMAP), started)
    informer.start()
    assert informer.wait_for_sync(5)
    late = Recorder()
    registration = informer.add_event_handler(late.handler)
    assert sorted(late.snapshot()) == [("add", "a", True), ("add", "b", True)]
    assert registration.has_synced()
    client.create(configmap("c", "shop"))
    assert late.wait_for(3)[-1] == ("add", "c", False)
    registration.remove()
    other = Recorder()
    informer.add_event_handler(other.handler)
    client.create(configmap("d", "shop"))
    other.wait_for(4)
    assert len(late.snapshot()) == 3  # removed: nothing more


def test_a_failing_handler_does_not_stop_the_others(
    client: APIServerClient, started: list[SharedIndexInformer]
) -> None:
    def explode(*args: Any) -> None:
        raise RuntimeError("handler bug")

    informer = _informer(client.lister_watcher(CONFIGMAP), started)
    informer.add_event_handler(FuncHandler(add=explode, update=explode, delete=explode))
    recorder = Recorder()
    informer.add_event_handler(recorder.handler)
    informer.start()
    assert informer.wait_for_sync(5)
    created = client.create(configmap("a", "shop"))
    client.patch(created, {"data": {"x": "1"}})
    client.delete(created)
    assert [event for event, _, _ in recorder.wait_for(3)] == ["add", "update", "delete"]


def test_a_streaming_list_syncs_from_initial_events(
    client: APIServerClient, started: list[SharedIndexInformer]
) -> None:
    for name in "ab":
        client.create(configmap(name, "shop"))
    gated = GatedListerWatcher(client.lister_watcher(CONFIGMAP))
    informer = _informer(gated, started, watch_list=True)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler)
    informer.start()
    assert informer.wait_for_sync(5)
    assert sorted(recorder.snapshot()) == [("add", "a", True), ("add", "b", True)]
    assert gated.list_versions == []  # no LIST at all
    client.create(configmap("c", "shop"))
    assert recorder.wait_for(3)[-1] == ("add", "c", False)


def test_a_failed_streaming_list_falls_back_to_list(
    client: APIServerClient, started: list[SharedIndexInformer]
) -> None:
    client.create(configmap("a", "shop"))
    gated = GatedListerWatcher(client.lister_watcher(CONFIGMAP), fail_streaming_list=True)
    informer = _informer(gated, started, watch_list=True)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler)
    informer.start()
    assert informer.wait_for_sync(5)
    assert recorder.snapshot() == [("add", "a", True)]
    assert gated.list_versions == ["0"]


def test_resyncs_replay_the_cache_as_unchanged_updates(
    client: APIServerClient, started: list[SharedIndexInformer]
) -> None:
    clock = FakeClock()
    created = client.create(configmap("a", "shop"))
    informer = _informer(client.lister_watcher(CONFIGMAP), started, resync_period=60.0, clock=clock)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler)
    informer.start()
    assert informer.wait_for_sync(5)
    clock.advance(60)
    version = created["metadata"]["resourceVersion"]
    assert recorder.wait_for(2)[1] == ("update", "a", (version, version))
    assert recorder.objects[1] is informer.store.get("shop/a")


def test_a_projection_informer_stores_frozen_structs(
    client: APIServerClient, started: list[SharedIndexInformer]
) -> None:
    client.create(configmap("a", "shop", mode="x"))
    informer = SharedIndexInformer(client.lister_watcher(CONFIGMAP), ProjectionDecoder(Projection), name="proj")
    started.append(informer)
    informer.start()
    assert informer.wait_for_sync(5)
    projected = stored(informer, "shop/a")
    assert isinstance(projected, Projection)
    assert projected.metadata.name == "a"
    client.delete(configmap("a", "shop"))
    eventually(lambda: informer.store.get("shop/a") is None, "the delete to reach the store")


def test_stop_ends_the_watch_and_the_thread(client: APIServerClient) -> None:
    informer = SharedIndexInformer(client.lister_watcher(CONFIGMAP), DictDecoder(CONFIGMAP))
    informer.start()
    assert informer.wait_for_sync(5)
    informer.stop()
    assert informer.stopped
    recorder = Recorder()
    informer.add_event_handler(recorder.handler)
    client.create(configmap("a", "shop"))
    assert recorder.snapshot() == []
    assert informer.store.keys() == []


def test_a_handler_waiting_for_sync_during_the_first_list_is_not_blocked(
    client: APIServerClient, started: list[SharedIndexInformer]
) -> None:
    # A map function that lists its own kind from the cache runs inside the first list's delivery; a real wait
    # there would block the delivery that sets the flag (for the cache's whole sync timeout).
    for name in ("a", "b"):
        client.create(configmap(name, "shop"))
    informer = _informer(client.lister_watcher(CONFIGMAP), started)
    seen: list[tuple[bool, int]] = []
    informer.add_event_handler(
        FuncHandler(add=lambda obj, initial: seen.append((informer.wait_for_sync(30), len(informer.store.values()))))
    )
    informer.start()
    assert informer.wait_for_sync(5)
    assert seen == [(True, 2), (True, 2)]
    waiter: list[bool] = []
    other = threading.Thread(target=lambda: waiter.append(informer.wait_for_sync(1)))
    other.start()
    other.join(5)
    assert waiter == [True]


class RemovableType:
    """A ListerWatcher of a type that can stop being served (a CRD deleted): LIST and WATCH then answer 404."""

    def __init__(self, inner: ListerWatcher) -> None:
        self.inner = inner
        self.served = True
        self.lists = 0

    def list(self, *, resource_version: str | None, limit: int | None, continue_: str | None) -> bytes:
        self.lists += 1
        if not self.served:
            raise NotFoundError(404, "NotFound", "the server could not find the requested resource")
        return self.inner.list(resource_version=resource_version, limit=limit, continue_=continue_)

    def watch(self, **options: Any) -> WatchStream:
        if not self.served:
            raise NotFoundError(404, "NotFound", "the server could not find the requested resource")
        return self.inner.watch(**options)


def _served(informer: SharedIndexInformer) -> bool:
    return informer.served  # read through a call: each read is a new observation, not narrowed by the last


def test_a_type_not_served_syncs_empty_under_absent_as_empty_and_relist_lists_at_once(
    started: list[SharedIndexInformer],
) -> None:
    api = FakeAPI()
    client = api.client()
    client.create(configmap("a", "shop"))
    removable = RemovableType(client.lister_watcher(CONFIGMAP, "shop"))
    removable.served = False
    clock = FakeClock()  # never advanced: the reflector's backoff never ends by itself
    informer = _informer(removable, started, absent_as_empty=True, clock=clock)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler)
    informer.start()
    assert informer.wait_for_sync(5)  # synced, empty: nothing of an unserved type exists
    assert not _served(informer)
    assert informer.store.keys() == []
    removable.served = True
    ticket = informer.relist()
    assert informer.wait_for_list(ticket, 5)  # listed although the backoff has not elapsed on its clock
    assert _served(informer)
    assert informer.store.keys() == ["shop/a"]
    assert recorder.snapshot() == [("add", "a", False)]  # after the (empty) sync: a new object
    removable.served = False  # the type goes away: its objects are delivered as deletes
    ticket = informer.relist()
    assert informer.wait_for_list(ticket, 5)
    assert not _served(informer)
    assert informer.store.keys() == []
    assert recorder.snapshot()[-1] == ("delete", "a", None)


def test_without_absent_as_empty_an_unserved_type_never_syncs(started: list[SharedIndexInformer]) -> None:
    removable = RemovableType(FakeAPI().client().lister_watcher(CONFIGMAP, "shop"))
    removable.served = False
    informer = _informer(removable, started)
    informer.start()
    eventually(lambda: removable.lists >= 1, "the first LIST")
    assert not informer.wait_for_sync(0.2)
