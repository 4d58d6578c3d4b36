"""A Balancer's spec as the arguments of `place`, so the controller and the CLI read it the same way."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ballast.api.balancer.v1alpha1 import PRIORITY, PROPORTIONAL, BalancerSpec

from .errors import PlacementInputError
from .inputs import Target


@dataclass(frozen=True, slots=True)
class PlacementRequest:
    """`place(request.replicas, request.targets, request.policy, summaries)`; `startup_timeout_seconds` is what
    `summarize_pods` needs (None without fallback)."""

    replicas: int
    targets: tuple[Target, ...]
    policy: dict[str, Any]
    startup_timeout_seconds: int | None


def request_from_spec(spec: BalancerSpec | Mapping[str, Any]) -> PlacementRequest:
    """The placement arguments of a Balancer's `spec` (the model, or its wire dict, validated here).

    A policy name without its settings block raises `PlacementInputError` with upstream's message
    (`incomplete policy definition: missing priorities`, `… missing proportions`); an unknown name is left for
    `place` to refuse (`policy not supported: …`).
    """
    model = spec if isinstance(spec, BalancerSpec) else BalancerSpec.model_validate(spec)
    policy = model.policy
    settings: dict[str, Any] = {"name": policy.policy_name}
    if policy.policy_name == PRIORITY:
        if policy.priorities is None:
            raise PlacementInputError("spec.policy.priorities", "incomplete policy definition: missing priorities")
        settings["target_order"] = list(policy.priorities.target_order)
    elif policy.policy_name == PROPORTIONAL:
        if policy.proportions is None:
            raise PlacementInputError("spec.policy.proportions", "incomplete policy definition: missing proportions")
        settings["target_proportions"] = dict(policy.proportions.target_proportions)
    targets = tuple(Target(t.name, t.min_replicas or 0, t.max_replicas) for t in model.targets)
    timeout = None if policy.fallback is None else policy.fallback.startup_timeout_seconds
    return PlacementRequest(model.replicas, targets, settings, timeout)
