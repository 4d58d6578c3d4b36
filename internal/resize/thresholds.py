"""Percent settings of a policy's behaviors: drift thresholds and the per-cycle step cap."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal

from ballast.internal.stats import PERCENT_RANGE, parse_decimal

DEFAULT_THRESHOLD_PCT = Decimal(10)
DEFAULT_MAX_CHANGE_PCT = Decimal(50)
FIELDS = ("request", "limit")


def parse_percent(text: str | None) -> Decimal | None:
    """Return the percentage written as `"20%"` or `"20"` (whitespace ignored), or None.

    None comes back for None, blank or unparseable text and for a value outside `PERCENT_RANGE` (0 < p ≤ 100, at most
    6 decimal places — docs/design.md, difference 25): such a level does not count.
    """
    if text is None:
        return None
    value = parse_decimal(text.strip().removesuffix("%"))
    return value if value is not None and value in PERCENT_RANGE else None


def resolve_threshold(
    resource: str,
    field: str,
    *,
    resource_thresholds: Mapping[str, Mapping[str, str | None]] | None = None,
    resize_default: str | None = None,
    default: str | None = None,
) -> Decimal:
    """Return the drift threshold (percent) of one field: the first level that parses and lies in 0 < p ≤ 100 among
    `resize.resourceThresholds[resource][field]`, `thresholds.resize.default`, `thresholds.default`, then 10.

    The keyword arguments are those policy fields as written (strings such as `"20%"`). Raises ValueError for
    a `field` other than request or limit.
    """
    if field not in FIELDS:
        raise ValueError(f"threshold field must be one of {', '.join(FIELDS)}, got {field!r}")
    per_resource = (resource_thresholds or {}).get(resource) or {}
    for level in (per_resource.get(field), resize_default, default):
        value = parse_percent(level)
        if value is not None:
            return value
    return DEFAULT_THRESHOLD_PCT


def resolve_max_change(text: str | None) -> Decimal:
    """Return `resize.maxChangePerCycle` as a percentage; 50 when unset, unparseable or outside 0 < p ≤ 100."""
    value = parse_percent(text)
    return value if value is not None else DEFAULT_MAX_CHANGE_PCT
