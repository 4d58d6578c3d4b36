"""Event handlers: turn informer events into Requests on a controller's queue (controller-runtime's `handler`).

Handlers only enqueue. With the priority queue, objects from an informer's initial list and periodic
resyncs (update with an unchanged resourceVersion) go in at `LOW_PRIORITY`, so real changes jump ahead —
controller-runtime's `WithLowPriorityWhenUnchanged`, on by default.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from . import objects
from .event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
from .gvk import GroupVersionKind
from .reconcile import Request
from .workqueue import WorkQueue

LOW_PRIORITY = -100


RequestQueue = WorkQueue[Request]
"""The queue handlers add to: a controller's `workqueue.WorkQueue` of Requests."""


class EventHandler(Protocol):
    def create(self, event: CreateEvent, queue: RequestQueue) -> None: ...

    def update(self, event: UpdateEvent, queue: RequestQueue) -> None: ...

    def delete(self, event: DeleteEvent, queue: RequestQueue) -> None: ...

    def generic(self, event: GenericEvent, queue: RequestQueue) -> None: ...


def request_for(obj: Any) -> Request:
    return Request(objects.namespace(obj), objects.name(obj))


def _create_priority(event: CreateEvent) -> int:
    return LOW_PRIORITY if event.is_initial_list else 0


def _update_priority(event: UpdateEvent) -> int:
    unchanged = objects.resource_version(event.object_old) == objects.resource_version(event.object_new)
    return LOW_PRIORITY if unchanged else 0


class _MappingHandler:
    """Base: subclasses say which requests an object maps to; enqueueing and priorities live here."""

    def requests(self, obj: Any) -> Iterable[Request]:
        raise NotImplementedError

    def _add(self, queue: RequestQueue, objs: Iterable[Any], priority: int) -> None:
        seen: set[Request] = set()
        for obj in objs:
            for request in self.requests(obj):
                if request not in seen:
                    seen.add(request)
                    queue.add(request, priority=priority)

    def create(self, event: CreateEvent, queue: RequestQueue) -> None:
        self._add(queue, (event.object,), _create_priority(event))

    def update(self, event: UpdateEvent, queue: RequestQueue) -> None:
        # Both old and new: a changed owner or label must reach both the former and the current target.
        self._add(queue, (event.object_old, event.object_new), _update_priority(event))

    def delete(self, event: DeleteEvent, queue: RequestQueue) -> None:
        self._add(queue, (event.object,), 0)

    def generic(self, event: GenericEvent, queue: RequestQueue) -> None:
        self._add(queue, (event.object,), 0)


class EnqueueRequestForObject(_MappingHandler):
    """Enqueue the object itself (what `Builder.for_` uses)."""

    def requests(self, obj: Any) -> Iterable[Request]:
        return (request_for(obj),)


@dataclass
class EnqueueRequestForOwner(_MappingHandler):
    """Enqueue the owner of kind `owner` (group and kind compared, version ignored).

    `only_controller`: only the ownerReference with `controller: true` (what `Builder.owns` uses).
    `namespaced`: whether the owner kind is namespaced (its Request then takes the object's namespace).
    """

    owner: GroupVersionKind
    only_controller: bool = True
    namespaced: bool = True

    def requests(self, obj: Any) -> Iterable[Request]:
        found = []
        for reference in objects.owner_references(obj):
            api_version = _get(reference, "apiVersion", "api_version")
            kind = _get(reference, "kind", "kind")
            if kind != self.owner.kind or api_version.rpartition("/")[0] != self.owner.group:
                continue
            if self.only_controller and not _get(reference, "controller", "controller"):
                continue
            found.append(Request(objects.namespace(obj) if self.namespaced else "", _get(reference, "name", "name")))
        return found


MapFunc = Callable[[Any], Iterable[Request]]
"""controller-runtime's `handler.MapFunc`: the requests an event's object maps to (type its argument as the
object your watch delivers, or `object` when it is not read)."""


class EnqueueRequestsFromMapFunc(_MappingHandler):
    """Enqueue whatever `map_func(obj)` returns (for watches that are not owner relations)."""

    def __init__(self, map_func: MapFunc) -> None:
        self._map = map_func

    def requests(self, obj: Any) -> Iterable[Request]:
        return self._map(obj)


def _get(reference: Any, key: str, attribute: str) -> Any:
    if isinstance(reference, dict) or hasattr(reference, "get"):
        return reference.get(key) or ""
    return getattr(reference, attribute, "") or ""


__all__ = [
    "LOW_PRIORITY",
    "EnqueueRequestForObject",
    "EnqueueRequestForOwner",
    "EnqueueRequestsFromMapFunc",
    "EventHandler",
    "MapFunc",
    "RequestQueue",
    "request_for",
]
