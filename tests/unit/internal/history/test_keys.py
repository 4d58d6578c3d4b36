"""The Redis key schema (docs/compatibility.md plus our `:ts` list and cycle markers)."""

from __future__ import annotations

import pytest
from redis.crc import key_slot

from ballast.internal.history import SeriesKey
from ballast.internal.history.keys import (
    bucket_of,
    cycle_key,
    first_seen_key,
    group_marker_key,
    is_values_key,
    profile_pattern,
    tagged_profile_pattern,
    tagged_values_key,
    times_key,
    untagged,
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


def test_the_cluster_layout_tags_the_bucket_and_untags_to_the_go_name() -> None:
    tagged = tagged_values_key(KEY)
    assert tagged == "ballast:metrics:{43}8746f67fe9f3d343:app:ephemeral-storage"
    assert untagged(tagged) == values_key(KEY)  # the tag removed, the Go name is left
    assert untagged(tagged + ":ts") == times_key(KEY)
    assert group_marker_key(bucket_of(KEY.measurement_hash)) == "ballast:cycles:{43}"
    assert tagged_profile_pattern(KEY.measurement_hash) == "ballast:metrics:\\{43\\}8746f67fe9f3d343:*"
    # profiles whose hashes share their last two digits share a slot; 256 buckets in all
    assert key_slot(tagged.encode()) == key_slot(tagged_values_key(SeriesKey("0000000000000043", "x", "cpu")).encode())
    assert len({bucket_of(f"{n:016x}") for n in range(4096)}) == 256
    with pytest.raises(ValueError, match="16 lowercase hex"):
        bucket_of("43")
