"""The one place that answers "which policy governs this pod, and which profile does it feed?" — for enrollment,
admission, `ballast explain` and `make dev` alike, so a pod is never enrolled under one profile and admitted
under another.

    resolver = Resolver(manager.client, owners=OwnerReader(manager.api_reader))
    resolution = resolver.resolve(pod, namespace)
    identity = pod_identity(labels, config.spec.identity_labels, resolution)   # the profile's name and tuple
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ballast.api.ballast.v1.clusterresourcepolicy import ClusterResourcePolicy
from ballast.api.ballast.v1.resourcepolicy import ResourcePolicy
from ballast.api.wire import as_model
from ballast.internal.enrollment import PodProjection
from ballast.internal.naming import profile_name, tuple_labels
from ballast.runtime import Reader

from .compiled import Policy, PolicyCache
from .facts import OwnerLookup, PodFacts
from .resolver import Resolution, discriminator_for, resolve_policy


class Resolver:
    """Resolves pods' policies from what `reader` lists (the manager's cache-backed client, a `Client`, a fake);
    owners are read through `owners` only when some candidate policy lists `kinds` (only `kinds` looks past the
    direct controller, and each owner costs a read).

    Raises what the reads raise (a timeout, a policy that no longer fits its model): callers decide whether that
    is "not available" (admission) or a retry (enrollment).
    """

    def __init__(self, reader: Reader, *, owners: OwnerLookup | None = None, cache: PolicyCache | None = None):
        self.reader = reader
        self.owners = owners
        self.cache = cache if cache is not None else PolicyCache()

    def policies(self, namespace: str) -> list[Policy]:
        """The candidates for a pod in `namespace`: every ClusterResourcePolicy and that namespace's policies."""
        policies: list[Policy] = [as_model(ClusterResourcePolicy, p) for p in self.reader.list(ClusterResourcePolicy)]
        if namespace:
            policies += [as_model(ResourcePolicy, p) for p in self.reader.list(ResourcePolicy, namespace)]
        return policies

    def resolve(self, pod: PodProjection, namespace: str) -> Resolution | None:
        policies = self.policies(namespace)
        lookup = self.owners if any(self._lists_kinds(policy) for policy in policies) else None
        facts = PodFacts.from_pod(pod, namespace=namespace, lookup=lookup)
        return resolve_policy(facts, policies, cache=self.cache)

    def _lists_kinds(self, policy: Policy) -> bool:
        matcher = self.cache.compile(policy).matcher
        return matcher is not None and bool(matcher.kinds)


@dataclass(frozen=True, slots=True)
class PodIdentity:
    """The profile a pod feeds: its name and the identity-label tuple it is named from."""

    profile: str
    tuple_labels: dict[str, str]


def pod_identity(
    labels: Mapping[str, str], identity_labels: Sequence[str], resolution: Resolution | None
) -> PodIdentity:
    """`profile_name(tuple_labels(labels), identity_labels, discriminator)`: the one way a pod's profile is named."""
    identity = tuple_labels(labels, list(identity_labels))
    return PodIdentity(profile_name(identity, list(identity_labels), discriminator_for(resolution)), identity)
