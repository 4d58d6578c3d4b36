"""Which containers Ballast measures, applies to and resizes (docs/compatibility.md).

Regular containers and restartable-init sidecars (`initContainers[*].restartPolicy == Always`) are managed;
run-to-completion init containers and ephemeral containers are excluded by name — the metrics API and the
kubelet report flat container lists, so the pod spec is what tells them apart.

The domain reads a pod as its `PodProjection` (`managed_containers`); a mutation or a patch is built on the
pod's JSON, whose containers `managed_container_bodies` walks by the same rule.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

from .pod import ContainerSpec, PodProjection

SIDECAR_RESTART_POLICY = "Always"
"""The `restartPolicy` that makes an init container a restartable-init sidecar."""


def is_restartable_init(container: ContainerSpec) -> bool:
    """An init container with `restartPolicy: Always` (a native sidecar)."""
    return container.restart_policy == SIDECAR_RESTART_POLICY


def managed_containers(pod: PodProjection) -> list[ContainerSpec]:
    """Regular containers, then restartable-init sidecars."""
    return [*pod.spec.containers, *(c for c in pod.spec.init_containers if is_restartable_init(c))]


def managed_container_bodies(pod: Mapping[str, Any]) -> list[tuple[str, MutableMapping[str, Any]]]:
    """The managed containers of a pod's JSON, in the same order, each with the list it is in (`containers` or
    `initContainers`) — what a mutation writes into and a patch names."""
    spec = pod.get("spec") or {}
    bodies: list[tuple[str, MutableMapping[str, Any]]] = [("containers", c) for c in spec.get("containers") or ()]
    for container in spec.get("initContainers") or ():
        if container.get("restartPolicy") == SIDECAR_RESTART_POLICY:
            bodies.append(("initContainers", container))
    return bodies
