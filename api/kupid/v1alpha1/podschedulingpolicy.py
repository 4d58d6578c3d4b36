"""PodSchedulingPolicy: scheduling criteria injected into matching pods (and pod templates) of its namespace."""

from __future__ import annotations

from pydantic import Field

from ballast.api.core import Affinity, Toleration
from ballast.api.customresource import CustomResource
from ballast.api.meta import LabelSelector
from ballast.api.wire import WireModel

from .groupversion import GROUP, VERSION


class PodSchedulingPolicySpec(WireModel):
    """What is injected, and into which pods. Every field is optional; only the non-conflicting part of each
    is merged into a pod."""

    pod_selector: LabelSelector | None = None
    """Pods the policy applies to, by pod (template) labels; absent matches none, {} matches all."""
    node_selector: dict[str, str] | None = None
    """Merged into spec.nodeSelector (keys the pod already has are kept)."""
    node_name: str | None = None
    """Put into spec.nodeName when the pod has none."""
    affinity: Affinity | None = None
    """Merged into spec.affinity."""
    scheduler_name: str | None = None
    """Put into spec.schedulerName when the pod has none."""
    tolerations: list[Toleration] | None = None
    """Appended to spec.tolerations (exact duplicates skipped)."""


class PodSchedulingPolicy(CustomResource):
    """PodSchedulingPolicy injects scheduling criteria into the pods it selects in its namespace."""

    GROUP = GROUP
    VERSION = VERSION
    KIND = "PodSchedulingPolicy"
    PLURAL = "podschedulingpolicies"
    SCOPE = "Namespaced"

    spec: PodSchedulingPolicySpec = Field(default_factory=PodSchedulingPolicySpec)
    """The criteria and the pods they apply to."""
