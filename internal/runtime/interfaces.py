"""What reconcilers program against: controller-runtime's `client.Reader` / `Writer` / `StatusWriter` / `Client`.

    class Reconciler:
        def __init__(self, client: interfaces.Client) -> None:   # manager.client, a Client, or a test double
            self.client = client

`new_client(config)` (the API server), the manager's client (reads from the cache, writes to the API server),
the cache (a `Reader`) and `FakeAPI().client()` all implement them, with one signature: every reader's `list`
takes the options of `ListOptions` and returns an `ObjectList`; every `patch` takes those of `PatchOptions`.
The options are TypedDicts unpacked into keyword arguments, so a type checker checks each call, and an
implementation reads them with `.get()` (`check_options` refuses an unknown one at run time, as a signature
would). Reads return plain dicts for built-in kinds and models for kinds registered in the
scheme; writes return what the server stored and leave their argument unchanged (use the returned object).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypedDict, Unpack, overload

from typing_extensions import TypeVar

from .gvk import GroupVersionKind
from .labels import Selector

T = TypeVar("T")
KindRef = GroupVersionKind | str | type[Any]
Patch = Mapping[str, Any] | Sequence[Any] | bytes
PatchType = Literal["merge", "strategic", "json", "apply"]
LabelSelector = str | Mapping[str, str] | Selector
"""A label selector: `"app=web,tier!=db"`, `{"app": "web"}` (every pair must match) or a `labels.Selector`."""
FieldSelector = str | Mapping[str, str]
"""A field selector: `"metadata.name=web,spec.nodeName=n1"` or `{"spec.nodeName": "n1"}`."""
Index = tuple[str, str]
"""One index lookup in the cache: (index name, value), an index added with `Cache.index_field`."""


class ListOptions(TypedDict, total=False):
    """The options of every reader's `list` (controller-runtime's `client.ListOptions`), all optional.

    `label_selector`: a string, a dict or a `labels.Selector`. `field_selector`: a string or a dict; the cache
    answers `metadata.name`, `metadata.namespace` and fields it has an index of that name for. `index`: one index
    lookup, cache only (the live API has no indexes). `limit`: at most that many items; `continue_`: the next page
    of a live list (the cache has no pages). A bad value raises ValueError/TypeError naming the option.
    """

    label_selector: LabelSelector | None
    field_selector: FieldSelector | None
    index: Index | None
    limit: int | None
    continue_: str | None


class SubResourcePatchOptions(TypedDict, total=False):
    """The options of a subresource's `patch` (`client.status().patch(obj, patch, **options)`), all optional.

    `patch_type` (default "merge"): "merge", "strategic", "json" or "apply" (server-side apply: needs a field
    manager; `force` takes over conflicting fields, and is refused for the other types). `name`/`namespace`
    name the object when `obj` is only a kind.
    """

    patch_type: PatchType
    name: str | None
    namespace: str | None
    dry_run: bool
    field_manager: str | None
    force: bool | None
    field_validation: str | None


class PatchOptions(SubResourcePatchOptions, total=False):
    """The options of every writer's `patch`: a subresource's, and the `subresource` to patch."""

    subresource: str | None


def check_options(function: str, options: Mapping[str, object], accepted: type[Any]) -> None:
    """Raise the TypeError a signature would for a keyword `accepted` (a TypedDict) does not have: `**options`
    unpacked from a TypedDict is checked by type checkers only."""
    allowed: frozenset[str] = accepted.__optional_keys__ | accepted.__required_keys__
    for name in options:
        if name not in allowed:
            raise TypeError(f"{function}() got an unexpected keyword argument {name!r}")


Item = TypeVar("Item", default=Any)


@dataclass
class ObjectList(Sequence[Item], Generic[Item]):
    """What every reader's `list` returns (one LIST page): the items plus the list's resourceVersion and continue
    token. A sequence: iterate it, `len()` it, index or slice it (a slice is a plain `list`); `.items` is the list
    — a `list[Deployment]` for `list(Deployment, ...)` (mypy sees it), dicts or views for a kind named otherwise.

    From the cache, `resource_version` is the informer's last synced resourceVersion and `continue_` is empty.
    """

    items: list[Item]
    resource_version: str = ""
    continue_: str = ""
    remaining_item_count: int | None = None

    def __iter__(self) -> Iterator[Item]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    @overload
    def __getitem__(self, index: int) -> Item: ...

    @overload
    def __getitem__(self, index: slice) -> list[Item]: ...

    def __getitem__(self, index: int | slice) -> Item | list[Item]:
        return self.items[index]


class Reader(Protocol):
    """Reads objects by kind: a registered model type, a GroupVersionKind or `"apps/v1/Deployment"`."""

    @overload
    def get(self, kind: type[T], name: str, namespace: str | None = None) -> T: ...

    @overload
    def get(self, kind: GroupVersionKind | str, name: str, namespace: str | None = None) -> Any: ...

    def get(self, kind: KindRef, name: str, namespace: str | None = None) -> Any:
        """The object `name` of `kind` (in `namespace` for a namespaced kind); raises `NotFoundError`.

        Typed: `get(Memcached, name, namespace)` returns a `Memcached` (a model type registered in the scheme;
        mypy sees that overload), `get("apps/v1/Deployment", ...)` a dict (a read-only view from a cache).
        Arguments go kind, name, namespace — the namespace last, as cluster-scoped kinds have none; a `Request`
        is `Request(namespace, name)`, as Go's `NamespacedName`."""
        ...

    @overload
    def list(self, kind: type[T], namespace: str | None = None, **options: Unpack[ListOptions]) -> ObjectList[T]: ...

    @overload
    def list(
        self, kind: GroupVersionKind | str, namespace: str | None = None, **options: Unpack[ListOptions]
    ) -> ObjectList: ...

    def list(self, kind: KindRef, namespace: str | None = None, **options: Unpack[ListOptions]) -> ObjectList:
        """The objects of `kind` (in `namespace`; all namespaces when None), filtered by `options` (controller-
        runtime's `client.Reader.List`; see `ListOptions`)."""
        ...


