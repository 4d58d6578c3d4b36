"""Node selector terms: their requirements compared as sets, contradictions (docs/design.md, difference
29), the product of a pod's and a policy's terms and its reduction (difference 28).

A term is a wire dict (`matchExpressions`, `matchFields`); terms are ORed, the requirements of one term ANDed,
and a term without requirements matches no node.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from typing import Any

EXPRESSIONS = "matchExpressions"
FIELDS = "matchFields"
EXPRESSION_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
FIELD_OPERATORS = ("In", "NotIn")
FIELD_KEYS = ("metadata.name",)
_INT64 = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

Requirement = tuple[str, str, str, frozenset[str]]
"""A requirement compared as a set member: (list it is in, key, operator, values as a set)."""


def requirement_key(where: str, requirement: Mapping[str, Any]) -> Requirement:
    """`requirement` (of list `where`: `matchExpressions` or `matchFields`) as a comparable value; `values` is a
    set, so `In [a, b]` equals `In [b, a]`."""
    values = requirement.get("values") or ()
    return (where, str(requirement.get("key", "")), str(requirement.get("operator", "")), frozenset(map(str, values)))


def _requirements(term: Mapping[str, Any], where: str) -> list[Mapping[str, Any]]:
    return [r for r in term.get(where) or () if isinstance(r, Mapping)]


def term_key(term: Mapping[str, Any]) -> frozenset[Requirement]:
    """The term as the set of its requirements (order and repetition do not matter)."""
    return frozenset(requirement_key(where, r) for where in (EXPRESSIONS, FIELDS) for r in _requirements(term, where))


def parse_int64(text: str) -> int | None:
    """`text` as Go's `strconv.ParseInt(text, 10, 64)` reads it (how the scheduler reads `Gt`/`Lt` and the node's
    label value), or None."""
    if _INT64.fullmatch(text) is None:
        return None
    number = int(text)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


def term_problems(term: Any, path: str) -> list[str]:
    """Why `term` (at `path` in a policy) is malformed, as `path: message` strings; [] when it is well formed.

    The checks are those the merge relies on: a known operator; `In`/`NotIn` with values, `Exists`/`DoesNotExist`
    without, `Gt`/`Lt` with exactly one integer; in `matchFields` only `metadata.name` with `In`/`NotIn` and one
    value.
    """
    if not isinstance(term, Mapping):
        return [f"{path}: is not a node selector term"]
    problems: list[str] = []
    for where, operators in ((EXPRESSIONS, EXPRESSION_OPERATORS), (FIELDS, FIELD_OPERATORS)):
        for position, requirement in enumerate(term.get(where) or ()):
            at = f"{path}.{where}[{position}]"
            if not isinstance(requirement, Mapping):
                problems.append(f"{at}: is not a requirement")
                continue
            problems.extend(f"{at}.{message}" for message in _requirement_problems(requirement, where, operators))
    return problems


def _requirement_problems(requirement: Mapping[str, Any], where: str, operators: Sequence[str]) -> list[str]:
    operator = requirement.get("operator")
    values = list(requirement.get("values") or ())
    if operator not in operators:
        return [f"operator: Unsupported value: {operator!r}: supported values: {', '.join(operators)}"]
    if where == FIELDS:
        problems = []
        if requirement.get("key") not in FIELD_KEYS:
            problems.append(f"key: Unsupported value: {requirement.get('key')!r}: supported values: metadata.name")
        if len(values) != 1:
            problems.append("values: Required value: exactly one value for a node field selector")
        return problems
    if operator in ("In", "NotIn") and not values:
        return [f"values: Required value: must be specified when `operator` is {operator!r}"]
    if operator in ("Exists", "DoesNotExist") and values:
        return [f"values: Forbidden: may not be specified when `operator` is {operator!r}"]
    if operator in ("Gt", "Lt") and (len(values) != 1 or parse_int64(str(values[0])) is None):
        return [f"values: Invalid value: {values!r}: must be exactly one integer when `operator` is {operator!r}"]
    return []


def contradiction(term: Mapping[str, Any]) -> str | None:
    """Why no node can satisfy `term`, or None when some node can.

    Per key (expressions and fields apart): `In` sets that do not intersect; `In`/`NotIn` that exclude every
    value; `DoesNotExist` with `Exists`, `In`, `Gt` or `Lt`; `Gt`/`Lt` that leave no integer (or no `In` value
    between them). A term without requirements matches no node. Only what is certain is reported: a requirement
    this module cannot read (an unknown operator, a `Gt` without an integer) constrains nothing here.
    """
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for where in (EXPRESSIONS, FIELDS):
        for requirement in _requirements(term, where):
            groups.setdefault((where, str(requirement.get("key", ""))), []).append(requirement)
    if not groups:
        return "an empty term matches no node"
    for (_, key), requirements in groups.items():
        reason = _key_contradiction(requirements)
        if reason is not None:
            return f"{key}: {reason}"
    return None


def _bound(requirements: Sequence[Mapping[str, Any]], operator: str) -> list[int]:
    bounds = []
    for requirement in requirements:
        values = list(requirement.get("values") or ())
        if requirement.get("operator") == operator and len(values) == 1:
            number = parse_int64(str(values[0]))
            if number is not None:
                bounds.append(number)
    return bounds


def _key_contradiction(requirements: Sequence[Mapping[str, Any]]) -> str | None:
    operators = {str(r.get("operator")) for r in requirements}
    present = operators & {"Exists", "In", "Gt", "Lt"}
    if "DoesNotExist" in operators and present:
        return f"DoesNotExist meets {', '.join(sorted(present))}"
    allowed: set[str] | None = None
    for requirement in requirements:
        if requirement.get("operator") == "In":
            values = {str(v) for v in requirement.get("values") or ()}
            allowed = values if allowed is None else allowed & values
    if allowed is not None and not allowed:
        return "In sets do not intersect"
    excluded = {str(v) for r in requirements if r.get("operator") == "NotIn" for v in r.get("values") or ()}
    if allowed is not None:
        allowed -= excluded
        if not allowed:
            return "In and NotIn exclude every value"
    return _range_contradiction(requirements, allowed)


def _range_contradiction(requirements: Sequence[Mapping[str, Any]], allowed: set[str] | None) -> str | None:
    greater, less = _bound(requirements, "Gt"), _bound(requirements, "Lt")
    if not greater and not less:
        return None
    low = max([0, *(bound + 1 for bound in greater)])  # a label value starts with an alphanumeric: no sign
    high = min(less) - 1 if less else None
    if high is not None and low > high:
        return "Gt and Lt leave no integer"
    if allowed is not None:
        numbers = (parse_int64(value) for value in allowed)
        if not any(n is not None and n >= low and (high is None or n <= high) for n in numbers):
            return "no In value is an integer within Gt and Lt"
    return None


def _joined(*terms: Mapping[str, Any]) -> dict[str, Any]:
    term: dict[str, Any] = {}
    for where in (EXPRESSIONS, FIELDS):
        merged: list[dict[str, Any]] = []
        seen: set[Requirement] = set()
        for requirement in (r for t in terms for r in _requirements(t, where)):
            key = requirement_key(where, requirement)
            if key not in seen:
                seen.add(key)
                merged.append(copy.deepcopy(dict(requirement)))
        if merged:
            term[where] = merged
    return term


def unique(term: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `term` in which each requirement appears once (the first time; requirements compared as
    sets), so it is already what merging it with itself gives."""
    return _joined(term)


