"""Readiness gates of one (container, resource) series, and the per-container and per-profile summaries."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from types import MappingProxyType

from ballast.internal.quantity import INT64_MAX, QuantityError, parse_quantity

from .decimals import MAX_CV_RANGE, parse_decimal
from .duration import NANOSECONDS_PER_MILLISECOND, parse_duration
from .percentiles import Stats

DEFAULT_MIN_DATA_POINTS = 500
DEFAULT_MIN_TIME_SPAN = "24h"
DEFAULT_MAX_CV = "1.5"
DEFAULT_CV_MEAN_FLOOR: Mapping[str, str] = MappingProxyType(
    {"cpu": "25m", "memory": "25Mi", "ephemeral-storage": "2Mi"}
)
_DEFAULT_MIN_TIME_SPAN_NS = parse_duration(DEFAULT_MIN_TIME_SPAN)
_SPEC_KEYS = {
    "minDataPoints": "min_data_points",
    "minTimeSpan": "min_time_span",
    "maxCV": "max_cv",
    "cvMeanFloor": "cv_mean_floor",
}


@dataclass(frozen=True, slots=True)
class Readiness:
    """A policy's `readiness` settings, as written (strings), with the Go operator's defaults.

    None stands for an omitted field. `cv_mean_floor=None` means the default floors (cpu 25m, memory 25Mi,
    ephemeral-storage 2Mi); an empty mapping disables every floor. Invalid values are not errors here: the
    gates fall back to the defaults as the Go operator does (policies are validated at admission).
    """

    min_data_points: int | None = DEFAULT_MIN_DATA_POINTS
    min_time_span: str | None = DEFAULT_MIN_TIME_SPAN
    max_cv: str | None = DEFAULT_MAX_CV
    cv_mean_floor: Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        if self.min_data_points is not None and (
            isinstance(self.min_data_points, bool) or not isinstance(self.min_data_points, int)
        ):
            raise TypeError(f"readiness.minDataPoints must be an int, got {self.min_data_points!r}")
        for name in ("min_time_span", "max_cv"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"readiness.{name} must be a string, got {value!r}")
        if self.cv_mean_floor is not None:
            if not isinstance(self.cv_mean_floor, Mapping):
                raise TypeError(f"readiness.cvMeanFloor must be a mapping, got {self.cv_mean_floor!r}")
            for resource, floor in self.cv_mean_floor.items():
                if not isinstance(resource, str) or not isinstance(floor, str):
                    raise TypeError(f"readiness.cvMeanFloor entries must be strings, got {resource!r}: {floor!r}")

    @classmethod
    def from_spec(cls, spec: Mapping[str, object]) -> Readiness:
        """Return the settings of a `readiness` mapping, keyed as on the wire (`minDataPoints`) or snake_case.

        Omitted keys and None values take the defaults. Raises ValueError naming an unknown key, TypeError for a
        value of the wrong type.
        """
        fields: dict[str, object] = {}
        for key, value in spec.items():
            name = _SPEC_KEYS.get(key, key)
            if name not in _SPEC_KEYS.values():
                raise ValueError(f"unknown readiness setting {key!r} (expected one of {', '.join(_SPEC_KEYS)})")
            fields[name] = value
        return cls(**fields)  # type: ignore[arg-type]  # types are checked in __post_init__


def _min_time_span_ns(text: str | None) -> int:
    if text is None:
        return _DEFAULT_MIN_TIME_SPAN_NS
    try:
        span = parse_duration(text)
    except ValueError:
        return _DEFAULT_MIN_TIME_SPAN_NS
    return span if span > 0 else _DEFAULT_MIN_TIME_SPAN_NS


def _cv_floor(readiness: Readiness, resource: str) -> Fraction | None:
    floors = DEFAULT_CV_MEAN_FLOOR if readiness.cv_mean_floor is None else readiness.cv_mean_floor
    text = floors.get(resource)
    if not text:
        return None
    try:
        floor = parse_quantity(text)
    except QuantityError:
        return None
    units = Fraction(floor) * 1000 if resource == "cpu" else Fraction(floor)
    return units if 0 <= units <= INT64_MAX else None  # the floor range (docs/design.md, difference 25)


def _max_cv(text: str | None) -> Decimal:
    parsed = parse_decimal(text)
    return parsed if parsed is not None and parsed in MAX_CV_RANGE else Decimal(DEFAULT_MAX_CV)


def evaluate_readiness(
    stats: Stats, first_seen_ms: int, now_ms: int, resource: str, readiness: Readiness | Mapping[str, object]
) -> bool:
    """Return whether a series is ready to drive recommendations: every readiness gate of the Go operator passes.

    1. at least `minDataPoints` samples (500 when unset or ≤ 0);
    2. now − first_seen ≥ `minTimeSpan` (24h when unset, invalid or ≤ 0); a first_seen of 0 (unknown) passes;
    3. a mean strictly below the resource's `cvMeanFloor` (cpu floors in millicores; a floor that does not parse or
       lies outside 0 … 2**63 − 1 units counts as none) skips the CV gate;
    4. otherwise CV ≤ `maxCV` (1.5 when unset, invalid or outside `MAX_CV_RANGE`: 0 ≤ v ≤ 100, at most 6 decimal
       places), compared exactly.

    `readiness` is a Readiness or a mapping for `Readiness.from_spec`. Raises ValueError for an empty resource
    name, TypeError for non-int times.
    """
    if not resource:
        raise ValueError("resource name must not be empty")
    for name, value in (("first_seen_ms", first_seen_ms), ("now_ms", now_ms)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int (epoch milliseconds), got {value!r}")
    settings = readiness if isinstance(readiness, Readiness) else Readiness.from_spec(readiness)
    min_points = settings.min_data_points
    if stats.count < (min_points if min_points is not None and min_points > 0 else DEFAULT_MIN_DATA_POINTS):
        return False
    if (now_ms - first_seen_ms) * NANOSECONDS_PER_MILLISECOND < _min_time_span_ns(settings.min_time_span):
        return False
    floor = _cv_floor(settings, resource)
    if floor is not None and floor > 0 and stats.mean < floor:
        return True
    if stats.mean <= 0:
        return True  # CV is 0 (or negative) by definition here, within any maxCV ≥ 0
    # CV ≤ maxCV  ⇔  variance ≤ (maxCV × mean)², both sides non-negative: no square root, no rounding.
    return stats.variance <= (Fraction(_max_cv(settings.max_cv)) * stats.mean) ** 2


def container_ready(resources: Mapping[str, bool]) -> bool:
    """Return whether a container is ready: it has at least one judged resource and every one is ready."""
    return bool(resources) and all(resources.values())


def ready_containers(containers: Mapping[str, Mapping[str, bool]]) -> frozenset[str]:
    """Return the names of the ready containers of {container: {resource: ready}} (docs/design.md, difference 5).

    Each ready container is applied and resized on its own, even while a sibling is still accruing.
    """
    return frozenset(name for name, resources in containers.items() if container_ready(resources))


def meets_threshold(containers: Mapping[str, Mapping[str, bool]]) -> bool:
    """Return the profile summary `meetsThreshold`: at least one container, and every container ready."""
    return bool(containers) and all(container_ready(resources) for resources in containers.values())
