"""One Balancer run as the controller goes through its five phases: what it learnt of each target, the placement,
the pods observed, and the phase that failed. The status and the metrics are made from it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ballast.api.balancer.v1alpha1 import Balancer, BalancerTarget
from ballast.runtime import GroupVersionKind

from .distribute import Placement
from .pods import BalancerPod
from .summary import PodSummary


class BalancerError(Exception):
    """A failed phase: printed `"<phase>: <error>"`, its phase the `Balancing` reason."""

    def __init__(self, phase: str, error: str) -> None:
        super().__init__(f"{phase}: {error}")
        self.phase = phase
        self.error = error


@dataclass
class TargetRun:
    """What one run learnt of one target (None: the run did not get that far)."""

    target: BalancerTarget
    gvk: GroupVersionKind | None = None
    scale: Mapping[str, Any] | None = None
    """The target's scale subresource, as last read or written."""
    pods: list[BalancerPod] | None = None
    summary: PodSummary | None = None
    desired: int | None = None
    conflict: str | None = None
    """The other owner, when the target is not this Balancer's alone (it is then not written)."""

    @property
    def name(self) -> str:
        return self.target.name

    @property
    def replicas(self) -> int | None:
        return None if self.scale is None else int((self.scale.get("spec") or {}).get("replicas") or 0)

    def describe(self, namespace: str) -> str:
        return f"{self.target.scale_target_ref.kind}/{namespace}/{self.target.scale_target_ref.name}"


@dataclass
class BalancerRun:
    """One run of `balancer`: its targets in spec order, the failed phase, the placement, the pods observed."""

    balancer: Balancer
    targets: list[TargetRun] = field(default_factory=list)
    error: BalancerError | None = None
    placement: Placement | None = None
    observed: int | None = None

    @classmethod
    def of(cls, balancer: Balancer) -> BalancerRun:
        return cls(balancer, [TargetRun(target) for target in balancer.spec.targets])
