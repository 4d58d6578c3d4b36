"""Events as handlers and predicates see them (controller-runtime's `event` package)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class CreateEvent:
    """An object appeared; `is_initial_list` when it came from the informer's first list."""

    object: Any
    is_initial_list: bool = False


@dataclass(frozen=True, slots=True)
class UpdateEvent:
    """An object changed; a periodic resync delivers `object_old is object_new`."""

    object_old: Any
    object_new: Any


@dataclass(frozen=True, slots=True)
class DeleteEvent:
    """An object is gone (or stopped matching the informer's selector); `object` is its last known state."""

    object: Any


@dataclass(frozen=True, slots=True)
class GenericEvent:
    """An event from outside the API server (a channel source, a timer)."""

    object: Any


__all__ = [
    "CreateEvent",
    "DeleteEvent",
    "GenericEvent",
    "UpdateEvent",
]
