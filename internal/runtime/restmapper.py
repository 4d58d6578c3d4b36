"""A discovery-backed REST mapper: kind ↔ resource and scope, cached per group version, refreshed on a miss."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from .apierrors import NotFoundError
from .gvk import GroupVersionKind, GroupVersionResource, RESTMapping


class NoKindMatchError(LookupError):
    """The API server does not serve this kind (not installed, or wrong group/version)."""


DiscoveryFetch = Callable[[str], dict[str, Any]]


class RESTMapper:
    """Maps kinds to resources using the API server's discovery documents.

    `fetch(path)` returns the decoded `APIResourceList` of `/api/v1` or `/apis/<group>/<version>`. A group
    version is fetched once and cached; a kind missing from the cache triggers one refresh of its group version
    (a CRD installed after start-up becomes visible), after which `NoKindMatchError` is raised.
    """

    def __init__(self, fetch: DiscoveryFetch) -> None:
        self._fetch = fetch
        self._lock = threading.Lock()
        self._by_kind: dict[GroupVersionKind, RESTMapping] = {}
        self._by_resource: dict[tuple[str, str, str], RESTMapping] = {}
        self._loaded: set[tuple[str, str]] = set()

    def add(self, mapping: RESTMapping) -> None:
        """Register a mapping by hand (for kinds discovery does not list, and for fakes)."""
        with self._lock:
            self._store(mapping)

    def _store(self, mapping: RESTMapping) -> None:
        self._by_kind[mapping.gvk] = mapping
        resource = mapping.resource
        self._by_resource[(resource.group, resource.version, resource.resource)] = mapping

    def _load(self, group: str, version: str) -> None:
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        try:
            document = self._fetch(path)
        except NotFoundError:
            document = {"resources": []}
        for entry in document.get("resources", []):
            if "/" in entry["name"]:
                continue  # subresources (pods/status) are not kinds of their own
            gvk = GroupVersionKind(group, version, entry["kind"])
            resource = GroupVersionResource(group, version, entry["name"])
            self._store(RESTMapping(gvk, resource, bool(entry.get("namespaced"))))
        self._loaded.add((group, version))

    def mapping(self, gvk: GroupVersionKind) -> RESTMapping:
        """The mapping of `gvk`; raises NoKindMatchError when the server does not serve it."""
        with self._lock:
            found = self._by_kind.get(gvk)
            if found is not None:
                return found
            self._load(gvk.group, gvk.version)  # first use, or a miss: (re)read this group version
            found = self._by_kind.get(gvk)
        if found is None:
            raise NoKindMatchError(f"no kind {gvk.kind!r} is served in {gvk.api_version!r}")
        return found

    def kind_for(self, resource: GroupVersionResource) -> GroupVersionKind:
        """The kind served as `resource`; raises NoKindMatchError."""
        key = (resource.group, resource.version, resource.resource)
        with self._lock:
            if key not in self._by_resource:
                self._load(resource.group, resource.version)
            found = self._by_resource.get(key)
        if found is None:
            raise NoKindMatchError(f"no resource {resource} is served")
        return found.gvk

    def reset(self) -> None:
        """Forget everything (e.g. after CRDs were removed)."""
        with self._lock:
            self._by_kind.clear()
            self._by_resource.clear()
            self._loaded.clear()
