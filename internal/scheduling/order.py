"""The order in which matching policies are merged (docs/design.md, difference 27)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import TypeVar

from .policies import CLUSTER_KIND, Policy, as_wire, policy_kind, policy_name, policy_namespace

P = TypeVar("P", bound=Policy)


def _key(policy: Policy) -> tuple[int, str, str, str]:
    wire = as_wire(policy)
    cluster = policy_kind(wire) == CLUSTER_KIND
    # Name decides; namespace and then the whole object only break ties, so that the order is total.
    return (0 if cluster else 1, policy_name(wire), policy_namespace(wire), json.dumps(wire, sort_keys=True))


def order_policies(policies: Iterable[P]) -> list[P]:
    """Return `policies` in merge order: every ClusterPodSchedulingPolicy first, then every PodSchedulingPolicy,
    each group ascending by `metadata.name` (code-point order, which is Go's byte order for UTF-8).

    The order is a function of the set of policies alone: any permutation of the input gives the same list
    (ties on kind and name are broken by namespace, then by the object's content). Because merging is
    first-writer-wins, a cluster administrator's policy always wins over a tenant's. The items are returned
    as given (same objects). Raises InvalidPolicyError for an item that is not one of the two kinds.
    """
    return sorted(policies, key=_key)
