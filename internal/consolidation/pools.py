"""Pools and their disruption settings: Karpenter NodePools when the cluster has them, a default policy otherwise.

A node belongs to the pool named by its `karpenter.sh/nodepool` label, else by a fallback label (the instance type
by default, so a cluster without Karpenter is planned per instance type). A pool that the caller does not describe
gets the default policy with Karpenter's defaults: consolidation on, one budget of `10%`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .errors import ConsolidationInputError
from .schedule import budget_window_active, check_schedule, parse_budget_duration

WHEN_EMPTY = "WhenEmpty"
WHEN_EMPTY_OR_UNDERUTILIZED = "WhenEmptyOrUnderutilized"
BALANCED = "Balanced"
POLICIES = (WHEN_EMPTY, WHEN_EMPTY_OR_UNDERUTILIZED, BALANCED)

UNDERUTILIZED = "Underutilized"
EMPTY = "Empty"
DRIFTED = "Drifted"
UNHEALTHY = "Unhealthy"
REASONS = (UNDERUTILIZED, EMPTY, DRIFTED, UNHEALTHY)

NODEPOOL_LABEL = "karpenter.sh/nodepool"
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
ZONE_LABEL = "topology.kubernetes.io/zone"
HOSTNAME_LABEL = "kubernetes.io/hostname"
UNBOUNDED = 2**31 - 1
"""What an inactive budget allows (Karpenter's MaxInt32)."""

_BUDGET_NODES = re.compile(r"^((100|[0-9]{1,2})%|[0-9]+)$")
_CONSOLIDATE_AFTER = re.compile(r"^(([0-9]+(s|m|h))+|Never)$")


@dataclass(frozen=True, slots=True)
class Budget:
    """One disruption budget: at most `nodes` (a count or a percentage of the pool, rounded up) at a time, for the
    listed `reasons` (None: every reason). `active` is whether its schedule covers now (a budget without a
    schedule is always active; `schedule.budget_window_active` decides the others)."""

    nodes: str = "10%"
    reasons: frozenset[str] | None = None
    active: bool = True

    def allowed(self, pool_nodes: int) -> int:
        """How many of `pool_nodes` this budget lets go at once."""
        if not self.active:
            return UNBOUNDED
        if self.nodes.endswith("%"):
            return math.ceil(int(self.nodes[:-1]) * pool_nodes / 100)
        return int(self.nodes)


DEFAULT_BUDGETS: tuple[Budget, ...] = (Budget(),)


@dataclass(frozen=True, slots=True)
class Pool:
    """How one pool consolidates and what it may launch.

    - `policy`: WhenEmpty, WhenEmptyOrUnderutilized or Balanced.
    - `consolidation_disabled`: `consolidateAfter: Never`.
    - `instance_types`, `capacity_types`, `zones`: what a replacement may be (None: whatever the catalogue has).
    - `weight`: pools with a higher weight are tried first for new nodes, as Karpenter's NodePool weight.
    - `labels`, `taints`: what a new node of the pool carries (the pool's label is added).
    """

    name: str
    policy: str = BALANCED
    consolidation_disabled: bool = False
    budgets: tuple[Budget, ...] = DEFAULT_BUDGETS
    instance_types: frozenset[str] | None = None
    capacity_types: frozenset[str] | None = None
    zones: frozenset[str] | None = None
    weight: int = 0
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Mapping[str, str], ...] = ()

    def allowed_disruptions(self, pool_nodes: int, reason: str) -> int:
        """The least any budget covering `reason` allows (UNBOUNDED when none does)."""
        allowed = UNBOUNDED
        for budget in self.budgets:
            if budget.reasons is None or reason in budget.reasons:
                allowed = min(allowed, budget.allowed(pool_nodes))
        return allowed


def _scheduled_active(value: Mapping[str, Any], path: str, now: datetime | None) -> bool:
    """Whether a budget's `schedule`/`duration` window covers `now`; without a schedule, or without `now` (the
    caller has no clock), active: a budget assumed in force can only make the advice more cautious."""
    schedule, duration = value.get("schedule"), value.get("duration")
    if schedule is None and duration is None:
        return True
    if schedule is None or duration is None:
        raise ConsolidationInputError(path, "schedule and duration must be set together")
    try:
        check_schedule(schedule)
    except ValueError as error:
        raise ConsolidationInputError(f"{path}.schedule", str(error)) from None
    try:
        parse_budget_duration(duration)
    except ValueError as error:
        raise ConsolidationInputError(f"{path}.duration", str(error)) from None
    return True if now is None else budget_window_active(schedule, duration, now)


