"""The request ≤ limit guarantee for limits a policy does not manage (VPA's ratio; docs/design.md, difference 4)."""

from __future__ import annotations

from dataclasses import dataclass

from ballast.internal.quantity import format_units, to_units


@dataclass(frozen=True, slots=True)
class LimitFit:
    """The limit to write next to a new request, and whether it had to be raised (callers count that event)."""

    limit: str | None
    scaled: bool


def fit_limit(
    request: str | int, original_request: str | int | None, original_limit: str | int | None, resource: str
) -> LimitFit:
    """Return the limit that keeps a new `request` within a limit the policy does not manage.

    Quantities are strings or int units (millicores for cpu, bytes otherwise). With no original limit there is
    nothing to keep (`limit=None`). A request at or below the original limit keeps it unchanged. Above it, the
    limit is scaled to keep the original limit:request ratio, `limit × request / original_request` truncated
    (never below the request); with no usable ratio (no original request, or one at or above the limit) the
    limit becomes the request. Raises QuantityError/TypeError for a value that is not a quantity.
    """
    if original_limit is None:
        return LimitFit(limit=None, scaled=False)
    new_request = to_units(request, resource)
    limit = to_units(original_limit, resource)
    if new_request <= limit:
        unchanged = original_limit if isinstance(original_limit, str) else format_units(limit, resource)
        return LimitFit(limit=unchanged, scaled=False)
    old_request = 0 if original_request is None else to_units(original_request, resource)
    usable_ratio = 0 < old_request < limit
    scaled = max(limit * new_request // old_request, new_request) if usable_ratio else new_request
    return LimitFit(limit=format_units(scaled, resource), scaled=True)
