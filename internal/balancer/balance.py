"""One Balancer run's policy phase as the controller calls it: the targets' pods summarised, then placed."""

from __future__ import annotations

import datetime
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ballast.api.balancer.v1alpha1 import BalancerSpec
from ballast.api.wire import INT32_MAX

from .distribute import Placement, place
from .errors import PlacementInputError
from .request import request_from_spec
from .stored import in_spec_terms
from .summary import PodState, PodSummary, summarize_targets


@dataclass(frozen=True, slots=True)
class Balanced:
    """The summaries by target name and the pods observed (known even when the policy is refused, as upstream), the
    placement, or why there is none (`refused`, upstream's message)."""

    summaries: dict[str, PodSummary] = field(default_factory=dict)
    observed: int | None = None
    placement: Placement | None = None
    refused: str | None = None


def balance(spec: BalancerSpec, pods: Mapping[str, Iterable[PodState]], now: datetime.datetime) -> Balanced:
    """Summarise each target's pods (`pods` by target name) and place `spec.replicas` over the targets."""
    timeout = None if spec.policy.fallback is None else spec.policy.fallback.startup_timeout_seconds
    try:
        summaries = summarize_targets(pods, now, timeout)
    except PlacementInputError as exc:
        return Balanced(refused=str(exc))
    observed = sum(s.total for s in summaries.values())
    try:
        request = request_from_spec(spec)
    except PlacementInputError as exc:
        return Balanced(summaries, observed, refused=exc.message)
    try:
        placement = place(request.replicas, request.targets, request.policy, summaries)
    except PlacementInputError as exc:  # named as the user wrote it (spec.…, wire names)
        return Balanced(summaries, observed, refused=in_spec_terms(exc))
    missing = [name for name in pods if name not in placement.placement]
    if missing:
        return Balanced(summaries, observed, refused=f"placement for {missing[0]} not found")
    # Fallback can add a late target's replicas on top of another's: a count no replicas field can hold is
    # refused here rather than failing the status (an int32) or the scale write (docs/design.md, difference 59).
    too_many = [(name, count) for name, count in placement.placement.items() if count > INT32_MAX]
    if too_many:
        name, count = too_many[0]
        return Balanced(summaries, observed, refused=f"placement for {name} is {count}, more than {INT32_MAX}")
    return Balanced(summaries, observed, placement)
