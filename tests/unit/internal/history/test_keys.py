"""The Redis key schema (docs/compatibility.md plus our `:ts` list and cycle markers)."""

from __future__ import annotations

import pytest

from ballast.internal.history import SeriesKey
from ballast.internal.history.keys import (
    cycle_key,
    first_seen_key,
    is_values_key,
    profile_pattern,
    times_key,
    values_key,
)

KEY = SeriesKey("8746f67fe9f3d343", "app", "ephemeral-storage")


def test_series_keys() -> None:
    assert values_key(KEY) == "ballast:metrics:8746f67fe9f3d343:app:ephemeral-storage"
    assert first_seen_key(KEY) == "ballast:metrics:8746f67fe9f3d343:app:ephemeral-storage:first_seen"
    assert times_key(KEY) == "ballast:metrics:8746f67fe9f3d343:app:ephemeral-storage:ts"
    assert profile_pattern("8746f67fe9f3d343") == "ballast:metrics:8746f67fe9f3d343:*"
    assert cycle_key("kubernetesMetrics/1732900000000") == "ballast:cycle:kubernetesMetrics/1732900000000"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("ballast:metrics:8746f67fe9f3d343:app:cpu", True),
        ("ballast:metrics:8746f67fe9f3d343:app:ts", True),  # a resource named `ts`
        ("ballast:metrics:8746f67fe9f3d343:app:first_seen", True),
        ("ballast:metrics:8746f67fe9f3d343:app:cpu:ts", False),
        ("ballast:metrics:8746f67fe9f3d343:app:cpu:first_seen", False),
        ("ballast:cycle:c1", False),
    ],
)
def test_is_values_key(name: str, expected: bool) -> None:
    assert is_values_key(name) is expected


@pytest.mark.parametrize("bad", ["", "*", "8746f67fe9f3d34?", "8746F67FE9F3D343", "8746f67fe9f3d343:*", "[a-f]"])
def test_profile_pattern_refuses_anything_but_a_hash(bad: str) -> None:
    with pytest.raises(ValueError, match="16 lowercase hex"):
        profile_pattern(bad)
