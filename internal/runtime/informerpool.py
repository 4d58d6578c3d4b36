"""Scoped informer pools: informers of one kind made on demand, one per (namespace, label selector), shared by the
objects of a controller that need them and stopped when the last of them lets go.

Use one when a controller reads objects it cannot name in advance — a Balancer's pods, selected by each target's
`scale.status.selector` — and a cluster-wide informer would hold far more than it needs: memory follows what the
controller's objects select, not the cluster. The pool is also a controller source (`Builder.watches_source`):
an event on a pooled informer requeues exactly the users of that informer.

A user is a `Request` (the controller's object). `acquire` takes a reference on (namespace, selector) for a user
and returns the informer, created in the manager's cache on the first reference; `release` drops it, and the last
release removes the informer from the cache (stopped, its objects released). References are per user and
idempotent: a reconciler calls `use(user, namespace, selectors)` on every run to say which it needs now, and
those it needed before and no longer does are released. `release_all` is for a deleted object.

Initial-list adds do not requeue (the acquirer reads the store once it synced); updates requeue only when
`relevant_update(old, new)` says so (default: every update). The event path takes no lock — it reads a frozenset
replaced under the lock — so an informer's dispatch never waits for a reconcile, and stopping an informer under
the lock cannot deadlock with it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from ._decode import Projection
from .cache import Cache, CacheScope
from .handler import RequestQueue
from .informer import Registration, SharedIndexInformer
from .interfaces import KindRef
from .reconcile import Request

__all__ = ["PoolKey", "ScopedInformerPool"]


@dataclass(frozen=True, slots=True)
class PoolKey:
    """One pooled informer: a namespace and a label selector in canonical form ("" selects every object)."""

    namespace: str
    selector: str


@dataclass
class _Pooled:
    informer: SharedIndexInformer
    registration: Registration | None
    users: frozenset[Request] = frozenset()  # replaced, never changed: the event path reads it without a lock


class _RequeueUsers:
    """An informer's events → its users' requests: adds after the initial list, deletes, relevant updates."""

    def __init__(
        self, users: Callable[[], Iterable[Request]], queue: RequestQueue, relevant_update: Callable[[Any, Any], bool]
    ) -> None:
        self._users = users
        self._queue = queue
        self._relevant_update = relevant_update

    def _enqueue(self) -> None:
        for request in self._users():
            self._queue.add(request)

    def on_add(self, obj: Any, is_initial_list: bool) -> None:
        if not is_initial_list:
            self._enqueue()

    def on_update(self, old: Any, new: Any) -> None:
        if self._relevant_update(old, new):
            self._enqueue()

    def on_delete(self, obj: Any) -> None:
        self._enqueue()


def _every_update(old: Any, new: Any) -> bool:
    return True


class ScopedInformerPool:
    """Informers of `kind` in `cache`, one per `PoolKey`, reference-counted by their users; a controller source.

    `projection` decodes the objects into a typed `Projection` (the default keeps dicts); `relevant_update`
    filters the updates that requeue the users.
    """

    def __init__(
        self,
        cache: Cache,
        kind: KindRef,
        *,
        projection: type[Projection] | None = None,
        relevant_update: Callable[[Any, Any], bool] = _every_update,
    ) -> None:
        self._cache = cache
        self._kind = kind
        self._projection = projection
        self._relevant_update = relevant_update
        self._lock = threading.Lock()
        self._queue: RequestQueue | None = None
        self._pooled: dict[PoolKey, _Pooled] = {}
        self._by_user: dict[Request, set[PoolKey]] = {}

    # ------------------------------------------------------------------------------------------ source

    def start(self, queue: RequestQueue) -> None:
        with self._lock:
            self._queue = queue
            for key, pooled in self._pooled.items():
                if pooled.registration is None:
                    pooled.registration = self._register(key, pooled.informer)

    def wait_for_sync(self, timeout: float | None) -> bool:
        return True  # informers come and go; each acquirer waits for its own

    def stop(self) -> None:
        with self._lock:
            registrations = [p.registration for p in self._pooled.values() if p.registration is not None]
            for pooled in self._pooled.values():
                pooled.registration = None
            self._queue = None
        for registration in registrations:
            registration.remove()

    def _register(self, key: PoolKey, informer: SharedIndexInformer) -> Registration | None:
        if self._queue is None:
            return None
        handler = _RequeueUsers(lambda: self.users(key), self._queue, self._relevant_update)
        return informer.add_event_handler(handler)

    # ------------------------------------------------------------------------------------- references

    def scope(self, namespace: str, selector: str) -> CacheScope:
        """The cache scope of (namespace, selector): the informer `cache.get_informer(kind, scope)` returns."""
        return CacheScope(namespace=namespace, label_selector=selector or None, projection=self._projection)

    def key(self, namespace: str, selector: str) -> PoolKey:
        """(namespace, selector) with the selector canonical; raises `labels.SelectorError` for a bad one."""
        return PoolKey(namespace, self.scope(namespace, selector).label_selector or "")

    def acquire(self, user: Request, namespace: str, selector: str) -> SharedIndexInformer:
        """The informer of (namespace, selector), created on its first reference; `user` now holds one."""
        with self._lock:
            key = self.key(namespace, selector)
            self._by_user.setdefault(user, set()).add(key)
            return self._take(user, key)

    def release(self, user: Request, namespace: str, selector: str) -> bool:
        """Drop `user`'s reference on (namespace, selector); returns whether that stopped the informer."""
        with self._lock:
            key = self.key(namespace, selector)
            held = self._by_user.get(user, set())
            if key not in held:
                return False
            held.discard(key)
            if not held:
                del self._by_user[user]
            unused = self._drop(user, [key])
            self._remove(unused)
            return bool(unused)

    def use(self, user: Request, namespace: str, selectors: Iterable[str]) -> dict[str, SharedIndexInformer]:
        """The informers of `selectors` in `namespace`, by selector as given; `user` now holds exactly these
        (what it held before and no longer needs is released)."""
        found: dict[str, SharedIndexInformer] = {}
        keys: set[PoolKey] = set()
        with self._lock:
            for selector in selectors:
                key = self.key(namespace, selector)
                keys.add(key)
                found[selector] = self._take(user, key)
            previous = self._by_user.pop(user, set())
            if keys:
                self._by_user[user] = keys
            self._remove(self._drop(user, previous - keys))
        return found

    def release_all(self, user: Request) -> None:
        """Drop every reference of `user` (its object is gone)."""
        with self._lock:
            self._remove(self._drop(user, self._by_user.pop(user, set())))

    def _take(self, user: Request, key: PoolKey) -> SharedIndexInformer:
        pooled = self._pooled.get(key)
        if pooled is None:
            informer = self._cache.get_informer(self._kind, self.scope(key.namespace, key.selector))
            pooled = self._pooled[key] = _Pooled(informer, None)
            pooled.registration = self._register(key, informer)
        pooled.users = pooled.users | {user}
        return pooled.informer

    def _drop(self, user: Request, keys: Iterable[PoolKey]) -> list[PoolKey]:
        """Remove `user` from `keys`' informers; returns the keys nobody uses any more (forgotten too)."""
        unused = []
        for key in keys:
            pooled = self._pooled.get(key)
            if pooled is None:
                continue
            pooled.users = pooled.users - {user}
            if not pooled.users:
                del self._pooled[key]
                unused.append(key)
        return unused

    def _remove(self, keys: list[PoolKey]) -> None:
        # Under the lock: an acquirer must not get from the cache an informer that is about to be stopped.
        for key in keys:
            self._cache.remove_informer(self._kind, self.scope(key.namespace, key.selector))

    # ------------------------------------------------------------------------------------------- reading

    def users(self, key: PoolKey) -> list[Request]:
        """The users of `key`, sorted (no lock: see the module docstring)."""
        pooled = self._pooled.get(key)
        return sorted(pooled.users) if pooled else []

    def selectors(self) -> dict[tuple[str, str], list[Request]]:
        """(namespace, canonical selector) → its users, for every pooled informer."""
        with self._lock:
            return {(k.namespace, k.selector): sorted(p.users) for k, p in self._pooled.items()}
