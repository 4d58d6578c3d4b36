"""Which resources the kubelet can resize in place (ephemeral-storage in a resize patch fails the whole resize)."""

from __future__ import annotations

IN_PLACE_RESOURCES = frozenset({"cpu", "memory"})


def resizable_in_place(resource: str) -> bool:
    """Return whether `resource` may go into a `pods/resize` patch: only cpu and memory."""
    return resource in IN_PLACE_RESOURCES
