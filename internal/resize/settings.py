"""A policy's resize behaviour as the resize lane uses it: the interval, the step cap and the drift thresholds."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar, cast

from ballast.api.ballast.v1 import Behaviors, ResizeBehavior, ResourcePolicySpec, Thresholds
from ballast.internal.stats import parse_duration

from .thresholds import resolve_max_change, resolve_threshold

_T = TypeVar("_T")

REMEMBERED_MAX = 16_384
"""Results `ResizeSettings.remembered` keeps before starting afresh (a new recommendation is a new question, so
the old ones are let go from time to time)."""

_MISSING = object()

DEFAULT_INTERVAL = 15 * 60.0
"""`resize.interval` when unset or invalid: 15 minutes, in seconds."""


def parse_interval(text: str | None) -> float:
    """`resize.interval` in seconds; 15 m when empty, invalid or ≤ 0."""
    try:
        nanoseconds = parse_duration(text or "")
    except (TypeError, ValueError):
        return DEFAULT_INTERVAL
    return nanoseconds / 1e9 if nanoseconds > 0 else DEFAULT_INTERVAL


@dataclass(frozen=True)
class ResizeSettings:
    """The policy's resize behaviour, defaults applied: interval, step cap and drift thresholds."""

    interval: float = DEFAULT_INTERVAL
    max_change: Decimal = Decimal(50)
    resource_thresholds: Mapping[str, Mapping[str, str | None]] = field(default_factory=dict)
    resize_default: str | None = None
    default: str | None = None
    _remembered: dict[Hashable, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    """Results of `remembered`, by (function, arguments)."""

    @classmethod
    def from_spec(cls, spec: ResourcePolicySpec) -> ResizeSettings:
        """Read a policy spec (its resolve-time defaults are applied here)."""
        behaviors = spec.with_defaults().behaviors or Behaviors()
        thresholds, resize = behaviors.thresholds or Thresholds(), behaviors.resize or ResizeBehavior()
        per_resource = (thresholds.resize.resource_thresholds if thresholds.resize else None) or {}
        return cls(
            interval=parse_interval(resize.interval),
            max_change=resolve_max_change(resize.max_change_per_cycle),
            resource_thresholds={k: {"request": v.request, "limit": v.limit} for k, v in per_resource.items()},
            resize_default=thresholds.resize.default if thresholds.resize else None,
            default=thresholds.default,
        )

    def threshold(self, resource: str, field_name: str) -> Decimal:
        """The drift threshold (percent) of one field of `resource`, most specific level first (resolved once)."""
        return self.remembered(_resolved_threshold, resource, field_name)

    def remembered(self, function: Callable[..., _T], *args: Hashable) -> _T:
        """`function(self, *args)`, computed once per `args`. For pure functions of the settings and the arguments
        only, whose equal arguments give equal results: the lane plans the same few values for every pod of a
        workload at every interval."""
        key = (function, args)
        known = self._remembered.get(key, _MISSING)  # one lookup: another thread may clear the dict meanwhile
        if known is not _MISSING:
            return cast(_T, known)
        value = function(self, *args)
        if len(self._remembered) >= REMEMBERED_MAX:
            self._remembered.clear()
        self._remembered[key] = value
        return value


def _resolved_threshold(settings: ResizeSettings, resource: str, field_name: str) -> Decimal:
    return resolve_threshold(
        resource, field_name, resource_thresholds=settings.resource_thresholds,
        resize_default=settings.resize_default, default=settings.default,
    )  # fmt: skip
