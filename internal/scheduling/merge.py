"""Merging matched policies into a pod spec, first writer wins (kupid's rules; docs/design.md, differences
28–31)."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from pydantic import ValidationError

from ballast.api.kupid.v1alpha1 import ClusterPodSchedulingPolicySpec
from ballast.runtime.objects import thaw

from .affinity import NODE_AFFINITY, POD_AFFINITIES, PREFERRED, REQUIRED, TERMS, merge_affinity, union
from .outcome import APPLIED, CONFLICT, ERROR, UNCHANGED, FieldConflict, MergeResult, PolicyOutcome
from .policies import InvalidPolicyError, Policy, as_wire, is_object, policy_ref, spec_of
from .terms import term_problems

DEFAULT_SCHEDULER = "default-scheduler"
"""The API server's default `schedulerName`; on either side it counts as unset (docs/design.md, difference
30)."""

SCHEDULING_FIELDS = ("nodeName", "schedulerName", "nodeSelector", "tolerations", "affinity")
"""The pod spec fields a policy can change; nothing else of the spec is read or written."""

_CHANGE_PATHS = (
    ("nodeName",),
    ("schedulerName",),
    ("nodeSelector",),
    ("tolerations",),
    ("affinity", NODE_AFFINITY, REQUIRED),
    ("affinity", NODE_AFFINITY, PREFERRED),
    *(("affinity", name, part) for name in POD_AFFINITIES for part in (REQUIRED, PREFERRED)),
)


def _location(location: Sequence[int | str]) -> str:
    path = "spec"
    for part in location:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def policy_problems(spec: Mapping[str, Any]) -> list[str]:
    """Why a policy spec cannot be merged, as `path: message` strings under `spec`; [] when it can.

    The spec must have the API model's types (`ballast.api.kupid.v1alpha1`), and every node selector term
    (required and preferred) must be well formed (`terms.term_problems`). The full admission checks of a policy
    belong to the validating webhook; these are the ones the merge needs to reason about its terms."""
    try:
        ClusterPodSchedulingPolicySpec.model_validate(spec)
    except ValidationError as error:
        return [f"{_location(e['loc'])}: {e['msg']}" for e in error.errors()]
    node_affinity = (spec.get("affinity") or {}).get(NODE_AFFINITY) or {}
    base = f"spec.affinity.{NODE_AFFINITY}"
    problems: list[str] = []
    for position, term in enumerate((node_affinity.get(REQUIRED) or {}).get(TERMS) or ()):
        problems.extend(term_problems(term, f"{base}.{REQUIRED}.{TERMS}[{position}]"))
    for position, weighted in enumerate(node_affinity.get(PREFERRED) or ()):
        problems.extend(term_problems(weighted.get("preference") or {}, f"{base}.{PREFERRED}[{position}].preference"))
    return problems


def _unset_scheduler(name: Any) -> bool:
    return not name or name == DEFAULT_SCHEDULER


def _merge_fields(work: dict[str, Any], spec: Mapping[str, Any], conflicts: list[FieldConflict]) -> None:
    node_name = spec.get("nodeName")
    if node_name:
        if not work.get("nodeName"):
            work["nodeName"] = node_name
        elif work["nodeName"] != node_name:
            conflicts.append(FieldConflict("nodeName", f"is {work['nodeName']!r}, the policy's is {node_name!r}"))
    scheduler = spec.get("schedulerName")
    if not _unset_scheduler(scheduler):
        if _unset_scheduler(work.get("schedulerName")):
            work["schedulerName"] = scheduler
        elif work["schedulerName"] != scheduler:
            conflicts.append(
                FieldConflict("schedulerName", f"is {work['schedulerName']!r}, the policy's is {scheduler!r}")
            )
    for key, value in (spec.get("nodeSelector") or {}).items():
        selector = work.get("nodeSelector")
        if not isinstance(selector, dict):
            selector = work["nodeSelector"] = {}
        if key not in selector:
            selector[key] = value
        elif selector[key] != value:
            conflicts.append(FieldConflict(f"nodeSelector[{key}]", f"is {selector[key]!r}, the policy's is {value!r}"))
    tolerations = list(spec.get("tolerations") or ())
    if tolerations:
        current = work.get("tolerations")
        if not isinstance(current, list):
            current = work["tolerations"] = []
        union(current, tolerations)


def _at(value: Any, path: Sequence[str]) -> Any:
    for part in path:
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


@functools.lru_cache(maxsize=1024)
def _problems_of(canonical: bytes) -> tuple[str, ...]:
    return tuple(policy_problems(orjson.loads(canonical)))


def _cached_problems(policy_spec: Mapping[str, Any]) -> list[str]:
    """`policy_problems`, once per distinct spec: admission merges the same few policies into every pod."""
    try:
        canonical = orjson.dumps(policy_spec, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # not plain JSON (a FrozenDict view, a model's leftovers): judged as it is
        return policy_problems(policy_spec)
    return list(_problems_of(canonical))


def _merge_one(spec: dict[str, Any], ref: str, policy_spec: Mapping[str, Any]) -> PolicyOutcome:
    problems = _cached_problems(policy_spec)
    if problems:
        return PolicyOutcome(ref, ERROR, "; ".join(problems))
    work = {name: thaw(spec[name]) for name in SCHEDULING_FIELDS if name in spec}
    conflicts: list[FieldConflict] = []
    _merge_fields(work, policy_spec, conflicts)
    affinity = policy_spec.get("affinity")
    if isinstance(affinity, Mapping):
        reason = merge_affinity(work, affinity)
        if reason is not None:
            conflicts.append(FieldConflict(f"affinity.{NODE_AFFINITY}.{REQUIRED}.{TERMS}", reason))
            return PolicyOutcome(ref, CONFLICT, reason, conflicts=tuple(conflicts))
    changed = tuple(".".join(path) for path in _CHANGE_PATHS if _at(work, path) != _at(spec, path))
    for name in SCHEDULING_FIELDS:
        if name in work:
            spec[name] = work[name]
    return PolicyOutcome(ref, APPLIED if changed else UNCHANGED, changed=changed, conflicts=tuple(conflicts))


def merge_detailed(pod_spec: Mapping[str, Any], policies: Sequence[Policy]) -> MergeResult:
    """Merge `policies`, in the order given (already matched and ordered: `select_policies`), into a copy of
    `pod_spec`; return the merged spec and one `PolicyOutcome` per policy. Neither input is mutated, and the
    returned spec shares nothing with them.

    Each policy is a whole object (wire dict or model) or a bare spec (wire dict). First writer wins: the pod's
    own values, then each policy's in order.

    - `nodeName`: set when the spec has none; a different one is a `FieldConflict`.
    - `schedulerName`: set when the spec has none or `default-scheduler`; a policy's `default-scheduler` asks for
      nothing; another value is a `FieldConflict`.
    - `nodeSelector`: each key the spec lacks is added; a key it has with another value is a `FieldConflict`.
    - `tolerations`, preferred node-affinity terms, pod affinity and anti-affinity terms: appended unless an
      equal one is there.
    - Required node-affinity terms: the reduced product (`affinity.merge_affinity`). When every term would be
      unsatisfiable the policy is in conflict: `CONFLICT`, and none of its fields is merged.
    - A policy that is malformed as stored (`policy_problems`, or an object of an unknown kind): `ERROR`, none
      of its fields is merged, and every other policy still is.

    Merging the same policies into the merged spec again changes nothing (`APPLIED` becomes `UNCHANGED`).
    """
    spec = thaw(dict(pod_spec))
    outcomes: list[PolicyOutcome] = []
    for position, policy in enumerate(policies):
        ref = f"policies[{position}]"
        try:
            wire = as_wire(policy)
            if is_object(wire):
                ref = policy_ref(wire)
            policy_spec = spec_of(wire)
        except InvalidPolicyError as error:
            outcomes.append(PolicyOutcome(ref, ERROR, f"{error.path}: {error.message}"))
            continue
        outcomes.append(_merge_one(spec, ref, policy_spec))
    return MergeResult(spec, tuple(outcomes))


def merge_policies(pod_spec: Mapping[str, Any], policies: Sequence[Policy]) -> dict[str, Any]:
    """`merge_detailed(pod_spec, policies).spec`: the merged pod spec alone."""
    return merge_detailed(pod_spec, policies).spec
