"""`limit_plan`: the limit written next to a request at admission, and the rule that chose it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ballast.internal.quantity import format_units, to_units
from ballast.internal.stats import fit_limit

LimitRule = Literal["recommended", "raised-to-request", "none", "kept", "ratio"]
"""How the limit was chosen:

- `recommended`: the policy recommends it and the request fits under it;
- `raised-to-request`: a limit (recommended, or the container's own with no usable ratio) raised to the request;
- `none`: no limit is recommended and the container has none;
- `kept`: the container's own limit, which the request fits under;
- `ratio`: the container's own limit scaled by request / original request (its limit:request ratio kept).
"""


@dataclass(frozen=True, slots=True)
class LimitPlan:
    """The limit to write (None: leave the container's as it is, or it has none) and why.

    `before` is the limit that was too low when the rule raised it (`scaled`), else the limit chosen.
    """

    limit: str | None
    rule: LimitRule
    before: str | None = None
    managed: bool = False  # the policy recommends this limit (it is not the container's own)

    @property
    def scaled(self) -> bool:
        """Whether a limit was raised so the request stays within it (counted by admission)."""
        return self.rule in ("raised-to-request", "ratio")


def limit_plan(
    resource: str,
    *,
    request: str | None,
    limit: str | None,
    current_request: str | None,
    current_limit: str | None,
) -> LimitPlan:
    """The limit for `resource` given the recommended `request`/`limit` (None: not recommended) and the
    container's own values. Raises QuantityError/TypeError when a value it must compare is not a quantity."""
    if limit is not None:
        effective_request = request if request is not None else current_request
        if effective_request is not None and fit_limit(effective_request, None, limit, resource).scaled:
            return LimitPlan(_canonical(effective_request, resource), "raised-to-request", limit, managed=True)
        return LimitPlan(limit, "recommended", managed=True)
    if current_limit is None or request is None:
        return LimitPlan(None, "none" if current_limit is None else "kept", current_limit)
    fit = fit_limit(request, current_request, current_limit, resource)
    if not fit.scaled:
        return LimitPlan(None, "kept", current_limit)
    raised_to_request = current_request is None or fit.limit == _canonical(request, resource)
    return LimitPlan(fit.limit, "raised-to-request" if raised_to_request else "ratio", current_limit)


def _canonical(quantity: str, resource: str) -> str:
    return format_units(to_units(quantity, resource), resource)
