"""ClusterPodSchedulingPolicy: scheduling criteria injected into matching pods of matching namespaces."""

from __future__ import annotations

from pydantic import Field

from ballast.api.customresource import CustomResource
from ballast.api.meta import LabelSelector

from .groupversion import GROUP, VERSION
from .podschedulingpolicy import PodSchedulingPolicySpec


class ClusterPodSchedulingPolicySpec(PodSchedulingPolicySpec):
    """A PodSchedulingPolicySpec that also selects namespaces; both selectors must match."""

    namespace_selector: LabelSelector | None = None
    """Namespaces the policy applies to, by namespace labels; absent matches none (the policy is inert)."""


class ClusterPodSchedulingPolicy(CustomResource):
    """ClusterPodSchedulingPolicy injects scheduling criteria into the pods it selects in the namespaces it selects."""

    GROUP = GROUP
    VERSION = VERSION
    KIND = "ClusterPodSchedulingPolicy"
    PLURAL = "clusterpodschedulingpolicies"
    SCOPE = "Cluster"

    spec: ClusterPodSchedulingPolicySpec = Field(default_factory=ClusterPodSchedulingPolicySpec)
    """The criteria, the namespaces and the pods they apply to."""
