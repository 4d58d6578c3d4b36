"""`balancer.x-k8s.io/v1alpha1`: Balancer."""

from .balancer import (
    BALANCING,
    PRIORITY,
    PROPORTIONAL,
    Balancer,
    BalancerPolicy,
    BalancerSpec,
    BalancerStatus,
    BalancerTarget,
    CrossVersionObjectReference,
    FallbackPolicy,
    PriorityPolicy,
    ProportionalPolicy,
)
from .groupversion import GROUP, VERSION

__all__ = [
    "BALANCING",
    "GROUP",
    "PRIORITY",
    "PROPORTIONAL",
    "VERSION",
    "Balancer",
    "BalancerPolicy",
    "BalancerSpec",
    "BalancerStatus",
    "BalancerTarget",
    "CrossVersionObjectReference",
    "FallbackPolicy",
    "PriorityPolicy",
    "ProportionalPolicy",
]
