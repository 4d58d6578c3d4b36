"""Balancer: a number of replicas spread over several scalable targets (Deployments) by priority or
proportion, with fallback when pods do not start; an HPA can scale it through its `scale` subresource."""

from __future__ import annotations

from pydantic import Field

from ballast.api.customresource import CustomResource
from ballast.api.meta import Conditions, LabelSelector
from ballast.api.wire import Int32, WireModel
from ballast.internal.runtime.crdgen import ScaleSubresource

from .groupversion import GROUP, VERSION

PRIORITY = "priority"
"""`spec.policy.policyName`: fill targets in `priorities.targetOrder`."""
PROPORTIONAL = "proportional"
"""`spec.policy.policyName`: split by `proportions.targetProportions`."""
BALANCING = "Balancing"
"""The Balancer's only condition type."""


class CrossVersionObjectReference(WireModel):
    """An object by apiVersion, kind and name (autoscaling/v2), in the Balancer's namespace."""

    api_version: str | None = None
    """The referent's API version, e.g. apps/v1."""
    kind: str
    """The referent's kind, e.g. Deployment."""
    name: str
    """The referent's name."""


class BalancerTarget(WireModel):
    """One target the replicas are spread over; it must expose the scale subresource."""

    name: str = Field(min_length=1)
    """The target's name inside this Balancer (the key of priorities and proportions)."""
    scale_target_ref: CrossVersionObjectReference
    """The scalable object, e.g. a Deployment."""
    min_replicas: Int32 | None = Field(default=None, ge=0)
    """Fewest replicas the target gets; absent means 0."""
    max_replicas: Int32 | None = Field(default=None, ge=0)
    """Most replicas the target gets; absent means unlimited."""


class PriorityPolicy(WireModel):
    """Fill targets in order: each one up to its maximum before the next."""

    target_order: list[str] = Field(min_length=2)
    """Target names, highest priority first."""


class ProportionalPolicy(WireModel):
    """Split replicas in proportion to weights (highest averages, ties to the first name)."""

    target_proportions: dict[str, Int32] = Field(min_length=2)
    """Target name to weight."""


class FallbackPolicy(WireModel):
    """Place replicas elsewhere when a target's pods do not start in time."""

    startup_timeout_seconds: Int32 = Field(ge=0)
    """Seconds a pod may stay Pending before its replica is placed on another target as well."""


class BalancerPolicy(WireModel):
    """How replicas are placed."""

    policy_name: str
    """priority or proportional."""
    priorities: PriorityPolicy | None = None
    """Settings of the priority policy."""
    proportions: ProportionalPolicy | None = None
    """Settings of the proportional policy."""
    fallback: FallbackPolicy | None = None
    """When set, replicas of targets whose pods do not start are placed on other targets too."""


class BalancerSpec(WireModel):
    """The targets, the total replicas, and how they are placed."""

    targets: list[BalancerTarget] = Field(min_length=2)
    """The targets the replicas are spread over."""
    replicas: Int32 = Field(ge=0)
    """The total number of replicas to place."""
    selector: LabelSelector
    """Selects every pod of every target; a target pod it does not match is an error."""
    policy: BalancerPolicy
    """How replicas are placed."""


class BalancerStatus(WireModel):
    """What the Balancer observed at its last run."""

    replicas: Int32 | None = None
    """Pods observed over all targets (Running or Pending)."""
    selector: str | None = None
    """spec.selector in query-parameter form, for the scale subresource."""
    conditions: Conditions = None
    """Balancing: whether the last run placed the replicas."""


class Balancer(CustomResource):
    """Balancer keeps spec.replicas spread over several targets by priority or proportion."""

    GROUP = GROUP
    VERSION = VERSION
    KIND = "Balancer"
    PLURAL = "balancers"
    SCOPE = "Namespaced"
    STATUS_SUBRESOURCE = True
    SCALE_SUBRESOURCE = ScaleSubresource(
        spec_replicas_path=".spec.replicas",
        status_replicas_path=".status.replicas",
        label_selector_path=".status.selector",
    )

    spec: BalancerSpec
    """Targets, replicas and policy."""
    status: BalancerStatus | None = None
    """Written by the controller."""
