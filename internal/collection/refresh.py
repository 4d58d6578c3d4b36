"""When a series' statistics are recomputed and when the last computation is reused (benchmarks/RESULTS.md).

Reading a full series back (10,000 samples) and computing its statistics costs milliseconds; doing it for every
series at every poll is what made a steady-state cycle over 10,000 pods cost ~17 s of CPU. Most of those
recomputations change nothing a user could act on: a series that gains 10 samples out of 10,000 moves its
percentiles by a fraction of a rank. So a series is recomputed only when:

- `new` — this process has no computation of it (a fresh leader's first cycle, a container or resource that
  first appears, a profile recreated under a new uid);
- `policy` — the policy, the profile's history identity or the MetricsSource changed since (a new stamp);
- `accruing` — at the last computation it was below the count or the time gate of readiness (`minDataPoints`,
  `minTimeSpan`), and both may have opened since: the samples this process wrote since bring it to the count,
  and the time since its first sample reaches the span. Those gates open by themselves as samples arrive, and
  readiness must flip at the exact cycle; until they can, an accruing series follows the two rules below like a
  ready one (its figures show no recommendation either way);
- `samples` — the samples written to it since reach `min_new_fraction` of the series (2 % by default);
- `age` — the last computation is `max_age` old (15 minutes by default): bounded staleness whatever the rate.

Otherwise its last `usageStats` entry, readiness and recommendation are reused as they are (`lastUpdated` says
when they were computed).

Tolerance of reused statistics: they were computed at most `max_age` ago over a sample set that differs from the
current one by fewer than `min_new_fraction` × n newest samples (and as many oldest ones pushed out of a full
reservoir): each percentile shown lies between the current percentiles about `100 × min_new_fraction` points
below and above it (p95 shown: between today's p93 and p97 with the defaults), the mean within that fraction of
the range of values, `samples` and `timeSpan` as of `lastUpdated`. Recommendations derive from those figures.

Stagger: series computed together (a fresh leader's first cycle, a policy change, profiles that stop accruing in
the same cycle) would all come due together again and again. A computation that was not itself a `samples` or
`age` refresh therefore brings its next refresh forward by a stable fraction of the period (a hash of the
profile's measurement hash), spreading the refreshes evenly over the period; a refresh is never later than the
rules above.
"""

from __future__ import annotations

import datetime
import math
import zlib
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Protocol

from ballast.internal.history import SeriesKey
from ballast.internal.stats import RunningStats

NEW = "new"
POLICY = "policy"
ACCRUING = "accruing"
SAMPLES = "samples"
AGE = "age"
REASONS = (NEW, POLICY, ACCRUING, SAMPLES, AGE)
"""Why a series is recomputed, in the order the rules are checked."""

PolicyStamp = Hashable
"""What a computation depends on besides the samples: policy identity and generation, the profile's measurement
hash, the MetricsSource's generation. A different stamp invalidates every computation made under the old one."""


class ReadinessGates(Protocol):
    """The readiness gates that open by themselves as samples arrive (a policy's `PolicyView`)."""

    def accruing(self, count: int, first_seen_ms: int, now_ms: int) -> bool:
        """Whether a series of `count` samples first seen at `first_seen_ms` is still below a gate at `now_ms`."""
        ...


