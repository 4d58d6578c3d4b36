"""What to do with each workload: which ones are targets, and for each a decision — a record on its own
(skipped, warned), nothing to do (converged), or a `Step` naming the restart strategy (`Route`).

Targets, as in the enroll script (docs/compatibility.md): Deployments whose pod template carries the whole
identity tuple, whatever their mode — so a half-enrolled one (template labeled, pods not) is repaired; and
StatefulSets and DaemonSets with the tuple that are not enrolled yet (with `remode`: not at the requested mode).
Those already enrolled are reported in bulk (at the mode) or warned about (at another mode, without `remode`).

Routes:

- more than one replica, RollingUpdate, no `no_restart`: label the template with a restart stamp, wait on the
  rollout (`RESTART`);
- otherwise no pod is recreated: a Deployment's current ReplicaSet and template are labeled while it is paused,
  so the ReplicaSet is re-adopted (`ADOPT`); a StatefulSet's partition is raised over the replicas while its
  template changes and its pods are relabeled to the new revision (`PARTITION`); a DaemonSet is switched to
  OnDelete for the change and its pods relabeled to the new hash (`ON_DELETE_SWAP`); an OnDelete workload only
  needs its template changed (`ON_DELETE`). Live pods are labeled in place in every case;
- a Deployment whose templates are already at the mode only gets its pods labeled (`PODS_ONLY`).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from . import messages
from .identity import Identity, has_tuple, qualifies, template_mode
from .report import Record, Status, already_enrolled_note
from .rollout import current_replica_set, pods_missing_mode, template_labels_of
from .workload import ON_DELETE, Workload, settled


class Route(enum.Enum):
    """How a workload's pods come to carry the mode label."""

    RESTART = "restart"
    ADOPT = "adopt"
    PARTITION = "partition"
    ON_DELETE_SWAP = "on-delete-swap"
    ON_DELETE = "on-delete"
    PODS_ONLY = "pods-only"


@dataclass(frozen=True, slots=True)
class Options:
    """The run's choices: the `mode` to enroll at, `remode`, `no_restart`, and the rollout `timeout` (seconds)."""

    mode: str
    remode: bool = False
    no_restart: bool = False
    timeout: int = 300


@dataclass(frozen=True, slots=True)
class Step:
    """A workload to change, the route, the label change in words (`action`) and the dry-run `plan` line.

    For `ADOPT`, `replica_set` is the current ReplicaSet and `replica_set_mode` its template's mode before the
    change (to put back if the Deployment patch fails). `unlabeled_pods` counts pods not at the mode yet.
    """

    workload: Workload
    route: Route
    action: str
    plan: str
    replica_set: str = ""
    replica_set_mode: str = ""
    unlabeled_pods: int = 0

    def record(self) -> Record:
        """The dry-run PLAN record."""
        return Record(Status.PLAN, self.workload.subject, self.plan)


@dataclass(frozen=True, slots=True)
class Converged:
    """A Deployment whose template, current ReplicaSet and every pod are already at the mode."""

    workload: Workload


Decision = Step | Record | Converged


def _restarts(workload: Workload, options: Options) -> bool:
    return not options.no_restart and workload.strategy != ON_DELETE and workload.replicas > 1


def plan_deployment(
    workload: Workload,
    replica_sets: Iterable[Mapping[str, Any]],
    pods: Iterable[Mapping[str, Any]],
    identity: Identity,
    options: Options,
) -> Decision:
    """Decide for a Deployment read just now, given its namespace's ReplicaSets and the pods its selector matches.

    Skips (SKIP) one without the whole tuple, paused, mid-rollout, or without a unique current ReplicaSet; warns
    (WARN) about one at another mode unless `remode`; `Converged` when nothing is left to label.
    """
    blocked = _deployment_blocked(workload, identity, options)
    if blocked is not None:
        return blocked
    replica_set = current_replica_set(replica_sets, workload)
    if replica_set is None:
        return Record(Status.SKIP, workload.subject, messages.no_current_replica_set(workload.revision))
    replica_set_mode = template_mode(template_labels_of(replica_set))
    unlabeled = len(pods_missing_mode(pods, options.mode))
    templates = workload.mode != options.mode or replica_set_mode != options.mode
    if not templates and unlabeled == 0:
        return Converged(workload)
    act = messages.mode_action(workload.template_labels, options.mode)
    restart = _restarts(workload, options)
    route = (Route.RESTART if restart else Route.ADOPT) if templates else Route.PODS_ONLY
    rs_name = str(replica_set["metadata"]["name"])
    return Step(
        workload,
        route,
        act,
        messages.plan_deployment(act, rs_name, unlabeled, restart=restart, templates=templates),
        replica_set=rs_name,
        replica_set_mode=replica_set_mode,
        unlabeled_pods=unlabeled,
    )


