"""Objects as the runtime hands them out: plain dicts, read-only views of cached dicts, typed projections.

The cache never copies on read: it hands out `FrozenDict` views whose nested dicts and lists are views too,
so a reconciler cannot corrupt the cache by accident (controller-runtime deep-copies instead, at ~180 µs a
pod in Python). `thaw(obj)` returns a mutable deep copy for building an update. The accessors (`name`,
`namespace`, `labels`, …) work on dicts, views, msgspec projections and pydantic models alike.
"""

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

import msgspec
import orjson


class FrozenDict(Mapping[str, Any]):
    """A read-only view of a dict; nested dicts and lists come back as views too."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getitem__(self, key: str) -> Any:
        return freeze(self._data[key])

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def get(self, key: str, default: Any = None) -> Any:
        # Mapping.get goes through __getitem__ and an exception for a missing key; reads are the hot path.
        value = self._data.get(key, default)
        return value if value is default else freeze(value)

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenDict):
            return self._data == other._data
        return self._data == other

    def __hash__(self) -> int:
        raise TypeError("FrozenDict views are not hashable")

    def __repr__(self) -> str:
        return f"FrozenDict({self._data!r})"


class FrozenList(Sequence[Any]):
    """A read-only view of a list; nested values come back as views."""

    __slots__ = ("_data",)

    def __init__(self, data: list[Any]) -> None:
        self._data = data

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> "FrozenList": ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return FrozenList(self._data[index])
        return freeze(self._data[index])

    def __len__(self) -> int:
        return len(self._data)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenList):
            return self._data == other._data
        return self._data == other

    def __hash__(self) -> int:
        raise TypeError("FrozenList views are not hashable")

    def __repr__(self) -> str:
        return f"FrozenList({self._data!r})"


def freeze(value: Any) -> Any:
    """A read-only view of `value` (dicts and lists wrapped, scalars as they are)."""
    if isinstance(value, dict):
        return FrozenDict(value)
    if isinstance(value, list):
        return FrozenList(value)
    return value


def stored(value: Any) -> Any:
    """What a view shows, without a copy: the dict or list behind a `FrozenDict` or `FrozenList` (anything else
    as it is). The cache replaces an object on every change and never edits one in place, so the identity of a
    cached object's dict tells whether it changed; for memos keyed that way, and for C code that only reads it
    (orjson). The result must never be mutated: `thaw` gives a copy to change."""
    if isinstance(value, FrozenDict | FrozenList):
        return value._data
    return value


def _default(value: Any) -> Any:
    if isinstance(value, FrozenDict | FrozenList):
        return value._data
    if isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value)
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    raise TypeError(f"cannot encode {type(value).__name__} as JSON")


def dumps(value: Any) -> bytes:
    """JSON-encode dicts, views, projections and pydantic models."""
    return orjson.dumps(value, default=_default)


def thaw(value: Any) -> Any:
    """A mutable deep copy (plain dicts and lists) of a view, dict, projection or model."""
    if isinstance(value, FrozenDict | FrozenList | dict | list):
        return orjson.loads(dumps(value))
    if isinstance(value, msgspec.Struct):
        return msgspec.to_builtins(value)
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return value


# ------------------------------------------------------------------------------------------- accessors


def metadata(obj: Any) -> Any:
    """The object's metadata (a mapping, a projection struct, or a model), or an empty mapping."""
    if isinstance(obj, Mapping):
        return obj.get("metadata") or {}
    return getattr(obj, "metadata", None) or {}


def _field(meta: Any, key: str, attribute: str) -> Any:
    if isinstance(meta, Mapping):
        return meta.get(key)
    return getattr(meta, attribute, None)


def name(obj: Any) -> str:
    return str(_field(metadata(obj), "name", "name") or "")


def namespace(obj: Any) -> str:
    return str(_field(metadata(obj), "namespace", "namespace") or "")


def resource_version(obj: Any) -> str:
    return str(_field(metadata(obj), "resourceVersion", "resource_version") or "")


def uid(obj: Any) -> str:
    return str(_field(metadata(obj), "uid", "uid") or "")


def generation(obj: Any) -> int:
    return int(_field(metadata(obj), "generation", "generation") or 0)


def labels(obj: Any) -> Mapping[str, str]:
    return _field(metadata(obj), "labels", "labels") or {}


def annotations(obj: Any) -> Mapping[str, str]:
    return _field(metadata(obj), "annotations", "annotations") or {}


def owner_references(obj: Any) -> Sequence[Any]:
    return _field(metadata(obj), "ownerReferences", "owner_references") or ()


def deletion_timestamp(obj: Any) -> str | None:
    value = _field(metadata(obj), "deletionTimestamp", "deletion_timestamp")
    return str(value) if value else None


def object_key(obj: Any) -> str:
    """client-go's MetaNamespaceKeyFunc: `namespace/name`, or `name` for cluster-scoped objects."""
    ns = namespace(obj)
    return f"{ns}/{name(obj)}" if ns else name(obj)


def split_key(key: str) -> tuple[str, str]:
    """`ns/name` → (ns, name); `name` → ("", name)."""
    ns, _, object_name = key.rpartition("/")
    return ns, object_name


__all__ = [
    "FrozenDict",
    "FrozenList",
    "annotations",
    "deletion_timestamp",
    "dumps",
    "freeze",
    "generation",
    "labels",
    "metadata",
    "name",
    "namespace",
    "object_key",
    "owner_references",
    "resource_version",
    "split_key",
    "stored",
    "thaw",
    "uid",
]
