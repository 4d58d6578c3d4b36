"""A pod's QoS class computed from its spec, as the API server computes `status.qosClass`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from ballast.internal.quantity import parse_quantity

BEST_EFFORT = "BestEffort"
BURSTABLE = "Burstable"
GUARANTEED = "Guaranteed"
_QOS_RESOURCES = ("cpu", "memory")


def _mapping(value: object, path: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"pod {path} must be an object, got {type(value).__name__}")
    return value


def _positive(resources: Mapping[str, Any], path: str) -> dict[str, Decimal]:
    """The cpu and memory entries of a requests/limits map that are > 0 (zero entries do not count for QoS)."""
    found: dict[str, Decimal] = {}
    for name in _QOS_RESOURCES:
        raw = resources.get(name)
        if raw is None:
            continue
        # Manifests loaded from YAML may carry plain numbers (`cpu: 1`); they are quantities like strings.
        if isinstance(raw, bool) or not isinstance(raw, str | int | float):
            raise ValueError(f"pod {path}.{name} must be a quantity, got {raw!r}")
        value = parse_quantity(raw if isinstance(raw, str) else str(raw))
        if value > 0:
            found[name] = value
    return found


def _add(total: dict[str, Decimal], part: Mapping[str, Decimal]) -> None:
    for name, value in part.items():
        total[name] = total.get(name, Decimal(0)) + value


def pod_qos(pod: Mapping[str, Any]) -> str:
    """Return the QoS class (`BestEffort`, `Burstable` or `Guaranteed`) of a pod dict as the API returns it.

    Only cpu and memory count, and only values > 0. With pod-level `spec.resources` those decide; otherwise
    init and regular containers do (ephemeral containers have no resources). BestEffort: no request or limit at
    all; Guaranteed: every container (or the pod) limits both cpu and memory, and the summed requests equal the
    summed limits; Burstable otherwise. Raises ValueError naming the field when the pod is malformed, and
    QuantityError for a value that is not a quantity.
    """
    spec = _mapping(_mapping(pod, "").get("spec"), "spec")
    if not spec:
        raise ValueError("pod has no spec")
    requests: dict[str, Decimal] = {}
    limits: dict[str, Decimal] = {}
    guaranteed = True
    pod_resources = _mapping(spec.get("resources"), "spec.resources")
    pod_requests = _positive(_mapping(pod_resources.get("requests"), "spec.resources.requests"), "spec.resources")
    pod_limits = _positive(_mapping(pod_resources.get("limits"), "spec.resources.limits"), "spec.resources")
    if pod_requests or pod_limits:
        requests, limits = pod_requests, pod_limits
        guaranteed = len(pod_limits) == len(_QOS_RESOURCES)
    else:
        for group in ("initContainers", "containers"):
            containers = spec.get(group) or []
            if not isinstance(containers, Sequence) or isinstance(containers, str):
                raise ValueError(f"pod spec.{group} must be a list")
            for index, container in enumerate(containers):
                path = f"spec.{group}[{index}].resources"
                resources = _mapping(_mapping(container, f"spec.{group}[{index}]").get("resources"), path)
                _add(requests, _positive(_mapping(resources.get("requests"), f"{path}.requests"), f"{path}.requests"))
                container_limits = _positive(_mapping(resources.get("limits"), f"{path}.limits"), f"{path}.limits")
                _add(limits, container_limits)
                if len(container_limits) != len(_QOS_RESOURCES):
                    guaranteed = False
    if not requests and not limits:
        return BEST_EFFORT
    if guaranteed and requests == limits:
        return GUARANTEED
    return BURSTABLE
