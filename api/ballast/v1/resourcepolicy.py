"""ResourcePolicy: a right-sizing policy for pods of its own namespace (beats every ClusterResourcePolicy there)."""

from __future__ import annotations

from pydantic import Field

from ballast.api.customresource import CustomResource

from .clusterresourcepolicy import POLICY_COLUMNS
from .groupversion import GROUP, VERSION
from .policyspec import ResourcePolicySpec, ResourcePolicyStatus


class ResourcePolicy(CustomResource):
    """ResourcePolicy says how pods it selects in its namespace are measured, sized and resized."""

    GROUP = GROUP
    VERSION = VERSION
    KIND = "ResourcePolicy"
    PLURAL = "resourcepolicies"
    SCOPE = "Namespaced"
    SHORT_NAMES = ("rp",)
    PRINTER_COLUMNS = POLICY_COLUMNS
    STATUS_SUBRESOURCE = True

    spec: ResourcePolicySpec = Field(default_factory=ResourcePolicySpec)
    """The policy."""
    status: ResourcePolicyStatus | None = None
    """Written by the operator."""
