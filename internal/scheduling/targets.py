"""Which objects carry a pod spec that policies are merged into, and where (anchor-free restatement of kupid's
processors, narrowed: no ReplicaSets, Jobs and Pods on CREATE only, CronJobs at `batch/v1`).

    target = target_for("apps", "Deployment")
    labels, spec = pod_template(deployment, target)      # template labels, template pod spec
    updated = with_pod_spec(deployment, target, merged)  # a copy with the merged spec in place
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ballast.runtime.objects import thaw

POLICIES_ANNOTATION = "ballast.tightlinesoftware.com/scheduling-policies"
"""On an admitted Pod for which at least one policy matched: the matched policies in merge order, comma-separated
(`ClusterPodSchedulingPolicy/etcd,PodSchedulingPolicy/team-a/spot`). Never on templates (it would roll them)."""
ENFORCE_ANNOTATION = "ballast.tightlinesoftware.com/enforce"
"""`"true"` on a policy: an object that cannot get all of it is denied instead of admitted with what fits."""
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"


@dataclass(frozen=True, slots=True)
class Target:
    """A kind whose pod spec policies are merged into.

    `template` is the path to the pod template inside the object (`()` for a Pod: the object itself holds
    `metadata.labels` and `spec`); `on_update` says whether an UPDATE is mutated (only when the incoming template
    differs from the old object's) — never for Pods and Jobs, whose scheduling fields and template are immutable."""

    group: str
    version: str
    kind: str
    resource: str
    template: tuple[str, ...]
    on_update: bool

    @property
    def spec_path(self) -> tuple[str, ...]:
        """Path to the pod spec in the object."""
        return (*self.template, "spec")

    @property
    def labels_path(self) -> tuple[str, ...]:
        """Path to the labels the policies' `podSelector` reads (pod labels, or the template's)."""
        return (*self.template, "metadata", "labels")

    @property
    def is_pod(self) -> bool:
        return not self.template


_TEMPLATE = ("spec", "template")
TARGETS: tuple[Target, ...] = (
    Target("", "v1", "Pod", "pods", (), on_update=False),
    Target("", "v1", "ReplicationController", "replicationcontrollers", _TEMPLATE, on_update=True),
    Target("apps", "v1", "Deployment", "deployments", _TEMPLATE, on_update=True),
    Target("apps", "v1", "StatefulSet", "statefulsets", _TEMPLATE, on_update=True),
    Target("apps", "v1", "DaemonSet", "daemonsets", _TEMPLATE, on_update=True),
    Target("batch", "v1", "Job", "jobs", _TEMPLATE, on_update=False),
    Target("batch", "v1", "CronJob", "cronjobs", ("spec", "jobTemplate", "spec", "template"), on_update=True),
)
"""Every kind the scheduling webhook is registered for. No ReplicaSets: one whose template differs from its
Deployment's makes the Deployment controller create another, without end; their pods are covered at Pod CREATE."""

_BY_KIND = {(target.group, target.kind): target for target in TARGETS}


def target_for(group: str, kind: str) -> Target | None:
    """The target for an object of `group` (`""` for core) and `kind`, or None when policies do not apply."""
    return _BY_KIND.get((group, kind))


def _at(obj: Mapping[str, Any], path: tuple[str, ...]) -> Any:
    value: Any = obj
    for part in path:
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def pod_template(obj: Mapping[str, Any], target: Target) -> tuple[dict[str, str], dict[str, Any]]:
    """The labels the policies select on and the pod spec they merge into (`{}` for either when absent; a
    ReplicationController may have no template at all)."""
    labels = _at(obj, target.labels_path)
    spec = _at(obj, target.spec_path)
    return (dict(labels) if isinstance(labels, Mapping) else {}), (dict(spec) if isinstance(spec, Mapping) else {})


def template_of(obj: Mapping[str, Any] | None, target: Target) -> Any:
    """The whole pod template (for a Pod, its spec) as stored, for comparing an UPDATE with its old object."""
    return _at(obj or {}, target.template or ("spec",))


def with_pod_spec(obj: Mapping[str, Any], target: Target, spec: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of `obj` with `spec` at the target's pod spec path (intermediate objects created)."""
    result: dict[str, Any] = thaw(dict(obj))
    node = result
    for part in target.spec_path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[target.spec_path[-1]] = thaw(dict(spec))
    return result


def sharing_pod_spec(
    obj: dict[str, Any], target: Target, fields: Mapping[str, Any], annotations: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """`obj` with `fields` set in its pod spec (and `annotations` added to its own metadata), copying only the
    dicts on the way there: everything else is shared with `obj`. For computing a patch against `obj`
    (`admission.patched` skips shared subtrees at once), never for editing: the shared parts are `obj`'s."""
    result = dict(obj)
    node = result
    for part in target.spec_path:
        child = node.get(part)
        node[part] = dict(child) if isinstance(child, dict) else {}
        node = node[part]
    node.update(fields)
    if annotations:
        metadata = result["metadata"] = dict(result.get("metadata") or {})
        current = metadata.get("annotations")
        metadata["annotations"] = {**(current if isinstance(current, dict) else {}), **annotations}
    return result


def is_daemonset_pod(obj: Mapping[str, Any]) -> bool:
    """Whether a Pod's controller is a DaemonSet (it is placed by its template; mutating it alone would stall the
    rollout)."""
    for owner in _at(obj, ("metadata", "ownerReferences")) or ():
        if isinstance(owner, Mapping) and owner.get("controller") and owner.get("kind") == "DaemonSet":
            return True
    return False


def is_mirror_pod(obj: Mapping[str, Any]) -> bool:
    """Whether a Pod is a kubelet's mirror of a static pod (the API server refuses changes to it)."""
    annotations = _at(obj, ("metadata", "annotations"))
    return isinstance(annotations, Mapping) and MIRROR_POD_ANNOTATION in annotations
