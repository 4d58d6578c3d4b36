"""The `core/v1` scheduling types the kupid policies carry: Affinity and Toleration, with the list and struct
markers of the Kubernetes API so server-side apply treats them the same way, and the enums of their operators and
effects (kupid is their only user; the label selectors inside pod affinity terms are `meta.LabelSelector`, shared
with other kinds, and keep a free-form operator)."""

from __future__ import annotations

from typing import Annotated

from pydantic import ConfigDict

from .formats import enum
from .meta import LabelSelector
from .wire import ATOMIC_LIST, ATOMIC_STRUCT, Int32, Int64, WireModel

NODE_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
TOLERATION_OPERATORS = ("Equal", "Exists", "")
"""`""` means Equal."""
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute", "")
"""`""` matches every effect."""


class NodeSelectorRequirement(WireModel):
    """A requirement on node labels or fields: key, operator (In, NotIn, Exists, DoesNotExist, Gt, Lt), values."""

    key: str
    """The label key (or field name) the requirement applies to."""
    operator: Annotated[str, enum(*NODE_SELECTOR_OPERATORS)]
    """In, NotIn, Exists, DoesNotExist, Gt or Lt."""
    values: Annotated[list[str] | None, ATOMIC_LIST] = None
    """Values for In, NotIn (several), Gt and Lt (one integer); empty for Exists and DoesNotExist."""


class NodeSelectorTerm(WireModel):
    """Requirements ANDed together; terms of a NodeSelector are ORed."""

    model_config = ConfigDict(json_schema_extra=ATOMIC_STRUCT)

    match_expressions: Annotated[list[NodeSelectorRequirement] | None, ATOMIC_LIST] = None
    """Requirements on node labels."""
    match_fields: Annotated[list[NodeSelectorRequirement] | None, ATOMIC_LIST] = None
    """Requirements on node fields."""


class NodeSelector(WireModel):
    """A node matches when it matches any of the terms."""

    model_config = ConfigDict(json_schema_extra=ATOMIC_STRUCT)

    node_selector_terms: Annotated[list[NodeSelectorTerm], ATOMIC_LIST]
    """The terms, ORed."""


class PreferredSchedulingTerm(WireModel):
    """A weighted node preference."""

    weight: Int32
    """Weight 1-100 added to the score of nodes that match."""
    preference: NodeSelectorTerm
    """The nodes preferred."""


class NodeAffinity(WireModel):
    """Node affinity rules."""

    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    """Nodes a pod must be scheduled on."""
    preferred_during_scheduling_ignored_during_execution: Annotated[
        list[PreferredSchedulingTerm] | None, ATOMIC_LIST
    ] = None
    """Nodes a pod should preferably be scheduled on."""


class PodAffinityTerm(WireModel):
    """Pods (by label, in some namespaces) that must or must not share a topology domain with this pod."""

    label_selector: LabelSelector | None = None
    """The pods this term refers to."""
    namespace_selector: LabelSelector | None = None
    """Namespaces of those pods, by namespace label."""
    namespaces: Annotated[list[str] | None, ATOMIC_LIST] = None
    """Namespaces of those pods, by name."""
    topology_key: str
    """The node label defining the topology domain, e.g. kubernetes.io/hostname."""
    match_label_keys: Annotated[list[str] | None, ATOMIC_LIST] = None
    """Pod label keys whose values, taken from the incoming pod, are added to labelSelector with In."""
    mismatch_label_keys: Annotated[list[str] | None, ATOMIC_LIST] = None
    """Pod label keys whose values, taken from the incoming pod, are added to labelSelector with NotIn."""


class WeightedPodAffinityTerm(WireModel):
    """A weighted pod (anti-)affinity preference."""

    weight: Int32
    """Weight 1-100 added to the score of nodes that satisfy the term."""
    pod_affinity_term: PodAffinityTerm
    """The term."""


class PodAffinity(WireModel):
    """Pod affinity (or anti-affinity) rules."""

    required_during_scheduling_ignored_during_execution: Annotated[list[PodAffinityTerm] | None, ATOMIC_LIST] = None
    """Terms that must hold."""
    preferred_during_scheduling_ignored_during_execution: Annotated[
        list[WeightedPodAffinityTerm] | None, ATOMIC_LIST
    ] = None
    """Terms that should preferably hold."""


PodAntiAffinity = PodAffinity
"""Pod anti-affinity has the same shape as pod affinity."""


class Affinity(WireModel):
    """A pod's affinity: node affinity, pod affinity and pod anti-affinity."""

    node_affinity: NodeAffinity | None = None
    """Node affinity rules."""
    pod_affinity: PodAffinity | None = None
    """Pods to be co-located with."""
    pod_anti_affinity: PodAntiAffinity | None = None
    """Pods to be kept apart from."""


class Toleration(WireModel):
    """A taint a pod tolerates."""

    key: str | None = None
    """The taint key; empty with operator Exists matches every taint."""
    operator: Annotated[str | None, enum(*TOLERATION_OPERATORS)] = None
    """Exists or Equal (the default)."""
    value: str | None = None
    """The taint value for Equal; empty for Exists."""
    effect: Annotated[str | None, enum(*TAINT_EFFECTS)] = None
    """NoSchedule, PreferNoSchedule or NoExecute; empty matches all effects."""
    toleration_seconds: Int64 | None = None
    """For NoExecute: how long the pod stays bound after the taint appears."""
