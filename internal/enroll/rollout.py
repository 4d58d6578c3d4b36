"""Reading rollouts and pod sets: when a rollout is complete (`kubectl rollout status`), when a controller counts
every pod as updated, which ReplicaSet is a Deployment's current one, which controller revision is a DaemonSet's
newest, and the running-pod set."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ballast.internal.enrollment import MODE_LABEL

from .patches import REVISION_HASH_LABEL
from .workload import ON_DELETE, REVISION_ANNOTATION, Workload


@dataclass(frozen=True, slots=True)
class RolloutStatus:
    """Where a rollout stands: `done`, or `failed` (it will not finish by waiting), with kubectl's wording."""

    done: bool
    message: str
    failed: bool = False


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def rollout_status(workload: Workload) -> RolloutStatus:
    """`kubectl rollout status` of a freshly read workload, for each kind's rules.

    Deployment: every replica updated and available and no old one left; a `ProgressDeadlineExceeded` condition
    fails it. StatefulSet: every replica ready and the update revision current (or, with a partition, the
    replicas above it updated). DaemonSet: every scheduled node runs an updated, available pod. OnDelete
    workloads never roll by themselves and fail here.
    """
    if not workload.observed:
        return RolloutStatus(False, "waiting for the rollout to be observed by the controller")
    if workload.kind == "deployment":
        return _deployment_rollout(workload)
    if workload.strategy == ON_DELETE:
        return RolloutStatus(False, "rollout status is only available for RollingUpdate strategy type", True)
    if workload.kind == "statefulset":
        return _statefulset_rollout(workload)
    return _daemonset_rollout(workload)


def _deployment_rollout(workload: Workload) -> RolloutStatus:
    status = workload.status
    for condition in status.get("conditions") or ():
        if condition.get("type") == "Progressing" and condition.get("reason") == "ProgressDeadlineExceeded":
            return RolloutStatus(False, f"deployment {workload.name!r} exceeded its progress deadline", True)
    updated = _int(status.get("updatedReplicas"))
    if updated < workload.replicas:
        return RolloutStatus(False, f"{updated} of {workload.replicas} updated replicas are available")
    if _int(status.get("replicas")) > updated:
        return RolloutStatus(False, "old replicas are pending termination")
    if _int(status.get("availableReplicas")) < updated:
        return RolloutStatus(False, "updated replicas are not all available yet")
    return RolloutStatus(True, f"deployment {workload.name!r} successfully rolled out")


def _statefulset_rollout(workload: Workload) -> RolloutStatus:
    status = workload.status
    if _int(status.get("readyReplicas")) < workload.replicas:
        return RolloutStatus(False, "waiting for the pods to be ready")
    if workload.partition > 0:
        if _int(status.get("updatedReplicas")) < workload.replicas - workload.partition:
            return RolloutStatus(False, "waiting for the partitioned rollout")
        return RolloutStatus(True, "partitioned roll out complete")
    if status.get("updateRevision") != status.get("currentRevision"):
        return RolloutStatus(False, "waiting for the update revision to become current")
    return RolloutStatus(True, "statefulset rolling update complete")


def _daemonset_rollout(workload: Workload) -> RolloutStatus:
    status = workload.status
    desired = _int(status.get("desiredNumberScheduled"))
    if _int(status.get("updatedNumberScheduled")) < desired or _int(status.get("numberAvailable")) < desired:
        return RolloutStatus(False, "waiting for the updated pods to be available")
    return RolloutStatus(True, f"daemon set {workload.name!r} successfully rolled out")


def counts_pods_updated(workload: Workload, revision: str = "") -> bool:
    """Whether the controller of a freshly read workload, at its latest generation, counts every pod as updated —
    so its caches hold what an in-place route just wrote, and resuming, restoring a partition or restoring a
    rolling strategy replaces nothing.

    The controller reads objects through informer caches, one per kind and each at its own pace: a write to the
    workload (resume, restore) can reach it before the pod relabels or the ReplicaSet patch written just before
    it, and it would then roll the pods it still sees as old. Its status, written from the same caches in the
    same pass, says when they have caught up. Deployment: `updatedReplicas` (the pods of the ReplicaSet whose
    template matches its own) covers the replicas. StatefulSet: `updateRevision` is `revision` and
    `updatedReplicas` (pods labeled with it) covers the replicas. DaemonSet: `updatedNumberScheduled` (nodes
    whose pod carries the current hash) covers `desiredNumberScheduled`.
    """
    if not workload.observed:
        return False
    status = workload.status
    if workload.kind == "daemonset":
        return _int(status.get("updatedNumberScheduled")) >= _int(status.get("desiredNumberScheduled"))
    if workload.kind == "statefulset" and str(status.get("updateRevision") or "") != revision:
        return False
    return _int(status.get("updatedReplicas")) >= workload.replicas


def _controlled_by(obj: Mapping[str, Any], owner_uid: str) -> bool:
    references = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return any(ref.get("controller") is True and ref.get("uid") == owner_uid for ref in references)


def current_replica_set(replica_sets: Iterable[Mapping[str, Any]], deployment: Workload) -> Mapping[str, Any] | None:
    """The Deployment's current ReplicaSet: the one it controls whose revision annotation equals its own; None
    unless exactly one does."""
    matches = [
        rs
        for rs in replica_sets
        if _controlled_by(rs, deployment.uid)
        and ((rs.get("metadata") or {}).get("annotations") or {}).get(REVISION_ANNOTATION) == deployment.revision
    ]
    return matches[0] if len(matches) == 1 else None


def template_labels_of(obj: Mapping[str, Any]) -> Mapping[str, str]:
    """The pod-template labels of a workload or ReplicaSet."""
    labels: Mapping[str, str] = (((obj.get("spec") or {}).get("template") or {}).get("metadata") or {}).get(
        "labels"
    ) or {}
    return labels


def newest_revision_hash(revisions: Iterable[Mapping[str, Any]], owner_uid: str) -> str:
    """The `controller-revision-hash` label of the highest-numbered ControllerRevision owned by `owner_uid` ("" when
    there is none): the hash a DaemonSet's pods carry once they are at its current template."""
    owned = [
        rev
        for rev in revisions
        if any(ref.get("uid") == owner_uid for ref in (rev.get("metadata") or {}).get("ownerReferences") or ())
    ]
    if not owned:
        return ""
    newest = max(owned, key=lambda rev: _int(rev.get("revision")))
    return str(((newest.get("metadata") or {}).get("labels") or {}).get(REVISION_HASH_LABEL) or "")


def running_pod_uids(pods: Iterable[Mapping[str, Any]]) -> frozenset[str]:
    """UIDs of the pods that are not terminating. Comparing this set before and after an in-place enrollment is
    the proof that nothing restarted: a rollout removes a running pod and adds one; a pod already terminating
    before was never in the set, so it cannot raise a false alarm."""
    return frozenset(
        str(pod["metadata"].get("uid") or "")
        for pod in pods
        if not (pod.get("metadata") or {}).get("deletionTimestamp")
    )


def pods_missing_mode(pods: Iterable[Mapping[str, Any]], mode: str) -> list[str]:
    """Names of the pods, in any phase and terminating ones included, whose mode label is not `mode`."""
    return [
        str(pod["metadata"]["name"])
        for pod in pods
        if ((pod.get("metadata") or {}).get("labels") or {}).get(MODE_LABEL) != mode
    ]
