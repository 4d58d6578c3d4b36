"""The client: typed reads and writes against the API server, controller-runtime style.

    client = new_client(RESTConfig.load())
    pod = client.get("v1/Pod", "web-0", namespace="shop")            # a dict
    profile = client.get(WorkloadProfile, "api-default-a9696153")      # a model (registered in the scheme)
    client.patch(pod, {"metadata": {"labels": {"a": "b"}}})            # JSON merge patch
    client.subresource("resize").patch(pod, patch, patch_type=STRATEGIC)
    client.status().update(profile)

Kinds are named by `GroupVersionKind`, by a string (`"apps/v1/Deployment"`), or by a model type registered in
the scheme (the generated built-in kinds of `ballast.runtime.crd.kinds` need no registration); objects are dicts,
read-only views from the cache, or models (decoded with `from_wire`: docs/design.md, difference 72). Bodies are decoded
with orjson, never through the official client's generated models. Errors are typed (`NotFoundError`,
`ConflictError`, …) so reconcilers can requeue on conflicts.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar, Unpack, overload

import orjson
import urllib3

from . import labels, objects
from .apierrors import APIStatusError, ConflictError, NotFoundError, stale_update_conflict
from .gvk import GroupVersionKind, RESTMapping
from .interfaces import (
    Client,
    FieldSelector,
    KindRef,
    LabelSelector,
    ListOptions,
    ObjectList,
    Patch,
    PatchOptions,
    PatchType,
    SubResourcePatchOptions,
    check_options,
)
from .rest import RESTConfig, Transport
from .restmapper import RESTMapper
from .scheme import Scheme

MERGE: PatchType = "merge"
STRATEGIC: PatchType = "strategic"
JSON_PATCH: PatchType = "json"
APPLY: PatchType = "apply"
_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "json": "application/json-patch+json",
    "apply": "application/apply-patch+yaml",
}

T = TypeVar("T")


def label_selector_string(selector: LabelSelector | None) -> str | None:
    """The `labelSelector=` parameter of a label selector given as a string (sent as it is: the API server
    validates it), a dict (every pair must match) or a `labels.Selector`; raises TypeError naming the argument."""
    if selector is None or isinstance(selector, str):
        return selector or None
    if isinstance(selector, labels.Selector):
        return str(selector) or None
    if isinstance(selector, Mapping):
        return str(labels.from_set({str(key): str(value) for key, value in selector.items()})) or None
    raise TypeError(
        f"label_selector must be a str, a dict of labels or a labels.Selector, not {type(selector).__name__}"
    )


def field_selector_string(selector: FieldSelector | None) -> str | None:
    """The `fieldSelector=` parameter of a field selector given as a string or a dict (`{"spec.nodeName": "n1"}`,
    every pair must match); raises TypeError naming the argument."""
    if selector is None or isinstance(selector, str):
        return selector or None
    if isinstance(selector, Mapping):
        return ",".join(f"{key}={value}" for key, value in selector.items()) or None
    raise TypeError(f"field_selector must be a str or a dict of field paths to values, not {type(selector).__name__}")


class WatchStream(Protocol):
    """Raw watch events, one JSON document per line; close() stops it from another thread."""

    def __iter__(self) -> Iterator[bytes]: ...

    def close(self) -> None: ...


class ListerWatcher(Protocol):
    """What an informer needs from the API: raw LIST pages and raw WATCH streams of one scope."""

    def list(self, *, resource_version: str | None, limit: int | None, continue_: str | None) -> bytes: ...

    def watch(
        self,
        *,
        resource_version: str,
        timeout_seconds: int,
        allow_bookmarks: bool,
        send_initial_events: bool,
        read_timeout: float | None,
    ) -> WatchStream: ...


class APIServerListOptions(ListOptions, total=False):
    """The options of `APIServerClient.list`: every reader's, and the `resource_version` to list at, as the API's
    (`"0"`: any cached version)."""

    resource_version: str | None


@dataclass(frozen=True, slots=True)
class _Selectors:
    """Server-side filtering of a list or watch."""

    label_selector: str | None = None
    field_selector: str | None = None

    def params(self) -> dict[str, str]:
        params: dict[str, str] = {}
        if self.label_selector:
            params["labelSelector"] = self.label_selector
        if self.field_selector:
            params["fieldSelector"] = self.field_selector
        return params


class _HTTPWatchStream:
    """A watch response read line by line; chunks are split on newlines as they arrive."""

    def __init__(self, response: urllib3.BaseHTTPResponse) -> None:
        self._response = response
        self._closed = False

    def __iter__(self) -> Iterator[bytes]:
        pending = b""
        try:
            for chunk in self._response.stream(65536):
                if not chunk:
                    continue
                pending += chunk
                if b"\n" not in chunk:
                    continue
                lines = pending.split(b"\n")
                pending = lines.pop()
                for line in lines:
                    if line:
                        yield line
            if pending.strip():
                yield pending
        finally:
            self.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(Exception):  # closing a half-read socket from another thread may raise
            self._response.shutdown() if hasattr(self._response, "shutdown") else None
        with contextlib.suppress(Exception):
            self._response.release_conn()
            self._response.close()


@dataclass
class _HTTPListerWatcher:
    transport: Transport
    mapping: RESTMapping
    namespace: str | None
    options: _Selectors = field(default_factory=_Selectors)

    def list(self, *, resource_version: str | None, limit: int | None, continue_: str | None) -> bytes:
        params = self.options.params()
        if resource_version is not None:
            params["resourceVersion"] = resource_version
        if limit:
            params["limit"] = str(limit)
        if continue_:
            params["continue"] = continue_
        return self.transport.request("GET", self.mapping.collection_path(self.namespace), params=params).data

    def watch(
        self,
        *,
        resource_version: str,
        timeout_seconds: int,
        allow_bookmarks: bool,
        send_initial_events: bool,
        read_timeout: float | None,
    ) -> WatchStream:
        params = self.options.params()
        params |= {"watch": "true", "timeoutSeconds": str(timeout_seconds)}
        if resource_version:
            params["resourceVersion"] = resource_version
        if allow_bookmarks:
            params["allowWatchBookmarks"] = "true"
        if send_initial_events:
            params["sendInitialEvents"] = "true"
            params["resourceVersionMatch"] = "NotOlderThan"
        response = self.transport.stream(
            "GET", self.mapping.collection_path(self.namespace), params=params, read_timeout=read_timeout
        )
        return _HTTPWatchStream(response)


FieldValidation = Literal["Strict", "Warn", "Ignore"]
FIELD_VALIDATIONS: tuple[str, ...] = ("Strict", "Warn", "Ignore")
"""The API server's `fieldValidation` values: what a write does with a field the schema does not know."""


