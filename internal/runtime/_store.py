"""Thread-safe object store with named indexes (client-go's `ThreadSafeStore` + `Indexer`).

Objects are keyed by `namespace/name` (or `name`); each index maps an index value to the set of keys whose
objects produce it. The store holds what the decoder produced and never copies; readers get what is stored
and must not mutate it (the cache wraps dicts in read-only views).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .objects import namespace, object_key

IndexFunc = Callable[[Any], Iterable[str]]
NAMESPACE_INDEX = "namespace"


def namespace_index(obj: Any) -> list[str]:
    """client-go's MetaNamespaceIndexFunc: the object's namespace (cluster-scoped objects: none)."""
    ns = namespace(obj)
    return [ns] if ns else []


class IndexConflictError(ValueError):
    """An index with that name already exists."""


class Indexer:
    """A keyed store plus named indexes; every method is thread-safe."""

    def __init__(self, indexers: Mapping[str, IndexFunc] | None = None, key_func: Callable[[Any], str] = object_key):
        self._key_func = key_func
        self._items: dict[str, Any] = {}
        self._indexers: dict[str, IndexFunc] = dict(indexers or {})
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}
        self._lock = threading.Lock()

    def key(self, obj: Any) -> str:
        return self._key_func(obj)

    # ------------------------------------------------------------------------------------- index upkeep

    def _index_values(self, index: str, obj: Any) -> tuple[str, ...]:
        return tuple(self._indexers[index](obj))

    def _unindex(self, key: str, obj: Any) -> None:
        for name, index in self._indices.items():
            for value in self._index_values(name, obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]

    def _index(self, key: str, obj: Any) -> None:
        for name, index in self._indices.items():
            for value in self._index_values(name, obj):
                index.setdefault(value, set()).add(key)

    # ------------------------------------------------------------------------------------------ writes

    def upsert(self, obj: Any) -> Any | None:
        """Insert or replace `obj`; returns the previous object under its key (or None)."""
        key = self._key_func(obj)
        with self._lock:
            old = self._items.get(key)
            if old is not None:
                self._unindex(key, old)
            self._items[key] = obj
            self._index(key, obj)
        return old

    def delete(self, key: str) -> Any | None:
        """Remove the object under `key`; returns it (or None if absent)."""
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._unindex(key, old)
        return old

    def replace(self, objects: Mapping[str, Any]) -> dict[str, Any]:
        """Swap the whole content for `objects` (key → object); returns the previous content."""
        with self._lock:
            previous = self._items
            self._items = dict(objects)
            self._indices = {name: {} for name in self._indexers}
            for key, obj in self._items.items():
                self._index(key, obj)
        return previous

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        """Add indexes, computed over what is already stored (allowed at any time, unlike before sync)."""
        with self._lock:
            for name in indexers:
                if name in self._indexers:
                    raise IndexConflictError(f"index {name!r} already exists")
            for name, func in indexers.items():
                self._indexers[name] = func
                index: dict[str, set[str]] = {}
                for key, obj in self._items.items():
                    for value in func(obj):
                        index.setdefault(value, set()).add(key)
                self._indices[name] = index

    # ------------------------------------------------------------------------------------------- reads

    def get(self, key: str) -> Any | None:
        with self._lock:
            return self._items.get(key)

    def values(self) -> list[Any]:
        with self._lock:
            return list(self._items.values())

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def index_keys(self, index: str, value: str) -> list[str]:
        """Keys of the objects whose index `index` includes `value`."""
        with self._lock:
            if index not in self._indices:
                raise KeyError(f"no index named {index!r}; known: {sorted(self._indices)}")
            return sorted(self._indices[index].get(value, ()))

    def by_index(self, index: str, value: str) -> list[Any]:
        """Objects whose index `index` includes `value`, in key order."""
        with self._lock:
            if index not in self._indices:
                raise KeyError(f"no index named {index!r}; known: {sorted(self._indices)}")
            return [self._items[key] for key in sorted(self._indices[index].get(value, ()))]

    def index_values(self, index: str) -> list[str]:
        """Every value currently present in index `index`."""
        with self._lock:
            return sorted(self._indices[index])

    def has_index(self, index: str) -> bool:
        return index in self._indexers
