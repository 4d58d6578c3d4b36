"""Which containers Ballast measures, applies to and resizes (docs/compatibility.md).

Regular containers and restartable-init sidecars (`initContainers[*].restartPolicy == Always`) are managed;
run-to-completion init containers and ephemeral containers are excluded by name — the metrics API and the
kubelet report flat container lists, so the pod spec is what tells them apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _field(obj: Any, key: str, attribute: str) -> Any:
    if isinstance(obj, Mapping):
        return obj.get(key)
    return getattr(obj, attribute, None)


def is_restartable_init(container: Any) -> bool:
    """An init container with `restartPolicy: Always` (a native sidecar)."""
    return bool(_field(container, "restartPolicy", "restart_policy") == "Always")


def _spec(pod: Any) -> Any:
    spec = _field(pod, "spec", "spec")
    return spec if spec is not None else {}


def managed_containers(pod: Any) -> list[Any]:
    """Regular containers, then restartable-init sidecars (a dict pod or a PodProjection)."""
    spec = _spec(pod)
    containers = list(_field(spec, "containers", "containers") or ())
    inits = _field(spec, "initContainers", "init_containers") or ()
    return containers + [c for c in inits if is_restartable_init(c)]
