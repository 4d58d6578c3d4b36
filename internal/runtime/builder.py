"""The controller builder (controller-runtime's `builder`): watches, predicates and options in one chain.

    Builder(manager) \\
        .for_("apps/v1/Deployment", predicates=[generation_changed()]) \\
        .owns("apps/v1/ReplicaSet") \\
        .watches("v1/ConfigMap", EnqueueRequestsFromMapFunc(configmap_to_deployments)) \\
        .with_options(max_concurrent_reconciles=4, reconcile_timeout=30) \\
        .complete(reconciler)

The default name is the lower-cased kind of `for_`; names must be unique (they label metrics and logs).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from .cache import CacheScope
from .client import KindRef
from .controller import Controller, ControllerOptions
from .handler import EnqueueRequestForObject, EnqueueRequestForOwner, EventHandler
from .predicate import Predicate
from .ratelimiter import RateLimiter
from .reconcile import FuncReconciler, ReconcileFunc, Reconciler, Request
from .source import Kind, Source
from .workqueue import WorkQueue

if TYPE_CHECKING:
    from .manager import Manager


@dataclass
class _Watch:
    kind: KindRef
    handler: EventHandler | None
    predicates: tuple[Predicate, ...]
    scope: CacheScope | None
    owner: bool = False
    match_every_owner: bool = False


class BuilderError(ValueError):
    """The builder was used wrongly (no `for_`/watches, `owns` without `for_`, duplicate name)."""


class Builder:
    """Collects a controller's watches and options, then registers it with the manager."""

    def __init__(self, manager: Manager) -> None:
        self._manager = manager
        self._for: _Watch | None = None
        self._watches: list[_Watch] = []
        self._sources: list[Source] = []
        self._filters: list[Predicate] = []
        self._options = ControllerOptions()
        self._name: str | None = None

    def for_(self, kind: KindRef, *, predicates: Sequence[Predicate] = (), scope: CacheScope | None = None) -> Builder:
        """The kind this controller reconciles; its events enqueue the object itself."""
        if self._for is not None:
            raise BuilderError("for_() may be called only once")
        self._for = _Watch(kind, EnqueueRequestForObject(), tuple(predicates), scope)
        return self

    def owns(self, kind: KindRef, *, predicates: Sequence[Predicate] = (), match_every_owner: bool = False) -> Builder:
        """Objects of `kind` owned by the `for_` kind enqueue their controller owner."""
        self._watches.append(
            _Watch(kind, None, tuple(predicates), None, owner=True, match_every_owner=match_every_owner)
        )
        return self

    def watches(
        self,
        kind: KindRef,
        handler: EventHandler,
        *,
        predicates: Sequence[Predicate] = (),
        scope: CacheScope | None = None,
    ) -> Builder:
        """Objects of `kind` enqueue what `handler` maps them to (`Watches(obj, handler)`): e.g.
        `EnqueueRequestsFromMapFunc(fn)`; `predicates` filter the events, `scope` narrows the cache of `kind`."""
        self._watches.append(_Watch(kind, handler, tuple(predicates), scope))
        return self

    def watches_source(self, source: Source) -> Builder:
        """A raw source (e.g. `source.Channel`)."""
        self._sources.append(source)
        return self

    def with_event_filter(self, predicate: Predicate) -> Builder:
        """A predicate applied to every watch of this controller."""
        self._filters.append(predicate)
        return self

    def with_options(
        self,
        options: ControllerOptions | None = None,
        *,
        max_concurrent_reconciles: int | None = None,
        rate_limiter: RateLimiter[Request] | None = None,
        queue: WorkQueue[Request] | None = None,
        reconcile_timeout: float | None = None,
        cache_sync_timeout: float | None = None,
        need_leader_election: bool | None = None,
    ) -> Builder:
        """Controller options (`ControllerOptions`), whole or field by field; fields not given are kept."""
        given: dict[str, Any] = {
            "max_concurrent_reconciles": max_concurrent_reconciles, "rate_limiter": rate_limiter, "queue": queue,
            "reconcile_timeout": reconcile_timeout, "cache_sync_timeout": cache_sync_timeout,
            "need_leader_election": need_leader_election,
        }  # fmt: skip
        base = options if options is not None else self._options
        self._options = replace(base, **{name: value for name, value in given.items() if value is not None})
        return self

    def named(self, name: str) -> Builder:
        self._name = name
        return self

    def build(self, reconciler: Reconciler | ReconcileFunc) -> Controller:
        """Create the controller and add it to the manager."""
        if self._for is None and not self._watches and not self._sources:
            raise BuilderError("a controller needs for_(), watches() or watches_source()")
        if any(w.owner for w in self._watches) and self._for is None:
            raise BuilderError("owns() requires for_()")
        client = self._manager.api_reader
        name = self._name or (client.gvk(self._for.kind).kind.lower() if self._for else "")
        if not name:
            raise BuilderError("name the controller with named() when it has no for_()")
        if name in self._manager.controller_names:
            raise BuilderError(f"a controller named {name!r} already exists; controller names must be unique")
        if not hasattr(reconciler, "reconcile"):
            reconciler = FuncReconciler(reconciler)
        controller = Controller(name, reconciler, clock=self._manager.clock, **vars(self._options))
        for watch in ([self._for] if self._for else []) + self._watches:
            controller.watch(self._source(watch))
        for source in self._sources:
            controller.watch(source)
        self._manager.controller_names.add(name)
        self._manager.add(controller)
        return controller

    def complete(self, reconciler: Reconciler | ReconcileFunc) -> Controller:
        """`Complete(r)`: create the controller for `reconciler` (an object with `reconcile(ctx, request)`, or
        such a function) and add it to the manager; returns it. BuilderError for a builder with nothing to
        watch, or `owns()` without `for_()`."""
        return self.build(reconciler)

    def _source(self, watch: _Watch) -> Kind:
        handler = watch.handler
        if watch.owner:
            assert self._for is not None
            client = self._manager.api_reader
            owner = client.mapping(self._for.kind)
            handler = EnqueueRequestForOwner(
                owner.gvk, only_controller=not watch.match_every_owner, namespaced=owner.namespaced
            )
        assert handler is not None
        return Kind(self._manager.cache, watch.kind, handler, (*self._filters, *watch.predicates), watch.scope)


__all__ = [
    "Builder",
    "BuilderError",
]
