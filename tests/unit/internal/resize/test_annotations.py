"""The resize annotations' values: times in RFC 3339 and the blocked message cut to 256 bytes."""

from __future__ import annotations

import datetime

from ballast.internal.enrollment import LAST_RESIZE, RESIZE_BLOCKED, RESIZE_BLOCKED_AT
from ballast.internal.resize import blocked_patch, format_time, parse_time, resized_patch, truncate_utf8, within

NOW = datetime.datetime(2026, 3, 1, 12, tzinfo=datetime.UTC)


def test_blocked_messages_are_cut_at_256_bytes_between_characters() -> None:
    cut = truncate_utf8("ab" + "€" * 100)  # 2 + 84 × 3 = 254 bytes; the 85th € would end at byte 257
    assert cut == "ab" + "€" * 84
    assert truncate_utf8("short") == "short"


def test_times_are_written_in_utc_to_the_second_and_read_only_with_an_offset() -> None:
    plus_one = datetime.timezone(datetime.timedelta(hours=1))
    assert format_time(datetime.datetime(2026, 3, 1, 13, 0, 0, 999, tzinfo=plus_one)) == "2026-03-01T12:00:00Z"
    assert parse_time("2026-03-01T12:00:00Z") == NOW
    assert parse_time("2026-03-01T12:00:00") is None
    assert parse_time("") is None
    assert parse_time(None) is None
    assert within("2026-03-01T11:59:00Z", NOW, 61)
    assert not within("2026-03-01T11:59:00Z", NOW, 60)
    assert not within("garbage", NOW, 3600)


def test_a_resize_starts_the_cooldown_and_clears_a_block() -> None:
    assert resized_patch(NOW) == {"metadata": {"annotations": {
        LAST_RESIZE: "2026-03-01T12:00:00Z", RESIZE_BLOCKED: None, RESIZE_BLOCKED_AT: None}}}  # fmt: skip


def test_a_block_names_the_reason_within_256_bytes_and_starts_the_backoff() -> None:
    patch = blocked_patch("x" * 300, NOW)
    assert patch == {
        "metadata": {"annotations": {RESIZE_BLOCKED: "x" * 256, RESIZE_BLOCKED_AT: "2026-03-01T12:00:00Z"}}
    }