class Writer(Protocol):
    """Writes objects to the API server."""

    def create(
        self,
        obj: T,
        *,
        namespace: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: str | None = None,
    ) -> T:
        """Create `obj`; returns the stored object (uid, resourceVersion, defaults). `obj` is left unchanged."""
        ...

    def update(
        self,
        obj: T,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: str | None = None,
        subresource: str | None = None,
    ) -> T:
        """Replace `obj`; returns the stored object. `obj` is left unchanged: update again from the returned
        object (or a fresh read), since `obj`'s resourceVersion is now stale and would get a ConflictError."""
        ...

    def patch(self, obj: Any, patch: Patch, **options: Unpack[PatchOptions]) -> Any:
        """Patch `obj` (or the object `name`/`namespace` of its kind); returns the patched object, leaving `obj`
        unchanged. The options: `PatchOptions`."""
        ...

    def apply(
        self,
        obj: T,
        *,
        field_manager: str | None = None,
        force: bool = True,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> T: ...

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
    ) -> None: ...


class StatusWriter(Protocol):
    """Writes to one subresource of objects (`status`, `scale`, `resize`, …)."""

    def update(self, obj: T, *, dry_run: bool = False, field_manager: str | None = None) -> T: ...

    def patch(self, obj: Any, patch: Patch, **options: Unpack[SubResourcePatchOptions]) -> Any: ...

    def create(self, obj: Any, body: Mapping[str, Any], *, dry_run: bool = False) -> Any: ...


class Client(Reader, Writer, Protocol):
    """A Reader and a Writer, with subresource writers (`status()`, `subresource("resize")`)."""

    def status(self) -> StatusWriter: ...

    def subresource(self, subresource: str) -> StatusWriter: ...


__all__ = [
    "Client",
    "FieldSelector",
    "Index",
    "KindRef",
    "LabelSelector",
    "ListOptions",
    "ObjectList",
    "Patch",
    "PatchOptions",
    "PatchType",
    "Reader",
    "StatusWriter",
    "SubResourcePatchOptions",
    "Writer",
    "check_options",
]
