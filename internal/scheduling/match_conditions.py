"""The scheduling webhook's `matchConditions`: one CEL expression, true for every object some policy's
`podSelector` could select, so the API server does not call the webhook for the others (and the merge costs them
nothing).

    rendering = render_match_conditions(policies, reserved=len(conditions_others_own))
    rendering.conditions        # [{"name": CONDITION_NAME, "expression": ...}], or None: send every request
    rendering.reason            # RENDERED, or why not (ENFORCED, UNRENDERABLE, TOO_LONG, TOO_MANY)
    rendered_record(policies)   # `kind/ns/name=resourceVersion,...`: what a rendering was made from

The API server ANDs a webhook's conditions, so the OR over the policies is inside one expression:

    object != null && [<the object's pod labels>.orValue({})].exists(labels, <policy> || <policy> || ...)

- The pod labels are read where the policies read them (`targets.TARGETS`): a Pod's own, a workload's template,
  a CronJob's job template — chosen by `request.kind.kind`. Every step is optional field selection
  (`object.?spec.?template...`), so a Pod without labels, a Deployment without template labels or a CronJob never
  makes the expression fail: an error skips the webhook under failurePolicy Ignore and refuses the object under
  Fail. `[x].exists(labels, ...)` binds the labels once (`cel.bind` is not in the matchConditions environment).
- A PodSchedulingPolicy applies only in its namespace: `request.namespace == "ns" && (...)`. A
  ClusterPodSchedulingPolicy's `namespaceSelector` cannot be read (no namespace object in this environment):
  it is left out, which sends more than needed, never less. Without a `namespaceSelector` (inert) or without
  a `podSelector` (selects nothing) a policy adds nothing, as in `policy_matches`.
- No policy that can select anything: the expression is `false` (the webhook would change nothing).
- Selectors are compiled as `policy_matches` compiles them (`labels.from_label_selector`) and rendered from
  those requirements, so both read a selector alike; keys and values are escaped CEL string literals.

There are no conditions at all (every request is sent) when an enforced policy exists (its denials must never
be missed while the conditions lag a policy change), when a policy does not compile (the webhook reports it on
each request it sees), or when the expression would exceed what the API server accepts (`MAX_EXPRESSION_LENGTH`
code points, `MAX_CONDITIONS` per webhook, both measured on v1.37.2).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ballast.runtime.labels import Requirement, Selector, from_label_selector

from .matching import policy_matches
from .policies import (
    CLUSTER_KIND,
    InvalidPolicyError,
    Policy,
    as_wire,
    is_enforced,
    policy_kind,
    policy_namespace,
    policy_ref,
    spec_of,
)
from .targets import TARGETS

CONDITION_NAME = "ballast-scheduling-policies"
"""The one condition we own on the webhook (others' conditions, with other names, are left alone)."""
MAX_EXPRESSION_LENGTH = 100_000
"""The API server's limit on one expression: the CEL parser's, in code points, leading and trailing whitespace
not counted (ours are ASCII and have none)."""
MAX_CONDITIONS = 64
"""The API server's limit on the conditions of one webhook, ours and everyone else's."""
MAX_RECORD_LENGTH = 4096
"""Beyond this, `rendered_record` gives a hash and a count instead of every policy."""

RENDERED = "rendered"
ENFORCED = "enforced"
UNRENDERABLE = "unrenderable"
TOO_LONG = "too_long"
TOO_MANY = "too_many"
REASONS = (RENDERED, ENFORCED, UNRENDERABLE, TOO_LONG, TOO_MANY)

MatchCondition = Mapping[str, str]
"""`{"name": ..., "expression": ...}` (admissionregistration/v1 MatchCondition)."""


@dataclass(frozen=True, slots=True)
class Rendering:
    """What the webhook's conditions should be: `conditions` (ours, one) or None when every request must be sent;
    `reason` is RENDERED or why not, `message` says which policy or how long, `terms` how many distinct
    selector terms the expression ORs."""

    conditions: tuple[MatchCondition, ...] | None
    reason: str
    message: str
    terms: int = 0

    @property
    def rendered(self) -> bool:
        return self.conditions is not None

    @property
    def state(self) -> str:
        """`rendered` or `disabled` (the metric's label)."""
        return "rendered" if self.rendered else "disabled"

    @property
    def expression(self) -> str:
        """The expression ("" when disabled)."""
        return self.conditions[0]["expression"] if self.conditions else ""


def cel_string(text: str) -> str:
    """`text` as a double-quoted CEL string literal: printable ASCII as is (`"` and `\\` escaped), anything
    else as `\\uXXXX` / `\\UXXXXXXXX`, so no key or value can end the literal or the expression."""
    parts = ['"']
    for char in text:
        code = ord(char)
        if char in '"\\':
            parts.append("\\" + char)
        elif 0x20 <= code < 0x7F:
            parts.append(char)
        elif 0xD800 <= code <= 0xDFFF:
            raise ValueError(f"{text!r}: a lone surrogate has no CEL literal")
        elif code <= 0xFFFF:
            parts.append(f"\\u{code:04x}")
        else:
            parts.append(f"\\U{code:08x}")
    parts.append('"')
    return "".join(parts)


def _labels_expression() -> str:
    """The object's pod labels as an optional map, by `request.kind.kind`: one branch per template path of
    `TARGETS`, the path most kinds share last (it also serves kinds we do not know)."""
    kinds_by_path: dict[tuple[str, ...], list[str]] = {}
    for target in TARGETS:
        kinds_by_path.setdefault(target.labels_path, []).append(target.kind)
    paths = sorted(kinds_by_path, key=lambda path: (-len(kinds_by_path[path]), path))
    default, *others = paths
    expression = "object" + "".join(f".?{part}" for part in default)
    for path in reversed(others):
        kinds = sorted(kinds_by_path[path])
        test = (
            f"request.kind.kind == {cel_string(kinds[0])}"
            if len(kinds) == 1
            else f"request.kind.kind in [{', '.join(cel_string(kind) for kind in kinds)}]"
        )
        expression = f"{test} ? object{''.join(f'.?{part}' for part in path)} : {expression}"
    return f"({expression}).orValue({{}})"


LABELS = _labels_expression()


def _requirement(requirement: Requirement) -> str:
    key = cel_string(requirement.key)
    present = f"{key} in labels"
    if requirement.operator == "exists":
        return present
    if requirement.operator == "doesnotexist":
        return f"!({present})"
    values = requirement.values
    test = (
        f"labels[{key}] == {cel_string(values[0])}"
        if len(values) == 1
        else f"labels[{key}] in [{', '.join(cel_string(value) for value in values)}]"
    )
    if requirement.operator in ("=", "in"):
        return f"({present} && {test})"
    return f"!({present} && {test})"  # "!=" / "notin": also true when the key is absent


def _selector_term(selector: Selector) -> str:
    """One selector as a CEL term over `labels` ("true" for the empty selector)."""
    if selector.empty():
        return "true"
    parts = [_requirement(requirement) for requirement in selector.requirements]
    return parts[0] if len(parts) == 1 else f"({' && '.join(parts)})"


def _any(terms: Iterable[str]) -> str:
    unique = sorted(set(terms))
    if "true" in unique:
        return "true"
    return " || ".join(unique) if unique else "false"


def _disabled(reason: str, message: str) -> Rendering:
    return Rendering(None, reason, message)


def render_match_conditions(policies: Iterable[Policy], *, reserved: int = 0) -> Rendering:
    """The conditions for `policies` (every PodSchedulingPolicy and ClusterPodSchedulingPolicy of the cluster,
    wire dicts or models; any order gives the same expression). `reserved` is how many conditions others
    already hold on the webhook (they count towards `MAX_CONDITIONS`). See the module docstring."""
    cluster_terms: list[str] = []
    namespaced_terms: dict[str, list[str]] = {}
    for policy in policies:
        wire = as_wire(policy)
        try:
            ref = policy_ref(wire)
            if is_enforced(wire):
                return _disabled(ENFORCED, f"{ref} is enforced: every request is sent")
            policy_matches(wire, {}, {})  # compiles both selectors, raises InvalidPolicyError for either
            pod_selector = spec_of(wire).get("podSelector")
            kind = policy_kind(wire)
        except InvalidPolicyError as error:
            return _disabled(UNRENDERABLE, f"{error}: every request is sent")
        if pod_selector is None:
            continue  # selects nothing
        if kind == CLUSTER_KIND:
            if spec_of(wire).get("namespaceSelector") is None:
                continue  # inert without a namespaceSelector
            cluster_terms.append(_selector_term(from_label_selector(pod_selector)))
        else:
            namespace_terms = namespaced_terms.setdefault(policy_namespace(wire), [])
            namespace_terms.append(_selector_term(from_label_selector(pod_selector)))
    terms = list(cluster_terms)
    for namespace, selected in sorted(namespaced_terms.items()):
        inner = _any(selected)
        test = f"request.namespace == {cel_string(namespace)}"
        if inner == "true":
            terms.append(test)
        else:
            terms.append(f"({test} && ({inner}))" if " || " in inner else f"({test} && {inner})")
    body = _any(terms)
    count = len(set(cluster_terms)) + sum(len(set(selected)) for selected in namespaced_terms.values())
    expression = body if body in ("true", "false") else f"object != null && [{LABELS}].exists(labels, {body})"
    length = len(expression)
    if length > MAX_EXPRESSION_LENGTH:
        return _disabled(TOO_LONG, f"the expression of {count} selectors would be {length} characters, over "
                                   f"{MAX_EXPRESSION_LENGTH}: every request is sent")  # fmt: skip
    if reserved + 1 > MAX_CONDITIONS:
        return _disabled(TOO_MANY, f"the webhook already has {reserved} other conditions, the API server allows "
                                   f"{MAX_CONDITIONS}: every request is sent")  # fmt: skip
    message = f"{count} selectors in {length} characters"
    return Rendering(({"name": CONDITION_NAME, "expression": expression},), RENDERED, message, count)


def _version(wire: Mapping[str, object]) -> str:
    metadata = wire.get("metadata")
    return str(metadata.get("resourceVersion") or "") if isinstance(metadata, Mapping) else ""


def _safe_ref(wire: Mapping[str, object]) -> str:
    try:
        return policy_ref(wire)
    except InvalidPolicyError as error:
        return error.ref


def rendered_record(policies: Sequence[Policy] | Iterable[Policy]) -> str:
    """Which policy versions a rendering was made from, deterministic whatever the order:
    `ClusterPodSchedulingPolicy/etcd=812,PodSchedulingPolicy/team-a/spot=907` (sorted), or, beyond
    `MAX_RECORD_LENGTH`, `<count> policies sha256:<first 16 hex digits of the sha256 of that list>`; "" for none.
    A caller that wrote a policy waits until `<ref>=<its resourceVersion>` is in it (or the hash agrees)."""
    entries = sorted(f"{_safe_ref(wire)}={_version(wire)}" for wire in map(as_wire, policies))
    record = ",".join(entries)
    if len(record) <= MAX_RECORD_LENGTH:
        return record
    digest = hashlib.sha256(record.encode()).hexdigest()[:16]
    return f"{len(entries)} policies sha256:{digest}"
