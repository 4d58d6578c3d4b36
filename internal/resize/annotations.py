"""The values of the resize annotations on pods: RFC 3339 times (`last-resize`, `resize-blocked-at`) and the
`resize-blocked` message, cut to what an annotation should carry."""

from __future__ import annotations

import datetime
from typing import Any

from ballast.internal.enrollment import LAST_RESIZE, RESIZE_BLOCKED, RESIZE_BLOCKED_AT
from ballast.runtime import rfc3339

BLOCKED_MESSAGE_BYTES = 256


def format_time(value: datetime.datetime) -> str:
    """`value` in UTC as RFC 3339 to the second (`2026-03-01T12:00:00Z`), as the annotations are written."""
    return rfc3339(value)


def parse_time(text: str | None) -> datetime.datetime | None:
    """An RFC 3339 timestamp, or None when absent, unparseable or without an offset (such an annotation is
    ignored rather than guessed at)."""
    if not text:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(text)
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else None


def within(stamp: str | None, now: datetime.datetime, seconds: float) -> bool:
    """Whether the annotation time `stamp` parses and lies less than `seconds` before `now`."""
    parsed = parse_time(stamp)
    return parsed is not None and (now - parsed).total_seconds() < seconds


def truncate_utf8(text: str, limit: int = BLOCKED_MESSAGE_BYTES) -> str:
    """`text` cut to at most `limit` UTF-8 bytes, never inside a character."""
    return text.encode()[:limit].decode("utf-8", "ignore")


def resized_patch(now: datetime.datetime) -> dict[str, Any]:
    """The merge patch of a pod resized at `now`: `last-resize` set (the cooldown), any block cleared."""
    return {"metadata": {"annotations": {LAST_RESIZE: format_time(now), RESIZE_BLOCKED: None, RESIZE_BLOCKED_AT: None}}}


def blocked_patch(reason: str, now: datetime.datetime) -> dict[str, Any]:
    """The merge patch of a pod whose resize was refused or judged infeasible at `now` (the backoff)."""
    return {"metadata": {"annotations": {RESIZE_BLOCKED: truncate_utf8(reason), RESIZE_BLOCKED_AT: format_time(now)}}}
