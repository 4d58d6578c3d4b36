"""The apply rule as pure code: which request and limit a container gets from its recommendations (a plan).

    plan = limit_plan("cpu", request="287m", limit=None, current_request="500m", current_limit="1")
    plan.limit, plan.rule        # "1", "kept": the request stays within the container's own limit

Admission (`webhook/recommendations.py`) writes what the plan says; `ballast explain` narrates the same plan, so
what a user reads is what admission did. The rule (docs/design.md, difference 4): a request never ends above its
limit — a limit the policy does not manage is raised keeping the container's limit:request ratio (VPA's rule),
a recommended limit below the request is raised to it.
"""

from .plan import LimitPlan, LimitRule, limit_plan

__all__ = ["LimitPlan", "LimitRule", "limit_plan"]
