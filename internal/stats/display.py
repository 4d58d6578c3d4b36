"""The display strings of a WorkloadProfile's `usageStats` entry, formatted as the Go operator writes them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ballast.internal.quantity import display_units, format_fixed

from .duration import format_time_span
from .percentiles import Stats


@dataclass(frozen=True, slots=True)
class UsageDisplay:
    """The figures of one usageStats entry: `samples`, `timeSpan` (`24h0m0s`), percentiles, mean and stdDev
    (`85m`, `176.00Mi`) and `cv` (`0.400`). The caller adds resource, source and lastUpdated."""

    samples: int
    time_span: str
    p50: str
    p75: str
    p90: str
    p95: str
    p99: str
    mean: str
    std_dev: str
    cv: str

    def as_status(self) -> dict[str, str | int]:
        """Return the entry's figures keyed as on the wire (`timeSpan`, `stdDev`, …)."""
        return {
            "samples": self.samples,
            "timeSpan": self.time_span,
            "p50": self.p50,
            "p75": self.p75,
            "p90": self.p90,
            "p95": self.p95,
            "p99": self.p99,
            "mean": self.mean,
            "stdDev": self.std_dev,
            "cv": self.cv,
        }


def display_usage(stats: Stats, resource: str, first_seen_ms: int, now_ms: int) -> UsageDisplay:
    """Return the usageStats display of `stats` for `resource` (cpu in millicores, others in bytes).

    cpu figures are truncated canonical quantities (`85m`, `1`); other figures have two decimals in Gi, Mi or
    Ki; `cv` has three decimals; `timeSpan` is now − first_seen rounded to the second. Raises ValueError for an
    empty resource name.
    """
    return UsageDisplay(
        samples=stats.count,
        time_span=format_time_span(first_seen_ms, now_ms),
        p50=_display_sample(stats.p50, resource),
        p75=_display_sample(stats.p75, resource),
        p90=_display_sample(stats.p90, resource),
        p95=_display_sample(stats.p95, resource),
        p99=_display_sample(stats.p99, resource),
        mean=display_units(stats.mean, resource),
        std_dev=display_units(stats.stddev, resource),
        cv=format_fixed(stats.cv, 3),
    )


@lru_cache(maxsize=8192)
def _display_sample(units: int, resource: str) -> str:
    """`display_units` of a percentile: a sample value, the same from one recomputation to the next as a rule."""
    return display_units(units, resource)
