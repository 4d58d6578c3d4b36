"""The Redis backend's reply parsing: the fast path reads exactly what `int()` per value would."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ballast.internal.history.errors import StoreError
from ballast.internal.history.redis_backend import _parse_ints


def _reference(raw: bytes) -> tuple[int, ...] | None:
    try:
        return tuple(map(int, raw.split()))
    except ValueError:
        return None


@given(st.lists(st.integers(-(2**70), 2**70), max_size=50))
def test_values_written_by_the_store_read_back_exactly(values: list[int]) -> None:
    parsed = _parse_ints(" ".join(map(str, values)).encode(), "k")
    assert parsed == tuple(values)
    assert all(type(value) is int for value in parsed)  # never a float, however large


@given(st.binary(max_size=40).map(lambda b: bytes(b"0123456789 -+x\t0"[c % 16] for c in b)))
def test_any_reply_parses_like_int_or_fails_naming_the_key(raw: bytes) -> None:
    expected = _reference(raw)
    if expected is None:
        with pytest.raises(StoreError, match="ballast:metrics:x holds a value that is not a decimal integer"):
            _parse_ints(raw, "ballast:metrics:x")
    else:
        parsed = _parse_ints(raw, "ballast:metrics:x")
        assert parsed == expected
        assert all(type(value) is int for value in parsed)
