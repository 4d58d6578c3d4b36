"""Scheduling policies (kupid) as pure code: which PodSchedulingPolicies and ClusterPodSchedulingPolicies apply to
an object, in which order, and what merging them into its pod spec gives (kupid's rules; docs/design.md,
differences 27–31).

    selection = select_policies([*cluster_policies, *namespace_policies], namespace_labels, template_labels)
    result = merge_detailed(pod_spec, selection.matched)   # a new spec; the inputs are untouched
    result.spec                                             # what to patch in
    [(o.ref, o.result) for o in result.outcomes]            # applied / unchanged / conflict / error

    merge_policies(pod_spec, policy_specs)                  # the merged spec alone
    policy_matches(policy, namespace_labels, pod_labels)    # one policy; InvalidPolicyError if it is broken
    order_policies(policies)                                # cluster policies, then namespaced, each by name
    validate_scheduling_policy(policy)                      # write-time problems, `path: message` (the webhook's)
    PolicySets(compile_policy).get(namespace, listed)       # compiled once, rebuilt when a listed policy changes

Policies and specs are wire dicts (or the `ballast.api.kupid.v1alpha1` models); nothing here reads the cluster.
"""

from __future__ import annotations

from .matching import CompiledPolicy, Selection, compile_policy, policy_matches, select_compiled, select_policies
from .merge import DEFAULT_SCHEDULER, SCHEDULING_FIELDS, merge_detailed, merge_policies, policy_problems
from .order import order_policies
from .outcome import APPLIED, CONFLICT, ERROR, UNCHANGED, FieldConflict, MergeResult, PolicyOutcome, Result, denies
from .policies import CLUSTER_KIND, NAMESPACED_KIND, InvalidPolicyError, Policy, is_enforced, policy_ref
from .policyset import PolicySet, PolicySets
from .targets import (
    ENFORCE_ANNOTATION,
    POLICIES_ANNOTATION,
    TARGETS,
    Target,
    is_daemonset_pod,
    is_mirror_pod,
    pod_template,
    sharing_pod_spec,
    target_for,
    template_of,
    with_pod_spec,
)
from .terms import contradiction, product, reduce_terms
from .validation import validate_scheduling_policy

__all__ = [
    "APPLIED",
    "CLUSTER_KIND",
    "CONFLICT",
    "DEFAULT_SCHEDULER",
    "ENFORCE_ANNOTATION",
    "ERROR",
    "NAMESPACED_KIND",
    "POLICIES_ANNOTATION",
    "SCHEDULING_FIELDS",
    "TARGETS",
    "UNCHANGED",
    "CompiledPolicy",
    "FieldConflict",
    "InvalidPolicyError",
    "MergeResult",
    "Policy",
    "PolicyOutcome",
    "PolicySet",
    "PolicySets",
    "Result",
    "Selection",
    "Target",
    "compile_policy",
    "contradiction",
    "denies",
    "is_daemonset_pod",
    "is_enforced",
    "is_mirror_pod",
    "merge_detailed",
    "merge_policies",
    "order_policies",
    "pod_template",
    "policy_matches",
    "policy_problems",
    "policy_ref",
    "product",
    "reduce_terms",
    "select_compiled",
    "select_policies",
    "sharing_pod_spec",
    "target_for",
    "template_of",
    "validate_scheduling_policy",
    "with_pod_spec",
]
