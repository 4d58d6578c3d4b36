"""What policy matching reads from a pod: its namespace, labels, annotations and the kinds of its owner chain."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import msgspec

from ballast.internal.enrollment import PodProjection

OwnerLookup = Callable[[str, Mapping[str, Any]], Mapping[str, Any] | None]
"""`lookup(namespace, owner_reference)` → the owner object (e.g. from the cache), or None when it is unknown."""

MAX_OWNER_DEPTH = 8
"""Longest controller chain followed (a guard against reference cycles in hand-made objects)."""

_EMPTY: Mapping[str, str] = MappingProxyType({})


def _frozen_strings(value: Mapping[str, str] | None, what: str) -> Mapping[str, str]:
    if value is None:
        return _EMPTY
    if not isinstance(value, Mapping):
        raise TypeError(f"pod {what} must be a mapping of strings, got {type(value).__name__}")
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, str):
            raise TypeError(f"pod {what} must map strings to strings, got {key!r}: {item!r}")
    return MappingProxyType(dict(value))


@dataclass(frozen=True, slots=True)
class PodFacts:
    """The pod attributes policy selectors look at.

    `owner_kinds` is the pod's controller chain, direct controller first and top-level owner last: a Deployment's
    pod has `("ReplicaSet", "Deployment")`, a standalone pod `()`. Labels and annotations are copied into
    read-only mappings. Raises TypeError when a field has the wrong type.
    """

    namespace: str
    labels: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    annotations: Mapping[str, str] = field(default_factory=lambda: _EMPTY)
    owner_kinds: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.namespace, str):
            raise TypeError(f"pod namespace must be a str, got {type(self.namespace).__name__} {self.namespace!r}")
        object.__setattr__(self, "labels", _frozen_strings(self.labels, "labels"))
        object.__setattr__(self, "annotations", _frozen_strings(self.annotations, "annotations"))
        kinds: object = self.owner_kinds
        if not isinstance(kinds, tuple | list) or not all(isinstance(kind, str) for kind in kinds):
            raise TypeError(f"owner_kinds must be a tuple of kind names, got {kinds!r}")
        object.__setattr__(self, "owner_kinds", tuple(kinds))

    @property
    def direct_owner_kind(self) -> str:
        """The kind of the pod's controller ownerReference (`ReplicaSet`), or "" for a standalone pod."""
        return self.owner_kinds[0] if self.owner_kinds else ""

    @property
    def top_owner_kind(self) -> str:
        """The kind at the top of the controller chain (`Deployment`), or "" for a standalone pod."""
        return self.owner_kinds[-1] if self.owner_kinds else ""

    @classmethod
    def from_pod(
        cls, pod: PodProjection, *, namespace: str | None = None, lookup: OwnerLookup | None = None
    ) -> PodFacts:
        """Return the facts of a pod (`enrollment.pod_projection` converts a pod's JSON).

        `namespace` overrides `metadata.namespace` (an admission request carries it outside the object). The
        owner chain follows controller references through `lookup` (see `owner_kinds`); without one only the
        direct controller's kind is known, as in the Go operator. Raises ValueError for a controller ownerReference
        without a kind.
        """
        metadata = pod.metadata
        pod_namespace = namespace if namespace is not None else metadata.namespace
        references = {"metadata": {"ownerReferences": msgspec.to_builtins(metadata.owner_references)}}
        return cls(
            namespace=pod_namespace,
            labels=metadata.labels,
            annotations=metadata.annotations,
            owner_kinds=owner_kinds(references, lookup, namespace=pod_namespace),
        )


class OwnerReferenceError(ValueError):
    """A controller ownerReference without a kind: the object is invalid (the API server refuses it, after
    admission has seen it)."""


def controller_reference(obj: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """Return the ownerReference of `obj` with `controller: true`, or None.

    Raises OwnerReferenceError (a ValueError) when that reference has no kind.
    """
    metadata = obj.get("metadata") or {}
    for reference in metadata.get("ownerReferences") or ():
        if isinstance(reference, Mapping) and reference.get("controller") is True:
            if not isinstance(reference.get("kind"), str) or not reference["kind"]:
                raise OwnerReferenceError(f"controller ownerReference {dict(reference)!r} has no kind")
            return reference
    return None


def owner_kinds(
    obj: Mapping[str, Any],
    lookup: OwnerLookup | None = None,
    *,
    namespace: str | None = None,
    max_depth: int = MAX_OWNER_DEPTH,
) -> tuple[str, ...]:
    """Return the kinds of `obj`'s controller chain, direct controller first: `("ReplicaSet", "Deployment")`.

    Each step reads the `controller: true` ownerReference; the kind comes from the reference, so the last owner
    need not be found. `lookup(namespace, reference)` returns the owner object to continue from, or None to
    stop; without a lookup the chain is the direct controller only. `namespace` defaults to the object's own.
    The walk stops after `max_depth` owners or when a uid repeats. Raises ValueError for a controller reference
    without a kind; exceptions from `lookup` propagate.
    """
    metadata = obj.get("metadata") or {}
    namespace = namespace if namespace is not None else metadata.get("namespace") or ""
    kinds: list[str] = []
    seen: set[str] = set()
    current: Mapping[str, Any] | None = obj
    while current is not None and len(kinds) < max_depth:
        reference = controller_reference(current)
        if reference is None or reference.get("uid") in seen:
            break
        kinds.append(reference["kind"])
        uid = reference.get("uid")
        if isinstance(uid, str) and uid:
            seen.add(uid)
        current = lookup(namespace, reference) if lookup is not None else None
    return tuple(kinds)
