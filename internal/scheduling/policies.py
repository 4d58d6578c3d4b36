"""What this package takes as a policy, and how one is named.

A policy is a whole PodSchedulingPolicy or ClusterPodSchedulingPolicy — a wire dict or the pydantic model of
`ballast.api.kupid.v1alpha1` — or, where only its criteria matter (`merge_policies`), a bare spec as a wire
dict. A mapping is a whole object when it has a `kind`; a spec never has one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ballast.api.kupid.v1alpha1 import ClusterPodSchedulingPolicy, PodSchedulingPolicy

from .targets import ENFORCE_ANNOTATION

CLUSTER_KIND = ClusterPodSchedulingPolicy.KIND
NAMESPACED_KIND = PodSchedulingPolicy.KIND
KINDS = (CLUSTER_KIND, NAMESPACED_KIND)

Policy = Mapping[str, Any] | PodSchedulingPolicy | ClusterPodSchedulingPolicy
"""A whole policy object (wire dict or model), or for `merge_policies` also a bare spec (wire dict)."""


class InvalidPolicyError(ValueError):
    """A policy that cannot be used as stored (a selector that does not compile, a malformed term, an unknown
    kind). `ref` names the policy, `path` the field in it (`spec.podSelector.matchExpressions[0]`)."""

    def __init__(self, ref: str, path: str, message: str) -> None:
        super().__init__(f"{ref}: {path}: {message}" if path else f"{ref}: {message}")
        self.ref = ref
        self.path = path
        self.message = message


def as_wire(policy: Policy) -> Mapping[str, Any]:
    """`policy` as a wire mapping: models are converted with `to_wire()`, mappings are returned as they are."""
    if isinstance(policy, PodSchedulingPolicy | ClusterPodSchedulingPolicy):
        return policy.to_wire()
    return policy


def is_object(wire: Mapping[str, Any]) -> bool:
    """Whether `wire` is a whole object (it has a `kind`) rather than a bare spec."""
    return "kind" in wire


def _metadata(wire: Mapping[str, Any]) -> Mapping[str, Any]:
    metadata = wire.get("metadata")
    return metadata if isinstance(metadata, Mapping) else {}


def policy_name(wire: Mapping[str, Any]) -> str:
    """`metadata.name`, or "" when there is none."""
    return str(_metadata(wire).get("name") or "")


def policy_namespace(wire: Mapping[str, Any]) -> str:
    """`metadata.namespace`, or "" when there is none (always for the cluster kind)."""
    return str(_metadata(wire).get("namespace") or "")


def policy_ref(policy: Policy) -> str:
    """`ClusterPodSchedulingPolicy/etcd` or `PodSchedulingPolicy/team-a/spot`: the form the pod annotation and
    the events use. Raises InvalidPolicyError for a mapping whose kind is neither."""
    wire = as_wire(policy)
    kind = policy_kind(wire)
    namespace = policy_namespace(wire) if kind == NAMESPACED_KIND else ""
    return "/".join(part for part in (kind, namespace, policy_name(wire)) if part)


def policy_kind(wire: Mapping[str, Any]) -> str:
    """The kind of a whole object; raises InvalidPolicyError unless it is one of `KINDS`."""
    kind = wire.get("kind")
    if kind not in KINDS:
        ref = "/".join(str(part) for part in (kind, policy_name(wire)) if part) or "policy"
        raise InvalidPolicyError(ref, "kind", f"{kind!r} is neither {CLUSTER_KIND} nor {NAMESPACED_KIND}")
    return str(kind)


def spec_of(wire: Mapping[str, Any]) -> Mapping[str, Any]:
    """The spec of a whole object (`{}` when absent), or `wire` itself when it is a bare spec.

    Raises InvalidPolicyError when an object's spec is not a mapping."""
    if not is_object(wire):
        return wire
    spec = wire.get("spec")
    if spec is None:
        return {}
    if not isinstance(spec, Mapping):
        raise InvalidPolicyError(policy_ref(wire), "spec", "is not an object")
    return spec


def is_enforced(policy: Policy) -> bool:
    """Whether the policy carries `ballast.tightlinesoftware.com/enforce: "true"` (`targets.ENFORCE_ANNOTATION`)."""
    annotations = _metadata(as_wire(policy)).get("annotations")
    return isinstance(annotations, Mapping) and annotations.get(ENFORCE_ANNOTATION) == "true"
