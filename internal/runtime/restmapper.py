"""A discovery-backed REST mapper: kind ↔ resource and scope, cached per group version, refreshed on a miss."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

from .apierrors import NotFoundError
from .gvk import GroupVersionKind, GroupVersionResource, RESTMapping


class NoKindMatchError(LookupError):
    """The API server does not serve this kind (not installed, or wrong group/version)."""


DiscoveryFetch = Callable[[str], dict[str, Any]]
_GROUP = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")  # a DNS-1123 subdomain
_VERSION = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")  # a DNS-1123 label


def _servable(group: str, version: str) -> bool:
    """Whether `group`/`version` can name an API group version at all; others are never asked for: they come
    from objects anyone may write (an ownerReference's apiVersion), and `apps/../../api/v1` would read another
    group's discovery document and map its kinds under a group that does not exist."""
    return (group == "" or (len(group) <= 253 and _GROUP.fullmatch(group) is not None)) and (
        len(version) <= 63 and _VERSION.fullmatch(version) is not None
    )


class RESTMapper:
    """Maps kinds to resources using the API server's discovery documents.

    `fetch(path)` returns the decoded `APIResourceList` of `/api/v1` or `/apis/<group>/<version>`. A group
    version is fetched once and cached; a kind missing from the cache triggers one refresh of its group version
    (a CRD installed after start-up becomes visible), after which `NoKindMatchError` is raised. A group or
    version that cannot exist (not a DNS name) is `NoKindMatchError` at once, without a request, and a group
    version the server does not serve leaves nothing behind, so lookups of made-up kinds cost no memory.
    """

    def __init__(self, fetch: DiscoveryFetch) -> None:
        self._fetch = fetch
        self._lock = threading.Lock()
        self._by_kind: dict[GroupVersionKind, RESTMapping] = {}
        self._by_resource: dict[tuple[str, str, str], RESTMapping] = {}

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

    def mapping(self, gvk: GroupVersionKind) -> RESTMapping:
        """The mapping of `gvk`; raises NoKindMatchError when the server does not serve it."""
        with self._lock:
            found = self._by_kind.get(gvk)
            if found is not None:
                return found
            if not _servable(gvk.group, gvk.version):
                raise NoKindMatchError(f"no kind {gvk.kind!r} is served in {gvk.api_version!r}")
            self._load(gvk.group, gvk.version)  # first use, or a miss: (re)read this group version
            found = self._by_kind.get(gvk)
        if found is None:
            raise NoKindMatchError(f"no kind {gvk.kind!r} is served in {gvk.api_version!r}")
        return found

    def kind_for(self, resource: GroupVersionResource) -> GroupVersionKind:
        """The kind served as `resource`; raises NoKindMatchError."""
        key = (resource.group, resource.version, resource.resource)
        with self._lock:
            if key not in self._by_resource and _servable(resource.group, resource.version):
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


__all__ = [
    "DiscoveryFetch",
    "NoKindMatchError",
    "RESTMapper",
]
