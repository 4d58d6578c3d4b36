"""Go `time.Duration` strings: parsing (`24h`, `1m30s`, `1.5h`), what is wrong with one (`duration_problem`) and
the whole-second display form (`24h0m0s`)."""

from __future__ import annotations

import functools
import json
import re
from fractions import Fraction

NANOSECONDS_PER_MILLISECOND = 1_000_000
NANOSECONDS_PER_SECOND = 1_000_000_000
_INT64_MAX = 2**63 - 1
_UNIT_NANOSECONDS = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 micro sign
    "μs": 1_000,  # U+03BC Greek mu
    "ms": 1_000_000,
    "s": NANOSECONDS_PER_SECOND,
    "m": 60 * NANOSECONDS_PER_SECOND,
    "h": 3600 * NANOSECONDS_PER_SECOND,
}
_COMPONENT = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)")


def parse_duration(text: str) -> int:
    """Return the Go duration `text` in nanoseconds: `24h` → 86400000000000, `-1m30s`, `1.5h`, `0`.

    Follows Go's `time.ParseDuration`: an optional sign, then one or more number+unit components (units ns, us,
    µs, ms, s, m, h); a bare `0` is allowed. Fractions are exact and truncated to the nanosecond. Raises
    ValueError naming the string for anything else (a missing unit, whitespace, a value beyond int64 ns).
    """
    if not isinstance(text, str):
        raise TypeError(f"a duration must be a str such as '24h', got {type(text).__name__} {text!r}")
    return _parse_duration(text)


@functools.lru_cache(maxsize=1024)
def _parse_duration(text: str) -> int:
    # Cached: a cycle reads the same few policy durations for every profile (an error is never cached).
    body = text[1:] if text[:1] in ("+", "-") else text
    if body == "0":
        return 0
    total = Fraction(0)
    position = 0
    while position < len(body):
        match = _COMPONENT.match(body, position)
        if match is None:
            raise ValueError(f"{text!r} is not a duration (expected e.g. '24h', '90s', '1h30m')")
        total += Fraction(match[1]) * _UNIT_NANOSECONDS[match[2]]
        position = match.end()
    if position == 0:
        raise ValueError(f"{text!r} is not a duration (expected e.g. '24h', '90s', '1h30m')")
    nanoseconds = int(total)
    if nanoseconds > _INT64_MAX:
        raise ValueError(f"duration {text!r} is out of range")
    return -nanoseconds if text.startswith("-") else nanoseconds


def format_duration(seconds: int) -> str:
    """Return whole `seconds` as Go's `Duration.String()` prints them: `24h0m0s`, `1h2m3s`, `1m0s`, `59s`, `0s`."""
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        raise TypeError(f"seconds must be an int, got {type(seconds).__name__} {seconds!r}")
    sign = "-" if seconds < 0 else ""
    hours, rest = divmod(abs(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{sign}{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{sign}{minutes}m{secs}s"
    return f"{sign}{secs}s"


def format_time_span(first_seen_ms: int, now_ms: int) -> str:
    """Return the usageStats `timeSpan`: now − first_seen rounded to the second (halves away from zero), or `0s`."""
    span_ms = now_ms - first_seen_ms
    if span_ms <= 0:
        return "0s"
    return format_duration((span_ms + 500) // 1000)


def duration_problem(text: str, *, positive: bool = False, example: str = "60s") -> str | None:
    """What is wrong with `text` as a Go duration, or None: `invalid duration "banana": must be a Go duration
    such as "60s", "15m" or "1h30m"`; with `positive`, zero and negative values are refused too (`must be longer
    than 0, such as "60s"`). `example` is the value the message suggests."""
    shown = json.dumps(text, ensure_ascii=False)
    try:
        nanoseconds = parse_duration(text)
    except ValueError as exc:
        if "out of range" in str(exc):
            return f"invalid duration {shown}: out of range (at most 2562047h)"
        return f'invalid duration {shown}: must be a Go duration such as "{example}", "15m" or "1h30m"'
    if positive and nanoseconds <= 0:
        return f'invalid duration {shown}: must be longer than 0, such as "{example}"'
    return None
