"""Owner reads for policy matching (`kinds` matches the pod's top-level owner, docs/design.md, difference 9):
one lookup, for enrollment, admission and everything else that resolves a policy.

Walking ReplicaSet → Deployment needs the ReplicaSet. Caching every ReplicaSet in the cluster would make memory
follow cluster size, and a Deployment's rollout creates its new ReplicaSet milliseconds before the first pod
(a cache may not hold it yet at that pod's admission), so owners are read live, by uid, and remembered: an
ownerReference's uid names one object forever, and its own controller reference does not change.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from cachetools import LRUCache

from ballast.runtime import GroupVersionKind, NotFoundError, Reader
from ballast.runtime.apierrors import ForbiddenError
from ballast.runtime.restmapper import NoKindMatchError

_MISSING = object()


class OwnerReader:
    """`lookup(namespace, ownerReference) -> owner | None` (a `facts.OwnerLookup`), remembered by uid; thread-safe.

    An owner that does not exist, whose kind the API server does not serve, that we may not read, or whose uid
    differs from the reference's (deleted and recreated) ends the chain: the kinds known so far stand. Any other
    error (timeouts, 5xx) propagates, so admission can answer "policy not available" and enrollment retry,
    instead of resolving with a chain they could not read. The owner comes back trimmed to what the walk needs.
    """

    def __init__(self, reader: Reader, size: int = 4096) -> None:
        self._reader = reader
        self._owners: LRUCache[str, Mapping[str, Any] | None] = LRUCache(size)
        self._lock = threading.Lock()

    def __call__(self, namespace: str, reference: Mapping[str, Any]) -> Mapping[str, Any] | None:
        uid = reference.get("uid")
        key = uid if isinstance(uid, str) and uid else None
        if key is not None:
            with self._lock:
                found = self._owners.get(key, _MISSING)
            if found is not _MISSING:
                return found  # type: ignore[return-value]
        owner, permanent = self._fetch(namespace, reference)
        if key is not None and permanent:
            with self._lock:
                self._owners[key] = owner
        return owner

    def _fetch(self, namespace: str, reference: Mapping[str, Any]) -> tuple[Mapping[str, Any] | None, bool]:
        """The trimmed owner (or None), and whether that answer holds for the uid forever: a found owner, a
        missing one or another object under the name do; a refusal or an unserved kind may change (RBAC or a CRD
        arriving later), so they are asked again next time."""
        api_version, kind, name = reference.get("apiVersion"), reference.get("kind"), reference.get("name")
        if not (isinstance(api_version, str) and isinstance(kind, str) and isinstance(name, str) and name):
            return None, True
        try:
            owner = self._reader.get(GroupVersionKind.from_api_version(api_version, kind), name, namespace or None)
        except NotFoundError:
            return None, True
        except (ForbiddenError, NoKindMatchError, ValueError):
            return None, False
        metadata = owner.get("metadata", {}) if isinstance(owner, Mapping) else {}
        uid = reference.get("uid")
        if uid and metadata.get("uid") and metadata.get("uid") != uid:
            return None, True  # the object of that name is another one now
        trimmed = {"uid": metadata.get("uid"), "ownerReferences": list(metadata.get("ownerReferences") or ())}
        return {"metadata": trimmed}, True
