"""A Deployment, StatefulSet or DaemonSet as enrollment reads it: template labels, replica count, update strategy,
selector, and whether its last rollout has settled."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ballast.runtime import labels as label_selectors

from .identity import template_mode

Kind = Literal["deployment", "statefulset", "daemonset"]
KINDS: tuple[Kind, ...] = ("deployment", "statefulset", "daemonset")
API_KINDS: Mapping[Kind, str] = {
    "deployment": "apps/v1/Deployment",
    "statefulset": "apps/v1/StatefulSet",
    "daemonset": "apps/v1/DaemonSet",
}
"""The client's kind reference of each workload kind."""

REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
ON_DELETE = "OnDelete"
ROLLING_UPDATE = "RollingUpdate"


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


@dataclass(frozen=True, slots=True)
class Workload:
    """What enrollment needs of one workload object (read once; re-read the object to see changes).

    `replicas` is `spec.replicas` (1 when unset) for Deployments and StatefulSets and
    `status.desiredNumberScheduled` for a DaemonSet (the nodes it runs on). `selector` is the canonical
    label-selector string of `spec.selector` ("" when it selects nothing usable).
    """

    kind: Kind
    namespace: str
    name: str
    uid: str = ""
    generation: int = 0
    template_labels: Mapping[str, str] = field(default_factory=dict)
    replicas: int = 1
    strategy: str = ROLLING_UPDATE
    paused: bool = False
    selector: str = ""
    revision: str = ""
    partition: int = 0
    update_strategy: Mapping[str, Any] = field(default_factory=dict)
    status: Mapping[str, Any] = field(default_factory=dict)

    @property
    def subject(self) -> str:
        """How records name it: `deployment web/api`."""
        return f"{self.kind} {self.namespace}/{self.name}"

    @property
    def mode(self) -> str:
        """The template's mode label, "" when not enrolled."""
        return template_mode(self.template_labels)

    @property
    def observed(self) -> bool:
        """Whether the controller has seen the latest spec (`status.observedGeneration ≥ metadata.generation`)."""
        return _int(self.status.get("observedGeneration")) >= self.generation

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> Workload:
        """Read a Deployment, StatefulSet or DaemonSet (a dict as the API returns it).

        Raises ValueError for any other kind.
        """
        kind = str(obj.get("kind") or "").lower()
        if kind not in KINDS:
            raise ValueError(f"cannot enroll a {obj.get('kind')!r}: expected a Deployment, StatefulSet or DaemonSet")
        metadata: Mapping[str, Any] = obj.get("metadata") or {}
        spec: Mapping[str, Any] = obj.get("spec") or {}
        status: Mapping[str, Any] = obj.get("status") or {}
        template_metadata: Mapping[str, Any] = (spec.get("template") or {}).get("metadata") or {}
        strategy_key = "strategy" if kind == "deployment" else "updateStrategy"
        update_strategy: Mapping[str, Any] = spec.get(strategy_key) or {}
        rolling: Mapping[str, Any] = update_strategy.get("rollingUpdate") or {}
        # A DaemonSet's "replicas" are the nodes it is scheduled on.
        replicas = _int(status.get("desiredNumberScheduled")) if kind == "daemonset" else _int(spec.get("replicas"), 1)
        return cls(
            kind=kind,
            namespace=str(metadata.get("namespace") or ""),
            name=str(metadata.get("name") or ""),
            uid=str(metadata.get("uid") or ""),
            generation=_int(metadata.get("generation")),
            template_labels=dict(template_metadata.get("labels") or {}),
            replicas=replicas,
            strategy=str(update_strategy.get("type") or ROLLING_UPDATE),
            paused=spec.get("paused") is True,
            selector=selector_string(spec.get("selector")),
            revision=str((metadata.get("annotations") or {}).get(REVISION_ANNOTATION) or ""),
            partition=_int(rolling.get("partition")),
            update_strategy=dict(update_strategy) or {"type": ROLLING_UPDATE},
            status=dict(status),
        )


def selector_string(selector: Mapping[str, Any] | None) -> str:
    """The canonical `labelSelector=` string of a `metav1.LabelSelector` — matchExpressions included — or ""
    when it is empty or invalid (an empty selector would select every pod of the namespace)."""
    try:
        return str(label_selectors.from_label_selector(selector)) if selector else ""
    except label_selectors.SelectorError:
        return ""


def settled(workload: Workload) -> bool:
    """Whether the workload's last update has finished, so enrolling it now cannot tangle with a rollout.

    Deployment: the controller saw the spec and replicas, updated and available replicas all equal spec.replicas.
    StatefulSet: seen, current revision is the update revision and every replica is ready (with OnDelete, only
    seen). DaemonSet: seen, every scheduled node runs the updated pod and none is unavailable.
    """
    status = workload.status
    if not workload.observed:
        return False
    if workload.kind == "deployment":
        wanted = workload.replicas
        return all(_int(status.get(key)) == wanted for key in ("replicas", "updatedReplicas", "availableReplicas"))
    if workload.kind == "statefulset":
        if workload.strategy == ON_DELETE:
            return True
        return (
            str(status.get("currentRevision") or "") == str(status.get("updateRevision") or "")
            and _int(status.get("readyReplicas")) == workload.replicas
        )
    return (
        _int(status.get("updatedNumberScheduled")) == _int(status.get("desiredNumberScheduled"))
        and _int(status.get("numberUnavailable")) == 0
    )
