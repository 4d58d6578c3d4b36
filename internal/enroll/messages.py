"""The words of every record `ballast enroll` can print, in one place (the enroll script's wording: people grep
for it). `act` is `mode_action(…)`: `set <label>=measure` or `re-mode <label> measure->resize`."""

from __future__ import annotations

from collections.abc import Mapping

from ballast.internal.enrollment import MODE_LABEL

from .identity import template_mode

# -------------------------------------------------------------------------------------- decisions (plan)

NO_TUPLE = "no longer carries the full identity tuple"
PAUSED = "deployment is paused; resolve, then re-run"
ROLLOUT_UNSETTLED = "rollout not settled; wait for it to finish, then re-run"
UPDATE_UNSETTLED = "update not settled; wait for it to finish, then re-run"
GENERATION_UNOBSERVED = "controller has not observed the latest generation; wait, then re-run"


def mode_action(template_labels: Mapping[str, str] | None, mode: str) -> str:
    """The label change in words: `set <label>=<mode>` for a first enrollment, `re-mode <label> <old>-><mode>`."""
    previous = template_mode(template_labels)
    return f"re-mode {MODE_LABEL} {previous}->{mode}" if previous else f"set {MODE_LABEL}={mode}"


def no_longer_qualifies(mode: str) -> str:
    return f"template no longer qualifies (already at {mode}, or missing an identity label)"


def different_mode(current: str, mode: str) -> str:
    return f"already enrolled at {MODE_LABEL}={current}, not {mode}; left unchanged (re-run with --remode to change it)"


def no_current_replica_set(revision: str) -> str:
    return f"could not identify a unique current ReplicaSet (revision {revision or '<none>'})"


def ignored(pattern: str) -> str:
    return f"matches --ignore /{pattern}/"


def no_selector() -> str:
    return "its selector selects no pods; add the label to the pods by hand"


# ------------------------------------------------------------------------------------------- plans


def plan_deployment(act: str, replica_set: str, unlabeled: int, *, restart: bool, templates: bool) -> str:
    if templates and restart:  # every pod is replaced, born labeled: nothing to label or to find unchanged
        return f"{act} on template + rolling restart; every pod replaced, born labeled"
    plan = f"label {unlabeled} unlabeled pod(s)"
    if templates:
        plan = f"{act} on ReplicaSet {replica_set} + Deployment templates in place (adopt, no rollout); then {plan}"
    return f"{plan}; verify the running-pod set is unchanged"


def plan_restart(act: str, timeout: int) -> str:
    return f"{act} on the template + restart; wait on rollout up to {timeout}s"


def plan_on_delete(act: str) -> str:
    return f"OnDelete: {act} on template; label live pods in place; no restart"


def plan_partition(act: str, partition: int, replicas: int) -> str:
    return (
        f"no restart: raise partition {partition} -> {replicas}; {act} on template; relabel {replicas} pod(s) to the "
        f"new controller-revision-hash; label live pod(s); restore partition {partition}; verify"
    )


def plan_on_delete_swap(act: str) -> str:
    return (
        f"no restart: switch strategy to OnDelete; {act} on template; relabel pod(s) to the new "
        "controller-revision-hash; label live pod(s); restore strategy; verify"
    )


# ------------------------------------------------------------------------------------------ results

PATCH_TEMPLATE_FAILED = "failed to patch template"


def restarted(act: str) -> str:
    return f"enrolled ({act}); rolling restart complete, pods carry the label"


def rollout_timed_out(act: str, timeout: int, kind: str, namespace: str, name: str) -> str:
    return (
        f"enrolled ({act}) but rollout did not finish within {timeout}s; "
        f"check: kubectl -n {namespace} rollout status {kind}/{name}"
    )


def verified(done: str) -> str:
    return f"{done} (running-pod set unchanged)"


def pod_set_changed(done: str) -> str:
    return (
        f"{done}, but the running-pod set changed during the window (a rollout may have started, or unrelated "
        "churn/HPA); verify manually"
    )


def pods_unlabeled(subject: str, failed: int, mode: str) -> str:
    """The stderr warning when some pods could not be labeled."""
    return (
        f"{subject}: failed to label {failed} pod(s) with {MODE_LABEL}={mode} (some may have already terminated); "
        "re-run to converge"
    )


def interrupted(inflight: str) -> str:
    return f"INTERRUPTED MID-ENROLLMENT: {inflight}"


# Deployment, no restart: pause, patch the current ReplicaSet and the Deployment, resume.


def adopted(act: str, replica_set: str) -> str:
    return f"enrolled in place ({act}); ReplicaSet {replica_set} adopted, pods labeled"


def repaired(act: str, labeled: int, mode: str) -> str:
    return f"repaired in place ({act}); {labeled} pod(s) labeled, template already at {mode}, no restart"


PAUSE_FAILED = "failed to pause"


def replica_set_patch_failed(replica_set: str) -> str:
    return f"failed to patch ReplicaSet {replica_set} (deployment resumed unchanged)"


DEPLOYMENT_PATCH_FAILED = "failed to patch Deployment (ReplicaSet reverted, deployment resumed unchanged)"
REVERT_FAILED = "Deployment patch failed AND ReplicaSet revert failed; deployment left paused, resolve manually"


def revert_failed_warning(subject: str, replica_set: str) -> str:
    return (
        f"{subject}: failed to revert ReplicaSet {replica_set}; "
        "fix its template to match the Deployment before resuming"
    )