def _deployment_blocked(workload: Workload, identity: Identity, options: Options) -> Record | None:
    """Why a Deployment is left alone before its ReplicaSets are looked at, or None."""
    if not has_tuple(workload.template_labels, identity):
        return Record(Status.SKIP, workload.subject, messages.NO_TUPLE)
    current = workload.mode
    if current and current != options.mode and not options.remode:
        return Record(Status.WARN, workload.subject, messages.different_mode(current, options.mode))
    if workload.paused:
        return Record(Status.SKIP, workload.subject, messages.PAUSED)
    if not settled(workload):
        return Record(Status.SKIP, workload.subject, messages.ROLLOUT_UNSETTLED)
    return None


def plan_statefulset(workload: Workload, identity: Identity, options: Options) -> Decision:
    """Decide for a StatefulSet read just now: restart, OnDelete in place, or the partition route; SKIP when it no
    longer qualifies or its update has not settled."""
    if not qualifies(workload.template_labels, identity, options.mode, remode=options.remode):
        return Record(Status.SKIP, workload.subject, messages.no_longer_qualifies(options.mode))
    if workload.strategy == ON_DELETE and not workload.observed:
        return Record(Status.SKIP, workload.subject, messages.GENERATION_UNOBSERVED)
    if workload.strategy != ON_DELETE and not settled(workload):
        return Record(Status.SKIP, workload.subject, messages.UPDATE_UNSETTLED)
    act = messages.mode_action(workload.template_labels, options.mode)
    if _restarts(workload, options):
        return Step(workload, Route.RESTART, act, messages.plan_restart(act, options.timeout))
    if workload.strategy == ON_DELETE:
        return Step(workload, Route.ON_DELETE, act, messages.plan_on_delete(act))
    plan = messages.plan_partition(act, workload.partition, workload.replicas)
    return Step(workload, Route.PARTITION, act, plan)


def plan_daemonset(workload: Workload, identity: Identity, options: Options) -> Decision:
    """Decide for a DaemonSet read just now (its replica count is the nodes it is scheduled on): restart,
    OnDelete in place, or the OnDelete swap; SKIP when it no longer qualifies or its update has not settled."""
    if not qualifies(workload.template_labels, identity, options.mode, remode=options.remode):
        return Record(Status.SKIP, workload.subject, messages.no_longer_qualifies(options.mode))
    if not settled(workload):
        return Record(Status.SKIP, workload.subject, messages.UPDATE_UNSETTLED)
    act = messages.mode_action(workload.template_labels, options.mode)
    if _restarts(workload, options):
        return Step(workload, Route.RESTART, act, messages.plan_restart(act, options.timeout))
    if workload.strategy == ON_DELETE:
        return Step(workload, Route.ON_DELETE, act, messages.plan_on_delete(act))
    return Step(workload, Route.ON_DELETE_SWAP, act, messages.plan_on_delete_swap(act))


@dataclass(frozen=True, slots=True)
class Scan:
    """The targets in processing order (Deployments, StatefulSets, DaemonSets; ignored names included, they are
    SKIPped when reached), how many of each kind were found, and the records about workloads that are not
    targets because they are already enrolled."""

    targets: tuple[Workload, ...]
    found: tuple[int, int, int]
    records: tuple[Record, ...]


def scan(workloads: Iterable[Workload], identity: Identity, options: Options, ignore: re.Pattern[str] | None) -> Scan:
    """Sort listed workloads into targets and already-enrolled ones (see the module docstring)."""
    by_kind: dict[str, list[Workload]] = {"deployment": [], "statefulset": [], "daemonset": []}
    records: list[Record] = []
    same_mode = 0
    for workload in workloads:
        labels = workload.template_labels
        if workload.kind == "deployment":
            if has_tuple(labels, identity):
                by_kind["deployment"].append(workload)
            continue
        if qualifies(labels, identity, options.mode, remode=options.remode):
            by_kind[workload.kind].append(workload)
            continue
        if not has_tuple(labels, identity) or not workload.mode or is_ignored(workload, ignore):
            continue
        if workload.mode == options.mode:
            same_mode += 1
        elif not options.remode:
            records.append(Record(Status.WARN, workload.subject, messages.different_mode(workload.mode, options.mode)))
    if same_mode:
        records.append(already_enrolled_note(same_mode, options.mode))
    deployments, statefulsets, daemonsets = by_kind["deployment"], by_kind["statefulset"], by_kind["daemonset"]
    return Scan(
        tuple(deployments + statefulsets + daemonsets),
        (len(deployments), len(statefulsets), len(daemonsets)),
        tuple(records),
    )


def is_ignored(workload: Workload, ignore: re.Pattern[str] | None) -> bool:
    """Whether `--ignore` matches anywhere in the workload's name (an unanchored search, like bash's `=~`)."""
    return ignore is not None and ignore.search(workload.name) is not None
