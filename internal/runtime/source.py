"""Sources: where a controller's events come from (controller-runtime's `source`).

`Kind` watches a kind through the shared cache's informer: informer events → predicates → handler → queue.
`Channel` feeds generic events pushed from elsewhere (a timer, another subsystem).
"""

from __future__ import annotations

import queue as stdqueue
import threading
from collections.abc import Sequence
from typing import Any, Protocol

from .cache import Cache, CacheScope
from .client import KindRef
from .event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent
from .handler import EventHandler, RequestQueue
from .informer import Registration
from .predicate import Predicate


class Source(Protocol):
    def start(self, queue: RequestQueue) -> None: ...

    def wait_for_sync(self, timeout: float | None) -> bool: ...

    def stop(self) -> None: ...


class _InformerAdapter:
    """Informer callbacks → predicate-filtered handler calls."""

    def __init__(self, handler: EventHandler, predicates: Sequence[Predicate], queue: RequestQueue) -> None:
        self._handler = handler
        self._predicates = predicates
        self._queue = queue

    def on_add(self, obj: Any, is_initial_list: bool) -> None:
        event = CreateEvent(obj, is_initial_list)
        if all(p.create(event) for p in self._predicates):
            self._handler.create(event, self._queue)

    def on_update(self, old: Any, new: Any) -> None:
        event = UpdateEvent(old, new)
        if all(p.update(event) for p in self._predicates):
            self._handler.update(event, self._queue)

    def on_delete(self, obj: Any) -> None:
        event = DeleteEvent(obj)
        if all(p.delete(event) for p in self._predicates):
            self._handler.delete(event, self._queue)


class Kind:
    """Watch `kind` (in `scope`, default: the cache's scope for the kind) through the shared cache."""

    def __init__(
        self,
        cache: Cache,
        kind: KindRef,
        handler: EventHandler,
        predicates: Sequence[Predicate] = (),
        scope: CacheScope | None = None,
    ) -> None:
        self.cache = cache
        self.kind = kind
        self.handler = handler
        self.predicates = tuple(predicates)
        self.scope = scope
        self._registration: Registration | None = None

    def start(self, queue: RequestQueue) -> None:
        informer = self.cache.get_informer(self.kind, self.scope)
        self._registration = informer.add_event_handler(_InformerAdapter(self.handler, self.predicates, queue))

    def wait_for_sync(self, timeout: float | None) -> bool:
        return self.cache.get_informer(self.kind, self.scope).wait_for_sync(timeout)

    def stop(self) -> None:
        if self._registration is not None:
            self._registration.remove()
            self._registration = None

    def __repr__(self) -> str:
        return f"Kind({self.kind!r})"


class Channel:
    """Generic events from a `queue.Queue` of objects, handled on a thread of their own."""

    def __init__(self, events: stdqueue.Queue[Any], handler: EventHandler, predicates: Sequence[Predicate] = ()):
        self.events = events
        self.handler = handler
        self.predicates = tuple(predicates)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, queue: RequestQueue) -> None:
        def pump() -> None:
            while not self._stop.is_set():
                try:
                    obj = self.events.get(timeout=0.2)
                except stdqueue.Empty:
                    continue
                event = GenericEvent(obj)
                if all(p.generic(event) for p in self.predicates):
                    self.handler.generic(event, queue)

        self._thread = threading.Thread(target=pump, name="source-channel", daemon=True)
        self._thread.start()

    def wait_for_sync(self, timeout: float | None) -> bool:
        return True

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)


__all__ = [
    "Channel",
    "Kind",
    "Source",
]
