"""Balancer: a number of replicas spread over several scalable targets (Deployments) by priority or
proportion, with fallback when pods do not start; an HPA can scale it through its `scale` subresource.

The CRD refuses on its own what upstream's webhook-less CRD lets through and its controller then trips over
(docs/design.md, "Balancer"): duplicate target names (`spec.targets` is a list-map keyed by `name`), a target
whose `minReplicas` exceeds its `maxReplicas`, `minReplicas` that add up past int32, a negative proportion, a
`targetOrder` entry that names no target, and a `policyName` without its settings block. The rules' CEL needs
bounded lists for its cost estimate, hence at most `MAX_TARGETS` targets and `targetOrder` entries, `MAX_TARGETS`
proportions and names of at most `TARGET_NAME_MAX_LENGTH` characters. Like every CRD-only rule
(`ballast.api.formats`), they change the generated schema only, never the models' own validation, so a Balancer
stored before them is still read (and gets `Valid=False`, reason `StoredSpecInvalid`; docs/design.md,
difference 59).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import ConfigDict, Field

from ballast.api.customresource import CustomResource
from ballast.api.meta import ConditionList, Conditions, LabelSelector
from ballast.api.wire import INT32_MAX, CRDSchema, Int32, WireModel, list_map
from ballast.runtime.crdgen import AGE, PrinterColumn, ScaleSubresource

from .groupversion import GROUP, VERSION

PRIORITY = "priority"
"""`spec.policy.policyName`: fill targets in `priorities.targetOrder`."""
PROPORTIONAL = "proportional"
"""`spec.policy.policyName`: split by `proportions.targetProportions`."""

MAX_TARGETS = 100
"""Most targets, `targetOrder` entries and `targetProportions` a Balancer may have (the CEL rules' cost bound)."""
TARGET_NAME_MAX_LENGTH = 63
"""Longest target name (and `targetOrder` entry): a label value's length."""

# Condition types (status.conditions).
BALANCING = "Balancing"
"""Condition type: whether the last run placed the replicas (upstream's only condition)."""
REPLICAS_MISSING = "ReplicasMissing"
"""Condition type: the targets' minimums add up to more than spec.replicas."""
REPLICAS_OVERFLOW = "ReplicasOverflow"
"""Condition type: some replicas fit in no target (every target is at its maximum)."""
TARGET_CONFLICT = "TargetConflict"
"""Condition type: a target's scalable object is also a target of another Balancer (or of this one twice)."""
VALID = "Valid"
"""Condition type: whether the spec can be used as written."""
CONDITION_TYPES = (BALANCING, REPLICAS_MISSING, REPLICAS_OVERFLOW, TARGET_CONFLICT, VALID)
"""Every condition type the controller writes."""

# Condition reasons.
COMPLETED = "Completed"
"""Reason of `Balancing=True`: the run placed the replicas (message "Balancer running OK")."""
SCALE_SUBRESOURCE_POLLING = "ScaleSubresourcePolling"
"""Phase 1, and the reason of `Balancing=False` when it fails: reading each target's scale subresource."""
POD_LISTING = "PodListing"
"""Phase 2: listing each target's pods by its scale selector."""
POD_LABELS_CHECKING = "PodLabelsChecking"
"""Phase 3: checking that every target pod matches spec.selector."""
APPLYING_BALANCER_POLICY = "ApplyingBalancerPolicy"
"""Phase 4: computing the placement by the policy (upstream's constant is `ApplyingPolicyListing`)."""
REPLICA_COUNT_SETTING = "ReplicaCountSetting"
"""Phase 5: setting each target's replicas through its scale subresource."""
PHASES = (SCALE_SUBRESOURCE_POLLING, POD_LISTING, POD_LABELS_CHECKING, APPLYING_BALANCER_POLICY, REPLICA_COUNT_SETTING)
"""The five phases of a run, in order; a failure's `Balancing=False` reason is its phase."""
UNKNOWN_PROPORTION_TARGETS = "UnknownProportionTargets"
"""Reason: `targetProportions` names targets the Balancer does not have (accepted and ignored, as upstream)."""
STORED_SPEC_INVALID = "StoredSpecInvalid"
"""Reason of `Valid=False`: the spec breaks a rule of the CRD that was not there when it was stored."""

TargetName = Annotated[str, CRDSchema({"maxLength": TARGET_NAME_MAX_LENGTH})]

_MIN_NOT_ABOVE_MAX: dict[str, Any] = {
    "rule": "!has(self.minReplicas) || !has(self.maxReplicas) || self.minReplicas <= self.maxReplicas",
    "message": "minReplicas must not be greater than maxReplicas",
}
_MINIMUMS_FIT: dict[str, Any] = {
    "rule": f"self.targets.map(t, has(t.minReplicas) ? t.minReplicas : 0).sum() <= {INT32_MAX}",
    "message": f"the targets' minReplicas must not add up to more than {INT32_MAX}",
    "fieldPath": ".targets",
}
_IS_TARGET = "self.targets.exists(t, t.name == n)"
_KNOWN_TARGET_ORDER: dict[str, Any] = {
    "rule": f"!has(self.policy.priorities) || self.policy.priorities.targetOrder.all(n, {_IS_TARGET})",
    "messageExpression": (
        f"'\"' + self.policy.priorities.targetOrder.filter(n, !{_IS_TARGET})[0] + '\" is not the name of a target'"
    ),
    "fieldPath": ".policy.priorities.targetOrder",
}
_PRIORITIES_PRESENT: dict[str, Any] = {
    "rule": f"self.policyName != '{PRIORITY}' || has(self.priorities)",
    "message": f'needed when policyName is "{PRIORITY}"',
    "fieldPath": ".priorities",
    "reason": "FieldValueRequired",
}
_PROPORTIONS_PRESENT: dict[str, Any] = {
    "rule": f"self.policyName != '{PROPORTIONAL}' || has(self.proportions)",
    "message": f'needed when policyName is "{PROPORTIONAL}"',
    "fieldPath": ".proportions",
    "reason": "FieldValueRequired",
}


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

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-validations": [_MIN_NOT_ABOVE_MAX]})

    name: TargetName = Field(min_length=1)
    """The target's name inside this Balancer (the key of priorities and proportions), unique, at most 63
    characters."""
    scale_target_ref: CrossVersionObjectReference
    """The scalable object, e.g. a Deployment."""
    min_replicas: Int32 | None = Field(default=None, ge=0)
    """Fewest replicas the target gets; absent means 0."""
    max_replicas: Int32 | None = Field(default=None, ge=0)
    """Most replicas the target gets, not below minReplicas; absent means unlimited."""


class PriorityPolicy(WireModel):
    """Fill targets in order: each one up to its maximum before the next."""

    target_order: Annotated[list[TargetName], CRDSchema({"maxItems": MAX_TARGETS})] = Field(min_length=2)
    """Target names, highest priority first; each must name a target (at most 100)."""


class ProportionalPolicy(WireModel):
    """Split replicas in proportion to weights (highest averages, ties to the first name)."""

    target_proportions: Annotated[
        dict[str, Annotated[Int32, CRDSchema({"minimum": 0})]], CRDSchema({"maxProperties": MAX_TARGETS})
    ] = Field(min_length=2)
    """Target name to weight, not negative (at most 100); a name that is not a target is ignored."""


class FallbackPolicy(WireModel):
    """Place replicas elsewhere when a target's pods do not start in time."""

    startup_timeout_seconds: Int32 = Field(ge=0)
    """Seconds a pod may stay Pending before its replica is placed on another target as well."""


class BalancerPolicy(WireModel):
    """How replicas are placed."""

    model_config = ConfigDict(
        json_schema_extra={"x-kubernetes-validations": [_PRIORITIES_PRESENT, _PROPORTIONS_PRESENT]}
    )

    policy_name: str
    """priority (needs priorities) or proportional (needs proportions)."""
    priorities: PriorityPolicy | None = None
    """Settings of the priority policy."""
    proportions: ProportionalPolicy | None = None
    """Settings of the proportional policy."""
    fallback: FallbackPolicy | None = None
    """When set, replicas of targets whose pods do not start are placed on other targets too."""


class BalancerSpec(WireModel):
    """The targets, the total replicas, and how they are placed."""

    model_config = ConfigDict(json_schema_extra={"x-kubernetes-validations": [_MINIMUMS_FIT, _KNOWN_TARGET_ORDER]})

    targets: Annotated[list[BalancerTarget], list_map("name"), CRDSchema({"maxItems": MAX_TARGETS})] = Field(
        min_length=2
    )
    """The targets the replicas are spread over (2 to 100, names unique, minReplicas adding up to at most
    2147483647)."""
    replicas: Int32 = Field(ge=0)
    """The total number of replicas to place."""
    selector: LabelSelector
    """Selects every pod of every target; a target pod it does not match is an error."""
    policy: BalancerPolicy
    """How replicas are placed."""


class TargetStatus(WireModel):
    """What the last run saw of one target and what it gave it."""

    name: str
    """The target's name (spec.targets[].name)."""
    desired: Int32 | None = None
    """Replicas the policy placed on the target, fallback included."""
    placed: Int32 | None = None
    """The target's replicas as last set through its scale subresource (below or above desired when setting it
    failed)."""
    running: Int32 | None = None
    """The target's pods that are Running."""
    not_started: Int32 | None = None
    """The target's pods still Pending after fallback.startupTimeoutSeconds (0 without fallback)."""


class BalancerStatus(WireModel):
    """What the Balancer observed at its last run."""

    replicas: Int32 | None = None
    """Pods observed over all targets (Running or Pending)."""
    selector: str | None = None
    """spec.selector in query-parameter form, for the scale subresource."""
    conditions: Conditions = ConditionList()
    """Balancing, ReplicasMissing, ReplicasOverflow, TargetConflict and Valid."""
    targets: Annotated[list[TargetStatus] | None, list_map("name")] = None
    """One entry per target, by name."""


class Balancer(CustomResource):
    """Balancer keeps spec.replicas spread over several targets by priority or proportion."""

    GROUP = GROUP
    VERSION = VERSION
    KIND = "Balancer"
    PLURAL = "balancers"
    SCOPE = "Namespaced"
    PRINTER_COLUMNS = (
        PrinterColumn("Replicas", "integer", ".status.replicas"),
        PrinterColumn("Policy", "string", ".spec.policy.policyName"),
        PrinterColumn("Balancing", "string", '.status.conditions[?(@.type=="Balancing")].status'),
        AGE,
    )
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
