"""What reconcilers program against: controller-runtime's `client.Reader` / `Writer` / `StatusWriter` / `Client`.

    class Reconciler:
        def __init__(self, client: interfaces.Client) -> None:   # manager.client, a Client, or a test double
            self.client = client

`Client` (the API server), `DelegatingClient` (the manager's: reads from the cache, writes to the API server)
and `FakeAPI().client()` all implement them. Reads return plain dicts for built-in kinds and models for kinds
registered in the scheme; writes return what the server stored.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Literal, Protocol, TypeVar, overload

from .gvk import GroupVersionKind

T = TypeVar("T")
KindRef = GroupVersionKind | str | type[Any]
Patch = Mapping[str, Any] | Sequence[Any] | bytes
PatchType = Literal["merge", "strategic", "json", "apply"]


class Objects(Protocol):
    """What a list read returns: iterable and sized (a `list`, or `ObjectList` with its resourceVersion)."""

    def __iter__(self) -> Iterator[Any]: ...

    def __len__(self) -> int: ...


class Reader(Protocol):
    """Reads objects by kind: a registered model type, a GroupVersionKind or `"apps/v1/Deployment"`."""

    @overload
    def get(self, kind: type[T], name: str, namespace: str | None = None) -> T: ...

    @overload
    def get(self, kind: GroupVersionKind | str, name: str, namespace: str | None = None) -> Any: ...

    def get(self, kind: KindRef, name: str, namespace: str | None = None) -> Any:
        """The object; raises `NotFoundError`."""
        ...

    def list(self, kind: KindRef, namespace: str | None = None, *, label_selector: str | None = None) -> Objects:
        """The objects of `kind` (in `namespace`), optionally by label selector."""
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
    ) -> T: ...

    def update(
        self,
        obj: T,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: str | None = None,
        subresource: str | None = None,
    ) -> T: ...

    def patch(
        self,
        obj: Any,
        patch: Patch,
        *,
        patch_type: PatchType = "merge",
        name: str | None = None,
        namespace: str | None = None,
        subresource: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        force: bool | None = None,
        field_validation: str | None = None,
    ) -> Any:
        """Patch `obj` (or the object `name`/`namespace` of its kind); returns the patched object."""
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

    def patch(self, obj: Any, patch: Patch, **options: Any) -> Any: ...

    def create(self, obj: Any, body: Mapping[str, Any], *, dry_run: bool = False) -> Any: ...


class Client(Reader, Writer, Protocol):
    """A Reader and a Writer, with subresource writers (`status()`, `subresource("resize")`)."""

    def status(self) -> StatusWriter: ...

    def subresource(self, subresource: str) -> StatusWriter: ...


__all__ = ["Client", "KindRef", "Objects", "Patch", "Reader", "StatusWriter", "Writer"]
