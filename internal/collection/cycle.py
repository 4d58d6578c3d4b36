"""One collection cycle as values: its time, the profiles it feeds, what attribution found, and the settings it
reads (a MetricsSource's `pollInterval`, BallastConfig's `retentionWindow`)."""

from __future__ import annotations

import datetime
import functools
from dataclasses import dataclass, field

from ballast.api.ballast.v1 import WorkloadProfile
from ballast.internal.history import SeriesKey
from ballast.internal.stats import parse_duration
from ballast.runtime import rfc3339

from .attribution import Attribution, MeasuredProfile
from .policy_resources import PolicyView
from .refresh import PolicyStamp
from .status import Pair

DEFAULT_POLL_INTERVAL = 60.0
"""The MetricsSource CRD default; also used for a pollInterval that does not parse or is not positive."""

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_rfc3339 = functools.lru_cache(maxsize=4)(rfc3339)
"""A cycle's time as text, asked for by every status the cycle writes (a few cycles' times are kept)."""


def poll_interval_seconds(text: str | None) -> float:
    """A MetricsSource's `pollInterval` in seconds, as written (no 60 s cap); 60 s when unset, invalid or ≤ 0."""
    try:
        nanoseconds = parse_duration(text or "")
    except ValueError:
        return DEFAULT_POLL_INTERVAL
    return nanoseconds / 1e9 if nanoseconds > 0 else DEFAULT_POLL_INTERVAL


def retention_window(text: str) -> datetime.timedelta | None:
    """BallastConfig `retentionWindow` as a timedelta; None (keep until the reservoir pushes samples out) when it
    is zero or negative. Raises ValueError for a duration that does not parse (the caller logs and ignores it)."""
    nanoseconds = parse_duration(text)
    return datetime.timedelta(microseconds=nanoseconds // 1000) if nanoseconds > 0 else None


@dataclass(frozen=True, slots=True)
class FedProfile:
    """A profile a cycle measures: the profile as cached, its policy, what attribution needs, and the stamp its
    series' computations are made under (see `refresh`)."""

    profile: WorkloadProfile
    policy: PolicyView
    measured: MeasuredProfile
    stamp: PolicyStamp = ()
    policy_stamp: PolicyStamp = ()
    """`stamp` but the source's part: what the profile's status is assembled under, whichever source's cycle."""

    @property
    def name(self) -> str:
        return self.measured.name

    @property
    def uid(self) -> str:
        return self.profile.metadata.uid or ""

    def key(self, pair: Pair) -> SeriesKey:
        """The history series of (container, resource) of this profile."""
        return SeriesKey(self.measured.measurement_hash, *pair)


@dataclass(slots=True)
class CollectionCycle:
    """One poll of one source: its time and what it found."""

    source: str
    now: datetime.datetime
    fed: list[FedProfile]
    attribution: Attribution = field(default_factory=Attribution)

    @property
    def now_ms(self) -> int:
        return (self.now - _EPOCH) // datetime.timedelta(milliseconds=1)

    @property
    def now_text(self) -> str:
        return _rfc3339(self.now)

    @property
    def cycle_id(self) -> str:
        """The store's idempotency key of this cycle: a retried cycle of the same poll is a no-op."""
        return f"{self.source}/{self.now_ms}"

    def delivered(self) -> dict[str, frozenset[str]]:
        """Per fed profile, the resources this cycle delivered samples for (what `Ready` is judged by)."""
        observed = self.attribution.observed
        return {fed.name: frozenset(resource for _, resource in observed.get(fed.name, {})) for fed in self.fed}
