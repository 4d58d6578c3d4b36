"""The `schedulingpolicy` controller's metrics: whether the scheduling webhook's `matchConditions` filter
requests, and how close the expression is to the API server's limit.

`ballast_scheduling_match_conditions{state,reason}` is 1 for the current state and absent otherwise: `rendered`
(reason `rendered`: the API server calls the webhook only for objects a policy can select) or `disabled` (every
request is sent; reason `enforced`, `unrenderable`, `too_long`, `too_many`, or `refused` when the API server
did not accept the expression). `ballast_scheduling_match_condition_characters` is the rendered expression's
length (0 when disabled); the API server refuses more than 100,000.
"""

from __future__ import annotations

from prometheus_client import Gauge

from ballast.runtime.metrics import REGISTRY

SCHEDULING_MATCH_CONDITIONS = Gauge(
    "ballast_scheduling_match_conditions",
    "1 for the state of the scheduling webhook's matchConditions: rendered (requests filtered by the policies' "
    "podSelectors) or disabled (every request sent), with the reason",
    ["state", "reason"], registry=REGISTRY,
)  # fmt: skip

SCHEDULING_MATCH_CONDITION_CHARACTERS = Gauge(
    "ballast_scheduling_match_condition_characters",
    "Length of the scheduling webhook's rendered matchCondition expression (the API server's limit is 100000)",
    registry=REGISTRY,
)


def record_match_conditions(state: str, reason: str, length: int) -> None:
    """Make (`state`, `reason`) the only sample of the state gauge and set the length gauge."""
    SCHEDULING_MATCH_CONDITIONS.clear()
    SCHEDULING_MATCH_CONDITIONS.labels(state, reason).set(1)
    SCHEDULING_MATCH_CONDITION_CHARACTERS.set(length)
