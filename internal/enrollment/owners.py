"""Owner lookups for policy matching (`kinds` matches the pod's top-level owner, docs/design.md, difference 9).

Walking ReplicaSet → Deployment needs the ReplicaSet. Caching every ReplicaSet in the cluster would make memory
follow cluster size, so owners are read live, by uid, and remembered: an ownerReference's uid names one object
forever, and its own controller reference does not change.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Protocol

from cachetools import LRUCache

from ballast.internal.runtime.apierrors import ForbiddenError, NotFoundError
from ballast.internal.runtime.gvk import GroupVersionKind
from ballast.internal.runtime.restmapper import NoKindMatchError


class Reader(Protocol):
    def get(self, kind: Any, name: str, namespace: str | None = None) -> Any: ...


class OwnerLookup:
    """`lookup(namespace, ownerReference) -> owner object | None` for `policy.owner_kinds`, thread-safe."""

    def __init__(self, reader: Reader, size: int = 4096) -> None:
        self._reader = reader
        self._owners: LRUCache[str, dict[str, Any] | None] = LRUCache(size)
        self._lock = threading.Lock()

    def __call__(self, namespace: str, reference: Mapping[str, Any]) -> Mapping[str, Any] | None:
        uid = str(reference.get("uid") or "")
        if uid:
            with self._lock:
                if uid in self._owners:
                    return self._owners[uid]
        owner = self._fetch(namespace, reference)
        if uid:
            with self._lock:
                self._owners[uid] = owner
        return owner

    def _fetch(self, namespace: str, reference: Mapping[str, Any]) -> dict[str, Any] | None:
        try:
            gvk = GroupVersionKind.from_api_version(
                str(reference.get("apiVersion", "")), str(reference.get("kind", ""))
            )
            found = self._reader.get(gvk, str(reference.get("name", "")), namespace or None)
        except (NotFoundError, ForbiddenError, NoKindMatchError, ValueError):
            return None  # the chain stops here; the kinds seen so far still count
        # Only what the walk needs: the owner's own controller reference.
        metadata = found.get("metadata", {}) if isinstance(found, Mapping) else {}
        return {"metadata": {"ownerReferences": list(metadata.get("ownerReferences") or ())}}
