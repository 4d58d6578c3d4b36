"""Guaranteed pods: requests and limits move together, so the pod stays Guaranteed (docs/design.md, difference 10)."""

from __future__ import annotations

from ballast.internal.quantity import to_units

from .drift import Percent, exceeds_drift
from .step import cap_change


def coupled_move(
    current: str | int,
    recommended_request: str | int | None,
    recommended_limit: str | int | None,
    max_change_pct: Percent,
    threshold_pct: Percent,
    *,
    resource: str,
) -> str | None:
    """Return the one value to set as both request and limit of a Guaranteed container's `resource` this cycle,
    or None when there is nothing to move.

    `current` is the container's current limit (equal to its request in a Guaranteed pod). The target is the
    larger of the recommended request and limit (whichever the policy sets), so the coupled value never goes
    below the limit the policy asks for; it is reached through the same drift test and step cap as any field.
    Raises as `cap_change` does.
    """
    targets = [value for value in (recommended_request, recommended_limit) if value is not None]
    if not targets:
        return None
    current_units = to_units(current, resource)
    target = max(to_units(value, resource) for value in targets)
    if not exceeds_drift(current_units, target, threshold_pct):
        return None
    return cap_change(current_units, target, max_change_pct, threshold_pct, resource=resource)
