from __future__ import annotations

import pytest

from ballast.internal.resize import IN_PLACE_RESOURCES, resizable_in_place


@pytest.mark.parametrize(
    ("resource", "resizable"),
    [("cpu", True), ("memory", True), ("ephemeral-storage", False), ("nvidia.com/gpu", False), ("", False)],
)
def test_only_cpu_and_memory_resize_in_place(resource: str, resizable: bool) -> None:
    assert resizable_in_place(resource) is resizable
    assert (resource in IN_PLACE_RESOURCES) is resizable