def _merged(policy_term: Mapping[str, Any], pod_term: Mapping[str, Any]) -> dict[str, Any]:
    pod_key = term_key(pod_term)
    if not term_key(policy_term) or not pod_key:
        return {}  # one side matches no node, so the pair matches none
    if term_key(policy_term) <= pod_key:
        return copy.deepcopy(dict(pod_term))  # the pod term says it all already: kept as written
    return _joined(policy_term, pod_term)


def product(pod_terms: Sequence[Mapping[str, Any]], policy_terms: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The terms meaning (pod term i AND policy term j) for every i, j: pod terms outside, policy terms inside;
    each merged term lists the policy term's requirements, then the pod term's, each once (the first time); a pod
    term that already has all of the policy term's requirements is kept as written.
    A list that comes out empty is left out of the term. A pair in which either term has no requirements (and
    so matches no node) gives the empty term, which matches no node either (upstream would keep the other
    term, reviving an alternative that could never be met)."""
    return [_merged(policy_term, pod_term) for pod_term in pod_terms for policy_term in policy_terms]


def reduce_terms(terms: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], list[str]]:
    """Drop from `terms` every unsatisfiable term (`contradiction`), every term that is a proper superset of
    another kept term, and every term equal to an earlier one (requirements compared as sets). What is left
    means the same as `terms` (unless nothing is left), in their order. Returns it and, for each term dropped
    as unsatisfiable, `terms[i]: reason`."""
    reasons: list[str] = []
    satisfiable: list[tuple[int, frozenset[Requirement]]] = []
    for position, term in enumerate(terms):
        reason = contradiction(term)
        if reason is None:
            satisfiable.append((position, term_key(term)))
        else:
            reasons.append(f"terms[{position}]: {reason}")
    kept = [
        terms[position]
        for position, key in satisfiable
        if not any(other < key or (other == key and earlier < position) for earlier, other in satisfiable)
    ]
    return kept, reasons
