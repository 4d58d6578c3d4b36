"""The shared cache: one informer per (kind, scope), shared by every controller, read like a client.

controller-runtime's `cache.Cache`. A kind's default scope comes from `by_kind` (e.g. only pods with the mode
label, decoded through a projection) — every consumer of that kind then shares one watch, and memory follows
what is selected rather than everything in the cluster. Reads never copy: dicts come back as read-only views,
projections as frozen structs, registered models as fresh model instances.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, Unpack, overload

from . import labels as label_selectors
from . import objects
from ._decode import Decoder, DictDecoder, Projection, ProjectionDecoder, Transform, strip_managed_fields
from ._store import NAMESPACE_INDEX, IndexFunc
from .apierrors import NotFoundError
from .client import (
    APIServerClient,
    ListerWatcher,
    SubResourceClient,
    WatchStream,
    field_selector_string,
    label_selector_string,
)
from .clock import Clock, RealClock
from .gvk import GroupVersionKind
from .informer import SharedIndexInformer
from .interfaces import KindRef, ListOptions, ObjectList, Patch, PatchOptions, check_options
from .objects import freeze, labels
from .restmapper import NoKindMatchError
from .scheme import Scheme

DEFAULT_SYNC_TIMEOUT = 120.0
T = TypeVar("T")


@dataclass(frozen=True)
class CacheScope:
    """What one informer watches and how it decodes (controller-runtime's `cache.ByObject`).

    `namespace` None watches all namespaces; selectors are applied by the API server (an object that stops
    matching arrives as a delete); `projection` switches to a typed msgspec decoder; `transform` (dicts only)
    runs on each object before it is stored — by default it strips managedFields. `absent_as_empty`: while the
    kind is not served (its CRD not installed), the informer holds nothing and counts as synced instead of
    holding the cache's start (and every read) until it is (`SharedIndexInformer`).
    """

    namespace: str | None = None
    label_selector: str | None = None
    field_selector: str | None = None
    projection: type[Projection] | None = None
    transform: Transform | None = strip_managed_fields
    resync_period: float = 0.0
    page_size: int | None = None
    absent_as_empty: bool = False

    def __post_init__(self) -> None:
        # Canonical selectors: "b=2,a=1" and "a=1, b=2" must share one informer (and one watch).
        label = ",".join(sorted(str(r) for r in label_selectors.parse(self.label_selector).requirements))
        field = ",".join(sorted(t.strip() for t in (self.field_selector or "").split(",") if t.strip()))
        object.__setattr__(self, "label_selector", label or None)
        object.__setattr__(self, "field_selector", field or None)


class CacheNotStartedError(RuntimeError):
    """A read needed an informer to sync, but the cache is not running."""


class Cache:
    """Informers keyed by (kind, scope), started with the cache or on first use after it started."""

    def __init__(
        self,
        client: APIServerClient,
        *,
        by_kind: Mapping[KindRef, CacheScope] | None = None,
        sync_timeout: float = DEFAULT_SYNC_TIMEOUT,
        clock: Clock | None = None,
    ) -> None:
        self.client = client
        self._clock = clock or RealClock()
        self._defaults = {client.gvk(kind): scope for kind, scope in (by_kind or {}).items()}
        self._informers: dict[tuple[GroupVersionKind, CacheScope], SharedIndexInformer] = {}
        self._in_default_scope: dict[KindRef, SharedIndexInformer] = {}
        """The informer of each kind reference asked for in its default scope (every read asks)."""
        self._indexers: dict[GroupVersionKind, dict[str, IndexFunc]] = {}
        self._lock = threading.RLock()
        self._started = False
        self.sync_timeout = sync_timeout

    # ------------------------------------------------------------------------------------- informers

    def scope_for(self, kind: KindRef) -> CacheScope:
        return self._defaults.get(self.client.gvk(kind), CacheScope())

    def _decoder(self, gvk: GroupVersionKind, scope: CacheScope) -> Decoder:
        if scope.projection is not None:
            return ProjectionDecoder(scope.projection)
        return DictDecoder(gvk, scope.transform)

    def get_informer(self, kind: KindRef, scope: CacheScope | None = None) -> SharedIndexInformer:
        """The shared informer for `kind` in `scope` (default: the kind's configured scope), created once."""
        if scope is None and (known := self._in_default_scope.get(kind)) is not None:
            return known
        in_default_scope = scope is None
        gvk = self.client.gvk(kind)
        scope = scope if scope is not None else self._defaults.get(gvk, CacheScope())
        with self._lock:
            informer = self._informers.get((gvk, scope))
            if informer is not None:
                if in_default_scope:
                    self._in_default_scope[kind] = informer
                return informer
            lister_watcher: ListerWatcher = (
                _MappedWhenServed(self.client, gvk, scope)
                if scope.absent_as_empty
                else self.client.lister_watcher(gvk, scope.namespace, scope.label_selector, scope.field_selector)
            )
            informer = SharedIndexInformer(
                lister_watcher,
                self._decoder(gvk, scope),
                name=_informer_name(gvk, scope),
                resync_period=scope.resync_period,
                page_size=scope.page_size,
                absent_as_empty=scope.absent_as_empty,
                indexers=self._indexers.get(gvk),
                clock=self._clock,
            )
            self._informers[(gvk, scope)] = informer
            if in_default_scope:
                self._in_default_scope[kind] = informer
            if self._started:
                informer.start()
            return informer

    def remove_informer(self, kind: KindRef, scope: CacheScope | None = None) -> bool:
        """Stop and drop the informer of `kind` in `scope` (controller-runtime's `RemoveInformer`): its handlers
        get no more events and its objects are released; a later `get_informer` makes a new one. Returns whether
        there was one."""
        gvk = self.client.gvk(kind)
        scope = scope if scope is not None else self._defaults.get(gvk, CacheScope())
        with self._lock:
            informer = self._informers.pop((gvk, scope), None)
            self._in_default_scope = {k: i for k, i in self._in_default_scope.items() if i is not informer}
        if informer is None:
            return False
        informer.stop()
        return True

    def informers(self) -> list[SharedIndexInformer]:
        with self._lock:
            return list(self._informers.values())

    def index_field(self, kind: KindRef, index: str, func: IndexFunc) -> None:
        """Add index `index` to every informer of `kind`, now and in the future (controller-runtime's IndexField)."""
        gvk = self.client.gvk(kind)
        with self._lock:
            self._indexers.setdefault(gvk, {})[index] = func
            for (informer_gvk, _), informer in self._informers.items():
                if informer_gvk == gvk:
                    informer.add_indexers({index: func})

    # ------------------------------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Start every informer created so far; later ones start as they are created."""
        with self._lock:
            self._started = True
            for informer in self._informers.values():
                informer.start()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Wait until every informer has synced (all within `timeout` seconds in total)."""
        deadline = None if timeout is None else self._clock.monotonic() + timeout
        for informer in self.informers():
            remaining = None if deadline is None else max(0.0, deadline - self._clock.monotonic())
            if not informer.wait_for_sync(remaining):
                return False
        return True

    def has_synced(self) -> bool:
        """Whether every informer started so far has listed its kind once (`WaitForCacheSync` would return)."""
        return all(informer.has_synced() for informer in self.informers())

    def stop(self) -> None:
        with self._lock:
            informers = list(self._informers.values())
            self._started = False
        for informer in informers:
            informer.stop()

    # ----------------------------------------------------------------------------------------- reads

    def _synced_informer(self, kind: KindRef) -> SharedIndexInformer:
        if not self._started:
            raise CacheNotStartedError(f"the cache is not started; cannot read {self.client.gvk(kind)}")
        informer = self.get_informer(kind)
        if not informer.wait_for_sync(self.sync_timeout):
            raise TimeoutError(f"informer {informer.name} did not sync within {self.sync_timeout:g}s")
        return informer

    def _out(self, obj: Any, kind: KindRef) -> Any:
        if isinstance(kind, type) and not isinstance(obj, Projection):
            return self.client.scheme.from_wire(obj, kind)
        return freeze(obj)

    def get(self, kind: KindRef, name: str, namespace: str | None = None) -> Any:
        """The cached object; raises NotFoundError (also for objects outside the kind's cache scope)."""
        informer = self._synced_informer(kind)
        key = f"{namespace}/{name}" if namespace else name
        obj = informer.store.get(key)
        if obj is None:
            gvk = self.client.gvk(kind)
            raise NotFoundError(404, "NotFound", f"{gvk.kind.lower()} {key!r} not found in the cache")
        return self._out(obj, kind)

    @overload
    def list(self, kind: type[T], namespace: str | None = None, **options: Unpack[ListOptions]) -> ObjectList[T]: ...

    @overload
    def list(
        self, kind: GroupVersionKind | str, namespace: str | None = None, **options: Unpack[ListOptions]
    ) -> ObjectList: ...

    def list(self, kind: KindRef, namespace: str | None = None, **options: Unpack[ListOptions]) -> ObjectList:
        """Cached objects of `kind`, filtered by namespace, label selector, field selector and/or one index lookup
        (the options of every reader, `interfaces.ListOptions`).

        A field selector term `path=value` (or `!=`) is answered by an index named `path` (add it with
        `index_field(kind, "spec.nodeName", func)`, as controller-runtime requires), or for `metadata.name` and
        `metadata.namespace` directly. `limit` keeps the first items (there is no next page: `continue_` is
        refused). The list's `resource_version` is the informer's last synced one.
        """
        check_options("list", options, ListOptions)
        index, limit, continue_ = options.get("index"), options.get("limit"), options.get("continue_")
        if continue_:
            raise ValueError(
                "continue_: the cache has no pages, it lists everything at once; page through the API server "
                "with manager.api_reader (a Client) instead"
            )
        if limit is not None and limit < 0:
            raise ValueError(f"limit={limit!r}: must be a positive number of items (or None for all)")
        informer = self._synced_informer(kind)
        store = informer.store
        terms = _field_terms(field_selector_string(options.get("field_selector")))
        for path, _, _ in terms:
            if path not in ("metadata.name", "metadata.namespace") and not store.has_index(path):
                raise ValueError(
                    f"field_selector {path!r}: the cache answers metadata.name, metadata.namespace and fields it "
                    f"has an index of that name for; add one with cache.index_field({self.client.gvk(kind)}, "
                    f"{path!r}, func), or pass index=(name, value)"
                )
        if index is not None and not store.has_index(index[0]):
            raise ValueError(
                f"index={index!r}: {self.client.gvk(kind)} has no index named {index[0]!r}; add it with "
                "cache.index_field(kind, name, func) (manager.cache) before the cache starts"
            )
        selector = label_selectors.parse(label_selector_string(options.get("label_selector")))
        candidates: Iterable[Any]
        if index is not None:
            candidates = store.by_index(*index)
        elif namespace:
            candidates = store.by_index(NAMESPACE_INDEX, namespace)
        else:
            candidates = store.values()
        if namespace and index is not None:
            candidates = [obj for obj in candidates if objects.namespace(obj) == namespace]
        if not selector.empty():
            candidates = [obj for obj in candidates if selector.matches(labels(obj))]
        for path, operator, value in terms:
            candidates = _select_field(store, candidates, path, operator, value)
        items = [self._out(obj, kind) for obj in candidates]
        if limit:
            items = items[:limit]
        return ObjectList(items, informer.last_sync_resource_version)


class _MappedWhenServed:
    """The lister-watcher of a kind that may not be served yet (`absent_as_empty`): mapped through discovery on
    first use, a kind discovery does not know answering 404 as a LIST of it would, until it is served."""

    def __init__(self, client: APIServerClient, gvk: GroupVersionKind, scope: CacheScope) -> None:
        self._client = client
        self._gvk = gvk
        self._scope = scope
        self._inner: ListerWatcher | None = None

    def _mapped(self) -> ListerWatcher:
        if self._inner is None:
            scope = self._scope
            try:
                self._inner = self._client.lister_watcher(
                    self._gvk, scope.namespace, scope.label_selector, scope.field_selector
                )
            except NoKindMatchError as error:
                raise NotFoundError(404, "NotFound", f"{self._gvk} is not served: {error}") from error
        return self._inner

    def list(self, *, resource_version: str | None, limit: int | None, continue_: str | None) -> bytes:
        return self._mapped().list(resource_version=resource_version, limit=limit, continue_=continue_)

    def watch(self, **options: Any) -> WatchStream:
        return self._mapped().watch(**options)


def _field_terms(selector: str | None) -> list[tuple[str, str, str]]:
    """`a=b,c!=d` → [(a, "=", b), (c, "!=", d)]; `==` is `=`. Raises ValueError naming a term without a value."""
    terms = []
    for raw in (selector or "").split(","):
        term = raw.strip()
        if not term:
            continue
        for operator in ("!=", "==", "="):
            if operator in term:
                path, _, value = term.partition(operator)
                terms.append((path.strip(), "!=" if operator == "!=" else "=", value.strip()))
                break
        else:
            raise ValueError(f"field_selector term {term!r}: expected path=value, path==value or path!=value")
    return terms


def _select_field(store: Any, candidates: Iterable[Any], path: str, operator: str, value: str) -> list[Any]:
    if path == "metadata.name":
        keep = [obj for obj in candidates if (objects.name(obj) == value) == (operator == "=")]
    elif path == "metadata.namespace":
        keep = [obj for obj in candidates if (objects.namespace(obj) == value) == (operator == "=")]
    else:
        keys = set(store.index_keys(path, value))
        keep = [obj for obj in candidates if (store.key(obj) in keys) == (operator == "=")]
    return keep


def _informer_name(gvk: GroupVersionKind, scope: CacheScope) -> str:
    parts = [f"{gvk.kind.lower()}.{gvk.group or 'core'}"]
    if scope.namespace:
        parts.append(f"ns={scope.namespace}")
    if scope.label_selector:
        parts.append(f"labels={scope.label_selector}")
    if scope.field_selector:
        parts.append(f"fields={scope.field_selector}")
    return ",".join(parts)


class DelegatingClient:
    """The manager's client (an `interfaces.Client`): reads from the cache, writes straight to the API server.

    Reads of kinds listed in `uncached` go to the API server (controller-runtime's `DisableFor`).
    """

    def __init__(self, cache: Cache, client: APIServerClient, uncached: Iterable[KindRef] = ()) -> None:
        self.cache = cache
        self.writer = client
        self._uncached = {client.gvk(kind) for kind in uncached}

    @property
    def scheme(self) -> Scheme:
        return self.writer.scheme

    def gvk(self, kind: KindRef | Any) -> GroupVersionKind:
        return self.writer.gvk(kind)

    # ------------------------------------------------------------------------------------------- reads

    @overload
    def get(self, kind: type[T], name: str, namespace: str | None = None) -> T: ...

    @overload
    def get(self, kind: GroupVersionKind | str, name: str, namespace: str | None = None) -> Any: ...

    def get(self, kind: KindRef, name: str, namespace: str | None = None) -> Any:
        if self.writer.gvk(kind) in self._uncached:
            return self.writer.get(kind, name, namespace)
        return self.cache.get(kind, name, namespace)

    @overload
    def list(self, kind: type[T], namespace: str | None = None, **options: Unpack[ListOptions]) -> ObjectList[T]: ...

    @overload
    def list(
        self, kind: GroupVersionKind | str, namespace: str | None = None, **options: Unpack[ListOptions]
    ) -> ObjectList: ...

    def list(self, kind: KindRef, namespace: str | None = None, **options: Unpack[ListOptions]) -> ObjectList:
        """Cached objects (`Cache.list`); from the API server for `uncached` kinds (`Client.list`, no `index`)."""
        check_options("list", options, ListOptions)
        if self.writer.gvk(kind) in self._uncached:
            if (index := options.get("index")) is not None:
                raise ValueError(
                    f"index={index!r}: {self.writer.gvk(kind)} is uncached and the live API has no indexes; "
                    "cache the kind to look up an index, or pass field_selector= to filter on the API server"
                )
            return self.writer.list(kind, namespace, **options)
        return self.cache.list(kind, namespace, **options)

    # ------------------------------------------------------------------------------------------ writes

    def create(
        self,
        obj: T,
        *,
        namespace: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: str | None = None,
    ) -> T:
        """Create `obj` on the API server (`Client.create`); returns the stored object, `obj` left unchanged."""
        return self.writer.create(
            obj, namespace=namespace, dry_run=dry_run, field_manager=field_manager, field_validation=field_validation
        )

    def update(
        self,
        obj: T,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: str | None = None,
        subresource: str | None = None,
    ) -> T:
        """Replace `obj` on the API server (`Client.update`); returns the stored object, `obj` left unchanged —
        update the returned object next time (a second update of `obj` is a ConflictError that says so)."""
        return self.writer.update(
            obj, dry_run=dry_run, field_manager=field_manager, field_validation=field_validation,
            subresource=subresource,
        )  # fmt: skip

    def patch(self, obj: Any, patch: Patch, **options: Unpack[PatchOptions]) -> Any:
        """Patch `obj` on the API server (`Client.patch`); returns the patched object, `obj` left unchanged."""
        return self.writer.patch(obj, patch, **options)

    def apply(
        self,
        obj: T,
        *,
        field_manager: str | None = None,
        force: bool = True,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> T:
        return self.writer.apply(
            obj, field_manager=field_manager, force=force, subresource=subresource, dry_run=dry_run
        )

    def delete(
        self,
        obj: Any,
        *,
        name: str | None = None,
        namespace: str | None = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        preconditions: Mapping[str, str] | None = None,
        dry_run: bool = False,
        ignore_not_found: bool = False,
    ) -> None:
        self.writer.delete(
            obj, name=name, namespace=namespace, propagation_policy=propagation_policy,
            grace_period_seconds=grace_period_seconds, preconditions=preconditions, dry_run=dry_run,
            ignore_not_found=ignore_not_found,
        )  # fmt: skip

    def status(self) -> SubResourceClient:
        return self.writer.status()

    def subresource(self, subresource: str) -> SubResourceClient:
        return self.writer.subresource(subresource)

    def evict(self, pod: Any, *, grace_period_seconds: int | None = None, dry_run: bool = False) -> None:
        self.writer.evict(pod, grace_period_seconds=grace_period_seconds, dry_run=dry_run)


__all__ = [
    "DEFAULT_SYNC_TIMEOUT",
    "Cache",
    "CacheNotStartedError",
    "CacheScope",
    "DelegatingClient",
]
