"""Which policies apply to an object: kupid's selector rules, with an invalid policy disabling only itself
(docs/design.md, difference 31)."""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import orjson

from ballast.runtime.labels import Selector, SelectorError, from_label_selector

from .order import order_policies
from .outcome import ERROR, PolicyOutcome
from .policies import CLUSTER_KIND, InvalidPolicyError, Policy, as_wire, policy_kind, policy_ref, spec_of

P = TypeVar("P", bound=Policy)


@functools.lru_cache(maxsize=4096)
def _compiled(canonical: bytes) -> Selector:
    """A selector compiled from its canonical JSON (a Selector is immutable: one instance serves every policy
    that carries the same selector, every request). SelectorError is raised, not cached."""
    return from_label_selector(orjson.loads(canonical))


def _compile(wire: Mapping[str, Any] | None) -> Selector:
    if isinstance(wire, dict):
        try:
            return _compiled(orjson.dumps(wire, option=orjson.OPT_SORT_KEYS))
        except (orjson.JSONEncodeError, TypeError):
            pass  # not plain JSON: compiled as it is
    return from_label_selector(wire)


def _selector(spec: Mapping[str, Any], field: str, policy: Mapping[str, Any]) -> Selector:
    wire = spec.get(field)
    if wire is not None and not isinstance(wire, Mapping):
        raise InvalidPolicyError(policy_ref(policy), f"spec.{field}", "is not a label selector")
    try:
        return _compile(wire)
    except SelectorError as error:
        where, separator, message = str(error).partition(": ")
        path = f"spec.{field}.{where}" if separator else f"spec.{field}"
        raise InvalidPolicyError(policy_ref(policy), path, message if separator else str(error)) from error


def policy_matches(
    policy: Policy, namespace_labels: Mapping[str, str] | None, pod_labels: Mapping[str, str] | None
) -> bool:
    """Return whether `policy` (a whole object) applies to an object with `pod_labels` in a namespace with
    `namespace_labels`.

    - A selector that is absent matches nothing; `{}` matches everything; otherwise `matchLabels` AND
      `matchExpressions`, as the API server reads a `metav1.LabelSelector`.
    - A ClusterPodSchedulingPolicy needs both its `namespaceSelector` (over the namespace's labels) and its
      `podSelector`; without a `namespaceSelector` it is inert.
    - A PodSchedulingPolicy needs its `podSelector`; `namespace_labels` are not read, and the caller passes only
      the policies of the object's own namespace.
    - For a workload, `pod_labels` are its pod template's labels, never the object's own.

    Both selectors are compiled before either is evaluated, so an invalid policy raises InvalidPolicyError
    (naming the field) whatever the labels are.
    """
    wire = as_wire(policy)
    kind = policy_kind(wire)  # an unknown kind raises here, before anything else
    spec = spec_of(wire)
    pods = _selector(spec, "podSelector", wire)
    if kind == CLUSTER_KIND:
        namespaces = _selector(spec, "namespaceSelector", wire)
        if not namespaces.matches(namespace_labels):
            return False
    return pods.matches(pod_labels)


@dataclass(frozen=True, slots=True)
class Selection(Generic[P]):
    """The policies that apply, in merge order, and an `ERROR` outcome for each invalid one (left out)."""

    matched: tuple[P, ...]
    errors: tuple[PolicyOutcome, ...]


def select_policies(
    policies: Iterable[P], namespace_labels: Mapping[str, str] | None, pod_labels: Mapping[str, str] | None
) -> Selection[P]:
    """`policy_matches` over `policies` (the cluster policies and the object's namespace's policies), the matches
    put in `order_policies` order. A policy that raises InvalidPolicyError (a selector that does not compile, an
    unknown kind) is left out and reported in `errors`, in input order; every other policy is still judged."""
    matched: list[P] = []
    errors: list[PolicyOutcome] = []
    for policy in policies:
        try:
            if policy_matches(policy, namespace_labels, pod_labels):
                matched.append(policy)
        except InvalidPolicyError as error:
            errors.append(_error(error))
    return Selection(tuple(order_policies(matched)), tuple(errors))


@dataclass(frozen=True, slots=True)
class CompiledPolicy:
    """A policy with its selectors compiled, for callers that judge the same policies over and over (the
    admission webhook compiles each once per resourceVersion). `error` is set, and the selectors are None, when
    the policy is invalid as stored."""

    policy: Mapping[str, Any]
    cluster: bool = False
    pods: Selector | None = None
    namespaces: Selector | None = None
    error: PolicyOutcome | None = None

    def matches(self, namespace_labels: Mapping[str, str] | None, pod_labels: Mapping[str, str] | None) -> bool:
        """`policy_matches` of the policy (False for an invalid one)."""
        if self.pods is None:
            return False
        if self.cluster and (self.namespaces is None or not self.namespaces.matches(namespace_labels)):
            return False
        return self.pods.matches(pod_labels)


def compile_policy(policy: Policy) -> CompiledPolicy:
    """`policy` (a whole object) with its selectors compiled; an invalid one gets its `ERROR` outcome instead of
    raising."""
    wire = as_wire(policy)
    try:
        cluster = policy_kind(wire) == CLUSTER_KIND
        spec = spec_of(wire)
        pods = _selector(spec, "podSelector", wire)
        namespaces = _selector(spec, "namespaceSelector", wire) if cluster else None
    except InvalidPolicyError as error:
        return CompiledPolicy(wire, error=_error(error))
    return CompiledPolicy(wire, cluster, pods, namespaces)


def select_compiled(
    policies: Iterable[CompiledPolicy], namespace_labels: Mapping[str, str] | None, pod_labels: Mapping[str, str] | None
) -> Selection[Mapping[str, Any]]:
    """`select_policies` over compiled policies: the same matches in the same order, the same errors."""
    matched: list[Mapping[str, Any]] = []
    errors: list[PolicyOutcome] = []
    for compiled in policies:
        if compiled.error is not None:
            errors.append(compiled.error)
        elif compiled.matches(namespace_labels, pod_labels):
            matched.append(compiled.policy)
    return Selection(tuple(order_policies(matched)), tuple(errors))


def _error(error: InvalidPolicyError) -> PolicyOutcome:
    return PolicyOutcome(error.ref, ERROR, f"{error.path}: {error.message}" if error.path else error.message)
