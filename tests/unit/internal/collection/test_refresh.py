"""The refresh rules as pure code: why a series is recomputed, the memo of a computation, the stagger."""

from __future__ import annotations

import datetime
import statistics
from dataclasses import dataclass

import pytest

from ballast.internal.collection import (
    ACCRUING,
    AGE,
    NEW,
    POLICY,
    SAMPLES,
    RefreshPolicy,
    SeriesMemo,
    phase,
    refresh_reason,
)
from ballast.internal.history import SeriesKey

KEY = SeriesKey("0123456789abcdef", "app", "cpu")
NOW_MS = 1_772_366_400_000
STAMP = ("0123456789abcdef", "ClusterResourcePolicy", "", "default", "uid", 1)
EXACT = RefreshPolicy(stagger=False)
FIRST_SEEN_MS = NOW_MS - 3_600_000


@dataclass(frozen=True)
class Gates:
    """Readiness gates as a policy's: `points` samples over `span_ms` from the first."""

    points: int = 500
    span_ms: int = 86_400_000

    def accruing(self, count: int, first_seen_ms: int, now_ms: int) -> bool:
        return count < self.points or now_ms - first_seen_ms < self.span_ms


GATES = Gates()


def memo(**changes: object) -> SeriesMemo:
    made = EXACT.memo(
        KEY, count=10_000, accruing=False, stamp=STAMP, now_ms=NOW_MS, reason=SAMPLES, first_seen_ms=NOW_MS
    )
    for name, value in changes.items():
        setattr(made, name, value)
    return made


def test_the_defaults_are_two_percent_and_fifteen_minutes() -> None:
    made = memo()
    assert (made.refresh_after, made.refresh_at_ms - NOW_MS) == (200, 15 * 60 * 1000)
    assert made.last_sample_ms == NOW_MS
    assert made.written == 0


@pytest.mark.parametrize(
    ("changes", "stamp", "now_ms", "reason"),
    [
        ({}, STAMP, NOW_MS, None),
        ({"written": 199}, STAMP, NOW_MS + 14 * 60_000, None),
        ({"written": 200}, STAMP, NOW_MS, SAMPLES),
        ({}, STAMP, NOW_MS + 15 * 60_000, AGE),
        ({"accruing": True, "count": 500, "first_seen_ms": NOW_MS - 86_400_000}, STAMP, NOW_MS, ACCRUING),
        ({"accruing": True, "written": 200}, (*STAMP[:-1], 2), NOW_MS, POLICY),
    ],
)
def test_a_series_is_recomputed_for_the_first_rule_that_holds(
    changes: dict[str, object], stamp: tuple[object, ...], now_ms: int, reason: str | None
) -> None:
    assert refresh_reason(memo(**changes), stamp, now_ms, GATES) == reason


def test_a_series_without_a_memo_is_new() -> None:
    assert refresh_reason(None, STAMP, NOW_MS, GATES) == NEW


def test_an_accruing_series_is_recomputed_once_both_gates_may_have_opened() -> None:
    accruing = memo(accruing=True, count=400, first_seen_ms=FIRST_SEEN_MS)
    short = Gates(points=500, span_ms=3_600_000)
    assert refresh_reason(accruing, STAMP, NOW_MS, short) is None  # the span has passed, 400 samples of 500
    accruing.written = 99
    assert refresh_reason(accruing, STAMP, NOW_MS, short) is None
    accruing.written = 100  # this process wrote the 500th sample
    assert refresh_reason(accruing, STAMP, NOW_MS, short) == ACCRUING
    assert refresh_reason(accruing, STAMP, NOW_MS - 1, short) is None  # one millisecond short of the span
    assert refresh_reason(accruing, STAMP, NOW_MS, Gates(points=500, span_ms=3_600_001)) is None


def test_an_accruing_series_whose_gates_stay_shut_follows_the_sample_and_age_rules() -> None:
    accruing = memo(accruing=True, count=100, first_seen_ms=NOW_MS)
    assert refresh_reason(accruing, STAMP, NOW_MS + 60_000, GATES) is None
    accruing.written = accruing.refresh_after
    assert refresh_reason(accruing, STAMP, NOW_MS + 60_000, GATES) == SAMPLES
    accruing.written = 0
    assert refresh_reason(accruing, STAMP, accruing.refresh_at_ms, GATES) == AGE


def test_a_memo_keeps_the_first_sample_time_for_the_time_gate() -> None:
    made = EXACT.memo(KEY, count=10, accruing=True, stamp=STAMP, now_ms=NOW_MS, reason=NEW, first_seen_ms=FIRST_SEEN_MS)
    assert (made.first_seen_ms, made.accruing, made.count) == (FIRST_SEEN_MS, True, 10)


def test_small_series_refresh_at_every_new_sample_at_least() -> None:
    made = EXACT.memo(KEY, count=3, accruing=False, stamp=STAMP, now_ms=NOW_MS, reason=NEW, first_seen_ms=NOW_MS)
    assert made.refresh_after == 1


def test_samples_written_count_and_date_the_newest_to_the_second() -> None:
    made = memo()
    made.saw_samples(10, NOW_MS + 60_500)
    made.saw_samples(5, NOW_MS + 30_000)
    assert (made.written, made.last_sample_ms) == (15, NOW_MS + 60_000)


def test_a_staggered_first_computation_comes_due_earlier_never_later() -> None:
    staggered = RefreshPolicy()
    share = phase(KEY)
    assert 0 < share <= 1
    first = staggered.memo(
        KEY, count=10_000, accruing=False, stamp=STAMP, now_ms=NOW_MS, reason=NEW, first_seen_ms=NOW_MS
    )
    assert first.refresh_after <= 200
    assert first.refresh_at_ms - NOW_MS <= 15 * 60_000
    regular = staggered.memo(
        KEY, count=10_000, accruing=False, stamp=STAMP, now_ms=NOW_MS, reason=SAMPLES, first_seen_ms=NOW_MS
    )
    assert (regular.refresh_after, regular.refresh_at_ms - NOW_MS) == (200, 15 * 60_000)


def test_the_stagger_spreads_profiles_over_the_period_and_keeps_a_profile_together() -> None:
    hashes = [f"{index:016x}" for index in range(2_000)]
    shares = [phase(SeriesKey(h, "app", "cpu")) for h in hashes]
    assert phase(SeriesKey(hashes[0], "sidecar", "memory")) == shares[0]
    deciles = [sum(1 for s in shares if low / 10 < s <= (low + 1) / 10) for low in range(10)]
    assert min(deciles) > 150  # about 200 each
    assert 0.45 < statistics.mean(shares) < 0.55


@pytest.mark.parametrize(
    "arguments", [{"min_new_fraction": -0.1}, {"min_new_fraction": 1.5}, {"max_age": datetime.timedelta(0)}]
)
def test_refresh_settings_are_checked(arguments: dict[str, object]) -> None:
    with pytest.raises(ValueError, match="must be"):
        RefreshPolicy(**arguments)  # type: ignore[arg-type]