def _budget(value: Any, path: str, now: datetime | None = None) -> Budget:
    if isinstance(value, Budget):
        return value
    if not isinstance(value, Mapping):
        raise ConsolidationInputError(path, "is not a budget mapping")
    nodes = str(value.get("nodes", "10%"))
    if not _BUDGET_NODES.match(nodes):
        raise ConsolidationInputError(f"{path}.nodes", f"{nodes!r} is not a count or a percentage such as '10%'")
    reasons = value.get("reasons")
    if reasons is not None:
        if not isinstance(reasons, list) or any(reason not in REASONS for reason in reasons):
            raise ConsolidationInputError(f"{path}.reasons", f"{reasons!r} is not a list of {', '.join(REASONS)}")
        reasons = frozenset(reasons)
    scheduled = _scheduled_active(value, path, now)
    active = value.get("active", scheduled)
    if not isinstance(active, bool):
        raise ConsolidationInputError(f"{path}.active", f"{active!r} is not a boolean")
    return Budget(nodes, reasons, active)


def _names(value: Any, path: str) -> frozenset[str] | None:
    if value is None:
        return None
    if not isinstance(value, list | tuple | set | frozenset) or not all(isinstance(v, str) for v in value):
        raise ConsolidationInputError(path, f"{value!r} is not a list of names")
    return frozenset(value)


def pool_from_mapping(name: str, value: Mapping[str, Any], *, path: str = "", now: datetime | None = None) -> Pool:
    """A pool from a mapping with the NodePool's `spec.disruption` field names (`consolidationPolicy`,
    `consolidateAfter`, `budgets`) and `instanceTypes`, `capacityTypes`, `zones`, `weight`, `labels`, `taints`.
    A budget with a `schedule` is active when its window covers `now` (UTC), and always when `now` is None.

    Raises `ConsolidationInputError` naming the field for an unknown policy, a `consolidateAfter` outside
    Karpenter's pattern, a budget that is not `N` or `N%`, or a schedule or duration Karpenter would refuse.
    """
    path = path or f"pools[{name!r}]"
    policy = value.get("consolidationPolicy", WHEN_EMPTY_OR_UNDERUTILIZED)
    if policy not in POLICIES:
        raise ConsolidationInputError(f"{path}.consolidationPolicy", f"{policy!r} is not one of {', '.join(POLICIES)}")
    after = value.get("consolidateAfter", "0s")
    if not isinstance(after, str) or not _CONSOLIDATE_AFTER.match(after):
        raise ConsolidationInputError(f"{path}.consolidateAfter", f"{after!r} is not a duration such as '30s' or Never")
    budgets = value.get("budgets")
    if budgets is None:
        parsed_budgets = DEFAULT_BUDGETS
    elif isinstance(budgets, list | tuple):
        parsed_budgets = tuple(_budget(budget, f"{path}.budgets[{i}]", now) for i, budget in enumerate(budgets))
    else:
        raise ConsolidationInputError(f"{path}.budgets", "is not a list")
    weight = value.get("weight", 0) or 0
    if isinstance(weight, bool) or not isinstance(weight, int):
        raise ConsolidationInputError(f"{path}.weight", f"{weight!r} is not an integer")
    labels = value.get("labels") or {}
    taints = value.get("taints") or ()
    if not isinstance(labels, Mapping) or not isinstance(taints, list | tuple):
        raise ConsolidationInputError(path, "labels must be a mapping and taints a list")
    return Pool(
        name=name,
        policy=policy,
        consolidation_disabled=after == "Never",
        budgets=parsed_budgets,
        instance_types=_names(value.get("instanceTypes"), f"{path}.instanceTypes"),
        capacity_types=_names(value.get("capacityTypes"), f"{path}.capacityTypes"),
        zones=_names(value.get("zones"), f"{path}.zones"),
        weight=weight,
        labels={str(k): str(v) for k, v in labels.items()},
        taints=tuple(taints),
    )


def _requirement_values(requirements: Any, key: str) -> list[str] | None:
    for requirement in requirements or ():
        if isinstance(requirement, Mapping) and requirement.get("key") == key and requirement.get("operator") == "In":
            return [str(v) for v in requirement.get("values") or ()]
    return None


def pool_from_nodepool(nodepool: Mapping[str, Any], *, now: datetime | None = None) -> Pool:
    """A pool from a Karpenter NodePool (`karpenter.sh/v1`, as Kubernetes JSON): its `spec.disruption`, its
    weight, its template's labels and taints, and the `In` requirements on instance type, capacity type and zone.

    A budget with a `schedule` is active when its window covers `now`; without `now` it counts as active, which
    can only make the advice more cautious.
    """
    name = str((nodepool.get("metadata") or {}).get("name") or "")
    spec = nodepool.get("spec") or {}
    disruption = dict(spec.get("disruption") or {})
    template = spec.get("template") or {}
    template_spec = template.get("spec") or {}
    requirements = template_spec.get("requirements")
    return pool_from_mapping(
        name,
        {
            **disruption,
            "weight": spec.get("weight", 0),
            "labels": (template.get("metadata") or {}).get("labels") or {},
            "taints": template_spec.get("taints") or [],
            "instanceTypes": _requirement_values(requirements, INSTANCE_TYPE_LABEL),
            "capacityTypes": _requirement_values(requirements, CAPACITY_TYPE_LABEL),
            "zones": _requirement_values(requirements, ZONE_LABEL),
        },
        path=f"nodepools[{name!r}]",
        now=now,
    )