def new_client(
    config: RESTConfig,
    *,
    scheme: Scheme | None = None,
    field_owner: str | None = None,
    field_validation: FieldValidation | None = None,
) -> Client:
    """A `Client` that reads and writes straight through the API server of `config` (controller-runtime's
    `client.New`): no cache, every read is a request. `scheme` maps model types to kinds (models come back for
    registered kinds); `field_owner` is the default field manager of writes (server-side apply needs one);
    `field_validation` the default `fieldValidation` of writes (controller-runtime's `client.WithFieldValidation`):
    "Strict" refuses a field the schema does not know (a `replcias` typo), "Warn" (the API server's default)
    answers with a warning, which the client logs, "Ignore" drops it silently.

    Its class is `APIServerClient`, for the few callers that need more than the interface (`list_all`, `watch`,
    `evict`, `close`)."""
    return APIServerClient(Transport(config), scheme=scheme, field_owner=field_owner, field_validation=field_validation)


class APIServerClient:
    """Reads and writes objects through one API server; thread-safe. Implements `Client`; make one with
    `new_client(config)`, or with a `Transport` of your own (`FakeAPI().client()` passes the fake).

    `field_owner` is the default field manager of writes (required by server-side apply); `field_validation` the
    default `fieldValidation` of writes ("Strict", "Warn" or "Ignore"; a write's own option wins).
    """

    def __init__(
        self,
        transport: Transport,
        *,
        mapper: RESTMapper | None = None,
        scheme: Scheme | None = None,
        field_owner: str | None = None,
        field_validation: FieldValidation | None = None,
    ) -> None:
        if field_validation is not None and field_validation not in FIELD_VALIDATIONS:
            raise ValueError(
                f"field_validation must be one of {', '.join(FIELD_VALIDATIONS)}, not {field_validation!r}"
            )
        self.transport = transport
        self.scheme = scheme or Scheme()
        self.mapper = mapper or RESTMapper(self._discovery)
        self.field_owner = field_owner
        self.field_validation = field_validation

    def _discovery(self, path: str) -> dict[str, Any]:
        decoded: dict[str, Any] = orjson.loads(self.transport.request("GET", path).data)
        return decoded

    # --------------------------------------------------------------------------------------- resolving

    def gvk(self, kind: KindRef | Any) -> GroupVersionKind:
        """The GroupVersionKind of a kind reference or of an object."""
        if isinstance(kind, GroupVersionKind):
            return kind
        if isinstance(kind, str):
            return GroupVersionKind.parse(kind)
        if isinstance(kind, type):
            return self.scheme.gvk_for(kind)
        if isinstance(kind, Mapping):
            api_version, kind_name = kind.get("apiVersion"), kind.get("kind")
            if not api_version or not kind_name:
                raise ValueError("the object has no apiVersion/kind; pass the kind explicitly")
            return GroupVersionKind.from_api_version(str(api_version), str(kind_name))
        return self.scheme.gvk_for(type(kind))

    def mapping(self, kind: KindRef | Any) -> RESTMapping:
        return self.mapper.mapping(self.gvk(kind))

    def _decode(self, data: bytes, model: type[Any] | None) -> Any:
        decoded = orjson.loads(data)
        return self.scheme.from_wire(decoded, model) if model is not None else decoded

    @staticmethod
    def _model_of(kind: KindRef | Any) -> type[Any] | None:
        if isinstance(kind, type):
            return kind
        if isinstance(kind, GroupVersionKind | str | Mapping | objects.FrozenDict):
            return None
        return type(kind)

    def _body(self, obj: Any) -> bytes:
        return objects.dumps(self.scheme.to_wire(obj))

    def _write_params(
        self, dry_run: bool, field_manager: str | None, field_validation: str | None = None
    ) -> dict[str, str]:
        params: dict[str, str] = {}
        if dry_run:
            params["dryRun"] = "All"
        manager = field_manager or self.field_owner
        if manager:
            params["fieldManager"] = manager
        validation = field_validation or self.field_validation
        if validation:
            params["fieldValidation"] = validation
        return params

    def _locate(self, obj: Any, name: str | None, namespace: str | None) -> tuple[str, str | None]:
        object_name = name or objects.name(obj)
        object_namespace = namespace if namespace is not None else (objects.namespace(obj) or None)
        return object_name, object_namespace

    # ------------------------------------------------------------------------------------------- reads

    @overload
    def get(self, kind: type[T], name: str, namespace: str | None = None) -> T: ...

    @overload
    def get(self, kind: GroupVersionKind | str, name: str, namespace: str | None = None) -> Any: ...

    def get(self, kind: KindRef, name: str, namespace: str | None = None) -> Any:
        """The object `name` (in `namespace` for namespaced kinds); raises NotFoundError. A model type as `kind`
        returns that model (mypy sees the typed overload), a GroupVersionKind or `"apps/v1/Deployment"` a dict."""
        mapping = self.mapping(kind)
        data = self.transport.request("GET", mapping.object_path(name, namespace)).data
        return self._decode(data, self._model_of(kind))

    @overload
    def list(
        self, kind: type[T], namespace: str | None = None, **options: Unpack[APIServerListOptions]
    ) -> ObjectList[T]: ...

    @overload
    def list(
        self, kind: GroupVersionKind | str, namespace: str | None = None, **options: Unpack[APIServerListOptions]
    ) -> ObjectList: ...

    def list(self, kind: KindRef, namespace: str | None = None, **options: Unpack[APIServerListOptions]) -> ObjectList:
        """One LIST page from the API server (all of it unless `limit`); items are dicts, or models for a model type.

        The options of every reader (`interfaces.ListOptions`) and `resource_version` (`APIServerListOptions`);
        `limit`/`continue_` page. `index=` is refused: the live API has no indexes.
        """
        check_options("list", options, APIServerListOptions)
        index, limit, continue_ = options.get("index"), options.get("limit"), options.get("continue_")
        resource_version = options.get("resource_version")
        if index is not None:
            raise ValueError(
                f"index={index!r}: the live API has no indexes; read through the cache (manager.client, "
                "manager.cache) for an index lookup, or pass field_selector= to filter on the API server"
            )
        if limit is not None and limit < 0:
            raise ValueError(f"limit={limit!r}: must be a positive number of items (or None for all)")
        mapping = self.mapping(kind)
        selectors = _Selectors(
            label_selector_string(options.get("label_selector")), field_selector_string(options.get("field_selector"))
        )
        params = selectors.params()
        if limit:
            params["limit"] = str(limit)
        if continue_:
            params["continue"] = continue_
        if resource_version is not None:
            params["resourceVersion"] = resource_version
        decoded = orjson.loads(self.transport.request("GET", mapping.collection_path(namespace), params=params).data)
        model = self._model_of(kind)
        items = decoded.get("items") or []
        if model is not None:
            items = [self.scheme.from_wire(item, model) for item in items]
        else:
            for item in items:  # list items carry no apiVersion/kind; give them theirs back
                item.setdefault("apiVersion", mapping.gvk.api_version)
                item.setdefault("kind", mapping.gvk.kind)
        meta = decoded.get("metadata") or {}
        return ObjectList(
            items, meta.get("resourceVersion", ""), meta.get("continue", ""), meta.get("remainingItemCount")
        )

    @overload
    def list_all(
        self, kind: type[T], namespace: str | None = None, *, page_size: int = 500, **options: Any
    ) -> Iterator[T]: ...

    @overload
    def list_all(
        self, kind: GroupVersionKind | str, namespace: str | None = None, *, page_size: int = 500, **options: Any
    ) -> Iterator[Any]: ...

    def list_all(
        self, kind: KindRef, namespace: str | None = None, *, page_size: int = 500, **options: Any
    ) -> Iterator[Any]:
        """Every object, paging with `limit` and `continue` (a consistent snapshot unless a token expires); models
        of `kind` for a model type."""
        continue_: str | None = None
        while True:
            page = self.list(kind, namespace, limit=page_size, continue_=continue_, **options)
            yield from page.items
            if not page.continue_:
                return
            continue_ = page.continue_

    def watch(
        self,
        kind: KindRef,
        namespace: str | None = None,
        *,
        resource_version: str = "",
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int = 300,
        allow_bookmarks: bool = True,
        send_initial_events: bool = False,
        read_timeout: float | None = 70.0,
    ) -> Iterator[dict[str, Any]]:
        """Decoded watch events (`{"type": ..., "object": ...}`) until the server ends the watch."""
        stream = self.lister_watcher(kind, namespace, label_selector, field_selector).watch(
            resource_version=resource_version,
            timeout_seconds=timeout_seconds,
            allow_bookmarks=allow_bookmarks,
            send_initial_events=send_initial_events,
            read_timeout=read_timeout,
        )
        for line in stream:
            yield orjson.loads(line)

    def lister_watcher(
        self,
        kind: KindRef,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> ListerWatcher:
        """Raw list/watch of one scope, for informers."""
        return _HTTPListerWatcher(
            self.transport, self.mapping(kind), namespace or None, _Selectors(label_selector, field_selector)
        )

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
        """Create `obj`; returns the stored object (same type as `obj`: its uid, resourceVersion, defaults).

        `obj` itself is left unchanged (controller-runtime fills in its argument; here, use the returned object).
        Raises AlreadyExistsError.
        """
        mapping = self.mapping(obj)
        ns = namespace if namespace is not None else objects.namespace(obj) or None
        path = mapping.collection_path(ns)
        params = self._write_params(dry_run, field_manager, field_validation)
        data = self.transport.request(
            "POST", path, params=params, body=self._body(obj), content_type="application/json"
        ).data
        return self._decode(data, self._model_of(obj))  # type: ignore[no-any-return]

    def update(
        self,
        obj: T,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: str | None = None,
        subresource: str | None = None,
    ) -> T:
        """Replace `obj` (PUT); returns the stored object (same type as `obj`, with its new resourceVersion).

        `obj` itself is left unchanged — unlike controller-runtime, which refreshes its argument. Its
        resourceVersion guards against lost updates, so a second update() of the same `obj` is a ConflictError
        (stale resourceVersion): update the returned object, or re-read it. The error says so.
        """
        mapping = self.mapping(obj)
        path = mapping.object_path(objects.name(obj), objects.namespace(obj) or None, subresource)
        params = self._write_params(dry_run, field_manager, field_validation)
        try:
            data = self.transport.request(
                "PUT", path, params=params, body=self._body(obj), content_type="application/json"
            ).data
        except ConflictError as error:
            version = objects.resource_version(obj)
            if not version:
                raise
            raise stale_update_conflict(error, version) from None
        return self._decode(data, self._model_of(obj))  # type: ignore[no-any-return]

    def patch(self, obj: Any, patch: Patch, **options: Unpack[PatchOptions]) -> Any:
        """Patch an object (identified by `obj`, or by a kind plus `name`/`namespace`).

        `patch_type`: "merge" (RFC 7386), "strategic" (built-in kinds; lists merged by key), "json" (RFC 6902
        operations) or "apply" (server-side apply; `field_manager` or the client's field owner is required,
        `force` takes over conflicting fields). Returns the patched object (a model if `obj` is one); `obj` itself
        is left unchanged.
        """
        check_options("patch", options, PatchOptions)
        patch_type, force = options.get("patch_type", MERGE), options.get("force")
        mapping = self.mapping(obj)
        object_name, object_namespace = self._locate(obj, options.get("name"), options.get("namespace"))
        path = mapping.object_path(object_name, object_namespace, options.get("subresource"))
        params = self._write_params(
            options.get("dry_run", False), options.get("field_manager"), options.get("field_validation")
        )
        if patch_type == APPLY:
            if "fieldManager" not in params:
                raise ValueError("server-side apply needs a field manager: pass field_manager= or set field_owner")
            if force:
                params["force"] = "true"
        elif force is not None:
            raise ValueError("force is only valid for server-side apply (patch_type='apply')")
        body = patch if isinstance(patch, bytes) else objects.dumps(self.scheme.to_wire(patch))
        data = self.transport.request(
            "PATCH", path, params=params, body=body, content_type=_CONTENT_TYPES[patch_type]
        ).data
        return self._decode(data, self._model_of(obj))

    def apply(
        self,
        obj: T,
        *,
        field_manager: str | None = None,
        force: bool = True,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> T:
        """Server-side apply of `obj` (it must carry apiVersion, kind and metadata.name); returns the stored object,
        leaving `obj` unchanged."""
        result: T = self.patch(
            obj, self._body(obj), patch_type=APPLY, field_manager=field_manager, force=force,
            subresource=subresource, dry_run=dry_run,
        )  # fmt: skip
        return result

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
        """Delete an object. `preconditions` may pin `uid` and/or `resourceVersion` (ConflictError otherwise)."""
        mapping = self.mapping(obj)
        object_name, object_namespace = self._locate(obj, name, namespace)
        options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if propagation_policy:
            options["propagationPolicy"] = propagation_policy
        if grace_period_seconds is not None:
            options["gracePeriodSeconds"] = grace_period_seconds
        if preconditions:
            options["preconditions"] = dict(preconditions)
        if dry_run:
            options["dryRun"] = ["All"]
        try:
            self.transport.request(
                "DELETE", mapping.object_path(object_name, object_namespace),
                body=orjson.dumps(options), content_type="application/json",
            )  # fmt: skip
        except NotFoundError:
            if not ignore_not_found:
                raise

    # ------------------------------------------------------------------------------------ subresources

    def status(self) -> SubResourceClient:
        """Writes to the `status` subresource (controller-runtime's `client.Status()`)."""
        return SubResourceClient(self, "status")

    def subresource(self, subresource: str) -> SubResourceClient:
        """Reads and writes of a subresource: `scale`, `resize`, `eviction`, `ephemeralcontainers`, …"""
        return SubResourceClient(self, subresource)

    def evict(self, pod: Any, *, grace_period_seconds: int | None = None, dry_run: bool = False) -> None:
        """Evict a pod through `pods/eviction` (PodDisruptionBudgets apply: a 429 means "not now")."""
        eviction: dict[str, Any] = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": objects.name(pod), "namespace": objects.namespace(pod)},
        }
        delete_options: dict[str, Any] = {}
        if grace_period_seconds is not None:
            delete_options["gracePeriodSeconds"] = grace_period_seconds
        if dry_run:
            delete_options["dryRun"] = ["All"]
        if delete_options:
            eviction["deleteOptions"] = delete_options
        self.subresource("eviction").create(pod, eviction)

    def close(self) -> None:
        self.transport.close()


class SubResourceClient:
    """A client bound to one subresource of objects."""

    def __init__(self, client: APIServerClient, subresource: str) -> None:
        self._client = client
        self.subresource = subresource

    def get(self, obj: Any, *, name: str | None = None, namespace: str | None = None) -> Any:
        """Read the subresource (e.g. a Scale); always a dict."""
        client = self._client
        object_name, object_namespace = client._locate(obj, name, namespace)
        path = client.mapping(obj).object_path(object_name, object_namespace, self.subresource)
        return orjson.loads(client.transport.request("GET", path).data)

    def update(self, obj: T, *, dry_run: bool = False, field_manager: str | None = None) -> T:
        """PUT the whole object to the subresource (e.g. `status`); returns the stored object, `obj` left unchanged."""
        return self._client.update(obj, dry_run=dry_run, field_manager=field_manager, subresource=self.subresource)

    def patch(self, obj: Any, patch: Patch, **options: Unpack[SubResourcePatchOptions]) -> Any:
        """Patch the subresource; options as `APIServerClient.patch` (`patch_type`, `field_manager`, …)."""
        return self._client.patch(obj, patch, subresource=self.subresource, **options)

    def create(self, obj: Any, body: Mapping[str, Any], *, dry_run: bool = False) -> Any:
        """POST `body` to the subresource of `obj` (e.g. an Eviction to `pods/<name>/eviction`)."""
        client = self._client
        path = client.mapping(obj).object_path(objects.name(obj), objects.namespace(obj) or None, self.subresource)
        params = {"dryRun": "All"} if dry_run else None
        data = client.transport.request(
            "POST", path, params=params, body=objects.dumps(body), content_type="application/json"
        ).data
        return orjson.loads(data) if data else {}


__all__ = [
    "APPLY",
    "FIELD_VALIDATIONS",
    "JSON_PATCH",
    "MERGE",
    "STRATEGIC",
    "APIServerClient",
    "APIServerListOptions",
    "APIStatusError",
    "Client",
    "FieldValidation",
    "KindRef",
    "ListerWatcher",
    "ObjectList",
    "PatchType",
    "SubResourceClient",
    "WatchStream",
    "field_selector_string",
    "label_selector_string",
    "new_client",
]
