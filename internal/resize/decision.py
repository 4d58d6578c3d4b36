"""What the resize lane does with one pod: skip it (with the reason it is counted under), mark it blocked, or
resize it — the Go operator's per-pod order (its steps 6a–6e) with the kubelet's outcome read first.

Skip reasons are the Go operator's (`kill_switch`, `not_ready`, `no_policy` for a whole profile; `blocked`, `cooldown`,
`no_drift`, `not_resizable`, `qos_pinned`, `dry_run` per pod) plus `in_progress` and `deferred`.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ballast.internal.enrollment import LAST_RESIZE, PROFILE_REF, RESIZE_BLOCKED, RESIZE_BLOCKED_AT, wants_resize
from ballast.runtime import objects

from .annotations import within
from .oomraise import plan_oom_raise
from .outcome import REASON_INFEASIBLE, ResizeOutcome, resize_outcome
from .plan import Plan, Recommendations, plan_resize
from .qos import BEST_EFFORT, pod_qos
from .settings import ResizeSettings

# Skip reasons of `ballast_resize_skipped_total`.
KILL_SWITCH = "kill_switch"
NOT_READY = "not_ready"
NO_POLICY = "no_policy"
BLOCKED = "blocked"
COOLDOWN = "cooldown"
NO_DRIFT = "no_drift"
NOT_RESIZABLE = "not_resizable"
QOS_PINNED = "qos_pinned"
DRY_RUN = "dry_run"
IN_PROGRESS = "in_progress"
"""The kubelet reports `PodResizeInProgress`: a resize is being actuated; none is stacked on top."""
DEFERRED = "deferred"
"""The kubelet reports `PodResizePending`/`Deferred` within the interval since the last resize."""
OOM_RAISE = "oom_raise"
"""A resize's reason when it raises memory limits to their OOM floor (docs/design.md, difference 64)."""

# Why a pod is marked blocked by the kubelet's verdict.
INFEASIBLE = "infeasible"
"""`PodResizePending`/`Infeasible`: the node can never fit the resize."""
KUBELET_ERROR = "kubelet_error"
"""`PodResizeInProgress`/`Error`: the kubelet failed to actuate the resize (difference 74)."""

# Actions.
SKIP = "skip"
MARK_BLOCKED = "mark_blocked"
RESIZE = "resize"


@dataclass(frozen=True)
class Decision:
    """What to do with one pod: skip (with a reason), mark it blocked (Infeasible), or resize."""

    action: str
    reason: str = ""
    message: str = ""
    plan: Plan = field(default_factory=Plan)
    qos: str = ""

    @property
    def writes(self) -> bool:
        """Whether acting on it writes to the pod (so it is decided again on a live read first)."""
        return self.action in (MARK_BLOCKED, RESIZE)


def _verdict(annotations: Mapping[str, str], outcome: ResizeOutcome) -> Decision | None:
    """What the kubelet's verdict on the last resize settles, if anything: a failure or an Infeasible verdict is
    reported once (then the interval and the planner decide, so a later recommendation can replace the spec the
    kubelet keeps failing on — difference 74); a resize being actuated gets nothing stacked on top."""
    if outcome.failed and RESIZE_BLOCKED not in annotations:
        return Decision(MARK_BLOCKED, KUBELET_ERROR, outcome.error_message or "")
    if outcome.in_progress:
        return Decision(SKIP, IN_PROGRESS, "the kubelet is actuating a resize; not stacking another")
    if outcome.infeasible and RESIZE_BLOCKED not in annotations:
        return Decision(MARK_BLOCKED, INFEASIBLE, outcome.pending_message or REASON_INFEASIBLE)
    return None


def _gate(pod: Mapping[str, Any], settings: ResizeSettings, now: datetime.datetime) -> Decision | None:
    """Backoff, the kubelet's outcome, cooldown: a decision when one of them settles the pod, else None."""
    annotations = objects.annotations(pod)
    if within(annotations.get(RESIZE_BLOCKED_AT), now, settings.interval):
        return Decision(SKIP, BLOCKED, "resize recently failed, backing off")
    outcome = resize_outcome(pod)
    verdict = _verdict(annotations, outcome)
    if verdict is not None:
        return verdict
    if not within(annotations.get(LAST_RESIZE), now, settings.interval):
        return None
    if outcome.deferred:
        return Decision(SKIP, DEFERRED, "the kubelet deferred the last resize; retrying after the interval")
    return Decision(SKIP, COOLDOWN, "resize cooldown active, skipping")


def decide(
    pod: Mapping[str, Any],
    recommendations: Recommendations,
    settings: ResizeSettings,
    now: datetime.datetime,
    oom_floors: Mapping[str, int] | None = None,
) -> Decision:
    """The Go operator's per-pod order (steps 6a–6e) with the kubelet's outcome (difference 20) read before the
    cooldown: an Infeasible verdict on the last resize is reported at once, not an interval later.

    A memory limit below its OOM floor (`oom_floors`: container → bytes) is raised to it first, in one step and
    inside the cooldown (difference 64); the backoff after a block, a resize in progress, an Infeasible or
    Deferred verdict and the QoS class hold it back as they hold back any resize."""
    gated = _gate(pod, settings, now)
    if oom_floors and (gated is None or gated.reason == COOLDOWN):
        raise_plan = plan_oom_raise(pod, oom_floors)
        before = pod_qos(pod)
        if raise_plan.changes and before != BEST_EFFORT and before == pod_qos(raise_plan.apply_to(pod)):
            return Decision(RESIZE, OOM_RAISE, "memory limit below the OOM floor", raise_plan, before)
    if gated is not None:
        return gated
    plan = plan_resize(pod, recommendations, settings)
    if not plan.changes:
        reason = NOT_RESIZABLE if plan.not_resizable else NO_DRIFT
        return Decision(SKIP, reason, "nothing to resize in place", plan)
    before, after = pod_qos(pod), pod_qos(plan.apply_to(pod))
    if before == BEST_EFFORT or before != after:
        return Decision(SKIP, QOS_PINNED, f"resize would change the QoS class {before} → {after}", plan, before)
    return Decision(RESIZE, plan=plan, qos=before)


def still_ours(pod: Mapping[str, Any], profile: str) -> bool:
    """Whether a live pod is still in resize mode, of `profile`, and not terminating (else it is left alone)."""
    return (
        wants_resize(objects.labels(pod))
        and objects.annotations(pod).get(PROFILE_REF) == profile
        and not objects.deletion_timestamp(pod)
    )
