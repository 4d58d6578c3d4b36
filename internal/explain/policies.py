"""Which policy governs the pod and why, in words: the winner by the Go operator's precedence, the other
matching policies with the reason each loses, those that do not select the pod, those skipped as invalid. The
resolution itself is `resolve_policy`'s, the operator's own; this module only sorts and words the rest."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ballast.api.ballast.v1 import ResourcePolicy, ResourcePolicySpec
from ballast.internal.policy import (
    CompiledPolicy,
    PodFacts,
    Policy,
    PolicyCache,
    Resolution,
    precedence,
    resolve_policy,
)


@dataclass(frozen=True, slots=True)
class PolicyVerdict:
    """Which policy governs the pod today and why: the winner, the other matching policies with the reason each
    loses, the ones that do not select the pod, and the ones skipped because they are invalid."""

    resolution: Resolution | None
    rivals: tuple[tuple[CompiledPolicy, str], ...] = ()
    unmatched: tuple[CompiledPolicy, ...] = ()
    invalid: tuple[CompiledPolicy, ...] = ()


def policy_label(kind: str, namespace: str, name: str) -> str:
    """`ClusterResourcePolicy default`, `ResourcePolicy shop/local`."""
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def why_loses(winner: Resolution, other: CompiledPolicy) -> str:
    """Why `other`, which also selects the pod, loses to `winner` (the Go operator's precedence)."""
    if winner.kind != other.kind:
        return "a ResourcePolicy in the pod's namespace wins over any ClusterResourcePolicy, whatever the priorities"
    if winner.priority != other.priority:
        return f"lower priority ({other.priority} < {winner.priority})"
    return f"same priority {winner.priority}; {winner.name!r} sorts before {other.name!r}"


def judge_policies(facts: PodFacts, policies: Sequence[Policy]) -> PolicyVerdict:
    """Resolve the pod's policy with `resolve_policy` and sort the other candidates into rivals (they match but
    lose, best first), unmatched and invalid."""
    cache = PolicyCache()
    resolution = resolve_policy(facts, policies, cache=cache)
    compiled = [cache.compile(policy) for policy in policies]
    candidates = [c for c in compiled if c.kind == "ClusterResourcePolicy" or c.namespace == facts.namespace]
    invalid = tuple(c for c in candidates if not c.matchable)
    matching = sorted((c for c in candidates if c.matches(facts)), key=precedence)
    rivals: list[tuple[CompiledPolicy, str]] = []
    if resolution is not None:
        winner_key = (resolution.kind, resolution.namespace, resolution.name)
        rivals = [(c, why_loses(resolution, c)) for c in matching if (c.kind, c.namespace, c.name) != winner_key]
    unmatched = tuple(c for c in candidates if c.matchable and not c.matches(facts))
    return PolicyVerdict(resolution, tuple(rivals), unmatched, invalid)


def policy_spec(policies: Sequence[Policy], kind: str, namespace: str, name: str) -> ResourcePolicySpec | None:
    """The spec (defaults filled in) of the policy `kind namespace/name` among those read; None when it is not
    among them. A profile is explained under the policy it was measured under, which may no longer win."""
    for policy in policies:
        policy_kind = "ResourcePolicy" if isinstance(policy, ResourcePolicy) else "ClusterResourcePolicy"
        policy_namespace = (policy.metadata.namespace or "") if policy_kind == "ResourcePolicy" else ""
        if (policy_kind, policy_namespace, policy.metadata.name) == (kind, namespace, name):
            return policy.spec.with_defaults()
    return None
