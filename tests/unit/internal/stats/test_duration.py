from __future__ import annotations

import pytest

from ballast.internal.stats import format_duration, format_time_span, parse_duration
from ballast.internal.stats.duration import duration_problem

S = 1_000_000_000


@pytest.mark.parametrize(
    ("text", "nanoseconds"),
    [
        ("24h", 86_400 * S),
        ("1m", 60 * S),
        ("300s", 300 * S),
        ("15m", 900 * S),
        ("168h", 168 * 3600 * S),
        ("1h30m", 5400 * S),
        ("1.5h", 5400 * S),
        ("1h0m0s", 3600 * S),
        ("300ms", 300_000_000),
        ("2us", 2000),
        ("2µs", 2000),
        ("2μs", 2000),
        ("7ns", 7),
        ("1.s", S),
        (".5s", S // 2),
        ("0", 0),
        ("-0", 0),
        ("+5s", 5 * S),
        ("-1m30s", -90 * S),
        ("0.0000000015s", 1),  # truncated to the nanosecond
    ],
)
def test_parse_duration_reads_go_durations(text: str, nanoseconds: int) -> None:
    assert parse_duration(text) == nanoseconds


@pytest.mark.parametrize("text", ["", "24", "1d", "h", ".s", "1h 30m", " 1h", "1hh", "1m5", "-", "1e3s", "9999999999h"])
def test_parse_duration_refuses_what_go_refuses(text: str) -> None:
    with pytest.raises(ValueError, match=r"is not a duration|out of range"):
        parse_duration(text)


def test_parse_duration_takes_only_strings() -> None:
    with pytest.raises(TypeError, match="a duration must be a str"):
        parse_duration(60)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(86_400, "24h0m0s"), (3723, "1h2m3s"), (59, "59s"), (60, "1m0s"), (0, "0s"), (3600, "1h0m0s"), (-61, "-1m1s")],
)
def test_format_duration_is_go_duration_string(seconds: int, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize(
    ("first_seen_ms", "now_ms", "text"),
    [
        (0, 86_400_000, "24h0m0s"),
        (1000, 1000 + 3_723_499, "1h2m3s"),
        (1000, 1000 + 3_723_500, "1h2m4s"),  # halves round away from zero
        (0, 59_000, "59s"),
        (5000, 5000, "0s"),
        (5000, 4000, "0s"),  # a clock step backwards shows 0s
    ],
)
def test_time_span_is_rounded_to_the_second(first_seen_ms: int, now_ms: int, text: str) -> None:
    assert format_time_span(first_seen_ms, now_ms) == text


@pytest.mark.parametrize(
    ("text", "positive", "problem"),
    [
        ("60s", True, None),
        ("0", False, None),
        ("-1h", False, None),
        ("banana", False, 'invalid duration "banana": must be a Go duration such as "60s", "15m" or "1h30m"'),
        ("0s", True, 'invalid duration "0s": must be longer than 0, such as "60s"'),
        ("-5s", True, 'invalid duration "-5s": must be longer than 0, such as "60s"'),
        ("9999999999h", False, 'invalid duration "9999999999h": out of range (at most 2562047h)'),
    ],
)
def test_duration_problem_says_what_is_wrong(text: str, positive: bool, problem: str | None) -> None:
    assert duration_problem(text, positive=positive) == problem
