"""The base class of every typed kind: its identity on the API server (group, version, kind, plural, scope), the
API paths built from it, and what its CustomResourceDefinition shows (short names, printer columns, subresources:
`PrinterColumn`, `AGE` and `ScaleSubresource` come from `ballast.runtime.crdgen`, which renders the CRD).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import Field, model_validator

from ballast.runtime.crdgen import PrinterColumn, ScaleSubresource, Scope
from ballast.runtime.gvk import path_segment
from ballast.runtime.scheme import Scheme

from .meta import ObjectMeta
from .wire import WireModel, with_type_meta


class CustomResource(WireModel):
    """An object of a custom kind. Subclasses set the class constants (`GROUP`, `VERSION`, `KIND`, `PLURAL`,
    `SCOPE`, and optionally `SHORT_NAMES`, `PRINTER_COLUMNS`, `STATUS_SUBRESOURCE`, `SCALE_SUBRESOURCE`);
    `API_VERSION`, `SINGULAR` and `LIST_KIND` are derived from them. The first paragraph of the class docstring
    describes the CRD; each field's docstring describes its schema node.

    `apiVersion` and `kind` may be left out when building or parsing (they are filled in); a different value
    fails validation with a message naming the field and the expected value.
    """

    GROUP: ClassVar[str]
    VERSION: ClassVar[str]
    KIND: ClassVar[str]
    PLURAL: ClassVar[str]
    SCOPE: ClassVar[Scope]
    API_VERSION: ClassVar[str]
    SINGULAR: ClassVar[str]
    LIST_KIND: ClassVar[str]
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ()
    PRINTER_COLUMNS: ClassVar[tuple[PrinterColumn, ...]] = ()
    STATUS_SUBRESOURCE: ClassVar[bool] = False
    SCALE_SUBRESOURCE: ClassVar[ScaleSubresource | None] = None

    api_version: str = ""
    """APIVersion defines the versioned schema of this representation of an object."""
    kind: str = ""
    """Kind is a string value representing the REST resource this object represents."""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    """Standard object metadata."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "KIND" in cls.__dict__:
            cls.API_VERSION = f"{cls.GROUP}/{cls.VERSION}"
            cls.SINGULAR = cls.KIND.lower()
            cls.LIST_KIND = f"{cls.KIND}List"

    @model_validator(mode="before")
    @classmethod
    def _type_meta(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "KIND" not in cls.__dict__:
            return data
        return with_type_meta(data, cls.API_VERSION, cls.KIND)

    @classmethod
    def add_to_scheme(cls, scheme: Scheme) -> None:
        """Register this kind in `scheme` (Go's `AddToScheme`): `Widget.add_to_scheme(manager.scheme)`."""
        scheme.add(cls)

    @classmethod
    def collection_path(cls, namespace: str | None = None) -> str:
        """The URL path listing this kind: cluster-wide, or in `namespace` for a namespaced kind.

        Raises ValueError when a namespace is given for a cluster-scoped kind.
        """
        base = f"/apis/{cls.GROUP}/{cls.VERSION}"
        if namespace:
            if cls.SCOPE == "Cluster":
                raise ValueError(f"{cls.KIND} is cluster-scoped; it has no namespace (got {namespace!r})")
            return f"{base}/namespaces/{path_segment(namespace, 'namespace')}/{cls.PLURAL}"
        return f"{base}/{cls.PLURAL}"

    @classmethod
    def object_path(cls, name: str, namespace: str | None = None) -> str:
        """The URL path of one object. Raises ValueError when the name is empty, or the namespace is missing
        for a namespaced kind or given for a cluster-scoped one, or either is not a path segment."""
        if not name:
            raise ValueError(f"a {cls.KIND} path needs a name")
        if cls.SCOPE == "Namespaced" and not namespace:
            raise ValueError(f"{cls.KIND} {name!r} is namespaced; its path needs a namespace")
        return f"{cls.collection_path(namespace)}/{path_segment(name, 'name')}"

    @property
    def path(self) -> str:
        """This object's URL path from `metadata.name` (and `metadata.namespace`); ValueError as `object_path`."""
        return self.object_path(self.metadata.name or "", self.metadata.namespace)


__all__ = [
    "CustomResource",
]
