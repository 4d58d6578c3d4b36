"""The first_seen rule shared by both backends and the Lua script (docs/design.md, difference 12)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.internal.history import next_first_seen

NOW = 1_000_000
CUTOFF = 400_000


@pytest.mark.parametrize(
    ("first_seen", "kept", "cutoff", "expected"),
    [
        (None, 0, None, NOW),  # first sample ever: set once (the Go operator's SETNX)
        (5, 10, None, 5),  # without retention it never moves
        (5, 0, None, 5),
        (None, 0, CUTOFF, NOW),  # new series under retention
        (100, 0, CUTOFF, NOW),  # every sample expired: start over
        (100, 3, CUTOFF, CUTOFF),  # samples remain: first_seen is the window start
        (500_000, 3, CUTOFF, 500_000),  # inside the window: unchanged
        (500_000, 0, CUTOFF, 500_000),
        (CUTOFF, 3, CUTOFF, CUTOFF),
        (None, 3, CUTOFF, CUTOFF),  # values without first_seen (never written by us)
    ],
)
def test_next_first_seen(first_seen: int | None, kept: int, cutoff: int | None, expected: int) -> None:
    assert next_first_seen(first_seen, kept=kept, at_ms=NOW, cutoff_ms=cutoff) == expected


@given(
    first_seen=st.one_of(st.none(), st.integers(0, NOW)),
    kept=st.integers(0, 10),
    window=st.integers(1, NOW),
)
def test_first_seen_stays_inside_the_window_and_never_goes_back(first_seen: int | None, kept: int, window: int) -> None:
    cutoff = NOW - window
    result = next_first_seen(first_seen, kept=kept, at_ms=NOW, cutoff_ms=cutoff)
    assert cutoff <= result <= NOW
    if first_seen is not None:
        assert result >= first_seen
