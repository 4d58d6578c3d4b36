"""Group/version/kind and group/version/resource names, and how to write them as strings and URL paths."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import quote

_PATH_SAFE = "!$&'()*+,;=:@"
"""Characters a path segment keeps as they are (RFC 3986 `pchar` besides letters, digits and `-._~`)."""


@lru_cache(maxsize=4096)  # the same names again and again: a controller writes the objects it reads
def path_segment(value: str, what: str) -> str:
    """`value` as one URL path segment; ValueError for a value that is not one (client-go's
    `IsValidPathSegmentName`: not `.` or `..`, no `/` or `%`). Anything else that URLs reserve (`?`, `#`,
    spaces) is percent-encoded, so a name can never point a request at another path or add a query to it —
    names come from objects anyone may write (an ownerReference of a pod under admission)."""
    if value in (".", "..") or "/" in value or "%" in value:
        raise ValueError(f"{what} {value!r} cannot be a URL path segment (it may not be '.' or '..' nor "
                         "contain '/' or '%')")  # fmt: skip
    return quote(value, safe=_PATH_SAFE)


@dataclass(frozen=True, slots=True)
class GroupVersionKind:
    """A kind in an API group version; the core group is ""."""

    group: str
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        """`v1` for the core group, `group/version` otherwise (the `apiVersion` field)."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @classmethod
    def from_api_version(cls, api_version: str, kind: str) -> GroupVersionKind:
        group, _, version = api_version.rpartition("/")
        if not version or not kind:
            raise ValueError(f"invalid apiVersion/kind {api_version!r}/{kind!r}")
        return cls(group, version, kind)

    @classmethod
    def parse(cls, text: str) -> GroupVersionKind:
        """`v1/Pod`, `apps/v1/Deployment` or `Deployment.v1.apps` → GroupVersionKind."""
        return _parse_kind(text)

    def __str__(self) -> str:
        return f"{self.api_version}/{self.kind}"


@lru_cache(maxsize=1024)  # a handful of kinds, named by string at every call of a client or a cache
def _parse_kind(text: str) -> GroupVersionKind:
    """`GroupVersionKind.parse`, once per text (a text that is not a kind raises every time)."""
    if "/" in text:
        api_version, _, kind = text.rpartition("/")
        return GroupVersionKind.from_api_version(api_version, kind)
    kind, _, rest = text.partition(".")
    version, _, group = rest.partition(".")
    if not kind or not version:
        raise ValueError(f"cannot parse {text!r} as a kind: use 'v1/Pod', 'apps/v1/Deployment' or 'Pod.v1'")
    return GroupVersionKind(group, version, kind)


@dataclass(frozen=True, slots=True)
class GroupVersionResource:
    """A resource (plural, lower case) in an API group version."""

    group: str
    version: str
    resource: str

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.resource}.{self.version}.{self.group}" if self.group else f"{self.resource}.{self.version}"


@dataclass(frozen=True, slots=True)
class RESTMapping:
    """How a kind is served: its resource, whether it is namespaced, and the URL prefix of its group version."""

    gvk: GroupVersionKind
    resource: GroupVersionResource
    namespaced: bool

    @property
    def prefix(self) -> str:
        """`/api/v1` for the core group, `/apis/<group>/<version>` otherwise."""
        if self.gvk.group:
            return f"/apis/{self.gvk.group}/{self.gvk.version}"
        return f"/api/{self.gvk.version}"

    def collection_path(self, namespace: str | None = None) -> str:
        """Path of the collection: all namespaces when `namespace` is None for a namespaced resource.
        ValueError for a namespace that is not a path segment (`path_segment`)."""
        if self.namespaced and namespace:
            return f"{self.prefix}/namespaces/{path_segment(namespace, 'namespace')}/{self.resource.resource}"
        return f"{self.prefix}/{self.resource.resource}"

    def object_path(self, name: str, namespace: str | None = None, subresource: str | None = None) -> str:
        """Path of one object (and optionally one of its subresources). ValueError for a missing name or
        namespace, or one that is not a path segment (`path_segment`)."""
        if not name:
            raise ValueError(f"{self.gvk.kind}: an object name is required")
        if self.namespaced and not namespace:
            raise ValueError(f"{self.gvk.kind} {name!r} is namespaced: a namespace is required")
        path = f"{self.collection_path(namespace if self.namespaced else None)}/{path_segment(name, 'name')}"
        return f"{path}/{path_segment(subresource, 'subresource')}" if subresource else path


__all__ = [
    "GroupVersionKind",
    "GroupVersionResource",
    "RESTMapping",
    "path_segment",
]
