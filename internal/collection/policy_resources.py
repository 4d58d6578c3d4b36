"""What collection needs of a profile's policy: which resources, from which source, and the readiness gates."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ballast.api.ballast.v1.policyspec import MetricConfig, ResourcePolicySpec
from ballast.internal.stats import DEFAULT_MIN_DATA_POINTS, DEFAULT_MIN_TIME_SPAN, Readiness, parse_duration

_NANOSECONDS_PER_MILLISECOND = 1_000_000


@dataclass(frozen=True, slots=True)
class PolicyView:
    """What collection needs of a profile's policy (resolve-time defaults applied)."""

    resources: tuple[str, ...]
    """Policy resources, in the order of their first metric entry."""
    owners: Mapping[str, str]
    """Resource → the source of its first metric entry: whose cycle computes its statistics and judges it."""
    metrics: tuple[MetricConfig, ...]
    readiness: Readiness
    min_time_span_ms: int
    min_time_span_ns: int = 0
    """The readiness time gate exactly (sub-millisecond spans included); 0 when built without it."""

    @classmethod
    def from_spec(cls, spec: ResourcePolicySpec) -> PolicyView:
        """Read a policy spec; `with_defaults()` is applied here."""
        spec = spec.with_defaults()
        metrics = tuple(spec.metrics or ())
        owners: dict[str, str] = {}
        for metric in metrics:
            owners.setdefault(metric.resource, metric.source)
        settings = spec.readiness
        readiness = Readiness(
            min_data_points=settings.min_data_points if settings else None,
            min_time_span=settings.min_time_span if settings else None,
            max_cv=settings.max_cv if settings else None,
            cv_mean_floor=settings.cv_mean_floor if settings else None,
        )
        span_ns = _span_ns(readiness.min_time_span)
        return cls(tuple(owners), owners, metrics, readiness, span_ns // _NANOSECONDS_PER_MILLISECOND, span_ns)

    def fed_by(self, source: str) -> frozenset[str]:
        """Resources with a metric entry from `source`: the samples its cycles write for this profile."""
        return frozenset(metric.resource for metric in self.metrics if metric.source == source)

    def owned_by(self, source: str) -> frozenset[str]:
        """Resources whose statistics and readiness `source`'s cycles compute."""
        return frozenset(resource for resource, owner in self.owners.items() if owner == source)

    @property
    def min_data_points(self) -> int:
        """The readiness count gate as `evaluate_readiness` applies it (500 when unset or ≤ 0)."""
        points = self.readiness.min_data_points
        return points if points is not None and points > 0 else DEFAULT_MIN_DATA_POINTS

    def accruing(self, count: int, first_seen_ms: int, now_ms: int) -> bool:
        """Whether a series of `count` samples first seen at `first_seen_ms` is still below the count or time gate
        of readiness — the gates that open by themselves as samples arrive, so it is recomputed at the cycle they
        may open (`refresh_reason`)."""
        span_ns = self.min_time_span_ns or self.min_time_span_ms * _NANOSECONDS_PER_MILLISECOND
        return count < self.min_data_points or (now_ms - first_seen_ms) * _NANOSECONDS_PER_MILLISECOND < span_ns


def _span_ns(text: str | None) -> int:
    try:
        span = parse_duration(text or DEFAULT_MIN_TIME_SPAN)
    except ValueError:
        span = 0
    if span <= 0:
        span = parse_duration(DEFAULT_MIN_TIME_SPAN)  # as the readiness gate falls back
    return span
