"""Helpers Go users know from `controllerutil` and `meta`: create-or-update, owner references, finalizers.

Those that change an object take a plain dict or a typed model and edit it in place, the same kind of object
coming back (a cached view is read-only: thaw it first with `objects.thaw`; anything else is a TypeError naming
what is accepted); those that read one (`contains_finalizer`, `get_controller_of`, `get_reference`) also take
views and projections.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from enum import StrEnum
from typing import Any, TypeVar

import msgspec

from . import objects
from .apierrors import NotFoundError
from .client import MERGE
from .gvk import GroupVersionKind
from .scheme import Model, Scheme

Obj = TypeVar("Obj")


class OperationResult(StrEnum):
    """What create_or_update / create_or_patch did."""

    NONE = "unchanged"
    CREATED = "created"
    UPDATED = "updated"


class AlreadyOwnedError(ValueError):
    """The object already has a different controller owner (controllerutil's `AlreadyOwnedError`).

    `existing` is the controller's owner reference, `owner` the one refused; the message names both.
    """

    def __init__(self, obj: Any, existing: Mapping[str, Any], owner: Mapping[str, Any]) -> None:
        where = f"{objects.namespace(obj)}/" if objects.namespace(obj) else ""
        super().__init__(
            f"{where}{objects.name(obj)} is already controlled by {existing.get('kind')} {existing.get('name')} "
            f"(uid {existing.get('uid') or '?'}); {owner.get('kind')} {owner.get('name')} cannot also be its "
            "controller: set_owner_reference() adds a non-controller owner"
        )
        self.object_name = objects.name(obj)
        self.existing = dict(existing)
        self.owner = dict(owner)


def create_or_update(client: Any, obj: Obj, mutate: Callable[[Obj], None]) -> OperationResult:
    """Fetch `obj` (by kind, namespace, name); create it after `mutate` if absent, else update if `mutate` changed it
    (controllerutil's `CreateOrUpdate(ctx, client, obj, mutate)`).

    `obj` is a dict or a typed model (its type registered in the client's scheme); `mutate` receives the same kind
    of object — `obj` itself on create, the current object on update — and edits it in place. `client` is a
    `Client` or the manager's cache-backed client (what it reads is copied before `mutate`).

    `obj` is updated in place with what the server stored. Conflicts propagate (ConflictError): requeue.
    """
    return _create_or_write(client, obj, mutate, patch=False)


def create_or_patch(client: Any, obj: Obj, mutate: Callable[[Obj], None]) -> OperationResult:
    """As create_or_update, but sends a JSON merge patch of what `mutate` changed (no resourceVersion race)."""
    return _create_or_write(client, obj, mutate, patch=True)


def _create_or_write(client: Any, obj: Any, mutate: Callable[[Any], None], *, patch: bool) -> OperationResult:
    typed = _writable(obj, "create_or_update")
    name, namespace = objects.name(obj), objects.namespace(obj) or None
    try:
        found = client.get(type(obj) if typed else client.gvk(obj), name, namespace)
    except NotFoundError:
        mutate(obj)
        _check_identity(obj, name, namespace)
        _replace_contents(obj, client.create(obj))
        return OperationResult.CREATED
    # A cache view is read-only and a cached model may be shared: edit a copy.
    current = found.model_copy(deep=True) if typed else objects.thaw(found)
    before = objects.thaw(current)
    mutate(current)
    _check_identity(current, name, namespace)
    after = objects.thaw(current)
    if after == before:
        _replace_contents(obj, current)
        return OperationResult.NONE
    stored = client.patch(current, merge_patch(before, after), patch_type=MERGE) if patch else client.update(current)
    _replace_contents(obj, stored)
    return OperationResult.UPDATED


def _writable(obj: Any, helper: str) -> bool:
    """Whether `obj` is a typed model (else a plain dict); TypeError naming what `helper` accepts otherwise."""
    if isinstance(obj, dict):
        return False
    if isinstance(obj, Model) and not isinstance(obj, Mapping):
        return True
    hint = " (a read-only cache view: objects.thaw() it first)" if isinstance(obj, Mapping) else ""
    raise TypeError(f"{helper} takes a dict or a typed model (a pydantic model), not {type(obj).__name__}{hint}")


def _replace_contents(obj: Any, stored: Any) -> None:
    """Make `obj` what `stored` is, in place (the caller keeps its reference, as Go's pointer)."""
    if isinstance(obj, dict):
        obj.clear()
        obj.update(stored if isinstance(stored, dict) else objects.thaw(stored))
        return
    if not isinstance(stored, type(obj)):
        stored = Scheme.from_wire(objects.thaw(stored), type(obj))  # what the server sent: unknown fields kept
    for field in type(obj).model_fields:
        setattr(obj, field, getattr(stored, field))
    if getattr(obj, "__pydantic_extra__", None) is not None:
        obj.__pydantic_extra__ = dict(stored.__pydantic_extra__ or {})


def merge_patch(before: Any, after: Any) -> dict[str, Any]:
    """The RFC 7386 merge patch that turns `before` into `after` (null deletes a key; lists are replaced)."""
    patch: dict[str, Any] = {}
    for key in before.keys() - after.keys():
        patch[key] = None
    for key, value in after.items():
        old = before.get(key, _MISSING)
        if old == value:
            continue
        if isinstance(old, dict) and isinstance(value, dict):
            nested = merge_patch(old, value)
            if nested:
                patch[key] = nested
        else:
            patch[key] = value
    return patch


_MISSING = object()


def _check_identity(obj: Any, name: str, namespace: str | None) -> None:
    if objects.name(obj) != name or (objects.namespace(obj) or None) != namespace:
        raise ValueError("the mutate function must not change the object's name or namespace")


# ------------------------------------------------------------------------------------ owner references


def _reference(owner: Any, gvk: GroupVersionKind, controller: bool) -> dict[str, Any]:
    reference: dict[str, Any] = {
        "apiVersion": gvk.api_version,
        "kind": gvk.kind,
        "name": objects.name(owner),
        "uid": objects.uid(owner),
    }
    if controller:
        reference["controller"] = True
        reference["blockOwnerDeletion"] = True
    return reference


def _gvk_of(obj: Any, scheme: Scheme | None, what: str) -> GroupVersionKind:
    """The kind of `obj`: its own apiVersion/kind (dicts, views, models that carry them), else its type's
    registration in `scheme`."""
    if isinstance(obj, Mapping):
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
    else:
        api_version = getattr(obj, "apiVersion", None) or getattr(obj, "api_version", None)
        kind = getattr(obj, "kind", None)
    if api_version and kind:
        return GroupVersionKind.from_api_version(str(api_version), str(kind))
    if scheme is not None and not isinstance(obj, Mapping) and scheme.is_registered(type(obj)):
        return scheme.gvk_for(type(obj))
    raise ValueError(
        f"cannot tell the kind of the {what} {objects.name(obj) or '(unnamed)'}: it carries no apiVersion/kind; "
        "pass scheme= (with its type registered) or owner_gvk="
    )


def _wire_reference(reference: Any) -> dict[str, Any]:
    if isinstance(reference, Mapping):
        thawed: dict[str, Any] = objects.thaw(reference)
        return thawed
    if isinstance(reference, msgspec.Struct):  # a projection's OwnerReference
        built: dict[str, Any] = msgspec.to_builtins(reference)
        return built
    wire: dict[str, Any] = Scheme.to_wire(reference)
    return wire if isinstance(wire, dict) else dict(vars(reference))


def _is_controller(reference: Any) -> bool:
    if isinstance(reference, Mapping):
        return bool(reference.get("controller"))
    return bool(getattr(reference, "controller", False))


def get_controller_of(obj: Any) -> dict[str, Any] | None:
    """The owner reference of `obj` with `controller: true` (a dict in wire form), or None (metav1's
    `GetControllerOf`). `obj` is a dict, a cached view, a projection or a model."""
    for reference in objects.owner_references(obj):
        if _is_controller(reference):
            return _wire_reference(reference)
    return None


def new_controller_ref(owner: Any, gvk: GroupVersionKind) -> dict[str, Any]:
    """An owner reference to `owner` (of kind `gvk`) with `controller` and `blockOwnerDeletion` set (metav1's
    `NewControllerRef`)."""
    return _reference(owner, gvk, controller=True)


def get_reference(scheme: Scheme | None, obj: Any) -> dict[str, Any]:
    """An ObjectReference to `obj` (client-go's `reference.GetReference`): apiVersion, kind, namespace, name,
    uid, resourceVersion (empty ones left out). The kind comes from `obj` itself, or from `scheme` for a model
    type registered there that does not carry it; ValueError when neither says."""
    gvk = _gvk_of(obj, scheme, "object")
    reference: dict[str, Any] = {"apiVersion": gvk.api_version, "kind": gvk.kind}
    for key, value in (
        ("namespace", objects.namespace(obj)),
        ("name", objects.name(obj)),
        ("uid", objects.uid(obj)),
        ("resourceVersion", objects.resource_version(obj)),
    ):
        if value:
            reference[key] = value
    return reference


def set_owner_reference(
    owner: Any, obj: Any, scheme: Scheme | None = None, *, owner_gvk: GroupVersionKind | None = None
) -> None:
    """Add (or refresh) a non-controller owner reference to `owner` on `obj` (controllerutil's
    `SetOwnerReference(owner, object, scheme)`); the owner's kind as in `set_controller_reference`."""
    _writable(obj, "set_owner_reference")
    gvk = owner_gvk or _gvk_of(owner, scheme, "owner")
    _check_scopes(owner, gvk, obj)
    _upsert_reference(obj, _reference(owner, gvk, controller=False))


def set_controller_reference(
    owner: Any, controlled: Any, scheme: Scheme | None = None, *, owner_gvk: GroupVersionKind | None = None
) -> None:
    """Make `owner` the controller of `controlled` (controllerutil's `SetControllerReference(owner, controlled,
    scheme)`, same argument order): adds, or refreshes, an owner reference with `controller` and
    `blockOwnerDeletion` set on `controlled`, a dict or a typed model (edited in place). `owner` is any object:
    a dict, a cached view, a model.

    The owner's kind comes from `owner_gvk`, else the owner's own apiVersion/kind, else its model type's
    registration in `scheme`. Raises AlreadyOwnedError when another object already controls `controlled` (the
    message names both), and ValueError for a cross-namespace owner or a namespaced owner of a cluster-scoped
    object (one without a namespace): the garbage collector would delete it.
    """
    _writable(controlled, "set_controller_reference")
    gvk = owner_gvk or _gvk_of(owner, scheme, "owner")
    _check_scopes(owner, gvk, controlled)
    existing = get_controller_of(controlled)
    if existing is not None and not _same_owner(existing, gvk, objects.name(owner)):
        raise AlreadyOwnedError(controlled, existing, _reference(owner, gvk, controller=True))
    _upsert_reference(controlled, _reference(owner, gvk, controller=True))


def _check_scopes(owner: Any, gvk: GroupVersionKind, obj: Any) -> None:
    owner_namespace, namespace = objects.namespace(owner), objects.namespace(obj)
    if not owner_namespace or owner_namespace == namespace:
        return
    owner_name = f"{gvk.kind} {owner_namespace}/{objects.name(owner)}"
    if not namespace:
        raise ValueError(
            f"cross-namespace owner references are not allowed: the cluster-scoped {objects.name(obj)} cannot have "
            f"a namespaced owner ({owner_name})"
        )
    raise ValueError(
        f"cross-namespace owner references are not allowed: {owner_name} cannot own an object in {namespace} "
        f"({namespace}/{objects.name(obj)})"
    )


def _same_owner(reference: Mapping[str, Any], gvk: GroupVersionKind, name: str) -> bool:
    group = str(reference.get("apiVersion", "")).rpartition("/")[0]
    return group == gvk.group and reference.get("kind") == gvk.kind and reference.get("name") == name


def _upsert_reference(obj: Any, reference: dict[str, Any]) -> None:
    gvk = GroupVersionKind.from_api_version(reference["apiVersion"], reference["kind"])
    if isinstance(obj, dict):
        references: list[Any] = obj.setdefault("metadata", {}).setdefault("ownerReferences", [])
        entry: Any = reference
    else:
        meta = obj.metadata
        if meta.owner_references is None:
            meta.owner_references = []
        references = meta.owner_references
        entry = _owner_reference_model().model_validate(reference)
    for index, existing in enumerate(references):
        if _same_owner(_wire_reference(existing), gvk, reference["name"]):
            references[index] = entry
            return
    references.append(entry)


def _owner_reference_model() -> Any:
    # Imported on use: the typed models (pydantic) load only for callers that pass one.
    from .crd.meta import OwnerReference  # noqa: PLC0415 - pydantic models load only for typed callers

    return OwnerReference


# ----------------------------------------------------------------------------------------- finalizers


def contains_finalizer(obj: Any, finalizer: str) -> bool:
    """Whether `obj` (a dict, a cached view, a projection or a model) carries `finalizer`."""
    return finalizer in _finalizers(objects.metadata(obj))


def _finalizers(meta: Any) -> Any:
    return (meta.get("finalizers") if isinstance(meta, Mapping) else getattr(meta, "finalizers", None)) or ()


def add_finalizer(obj: Any, finalizer: str) -> bool:
    """Add `finalizer` to `obj` (a dict or a typed model, edited in place) if missing; returns whether `obj`
    changed (controllerutil's `AddFinalizer`, which reports it as Go's does)."""
    if not _writable(obj, "add_finalizer"):
        finalizers: list[str] = obj.setdefault("metadata", {}).setdefault("finalizers", [])
    else:
        if obj.metadata.finalizers is None:
            obj.metadata.finalizers = []
        finalizers = obj.metadata.finalizers
    if finalizer in finalizers:
        return False
    finalizers.append(finalizer)
    return True


def remove_finalizer(obj: Any, finalizer: str) -> bool:
    """Remove every occurrence of `finalizer` from `obj` (a dict or a typed model, edited in place); returns
    whether `obj` changed."""
    typed = _writable(obj, "remove_finalizer")
    meta: Any = obj.metadata if typed else (obj.get("metadata") or {})
    finalizers = list(_finalizers(meta))
    kept = [f for f in finalizers if f != finalizer]
    if len(kept) == len(finalizers):
        return False
    if typed:
        meta.finalizers = kept
    else:
        meta["finalizers"] = kept
    return True


__all__ = [
    "AlreadyOwnedError",
    "OperationResult",
    "add_finalizer",
    "contains_finalizer",
    "create_or_patch",
    "create_or_update",
    "get_controller_of",
    "get_reference",
    "merge_patch",
    "new_controller_ref",
    "remove_finalizer",
    "set_controller_reference",
    "set_owner_reference",
]
