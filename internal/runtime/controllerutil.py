"""Helpers Go users know from `controllerutil` and `meta`: create-or-update, owner references, finalizers.

They work on plain dicts (thaw a cached view first with `objects.thaw`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, MutableMapping
from enum import StrEnum
from typing import Any

from . import objects
from .apierrors import NotFoundError
from .client import MERGE
from .gvk import GroupVersionKind


class OperationResult(StrEnum):
    """What create_or_update / create_or_patch did."""

    NONE = "unchanged"
    CREATED = "created"
    UPDATED = "updated"


class AlreadyOwnedError(ValueError):
    """The object already has a different controller owner."""


def create_or_update(client: Any, obj: dict[str, Any], mutate: Callable[[dict[str, Any]], None]) -> OperationResult:
    """Fetch `obj` (by kind, namespace, name); create it after `mutate` if absent, else update if `mutate` changed it.

    `client` is a `Client` or the manager's cache-backed client (what it reads is copied before `mutate`).

    `obj` is updated in place with what the server stored. Conflicts propagate (ConflictError): requeue.
    """
    name, namespace = objects.name(obj), objects.namespace(obj) or None
    try:
        current = objects.thaw(client.get(client.gvk(obj), name, namespace))  # a cache view is read-only
    except NotFoundError:
        mutate(obj)
        _check_identity(obj, name, namespace)
        obj.update(client.create(obj))
        return OperationResult.CREATED
    before = copy.deepcopy(current)
    mutate(current)
    _check_identity(current, name, namespace)
    if current == before:
        obj.clear()
        obj.update(current)
        return OperationResult.NONE
    stored = client.update(current)
    obj.clear()
    obj.update(stored)
    return OperationResult.UPDATED


def create_or_patch(client: Any, obj: dict[str, Any], mutate: Callable[[dict[str, Any]], None]) -> OperationResult:
    """As create_or_update, but sends a JSON merge patch of what `mutate` changed (no resourceVersion race)."""
    name, namespace = objects.name(obj), objects.namespace(obj) or None
    try:
        current = objects.thaw(client.get(client.gvk(obj), name, namespace))  # a cache view is read-only
    except NotFoundError:
        mutate(obj)
        _check_identity(obj, name, namespace)
        obj.update(client.create(obj))
        return OperationResult.CREATED
    before = copy.deepcopy(current)
    mutate(current)
    _check_identity(current, name, namespace)
    patch = merge_patch(before, current)
    if not patch:
        obj.clear()
        obj.update(current)
        return OperationResult.NONE
    stored = client.patch(current, patch, patch_type=MERGE)
    obj.clear()
    obj.update(stored)
    return OperationResult.UPDATED


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


def _check_identity(obj: MutableMapping[str, Any], name: str, namespace: str | None) -> None:
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


def set_owner_reference(owner: Any, owner_gvk: GroupVersionKind, obj: dict[str, Any]) -> None:
    """Add (or refresh) a non-controller owner reference to `owner` on `obj`."""
    _upsert_reference(obj, _reference(owner, owner_gvk, controller=False))


def set_controller_reference(owner: Any, owner_gvk: GroupVersionKind, obj: dict[str, Any]) -> None:
    """Make `owner` the controller of `obj`; raises AlreadyOwnedError if another object controls it.

    A namespaced object cannot be owned across namespaces, and a cluster-scoped object cannot have a namespaced
    owner (the garbage collector would delete it): both raise ValueError.
    """
    owner_namespace, namespace = objects.namespace(owner), objects.namespace(obj)
    if owner_namespace and owner_namespace != namespace:
        raise ValueError(
            f"cross-namespace owner references are not allowed: {owner_gvk.kind} {owner_namespace}/"
            f"{objects.name(owner)} cannot own an object in {namespace or 'the cluster scope'}"
        )
    for reference in obj.get("metadata", {}).get("ownerReferences", []):
        if reference.get("controller") and not _same_owner(reference, owner_gvk, objects.name(owner)):
            raise AlreadyOwnedError(
                f"{objects.name(obj)} is already controlled by {reference.get('kind')} {reference.get('name')}"
            )
    _upsert_reference(obj, _reference(owner, owner_gvk, controller=True))


def _same_owner(reference: dict[str, Any], gvk: GroupVersionKind, name: str) -> bool:
    group = str(reference.get("apiVersion", "")).rpartition("/")[0]
    return group == gvk.group and reference.get("kind") == gvk.kind and reference.get("name") == name


def _upsert_reference(obj: dict[str, Any], reference: dict[str, Any]) -> None:
    references: list[dict[str, Any]] = obj.setdefault("metadata", {}).setdefault("ownerReferences", [])
    gvk = GroupVersionKind.from_api_version(reference["apiVersion"], reference["kind"])
    for index, existing in enumerate(references):
        if _same_owner(existing, gvk, reference["name"]):
            references[index] = reference
            return
    references.append(reference)


# ----------------------------------------------------------------------------------------- finalizers


def contains_finalizer(obj: Any, finalizer: str) -> bool:
    meta = objects.metadata(obj)
    finalizers = meta.get("finalizers") if hasattr(meta, "get") else getattr(meta, "finalizers", ())
    return finalizer in (finalizers or ())


def add_finalizer(obj: dict[str, Any], finalizer: str) -> bool:
    """Add `finalizer` if missing; returns whether `obj` changed."""
    finalizers: list[str] = obj.setdefault("metadata", {}).setdefault("finalizers", [])
    if finalizer in finalizers:
        return False
    finalizers.append(finalizer)
    return True


def remove_finalizer(obj: dict[str, Any], finalizer: str) -> bool:
    """Remove every occurrence of `finalizer`; returns whether `obj` changed."""
    meta = obj.get("metadata") or {}
    finalizers = meta.get("finalizers") or []
    kept = [f for f in finalizers if f != finalizer]
    if len(kept) == len(finalizers):
        return False
    meta["finalizers"] = kept
    return True
