"""ClusterResourcePolicy: a cluster-wide right-sizing policy (loses to a ResourcePolicy in the pod's namespace)."""

from __future__ import annotations

from pydantic import Field

from ballast.api.customresource import CustomResource
from ballast.runtime.crdgen import AGE, PrinterColumn

from .groupversion import GROUP, VERSION
from .policyspec import ResourcePolicySpec, ResourcePolicyStatus

ClusterResourcePolicySpec = ResourcePolicySpec
ClusterResourcePolicyStatus = ResourcePolicyStatus

POLICY_COLUMNS = (
    PrinterColumn("Priority", "integer", ".spec.priority"),
    PrinterColumn("Discriminator", "string", ".status.profileDiscriminator"),
    AGE,
)
"""The `kubectl get` columns of both policy kinds."""


class ClusterResourcePolicy(CustomResource):
    """ClusterResourcePolicy says how pods it selects in any namespace are measured, sized and resized."""

    GROUP = GROUP
    VERSION = VERSION
    KIND = "ClusterResourcePolicy"
    PLURAL = "clusterresourcepolicies"
    SCOPE = "Cluster"
    SHORT_NAMES = ("crp",)
    PRINTER_COLUMNS = POLICY_COLUMNS
    STATUS_SUBRESOURCE = True

    spec: ResourcePolicySpec = Field(default_factory=ResourcePolicySpec)
    """The policy."""
    status: ResourcePolicyStatus | None = None
    """Written by the operator."""
