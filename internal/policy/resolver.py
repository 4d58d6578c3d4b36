"""Policy resolution: the one policy that governs a pod, by the Go operator's precedence (docs/compatibility.md)."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from ballast.api.ballast.v1.policyspec import ResourcePolicySpec
from ballast.api.ballast.v1.workloadprofile import PolicyKind, PolicyRef
from ballast.internal.naming import NO_POLICY, RESOURCE_POLICY, policy_discriminator, policy_key

from .compiled import CompiledPolicy, Policy, PolicyCache
from .facts import PodFacts

_log = logging.getLogger(__name__)

_SHARED_CACHE = PolicyCache()


def precedence(policy: CompiledPolicy) -> tuple[int, int, str]:
    """Sort key of matching policies, first wins: a ResourcePolicy before any ClusterResourcePolicy (whatever
    the priorities), then higher priority, then name ascending (byte order)."""
    return (0 if policy.kind == RESOURCE_POLICY else 1, -policy.priority, policy.name)


@dataclass(frozen=True, slots=True)
class Resolution:
    """The policy that won for a pod, and its spec with the resolve-time defaults filled in.

    `namespace` is "" for a ClusterResourcePolicy. `spec` is a copy owned by this resolution (the cached
    policy is never modified). `discriminator` and `policy_key` feed `profile_name` and `measurement_hash`;
    `ref` is the `policy-ref` annotation value (`name`, or `namespace/name` for a ResourcePolicy).
    """

    kind: PolicyKind
    namespace: str
    name: str
    priority: int
    spec: ResourcePolicySpec

    @property
    def discriminator(self) -> str:
        """`policy_discriminator(kind, namespace, name)`, e.g. `default-a9696153`."""
        return policy_discriminator(self.kind, self.namespace, self.name)

    @property
    def policy_key(self) -> str:
        """`Kind/namespace/name`, e.g. `ClusterResourcePolicy//default` (the measurement hash's policy key)."""
        return policy_key(self.kind, self.namespace, self.name)

    @property
    def ref(self) -> str:
        """The `policy-ref` annotation value: `name` for a ClusterResourcePolicy, `namespace/name` otherwise."""
        return f"{self.namespace}/{self.name}" if self.namespace else self.name

    def policy_ref(self) -> PolicyRef:
        """The WorkloadProfile's `status.policyRef` for this policy."""
        return PolicyRef(kind=self.kind, namespace=self.namespace or None, name=self.name)


def discriminator_for(resolution: Resolution | None) -> str:
    """The profile-name discriminator: the winner's, or `nopolicy` when no policy matched."""
    return NO_POLICY if resolution is None else resolution.discriminator


def policy_key_for(resolution: Resolution | None) -> str:
    """The measurement hash's policy key: the winner's `Kind/namespace/name`, or "" when no policy matched."""
    return "" if resolution is None else resolution.policy_key


def resolve_policy(pod: PodFacts, policies: Iterable[Policy], *, cache: PolicyCache | None = None) -> Resolution | None:
    """Return the policy governing `pod` among `policies` (ClusterResourcePolicies and ResourcePolicies), or None.

    Candidates are every ClusterResourcePolicy and the ResourcePolicies of the pod's own namespace (others are
    ignored). A policy whose regex or label selector cannot be compiled is skipped, never failing the others
    (its problems are on `cache.compile(policy).problems`). Among the matches, `precedence` decides. Compiled
    selectors come from `cache` (a process-wide one when omitted), so resolving costs a few dictionary lookups
    and pattern matches per policy. Raises as `compile_policy` does for a policy without a name or namespace.
    """
    cache = _SHARED_CACHE if cache is None else cache
    best: CompiledPolicy | None = None
    for policy in policies:
        compiled = cache.compile(policy)
        if compiled.kind == RESOURCE_POLICY and (not pod.namespace or compiled.namespace != pod.namespace):
            continue
        if compiled.matcher is None:
            if _log.isEnabledFor(logging.DEBUG):
                _log.debug(
                    "skipping invalid policy",
                    extra={
                        "policy": f"{compiled.kind}/{compiled.namespace}/{compiled.name}",
                        "problems": compiled.messages,
                    },
                )
            continue
        if compiled.matcher.matches(pod) and (best is None or precedence(compiled) < precedence(best)):
            best = compiled
    if best is None:
        return None
    return Resolution(best.kind, best.namespace, best.name, best.priority, best.policy.spec.with_defaults())
