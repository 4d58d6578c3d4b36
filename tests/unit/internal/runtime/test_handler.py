"""Event handlers: which Requests an event enqueues, at which priority; and the event types themselves."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import pytest

from ballast.runtime import (
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EnqueueRequestsFromMapFunc,
    GroupVersionKind,
    Projection,
    Request,
)
from ballast.runtime._decode import ObjectMeta, OwnerReference
from ballast.runtime.event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
from ballast.runtime.handler import LOW_PRIORITY, request_for
from ballast.runtime.objects import freeze
from tests.unit.internal.runtime.support import RecordingQueue

DEPLOYMENT = GroupVersionKind("apps", "v1", "Deployment")
NODE = GroupVersionKind("", "v1", "Node")


def obj(
    name: str, namespace: str = "shop", version: str = "1", owners: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": namespace, "resourceVersion": version, "ownerReferences": owners or []}
    }


def owner(name: str, *, kind: str = "Deployment", api_version: str = "apps/v1", controller: bool = True) -> Any:
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": f"uid-{name}", "controller": controller}


# ------------------------------------------------------------------------------------------- events


def test_events_are_frozen_values() -> None:
    event = CreateEvent(obj("a"))
    assert not event.is_initial_list
    assert CreateEvent(obj("a"), True).is_initial_list
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.is_initial_list = True  # type: ignore[misc]
    resync = obj("a")
    update = UpdateEvent(resync, resync)
    assert update.object_old is update.object_new
    assert DeleteEvent(obj("a")).object["metadata"]["name"] == "a"
    assert GenericEvent(obj("a")) == GenericEvent(obj("a"))


# ----------------------------------------------------------------------------- enqueue the object


@pytest.mark.parametrize(
    ("event", "expected"),
    [
        (CreateEvent(obj("a")), [(Request("shop", "a"), 0)]),
        (CreateEvent(obj("a"), is_initial_list=True), [(Request("shop", "a"), LOW_PRIORITY)]),
        (UpdateEvent(obj("a", version="1"), obj("a", version="2")), [(Request("shop", "a"), 0)]),
        (UpdateEvent(obj("a", version="1"), obj("a", version="1")), [(Request("shop", "a"), LOW_PRIORITY)]),
        (DeleteEvent(obj("a")), [(Request("shop", "a"), 0)]),
        (GenericEvent(obj("a")), [(Request("shop", "a"), 0)]),
        (CreateEvent(obj("node-1", namespace="")), [(Request("", "node-1"), 0)]),
    ],
)
def test_enqueue_request_for_object(event: Any, expected: list[tuple[Request, int]]) -> None:
    queue = RecordingQueue()
    handler = EnqueueRequestForObject()
    if isinstance(event, CreateEvent):
        handler.create(event, queue)
    elif isinstance(event, UpdateEvent):
        handler.update(event, queue)
    elif isinstance(event, DeleteEvent):
        handler.delete(event, queue)
    else:
        handler.generic(event, queue)
    assert queue.added == expected


def test_request_for_views_and_projections() -> None:
    assert request_for(freeze(obj("a"))) == Request("shop", "a")
    assert request_for(Projection(metadata=ObjectMeta(name="b", namespace="ns"))) == Request("ns", "b")


# ------------------------------------------------------------------------------ enqueue the owner


@pytest.mark.parametrize(
    ("owners", "only_controller", "expected"),
    [
        ([owner("web")], True, ["web"]),
        ([owner("web", controller=False)], True, []),
        ([owner("web", controller=False)], False, ["web"]),
        ([owner("web", controller=False), owner("api")], True, ["api"]),
        ([owner("web", controller=False), owner("api")], False, ["web", "api"]),
        ([owner("web", kind="StatefulSet")], True, []),  # kind must match
        ([owner("web", api_version="other.io/v1")], True, []),  # group must match
        ([owner("web", api_version="apps/v2")], True, ["web"]),  # version does not matter
        ([], True, []),
    ],
)
def test_enqueue_request_for_owner(owners: list[Any], only_controller: bool, expected: list[str]) -> None:
    queue = RecordingQueue()
    EnqueueRequestForOwner(DEPLOYMENT, only_controller=only_controller).create(
        CreateEvent(obj("rs", owners=owners)), queue
    )
    assert [request for request, _ in queue.added] == [Request("shop", name) for name in expected]


def test_a_cluster_scoped_owner_gets_a_request_without_namespace() -> None:
    queue = RecordingQueue()
    handler = EnqueueRequestForOwner(NODE, only_controller=False, namespaced=False)
    handler.create(CreateEvent(obj("pod", owners=[owner("node-1", kind="Node", api_version="v1")])), queue)
    assert queue.added == [(Request("", "node-1"), 0)]


def test_updates_enqueue_old_and_new_owners_once_each() -> None:
    queue = RecordingQueue()
    old = obj("rs", version="1", owners=[owner("web")])
    new = obj("rs", version="2", owners=[owner("api")])
    EnqueueRequestForOwner(DEPLOYMENT).update(UpdateEvent(old, new), queue)
    assert queue.added == [(Request("shop", "web"), 0), (Request("shop", "api"), 0)]
    queue = RecordingQueue()
    EnqueueRequestForOwner(DEPLOYMENT).update(UpdateEvent(new, obj("rs", version="3", owners=[owner("api")])), queue)
    assert queue.added == [(Request("shop", "api"), 0)]  # de-duplicated


def test_owner_resync_and_initial_list_are_low_priority() -> None:
    queue = RecordingQueue()
    same = obj("rs", owners=[owner("web")])
    handler = EnqueueRequestForOwner(DEPLOYMENT)
    handler.update(UpdateEvent(same, same), queue)
    handler.create(CreateEvent(same, is_initial_list=True), queue)
    handler.delete(DeleteEvent(same), queue)
    assert [priority for _, priority in queue.added] == [LOW_PRIORITY, LOW_PRIORITY, 0]


@pytest.mark.parametrize(
    "child",
    [
        freeze(obj("rs", owners=[owner("web")])),
        Projection(
            metadata=ObjectMeta(
                name="rs", namespace="shop",
                owner_references=(OwnerReference(api_version="apps/v1", kind="Deployment", name="web",
                                                 controller=True),),
            )
        ),
    ],
    ids=["view", "projection"],
)  # fmt: skip
def test_owner_references_on_views_and_projections(child: Any) -> None:
    queue = RecordingQueue()
    EnqueueRequestForOwner(DEPLOYMENT).create(CreateEvent(child), queue)
    assert queue.added == [(Request("shop", "web"), 0)]


# ---------------------------------------------------------------------------------------- map funcs


def test_map_func_requests_are_deduplicated_across_old_and_new() -> None:
    def by_label(target: Any) -> Iterable[Request]:
        apps = target["metadata"].get("labels", {}).get("apps", "")
        return [Request("shop", app) for app in apps.split(".") if app]

    handler = EnqueueRequestsFromMapFunc(by_label)
    old = {"metadata": {"name": "cm", "resourceVersion": "1", "labels": {"apps": "web.api"}}}
    new = {"metadata": {"name": "cm", "resourceVersion": "2", "labels": {"apps": "api.batch.api"}}}
    queue = RecordingQueue()
    handler.update(UpdateEvent(old, new), queue)
    assert [r.name for r, _ in queue.added] == ["web", "api", "batch"]
    queue = RecordingQueue()
    handler.generic(GenericEvent(new), queue)
    handler.create(CreateEvent(new, is_initial_list=True), queue)
    assert queue.added == [
        (Request("shop", "api"), 0), (Request("shop", "batch"), 0),
        (Request("shop", "api"), LOW_PRIORITY), (Request("shop", "batch"), LOW_PRIORITY),
    ]  # fmt: skip


def test_a_map_func_may_enqueue_nothing() -> None:
    queue = RecordingQueue()
    EnqueueRequestsFromMapFunc(lambda target: []).delete(DeleteEvent(obj("a")), queue)
    assert queue.added == []