def resume_failed(namespace: str, name: str) -> str:
    return f"templates patched but resume failed; run: kubectl -n {namespace} rollout resume deployment/{name}"


def replica_set_unmatched(namespace: str, name: str, replica_set: str, timeout: int) -> str:
    return (
        f"templates patched but the controller did not count ReplicaSet {replica_set}'s pods as updated within "
        f"{timeout}s; deployment left paused so nothing restarts (resuming now would roll out); once its "
        f"status.updatedReplicas covers the replicas, run: kubectl -n {namespace} rollout resume deployment/{name}"
    )


def inflight_paused(subject: str, namespace: str, name: str) -> str:
    return f"{subject} paused; recover with: kubectl -n {namespace} rollout resume deployment/{name}"


def inflight_replica_set_patched(subject: str, namespace: str, name: str, replica_set: str) -> str:
    return (
        f"{subject} paused with ReplicaSet {replica_set} patched; recover with: revert the {MODE_LABEL} label on the "
        f"RS template, then kubectl -n {namespace} rollout resume deployment/{name}"
    )


def inflight_patched_paused(subject: str, namespace: str, name: str) -> str:
    return (
        f"{subject} fully patched but still paused; "
        f"recover with: kubectl -n {namespace} rollout resume deployment/{name}"
    )


# StatefulSet, no restart: raise the partition, patch, relabel pods to the new revision, restore the partition.


def on_delete_enrolled(act: str) -> str:
    return f"enrolled ({act}); OnDelete template labeled, live pods labeled, no restart"


def partition_done(act: str, revision: str) -> str:
    return f"enrolled in place ({act}); pods relabeled to revision {revision} and labeled, no restart"


PARTITION_RAISE_FAILED = "failed to raise partition"
PARTITION_PATCH_FAILED = "failed to patch template (partition restored)"


def revision_timeout(replicas: int) -> str:
    return (
        f"timed out waiting for the new updateRevision; partition left at {replicas} so nothing restarts; "
        "re-run once the controller catches up"
    )


def partition_relabel_failed(replicas: int, revision: str, partition: int) -> str:
    return (
        f"failed to relabel pods; partition left at {replicas} so nothing restarts; relabel to "
        f"controller-revision-hash={revision}, then restore partition to {partition}"
    )


def partition_uncounted(replicas: int, revision: str, timeout: int, namespace: str, name: str, restore: str) -> str:
    return (
        f"pods relabeled to revision {revision} but the controller did not count them as updated within "
        f"{timeout}s; partition left at {replicas} so nothing restarts (restoring it now would replace them); once "
        f"status.updatedReplicas covers the replicas, run: "
        f"kubectl -n {namespace} patch statefulset {name} --type merge -p '{restore}'"
    )


def partition_restore_failed(namespace: str, name: str, restore: str) -> str:
    return (
        "pods relabeled but partition restore failed; run: "
        f"kubectl -n {namespace} patch statefulset {name} --type merge -p '{restore}'"
    )


def inflight_partition(subject: str, replicas: int, namespace: str, name: str, restore: str) -> str:
    return (
        f"{subject} partition raised to {replicas}; recover with: kubectl -n {namespace} patch statefulset {name} "
        f"--type merge -p '{restore}' (only after pods carry the current updateRevision label)"
    )


# DaemonSet, no restart: switch to OnDelete, patch, relabel pods to the new hash, restore the strategy.


def swap_done(act: str, revision_hash: str) -> str:
    return f"enrolled in place ({act}); pod(s) relabeled to hash {revision_hash} and labeled, no restart"


SWAP_FAILED = "failed to switch strategy to OnDelete"
SWAP_PATCH_FAILED = "failed to patch template (strategy restored)"
GENERATION_TIMEOUT = (
    "timed out waiting for the controller to observe the template change; strategy left OnDelete so nothing "
    "restarts; re-run once it catches up"
)
NO_REVISION_HASH = (
    "could not determine the new controller-revision-hash; strategy left OnDelete so nothing restarts; resolve manually"
)


def swap_relabel_failed(revision_hash: str, restore: str) -> str:
    return (
        "failed to relabel pods; strategy left OnDelete so nothing restarts; relabel to "
        f"controller-revision-hash={revision_hash}, then restore strategy: {restore}"
    )


def swap_uncounted(revision_hash: str, timeout: int, namespace: str, name: str, restore: str) -> str:
    return (
        f"pods relabeled to hash {revision_hash} but the controller did not count them as updated within {timeout}s; "
        "strategy left OnDelete so nothing restarts (restoring it now would replace them); once "
        "status.updatedNumberScheduled covers the nodes, run: "
        f"kubectl -n {namespace} patch daemonset {name} --type merge -p '{restore}'"
    )


def strategy_restore_failed(namespace: str, name: str, restore: str) -> str:
    return (
        "pods relabeled but strategy restore failed; run: "
        f"kubectl -n {namespace} patch daemonset {name} --type merge -p '{restore}'"
    )


def inflight_swap(subject: str, namespace: str, name: str, restore: str) -> str:
    return (
        f"{subject} strategy switched to OnDelete; recover with: kubectl -n {namespace} patch daemonset {name} "
        f"--type merge -p '{restore}' (only after pods carry the current controller-revision-hash label)"
    )
