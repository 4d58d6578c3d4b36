"""The Balancer's placement as pure code: how many replicas each target gets, by priority or by proportion,
with fallback for pods that do not start (the kubernetes/autoscaler Balancer's rules).

    summaries = summarize_targets(pods_by_target, now, startup_timeout_seconds)   # None: no fallback
    result = place(replicas, targets, policy, summaries)
    result.placement          # {"zone-a": 4, "zone-b": 1}: every target, zeros included, by name
    result.missing            # replicas the minimums add on top of the request
    result.overflow           # replicas that fit in no target
    result.fallback           # per late target, the replicas it passed on

    targets = [{"name": "zone-a", "min_replicas": 1, "max_replicas": 7}, {"name": "zone-b", "min_replicas": 1,
               "max_replicas": None}]
    policy = {"name": "priority", "target_order": ["zone-a", "zone-b"]}
          or {"name": "proportional", "target_proportions": {"zone-a": 50, "zone-b": 50}}

    explain(replicas, targets, policy, summaries).lines()   # the reasons, per target
    request_from_spec(balancer.spec)                        # a Balancer's spec as these arguments

Bad input raises `PlacementInputError` (a `ValueError`) naming the value; nothing here reads the cluster.
"""

from __future__ import annotations

from .distribute import Placement, highest_averages, passed_on, place
from .errors import PlacementInputError
from .inputs import POLICIES, Target
from .reasons import (
    BLOCKED,
    FALLBACK,
    FULL,
    LATE,
    MINIMUM,
    MISSING,
    OVERFLOW,
    SURPLUS_FIRST,
    UNRANKED,
    Explanation,
    Reason,
    TargetExplanation,
    explain,
)
from .request import PlacementRequest, request_from_spec
from .summary import PENDING, RUNNING, Pod, PodState, PodSummary, summarize_pods, summarize_targets

__all__ = [
    "BLOCKED",
    "FALLBACK",
    "FULL",
    "LATE",
    "MINIMUM",
    "MISSING",
    "OVERFLOW",
    "PENDING",
    "POLICIES",
    "RUNNING",
    "SURPLUS_FIRST",
    "UNRANKED",
    "Explanation",
    "Placement",
    "PlacementInputError",
    "PlacementRequest",
    "Pod",
    "PodState",
    "PodSummary",
    "Reason",
    "Target",
    "TargetExplanation",
    "explain",
    "highest_averages",
    "passed_on",
    "place",
    "request_from_spec",
    "summarize_pods",
    "summarize_targets",
]
