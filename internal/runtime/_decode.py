"""Decoders for informers: raw LIST bodies and watch lines → objects for the cache.

Two kinds, chosen per informer:

- `DictDecoder` (generic, any kind): orjson → plain dicts, then a transform; the default transform strips
  `metadata.managedFields` (≈ 40 % of a pod's decoded size).
- `ProjectionDecoder` (typed): msgspec decodes straight into a frozen `Projection` struct that declares only
  the fields a controller reads; everything else is skipped at decode time and never stored. A 4 KB pod
  costs ~3 KiB as a projection against ~15 KiB as a stripped dict.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import msgspec
import orjson

from .gvk import GroupVersionKind

Transform = Callable[[dict[str, Any]], dict[str, Any]]


def strip_managed_fields(obj: dict[str, Any]) -> dict[str, Any]:
    """controller-runtime's `TransformStripManagedFields`: drop metadata.managedFields, in place."""
    meta = obj.get("metadata")
    if meta is not None:
        meta.pop("managedFields", None)
    return obj


@dataclass(slots=True)
class DecodedList:
    items: list[Any]
    resource_version: str
    continue_: str


@dataclass(slots=True)
class DecodedEvent:
    """A watch event: `object` is None for ERROR events, whose Status is in `status`."""

    type: str
    object: Any
    resource_version: str
    status: dict[str, Any] | None = None
    initial_events_end: bool = False


class Decoder(Protocol):
    def decode_list(self, body: bytes) -> DecodedList: ...

    def decode_event(self, line: bytes) -> DecodedEvent: ...


INITIAL_EVENTS_END = "k8s.io/initial-events-end"


# Bulk decoding of a large LIST triggers generational collections that cost 2-5x (benchmarks/RESULTS.md, informers);
# pausing the collector for the few hundred milliseconds of one decode avoids them. Reference-counted
# because several informers may decode at once.
class _GCPause:
    """Process-wide: the first pause remembers whether the collector was on, the last one restores it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._was_enabled = False

    @contextlib.contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._depth == 0:
                self._was_enabled = gc.isenabled()
                gc.disable()
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                if self._depth == 0 and self._was_enabled:
                    gc.enable()


gc_paused = _GCPause()


class DictDecoder:
    """Generic decoder: plain dicts with `apiVersion`/`kind` filled in and `transform` applied."""

    def __init__(self, gvk: GroupVersionKind, transform: Transform | None = strip_managed_fields) -> None:
        self._api_version = gvk.api_version
        self._kind = gvk.kind
        self._transform = transform

    def _prepare(self, obj: dict[str, Any]) -> dict[str, Any]:
        obj["apiVersion"] = self._api_version
        obj["kind"] = self._kind
        return self._transform(obj) if self._transform else obj

    def decode_list(self, body: bytes) -> DecodedList:
        with gc_paused():
            decoded = orjson.loads(body)
            items = [self._prepare(item) for item in decoded.get("items") or ()]
        meta = decoded.get("metadata") or {}
        return DecodedList(items, meta.get("resourceVersion", ""), meta.get("continue", ""))

    def decode_event(self, line: bytes) -> DecodedEvent:
        event = orjson.loads(line)
        kind, obj = event.get("type", ""), event.get("object") or {}
        if kind == "ERROR":
            return DecodedEvent(kind, None, "", status=obj)
        meta = obj.get("metadata") or {}
        end = kind == "BOOKMARK" and (meta.get("annotations") or {}).get(INITIAL_EVENTS_END) == "true"
        return DecodedEvent(kind, self._prepare(obj), meta.get("resourceVersion", ""), initial_events_end=end)


# ------------------------------------------------------------------------------------------ projections


class OwnerReference(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool = False
    block_owner_deletion: bool = False


class ObjectMeta(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """The metadata fields controllers read; managedFields and the rest are never decoded."""

    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    labels: dict[str, str] = msgspec.field(default_factory=dict)
    annotations: dict[str, str] = msgspec.field(default_factory=dict)
    owner_references: tuple[OwnerReference, ...] = ()
    finalizers: tuple[str, ...] = ()


class Projection(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """Base of typed projections: subclass it and declare the fields you read (all with defaults).

    Attributes are read-only (`frozen`); use tuples for lists. Watch bookmarks decode into the same type,
    which is why every field needs a default.
    """

    metadata: ObjectMeta = ObjectMeta()


P = TypeVar("P", bound=Projection)


class _List(msgspec.Struct, Generic[P]):
    items: list[P] | None = None
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)


class _Event(msgspec.Struct):
    type: str
    object: msgspec.Raw


class ProjectionDecoder(Generic[P]):
    """Typed decoder: each object becomes a `projection` struct; undeclared fields are skipped."""

    def __init__(self, projection: type[P]) -> None:
        self.projection = projection
        self._list = msgspec.json.Decoder(_List[projection])  # type: ignore[valid-type]
        self._object = msgspec.json.Decoder(projection)
        # Bookmarks carry only metadata, and the API server fills the rest with nulls (`"containers": null`)
        # that a projection's types need not accept: decode them as bare metadata.
        self._bookmark = msgspec.json.Decoder(Projection)
        self._event = msgspec.json.Decoder(_Event)

    def decode_list(self, body: bytes) -> DecodedList:
        with gc_paused():
            decoded = self._list.decode(body)
        meta = decoded.metadata
        return DecodedList(decoded.items or [], meta.get("resourceVersion", ""), meta.get("continue", ""))

    def decode_event(self, line: bytes) -> DecodedEvent:
        event = self._event.decode(line)
        if event.type == "ERROR":
            return DecodedEvent(event.type, None, "", status=orjson.loads(bytes(event.object)))
        if event.type == "BOOKMARK":
            mark = self._bookmark.decode(event.object)
            end = mark.metadata.annotations.get(INITIAL_EVENTS_END) == "true"
            return DecodedEvent(event.type, mark, mark.metadata.resource_version, initial_events_end=end)
        obj = self._object.decode(event.object)
        return DecodedEvent(event.type, obj, obj.metadata.resource_version)
