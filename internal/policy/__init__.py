"""Policy resolution (docs/compatibility.md): which ClusterResourcePolicy or ResourcePolicy governs a pod, with
per-policy validity (docs/design.md, differences 8, 9 and 18).

    pod = PodFacts.from_pod(pod_json, namespace=request_namespace, lookup=owner_from_cache)
    resolution = resolve_policy(pod, [*cluster_policies, *namespace_policies])
    disc = discriminator_for(resolution)          # "default-a9696153", or "nopolicy"
    spec = resolution.spec if resolution else None  # defaults filled in, a private copy

    validate_policy(spec_json)  # ['spec.selector.namespaces.include[1]: invalid regex "/(/": missing ): (']

Selectors are compiled once per policy version (RE2 patterns, label selector) and cached; a policy whose
regex or label selector does not compile is skipped, never failing resolution for the others.
"""

from .compiled import DEFAULT_CACHE_ENTRIES, CompiledPolicy, Policy, PolicyCache, PolicyMemo, compile_policy
from .facts import MAX_OWNER_DEPTH, OwnerLookup, OwnerReferenceError, PodFacts, controller_reference, owner_kinds
from .owners import OwnerReader
from .pattern import Pattern, PatternError, compile_pattern, is_regex
from .pods import PodIdentity, Resolver, pod_identity
from .problems import PolicyProblem
from .resolver import Resolution, discriminator_for, policy_key_for, precedence, resolve_policy
from .selector import PolicyMatcher, compile_selector
from .settings import settings_problems
from .validation import policy_problems, validate_policy

__all__ = [
    "DEFAULT_CACHE_ENTRIES",
    "MAX_OWNER_DEPTH",
    "CompiledPolicy",
    "OwnerLookup",
    "OwnerReader",
    "OwnerReferenceError",
    "Pattern",
    "PatternError",
    "PodFacts",
    "PodIdentity",
    "Policy",
    "PolicyCache",
    "PolicyMatcher",
    "PolicyMemo",
    "PolicyProblem",
    "Resolution",
    "Resolver",
    "compile_pattern",
    "compile_policy",
    "compile_selector",
    "controller_reference",
    "discriminator_for",
    "is_regex",
    "owner_kinds",
    "pod_identity",
    "policy_key_for",
    "policy_problems",
    "precedence",
    "resolve_policy",
    "settings_problems",
    "validate_policy",
]
