"""Merging a policy's `affinity` into a pod spec's: node affinity (the required terms as a reduced product,
docs/design.md, differences 28 and 29; the preferred terms as a union) and pod
(anti-)affinity (unions). Works on the caller's private copy of the spec's `affinity`."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from .terms import product, reduce_terms, unique

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
NODE_AFFINITY = "nodeAffinity"
POD_AFFINITIES = ("podAffinity", "podAntiAffinity")
TERMS = "nodeSelectorTerms"
REQUIRED_TERMS_PATH = f"affinity.{NODE_AFFINITY}.{REQUIRED}.{TERMS}"


def canonical(value: Any) -> Any:
    """`value` with null and empty-string fields left out, recursively: the wire forms Go's deep equality cannot
    tell apart (an omitted string field is ""), so `{"key": "a", "value": ""}` equals `{"key": "a"}`."""
    if isinstance(value, Mapping):
        return {k: canonical(v) for k, v in value.items() if v is not None and v != ""}
    if isinstance(value, list | tuple):
        return [canonical(v) for v in value]
    return value


def union(target: list[Any], additions: Sequence[Any]) -> None:
    """Append to `target` (in place) each of `additions` not equal (`canonical`) to an item already there."""
    seen = [canonical(item) for item in target]
    for item in additions:
        form = canonical(item)
        if form not in seen:
            seen.append(form)
            target.append(copy.deepcopy(item))


def _child(parent: dict[str, Any], name: str) -> dict[str, Any]:
    child = parent.get(name)
    if not isinstance(child, dict):
        child = {}
        parent[name] = child
    return child


def _list(parent: dict[str, Any], name: str) -> list[Any]:
    items = parent.get(name)
    if not isinstance(items, list):
        items = []
        parent[name] = items
    return items


def _merge_union(affinity: dict[str, Any], name: str, fields: Sequence[str], policy: Mapping[str, Any]) -> None:
    for field in fields:
        additions = list(policy.get(field) or ())
        if additions:
            union(_list(_child(affinity, name), field), additions)


def _merge_required(affinity: dict[str, Any], policy: Mapping[str, Any]) -> str | None:
    required = policy.get(REQUIRED)
    policy_terms = list(required.get(TERMS) or ()) if isinstance(required, Mapping) else []
    if not policy_terms:
        return None
    node_affinity = affinity.get(NODE_AFFINITY)
    current = node_affinity.get(REQUIRED) if isinstance(node_affinity, Mapping) else None
    pod_terms = list(current.get(TERMS) or ()) if isinstance(current, Mapping) else []
    candidates = product(pod_terms, policy_terms) if pod_terms else [unique(t) for t in policy_terms]
    kept, reasons = reduce_terms(candidates)
    if not kept:
        return "every required node-affinity term would be unsatisfiable (" + "; ".join(reasons) + ")"
    _child(_child(affinity, NODE_AFFINITY), REQUIRED)[TERMS] = kept
    return None


def merge_affinity(spec: dict[str, Any], policy_affinity: Mapping[str, Any]) -> str | None:
    """Merge `policy_affinity` into `spec["affinity"]` in place (creating only what receives content).

    - Required node affinity: with no pod terms, the policy's terms (`terms.unique`); otherwise their product
      (`terms.product`).
      Either way the result is reduced (`terms.reduce_terms`): unsatisfiable terms, proper supersets and later
      duplicates go, so merging the same policy again changes nothing. When nothing would be left, nothing is
      written and the reason is returned: the policy is in conflict.
    - Preferred node-affinity terms, and the required and preferred terms of `podAffinity` and
      `podAntiAffinity`: appended unless an equal one is there (`union`).

    Returns None when merged, or why the policy is in conflict (then `spec` is partly written: the caller
    discards its copy).
    """
    created = not isinstance(spec.get("affinity"), dict)
    affinity = _child(spec, "affinity")
    node_affinity = policy_affinity.get(NODE_AFFINITY)
    if isinstance(node_affinity, Mapping):
        reason = _merge_required(affinity, node_affinity)
        if reason is not None:
            return reason
        _merge_union(affinity, NODE_AFFINITY, (PREFERRED,), node_affinity)
    for name in POD_AFFINITIES:
        pod_affinity = policy_affinity.get(name)
        if isinstance(pod_affinity, Mapping):
            _merge_union(affinity, name, (REQUIRED, PREFERRED), pod_affinity)
    if created and not affinity:
        del spec["affinity"]
    return None
