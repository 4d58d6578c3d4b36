"""Which of a Balancer's targets another controller also scales: an HPA whose `scaleTargetRef` names the target's
object, another Balancer claiming it, or a second target of the same Balancer. Two controllers writing one
`replicas` field fight, so such a target is not written. Objects are compared by group, kind and name (not the
version)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ballast.api.balancer.v1alpha1 import Balancer, BalancerTarget

ObjectKey = tuple[str, str, str]
"""(group, kind, name) of a scaled object."""


def ref_key(ref: Mapping[str, Any] | None) -> ObjectKey | None:
    """The object a `scaleTargetRef` (wire form) names; None when it names none."""
    if not isinstance(ref, Mapping) or not ref:
        return None
    return str(ref.get("apiVersion") or "").rpartition("/")[0], str(ref.get("kind") or ""), str(ref.get("name") or "")


def target_key(target: BalancerTarget) -> ObjectKey:
    ref = target.scale_target_ref
    return (ref.api_version or "").rpartition("/")[0], ref.kind, ref.name


def targets_of(balancer: Balancer) -> list[ObjectKey]:
    """The objects a Balancer's targets scale, in target order."""
    return [target_key(target) for target in balancer.spec.targets]


def hpa_target(hpa: Mapping[str, Any]) -> ObjectKey | None:
    """The object an HPA (wire form) scales."""
    return ref_key((hpa.get("spec") or {}).get("scaleTargetRef"))


def conflicts(
    balancer: Balancer, hpas: Iterable[tuple[str, Mapping[str, Any]]], others: Iterable[Balancer]
) -> dict[str, str]:
    """Target name → the other owners of its object, for the targets that have some. `hpas` are (name, HPA) of
    the namespace, `others` its other Balancers, both in the order the owners are to be named."""
    hpa_keys = [(name, hpa_target(hpa)) for name, hpa in hpas]
    other_keys = [(other.metadata.name, t.name, target_key(t)) for other in others for t in other.spec.targets]
    found: dict[str, str] = {}
    for target in balancer.spec.targets:
        ref = target.scale_target_ref
        if not (ref.api_version or "").rpartition("/")[2] or not ref.kind:
            continue  # no valid apiVersion/kind: the run's first phase reports it
        key = target_key(target)
        owners = [f"HorizontalPodAutoscaler {name}" for name, scaled in hpa_keys if scaled == key]
        owners += [f"Balancer {other} (target {name})" for other, name, scaled in other_keys if scaled == key]
        owners += [f"target {t.name} of this Balancer" for t in balancer.spec.targets
                   if t is not target and target_key(t) == key]  # fmt: skip
        if owners:
            found[target.name] = ", ".join(owners)
    return found
