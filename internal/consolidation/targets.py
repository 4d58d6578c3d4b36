"""What a simulation places pods on: an existing node or one it decides to launch, its topology domains, and
whether a pod's nodeSelector and required node affinity accept a node's labels."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .catalogue import Offering
from .cluster import Pod, Resources
from .pools import CAPACITY_TYPE_LABEL, HOSTNAME_LABEL, INSTANCE_TYPE_LABEL, ZONE_LABEL

UNKNOWN_DOMAIN = object()
"""A topology domain that depends on the offering a new node is launched as."""


def matches_node(pod: Pod, labels: Mapping[str, str]) -> bool:
    """Whether `pod`'s nodeSelector and required node affinity accept a node with `labels`."""
    for key, value in pod.node_selector.items():
        if labels.get(key) != value:
            return False
    return pod.node_terms is None or any(term.matches(labels) for term in pod.node_terms)


@dataclass(eq=False, slots=True)
class Target:
    """A node during one simulation: existing (`offerings` None) or to be launched. An existing node's target is
    shared by every simulation of its world and never changes; what a simulation adds is kept by its placer."""

    name: str
    labels: Mapping[str, str]
    taints: tuple[Mapping[str, Any], ...]
    pods: tuple[Pod, ...] = ()  # existing nodes: what runs there before the simulation
    ready: bool = True
    pool: str = ""
    requests: Resources = field(default_factory=Resources)  # new nodes: daemons and pods so far
    offerings: list[Offering] | None = None
    accepts: dict[tuple[object, tuple[str, str, str | None]], bool] = field(default_factory=dict)  # new nodes

    def domain(self, key: str) -> object:
        if self.offerings is not None and key in (INSTANCE_TYPE_LABEL, CAPACITY_TYPE_LABEL, ZONE_LABEL):
            values = {offering_labels(o).get(key) for o in self.offerings}
            return values.pop() if len(values) == 1 else UNKNOWN_DOMAIN
        if key == HOSTNAME_LABEL:
            return self.labels.get(key, self.name)  # Karpenter's HostName(): the label, else the node's name
        return self.labels.get(key)


def offering_labels(offering: Offering) -> dict[str, str]:
    labels = {INSTANCE_TYPE_LABEL: offering.instance_type, CAPACITY_TYPE_LABEL: offering.capacity_type}
    if offering.zone is not None:
        labels[ZONE_LABEL] = offering.zone
    return labels
