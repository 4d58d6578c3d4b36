"""A Balancer's spec as stored, judged by the CRD's own rules, and the placement's errors in the spec's words.

The CRD's rules (`ballast.api.balancer.v1alpha1`) are the schema's only, so a Balancer stored before one of them
is still read. `spec_problems` says which of them it breaks, each as `path: message` with the path under `spec`
in wire names, so the controller can say so in `Valid=False`, reason `StoredSpecInvalid` (docs/design.md,
difference 59). `in_spec_terms` rewrites a `PlacementInputError` (whose paths are `place`'s Python arguments:
`policy.target_proportions['a']`) into the fields a user wrote (`spec.policy.proportions.targetProportions[a]`).
"""

from __future__ import annotations

import re

from ballast.api.balancer.v1alpha1 import MAX_TARGETS, PRIORITY, PROPORTIONAL, TARGET_NAME_MAX_LENGTH, BalancerSpec
from ballast.api.wire import INT32_MAX

from .errors import PlacementInputError

_SPEC_PATHS = (
    ("policy.target_order", "spec.policy.priorities.targetOrder"),
    ("policy.target_proportions", "spec.policy.proportions.targetProportions"),
    ("policy.name", "spec.policy.policyName"),
    ("policy", "spec.policy"),
    ("targets", "spec.targets"),
    ("replicas", "spec.replicas"),
)
_WIRE_WORDS = {
    "min_replicas": "minReplicas",
    "max_replicas": "maxReplicas",
    "target_order": "targetOrder",
    "target_proportions": "targetProportions",
}
_WORD = re.compile("|".join(_WIRE_WORDS))
_QUOTED_KEY = re.compile(r"\['([^']*)'\]")


def _wire_words(text: str) -> str:
    return _WORD.sub(lambda match: _WIRE_WORDS[match.group(0)], text)


def in_spec_terms(error: PlacementInputError) -> str:
    """`error` as `path: message` with the path under `spec` and every field in its wire name; a path outside
    the spec (a target's pod summary) keeps its own name."""
    path = error.path
    for python, wire in _SPEC_PATHS:
        if path == python or path.startswith((f"{python}.", f"{python}[")):
            path = wire + _QUOTED_KEY.sub(r"[\1]", _wire_words(path[len(python) :]))
            break
    message = _wire_words(error.message)
    return f"{path}: {message}" if path else message


def _target_problems(spec: BalancerSpec) -> list[str]:
    problems: list[str] = []
    if len(spec.targets) > MAX_TARGETS:
        problems.append(f"spec.targets: {len(spec.targets)} targets, at most {MAX_TARGETS}")
    names: set[str] = set()
    for position, target in enumerate(spec.targets):
        where = f"spec.targets[{position}]"
        if target.name in names:
            problems.append(f"{where}.name: {target.name!r} names a second target")
        names.add(target.name)
        if len(target.name) > TARGET_NAME_MAX_LENGTH:
            problems.append(f"{where}.name: longer than {TARGET_NAME_MAX_LENGTH} characters")
        low, high = target.min_replicas, target.max_replicas
        if low is not None and high is not None and low > high:
            problems.append(f"{where}: minReplicas {low} is greater than maxReplicas {high}")
    minimums = sum(target.min_replicas or 0 for target in spec.targets)
    if minimums > INT32_MAX:
        problems.append(f"spec.targets: the targets' minReplicas add up to {minimums}, more than {INT32_MAX}")
    return problems


def _policy_problems(spec: BalancerSpec) -> list[str]:
    problems: list[str] = []
    policy = spec.policy
    if policy.policy_name == PRIORITY and policy.priorities is None:
        problems.append(f'spec.policy.priorities: needed when policyName is "{PRIORITY}"')
    if policy.policy_name == PROPORTIONAL and policy.proportions is None:
        problems.append(f'spec.policy.proportions: needed when policyName is "{PROPORTIONAL}"')
    if policy.priorities is not None:
        names = {target.name for target in spec.targets}
        unknown = [name for name in policy.priorities.target_order if name not in names]
        if unknown:
            problems.append(f"spec.policy.priorities.targetOrder: {unknown[0]!r} is not the name of a target")
    if policy.proportions is not None:
        for name, weight in sorted(policy.proportions.target_proportions.items()):
            if weight < 0:
                problems.append(f"spec.policy.proportions.targetProportions[{name}]: {weight} is negative")
    return problems


def spec_problems(spec: BalancerSpec) -> list[str]:
    """The CRD rules `spec` breaks, as `path: message` (wire names, under `spec`); [] when it keeps them all."""
    return [*_target_problems(spec), *_policy_problems(spec)]
