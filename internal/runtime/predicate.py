"""Predicates: which events reach a controller's handler (controller-runtime's `predicate` package)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from . import labels as label_selectors
from . import objects
from .event import CreateEvent, DeleteEvent, GenericEvent, UpdateEvent


class Predicate(Protocol):
    def create(self, event: CreateEvent) -> bool: ...

    def update(self, event: UpdateEvent) -> bool: ...

    def delete(self, event: DeleteEvent) -> bool: ...

    def generic(self, event: GenericEvent) -> bool: ...


@dataclass(frozen=True)
class Funcs:
    """A predicate from optional functions; a missing function lets its events through."""

    create_func: Callable[[CreateEvent], bool] | None = None
    update_func: Callable[[UpdateEvent], bool] | None = None
    delete_func: Callable[[DeleteEvent], bool] | None = None
    generic_func: Callable[[GenericEvent], bool] | None = None

    def create(self, event: CreateEvent) -> bool:
        return self.create_func(event) if self.create_func else True

    def update(self, event: UpdateEvent) -> bool:
        return self.update_func(event) if self.update_func else True

    def delete(self, event: DeleteEvent) -> bool:
        return self.delete_func(event) if self.delete_func else True

    def generic(self, event: GenericEvent) -> bool:
        return self.generic_func(event) if self.generic_func else True


def new_predicate_funcs(keep: Callable[[Any], bool]) -> Funcs:
    """Every event whose object satisfies `keep` (for updates: the new object)."""
    return Funcs(
        create_func=lambda e: keep(e.object),
        update_func=lambda e: keep(e.object_new),
        delete_func=lambda e: keep(e.object),
        generic_func=lambda e: keep(e.object),
    )


def generation_changed() -> Funcs:
    """Updates pass only when metadata.generation changed (spec changes; status writes and resyncs don't)."""
    return Funcs(update_func=lambda e: objects.generation(e.object_old) != objects.generation(e.object_new))


def resource_version_changed() -> Funcs:
    """Updates pass only when the resourceVersion changed (filters periodic resyncs)."""
    return Funcs(update_func=lambda e: objects.resource_version(e.object_old) != objects.resource_version(e.object_new))


def label_changed() -> Funcs:
    return Funcs(update_func=lambda e: dict(objects.labels(e.object_old)) != dict(objects.labels(e.object_new)))


def annotation_changed() -> Funcs:
    return Funcs(
        update_func=lambda e: dict(objects.annotations(e.object_old)) != dict(objects.annotations(e.object_new))
    )


def label_selector(selector: Mapping[str, Any] | str) -> Funcs:
    """Events whose object's labels match a `metav1.LabelSelector` dict or a selector string."""
    compiled = (
        label_selectors.parse(selector) if isinstance(selector, str) else label_selectors.from_label_selector(selector)
    )
    return new_predicate_funcs(lambda obj: compiled.matches(objects.labels(obj)))


@dataclass(frozen=True)
class _All:
    predicates: tuple[Predicate, ...]

    def create(self, event: CreateEvent) -> bool:
        return all(p.create(event) for p in self.predicates)

    def update(self, event: UpdateEvent) -> bool:
        return all(p.update(event) for p in self.predicates)

    def delete(self, event: DeleteEvent) -> bool:
        return all(p.delete(event) for p in self.predicates)

    def generic(self, event: GenericEvent) -> bool:
        return all(p.generic(event) for p in self.predicates)


@dataclass(frozen=True)
class _Any:
    predicates: tuple[Predicate, ...]

    def create(self, event: CreateEvent) -> bool:
        return any(p.create(event) for p in self.predicates)

    def update(self, event: UpdateEvent) -> bool:
        return any(p.update(event) for p in self.predicates)

    def delete(self, event: DeleteEvent) -> bool:
        return any(p.delete(event) for p in self.predicates)

    def generic(self, event: GenericEvent) -> bool:
        return any(p.generic(event) for p in self.predicates)


@dataclass(frozen=True)
class _Not:
    predicate: Predicate

    def create(self, event: CreateEvent) -> bool:
        return not self.predicate.create(event)

    def update(self, event: UpdateEvent) -> bool:
        return not self.predicate.update(event)

    def delete(self, event: DeleteEvent) -> bool:
        return not self.predicate.delete(event)

    def generic(self, event: GenericEvent) -> bool:
        return not self.predicate.generic(event)


def and_(*predicates: Predicate) -> Predicate:
    return _All(predicates)


def or_(*predicates: Predicate) -> Predicate:
    return _Any(predicates)


def not_(predicate: Predicate) -> Predicate:
    return _Not(predicate)


__all__ = [
    "Funcs",
    "Predicate",
    "and_",
    "annotation_changed",
    "generation_changed",
    "label_changed",
    "label_selector",
    "new_predicate_funcs",
    "not_",
    "or_",
    "resource_version_changed",
]
