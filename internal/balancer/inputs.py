"""The inputs of `place`, checked once and brought to one shape: targets by name, the policy's order or
weights, and a summary for every target.

Everything is keyed and iterated by target name, never by the caller's list or mapping order, so the same
Balancer always gives the same placement however its lists were written (upstream sorts names for the same
reason: a placement that flapped with the order of a map would move replicas back and forth).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ballast.api.balancer.v1alpha1 import PRIORITY, PROPORTIONAL

from .errors import PlacementInputError
from .summary import PodSummary

POLICIES = (PRIORITY, PROPORTIONAL)
"""The policy names `place` knows."""


@dataclass(frozen=True, slots=True)
class Target:
    """One target's bounds: `min_replicas` it always gets, `max_replicas` it never exceeds (None: unbounded)."""

    name: str
    min_replicas: int = 0
    max_replicas: int | None = None


@dataclass(frozen=True, slots=True)
class Inputs:
    """What `place` works from, checked: targets and summaries sorted by name, `order` as written (priority) and
    `proportions` for every target (0 for one the policy does not name; names that are not targets dropped)."""

    replicas: int
    targets: dict[str, Target]
    policy: str
    order: tuple[str, ...]
    proportions: dict[str, int]
    summaries: dict[str, PodSummary]


def _count(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise PlacementInputError(path, f"must be a whole number, not {value!r}")
    if value < 0:
        raise PlacementInputError(path, f"must not be negative, is {value}")
    return value


def _bound(value: Any, path: str) -> int | None:
    return None if value is None else _count(value, path)


def _target(raw: Mapping[str, Any] | Target, path: str) -> Target:
    name: Any
    low: Any
    high: Any
    if isinstance(raw, Target):
        name, low, high = raw.name, raw.min_replicas, raw.max_replicas
    elif isinstance(raw, dict | Mapping):  # dict first: the ABC check costs more than the rest of this
        name, low, high = raw.get("name"), raw.get("min_replicas"), raw.get("max_replicas")
    else:
        raise PlacementInputError(path, f"must be a mapping with name, min_replicas and max_replicas, not {raw!r}")
    if not isinstance(name, str) or not name:
        raise PlacementInputError(f"{path}.name", f"must be a non-empty string, not {name!r}")
    minimum = _count(0 if low is None else low, f"{path}.min_replicas")
    maximum = _bound(high, f"{path}.max_replicas")
    if maximum is not None and minimum > maximum:
        raise PlacementInputError(f"{path}.min_replicas", f"{minimum} is more than max_replicas {maximum}")
    return Target(name, minimum, maximum)


def check_targets(targets: Sequence[Mapping[str, Any] | Target]) -> dict[str, Target]:
    """The targets by name, sorted; a duplicate name, a negative bound or a minimum above the maximum raises."""
    if isinstance(targets, str | bytes | Mapping):
        raise PlacementInputError("targets", "must be a list of targets")
    table: dict[str, Target] = {}
    for position, raw in enumerate(targets):
        target = _target(raw, f"targets[{position}]")
        if target.name in table:
            raise PlacementInputError(f"targets[{position}].name", f"{target.name!r} names a second target")
        table[target.name] = target
    return dict(sorted(table.items()))


def _order(policy: Mapping[str, Any], targets: Mapping[str, Target]) -> tuple[str, ...]:
    order = policy.get("target_order")
    if order is None:
        raise PlacementInputError("policy.target_order", "missing (the priority policy needs it)")
    if isinstance(order, str | bytes | Mapping) or not isinstance(order, Sequence):
        raise PlacementInputError("policy.target_order", f"must be a list of target names, not {order!r}")
    seen: set[str] = set()
    for position, name in enumerate(order):
        path = f"policy.target_order[{position}]"
        if not isinstance(name, str) or name not in targets:
            raise PlacementInputError(path, f"{name!r} is not the name of a target")
        if name in seen:
            raise PlacementInputError(path, f"{name!r} is listed twice")
        seen.add(name)
    return tuple(order)


def _proportions(policy: Mapping[str, Any], targets: Mapping[str, Target]) -> dict[str, int]:
    raw = policy.get("target_proportions")
    if raw is None:
        raise PlacementInputError("policy.target_proportions", "missing (the proportional policy needs it)")
    if not isinstance(raw, Mapping):
        raise PlacementInputError("policy.target_proportions", f"must map target names to weights, not {raw!r}")
    weights = dict.fromkeys(targets, 0)
    for name in sorted(raw, key=str):
        weight = _count(raw[name], f"policy.target_proportions[{name!r}]")
        if name in weights:
            weights[name] = weight
    return weights


def _summary(raw: PodSummary | Mapping[str, Any], path: str) -> PodSummary:
    if isinstance(raw, PodSummary):
        fields = raw.as_dict()
    elif isinstance(raw, dict | Mapping):
        fields = {key: raw.get(key, 0) for key in ("total", "running", "not_started")}
    else:
        raise PlacementInputError(path, f"must be a mapping with total, running and not_started, not {raw!r}")
    total, running, not_started = (_count(fields[key], f"{path}.{key}") for key in fields)
    if running + not_started > total:
        raise PlacementInputError(
            path, f"running {running} and not_started {not_started} add up to more than total {total}"
        )
    return PodSummary(total, running, not_started)


def check_inputs(
    replicas: int,
    targets: Sequence[Mapping[str, Any] | Target],
    policy: Mapping[str, Any],
    summaries: Mapping[str, PodSummary | Mapping[str, Any]] | None,
) -> Inputs:
    """Check and normalise the arguments of `place`; raises `PlacementInputError` naming the first bad value.

    A target the policy does not rank (absent from `target_order`, or without a proportion) is valid and gets
    only its minimum. A `target_proportions` or `summaries` key that is not a target is ignored, as upstream
    ignores proportions of unknown names; a target without a summary has no pods.
    """
    count = _count(replicas, "replicas")
    table = check_targets(targets)
    if not isinstance(policy, Mapping):
        raise PlacementInputError("policy", f"must be a mapping with a name, not {policy!r}")
    name = policy.get("name")
    if name == PRIORITY:
        order, proportions = _order(policy, table), dict.fromkeys(table, 0)
    elif name == PROPORTIONAL:
        order, proportions = (), _proportions(policy, table)
    else:
        raise PlacementInputError("policy.name", f"policy not supported: {name!r} (known: {', '.join(POLICIES)})")
    given = summaries or {}
    if not isinstance(given, Mapping):
        raise PlacementInputError("summaries", f"must map target names to summaries, not {given!r}")
    checked = {
        target: _summary(given[target], f"summaries[{target!r}]") if target in given else PodSummary()
        for target in table
    }
    return Inputs(count, table, name, order, proportions, checked)
