"""`kupid.gardener.cloud/v1alpha1`: PodSchedulingPolicy and ClusterPodSchedulingPolicy."""

from .clusterpodschedulingpolicy import ClusterPodSchedulingPolicy, ClusterPodSchedulingPolicySpec
from .groupversion import GROUP, VERSION
from .podschedulingpolicy import PodSchedulingPolicy, PodSchedulingPolicySpec

__all__ = [
    "GROUP",
    "VERSION",
    "ClusterPodSchedulingPolicy",
    "ClusterPodSchedulingPolicySpec",
    "PodSchedulingPolicy",
    "PodSchedulingPolicySpec",
]
