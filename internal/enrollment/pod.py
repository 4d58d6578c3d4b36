"""The pod as the operator caches it: a typed projection that keeps what enrollment, collection, resize and the
OOM watcher read (docs/design.md, difference 16, issue 7) — identity, owners, container names and resources,
restartable-init sidecars, node, phase, the resize conditions and the containers' terminations — and nothing else,
so memory follows enrolled pods.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from ballast.runtime import Projection


class Resources(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    requests: dict[str, str] = msgspec.field(default_factory=dict)
    limits: dict[str, str] = msgspec.field(default_factory=dict)


class ContainerSpec(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    name: str = ""
    resources: Resources = Resources()
    restart_policy: str | None = None
    """On init containers, `Always` marks a restartable-init sidecar."""


class EphemeralContainer(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    name: str = ""


class PodSpec(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    containers: tuple[ContainerSpec, ...] = ()
    init_containers: tuple[ContainerSpec, ...] = ()
    ephemeral_containers: tuple[EphemeralContainer, ...] = ()
    node_name: str = ""
    restart_policy: str = ""


class PodCondition(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    type: str = ""
    status: str = ""
    reason: str = ""
    message: str = ""
    observed_generation: int = 0
    """The pod generation the kubelet's verdict (e.g. PodResizePending) is about."""


class Terminated(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    reason: str = ""
    exit_code: int = 0
    finished_at: str = ""


class ContainerState(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    terminated: Terminated | None = None


class ContainerStatus(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    """What the OOM watcher reads of a container's status: its terminations and the limits the kubelet enforces."""

    name: str = ""
    restart_count: int = 0
    state: ContainerState = ContainerState()
    last_state: ContainerState = ContainerState()
    resources: Resources | None = None


class PodStatus(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    phase: str = ""
    qos_class: str = ""
    conditions: tuple[PodCondition, ...] = ()
    container_statuses: tuple[ContainerStatus, ...] = ()
    init_container_statuses: tuple[ContainerStatus, ...] = ()


class PodProjection(Projection, frozen=True):
    """An enrolled pod: metadata (labels, annotations, owners, finalizers) plus the fields above."""

    spec: PodSpec = PodSpec()
    status: PodStatus = PodStatus()


def pod_projection(pod: Mapping[str, Any]) -> PodProjection:
    """A pod's JSON (an admission request's object, a live read) as the domain reads it: converted once, where it
    enters. Raises `msgspec.ValidationError` naming the mistyped field by its JSON path
    (`$.metadata.labels[...]`)."""
    return msgspec.convert(pod, PodProjection)
