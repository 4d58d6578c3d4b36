"""Every kind of `ballast.api` (`KINDS`), and their registration in a runtime Scheme, so clients read and write
them as models. `ballast.internal.manifests.ballast_crds` renders the CRD of each."""

from __future__ import annotations

from ballast.runtime import GroupVersionKind, Scheme

from .balancer.v1alpha1 import Balancer
from .ballast.v1 import (
    BallastConfig,
    ClusterResourcePolicy,
    ConsolidationReport,
    MetricsSource,
    ResourcePolicy,
    WorkloadProfile,
)
from .customresource import CustomResource
from .kupid.v1alpha1 import ClusterPodSchedulingPolicy, PodSchedulingPolicy

KINDS: tuple[type[CustomResource], ...] = (
    BallastConfig,
    ClusterResourcePolicy,
    MetricsSource,
    ResourcePolicy,
    WorkloadProfile,
    ClusterPodSchedulingPolicy,
    PodSchedulingPolicy,
    Balancer,
    ConsolidationReport,
)
"""Every kind that has a CRD, in a fixed order."""


def add_to_scheme(scheme: Scheme) -> Scheme:
    """Register every kind (controller-runtime's `AddToScheme`); returns the scheme for chaining."""
    for kind in KINDS:
        scheme.register(GroupVersionKind(kind.GROUP, kind.VERSION, kind.KIND), kind)
    return scheme