@dataclass(frozen=True, slots=True)
class RefreshPolicy:
    """The refresh rules' knobs (module docstring). `stagger=False` makes every threshold exact (tests)."""

    min_new_fraction: float = 0.02
    """Recompute once the samples written since the last computation reach this fraction of the series."""
    max_age: datetime.timedelta = datetime.timedelta(minutes=15)
    """Recompute at least this often, whatever the sample rate."""
    stagger: bool = True
    keep_sorted: bool = False
    """Keep a ready series' sorted values between computations too, as an accruing one's: its refreshes then cost
    the new samples only, for one sorted copy of every series held in memory (the fleet simulator's choice;
    ballastd computes a ready series afresh)."""

    def __post_init__(self) -> None:
        if not 0 <= self.min_new_fraction <= 1:
            raise ValueError(f"min_new_fraction {self.min_new_fraction!r} must be within [0, 1]")
        if self.max_age <= datetime.timedelta(0):
            raise ValueError(f"max_age {self.max_age} must be positive")

    @property
    def max_age_ms(self) -> int:
        return self.max_age // datetime.timedelta(milliseconds=1)

    def memo(
        self,
        key: SeriesKey,
        *,
        count: int,
        accruing: bool,
        stamp: PolicyStamp,
        now_ms: int,
        reason: str,
        first_seen_ms: int,
    ) -> SeriesMemo:
        """The memo of a computation made now of a series of `count` samples first seen at `first_seen_ms`,
        recomputed for `reason`."""
        share = 1.0 if reason in (SAMPLES, AGE) or not self.stagger else phase(key)
        return SeriesMemo(
            computed_ms=now_ms,
            count=count,
            accruing=accruing,
            stamp=stamp,
            refresh_after=max(1, math.ceil(self.min_new_fraction * count * share)),
            refresh_at_ms=now_ms + max(1, math.ceil(self.max_age_ms * share)),
            last_sample_ms=now_ms // 1000 * 1000,
            first_seen_ms=first_seen_ms,
        )


def phase(key: SeriesKey) -> float:
    """A stable share in (0, 1] of a series: how much of its first period its first refresh waits. It depends on
    the profile only (the measurement hash), so a profile's series tend to come due in the same cycle: one status
    write and one store read batch for all of them."""
    return (zlib.crc32(key.measurement_hash.encode()) % 1024 + 1) / 1024


@dataclass(slots=True)
class SeriesMemo:
    """What this process knows of a series since it last computed its statistics (leader-local memory)."""

    computed_ms: int
    """The cycle time of the computation."""
    count: int
    """Samples in the series then."""
    accruing: bool
    """Below the readiness count or time gate then: recomputed as soon as both may have opened."""
    stamp: PolicyStamp
    refresh_after: int
    """Recompute once `written` reaches this."""
    refresh_at_ms: int
    """Recompute at this cycle time at the latest."""
    last_sample_ms: int
    """The newest sample known, to the second as sample times are stored: a quiet series goes stale from it."""
    first_seen_ms: int = 0
    """The series' first sample then: when the readiness time gate opens."""
    written: int = 0
    """Samples written to the series since the computation, by any source's cycle of this process and by its OOM
    watcher."""
    running: RunningStats | None = field(default=None, compare=False, repr=False)
    """The statistics to continue from at the next computation (kept while accruing)."""

    def saw_samples(self, count: int, at_ms: int) -> None:
        """Count `count` samples written at cycle time `at_ms`."""
        self.written += count
        self.last_sample_ms = max(self.last_sample_ms, at_ms // 1000 * 1000)


def refresh_reason(memo: SeriesMemo | None, stamp: PolicyStamp, now_ms: int, gates: ReadinessGates) -> str | None:
    """Why a series must be recomputed this cycle (one of `REASONS`), or None when its last computation stands.
    `gates`: the readiness gates of the series' policy (the stamp says it is the one the memo was made under).

    The series is guessed to hold its count then plus the samples this process wrote since (its collector's and
    its OOM watcher's). It may hold fewer (a trim): the guess then comes early and recomputes a series still
    accruing, which changes nothing. It may hold more (another process wrote to the same store): readiness is
    then reported late, by the `samples`/`age` rules' bound at most."""
    if memo is None:
        return NEW
    if memo.stamp != stamp:
        return POLICY
    if memo.accruing and not gates.accruing(memo.count + memo.written, memo.first_seen_ms, now_ms):
        return ACCRUING
    if memo.written >= memo.refresh_after:
        return SAMPLES
    if now_ms >= memo.refresh_at_ms:
        return AGE
    return None
