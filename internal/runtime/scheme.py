"""Scheme: which Python type stands for which kind (controller-runtime's `runtime.Scheme`).

Built-in kinds travel as plain dicts, or as the generated built-in models (`ballast.runtime.crd.kinds`: a
`Deployment`, a `Secret`), which every scheme knows without registration (they say what they are, as client-go's
scheme is in every manager); kinds registered here (our CRDs) are converted to and from their model type at the
edges — the client returns a model when asked with a model type. A model is any class with pydantic's
`model_validate(dict)` and `model_dump(...)`; one with a `from_wire(dict)` classmethod (every `WireModel`) is
decoded with it, so it keeps the fields a newer server sent (docs/design.md, difference 72).
"""

from __future__ import annotations

import threading
from typing import Any, Protocol, TypeVar, runtime_checkable

from .gvk import GroupVersionKind


@runtime_checkable
class Model(Protocol):
    """What the scheme needs of a typed object (pydantic v2 models satisfy it)."""

    @classmethod
    def model_validate(cls, obj: Any) -> Any: ...

    def model_dump(self, **kwargs: Any) -> dict[str, Any]: ...


M = TypeVar("M")


class UnregisteredTypeError(LookupError):
    """A model type was used that is not registered in the scheme."""


class Scheme:
    """A registry of model types and the kinds they are; thread-safe."""

    def __init__(self) -> None:
        self._kinds: dict[type[Any], GroupVersionKind] = {}
        self._lock = threading.Lock()

    def register(self, gvk: GroupVersionKind, model: type[Any]) -> None:
        """Register `model` as the type of `gvk` (re-registering the same pair is a no-op)."""
        with self._lock:
            existing = self._kinds.get(model)
            if existing is not None and existing != gvk:
                raise ValueError(f"{model.__name__} is already registered as {existing}")
            self._kinds[model] = gvk

    def add(self, *kinds: type[Any]) -> None:
        """Register each of `kinds` from its own class constants (`GROUP`, `VERSION`, `KIND`: a `CustomResource`
        subclass knows what it is) — Go's `AddToScheme(scheme)`. TypeError names a class without them."""
        for kind in kinds:
            group, version, name = (getattr(kind, constant, None) for constant in ("GROUP", "VERSION", "KIND"))
            if not isinstance(kind, type) or version is None or name is None or group is None:
                shown = kind.__name__ if isinstance(kind, type) else repr(kind)
                raise TypeError(
                    f"scheme.add takes kinds that declare GROUP, VERSION and KIND (CustomResource subclasses), not "
                    f"{shown}; register other types with scheme.register(GroupVersionKind(...), Model)"
                )
            self.register(GroupVersionKind(group, version, name), kind)

    def gvk_for(self, model: type[Any]) -> GroupVersionKind:
        found = self._kinds.get(model) or _builtin_gvk(model)
        if found is None:
            raise UnregisteredTypeError(
                f"{model.__name__} is not registered in the scheme; register it with "
                "scheme.add(Model) (a CustomResource) or scheme.register(GroupVersionKind(...), Model)"
            )
        return found

    def is_registered(self, model: type[Any]) -> bool:
        return model in self._kinds or _builtin_gvk(model) is not None

    @staticmethod
    def to_wire(obj: Any) -> Any:
        """The JSON-ready form of a model (camelCase, no nulls); other objects unchanged."""
        # The dict test first: checking a runtime Protocol costs far more, and most writes send dicts.
        if not isinstance(obj, dict) and isinstance(obj, Model):
            return obj.model_dump(mode="json", by_alias=True, exclude_none=True)
        return obj

    @staticmethod
    def from_wire(data: Any, model: type[M]) -> M:
        """Validate wire data into `model`: with its `from_wire` when it has one (unknown fields kept)."""
        decode = getattr(model, "from_wire", None) or model.model_validate  # type: ignore[attr-defined]
        return decode(data)  # type: ignore[no-any-return]


def _builtin_gvk(model: type[Any]) -> GroupVersionKind | None:
    # A generated built-in kind (`ballast.runtime.crd.kinds.base.BuiltinKind`) carries its own identity.
    if getattr(model, "BUILTIN_KIND", False) is not True:
        return None
    return GroupVersionKind(model.GROUP, model.VERSION, model.KIND)


__all__ = [
    "Model",
    "Scheme",
    "UnregisteredTypeError",
]
