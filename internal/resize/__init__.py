"""In-place resize as pure code (docs/compatibility.md): drift, the step cap, thresholds and QoS, and on top of them
the planning of one pod's next resize, the kubelet's outcome, the per-pod decision and the policy's settings.

Quantities are Kubernetes strings (`"250m"`, `"1Gi"`) or int units (millicores for cpu, bytes otherwise);
percentages are Decimals or ints. Arithmetic is exact (docs/design.md, difference 13).

    settings = ResizeSettings.from_spec(policy.spec)
    decision = decide(pod, recommendations_from(profile.status), settings, now)   # skip / mark_blocked / resize
    if decision.action == RESIZE:
        patch = decision.plan.patch()                                              # strategic merge, pods/resize
"""

from __future__ import annotations

from .annotations import (
    BLOCKED_MESSAGE_BYTES,
    blocked_patch,
    format_time,
    parse_time,
    resized_patch,
    truncate_utf8,
    within,
)
from .coupled import coupled_move
from .decision import (
    BLOCKED,
    COOLDOWN,
    DEFERRED,
    DRY_RUN,
    IN_PROGRESS,
    INFEASIBLE,
    KILL_SWITCH,
    KUBELET_ERROR,
    MARK_BLOCKED,
    NO_DRIFT,
    NO_POLICY,
    NOT_READY,
    NOT_RESIZABLE,
    OOM_RAISE,
    QOS_PINNED,
    RESIZE,
    SKIP,
    Decision,
    decide,
    still_ours,
)
from .drift import Percent, exceeds_drift
from .inplace import IN_PLACE_RESOURCES, resizable_in_place
from .oomraise import plan_oom_raise
from .outcome import (
    POD_RESIZE_IN_PROGRESS,
    POD_RESIZE_PENDING,
    REASON_DEFERRED,
    REASON_ERROR,
    REASON_INFEASIBLE,
    ResizeOutcome,
    resize_outcome,
)
from .plan import ContainerChange, Plan, Recommendations, plan_resize, recommendations_from
from .qos import BEST_EFFORT, BURSTABLE, GUARANTEED, pod_qos
from .settings import DEFAULT_INTERVAL, ResizeSettings, parse_interval
from .step import cap_change, step_toward
from .support import (
    IN_PLACE_RESIZE,
    IN_PLACE_RESIZE_GA,
    UNSUPPORTED,
    condition_differs,
    condition_patch,
    parse_server_version,
    supports_in_place,
    unsupported_condition,
    wanted_condition,
)
from .thresholds import (
    DEFAULT_MAX_CHANGE_PCT,
    DEFAULT_THRESHOLD_PCT,
    parse_percent,
    resolve_max_change,
    resolve_threshold,
)

__all__ = [
    "BEST_EFFORT",
    "BLOCKED",
    "BLOCKED_MESSAGE_BYTES",
    "BURSTABLE",
    "COOLDOWN",
    "DEFAULT_INTERVAL",
    "DEFAULT_MAX_CHANGE_PCT",
    "DEFAULT_THRESHOLD_PCT",
    "DEFERRED",
    "DRY_RUN",
    "GUARANTEED",
    "INFEASIBLE",
    "IN_PLACE_RESIZE",
    "IN_PLACE_RESIZE_GA",
    "IN_PLACE_RESOURCES",
    "IN_PROGRESS",
    "KILL_SWITCH",
    "KUBELET_ERROR",
    "MARK_BLOCKED",
    "NOT_READY",
    "NOT_RESIZABLE",
    "NO_DRIFT",
    "NO_POLICY",
    "OOM_RAISE",
    "POD_RESIZE_IN_PROGRESS",
    "POD_RESIZE_PENDING",
    "QOS_PINNED",
    "REASON_DEFERRED",
    "REASON_ERROR",
    "REASON_INFEASIBLE",
    "RESIZE",
    "SKIP",
    "UNSUPPORTED",
    "ContainerChange",
    "Decision",
    "Percent",
    "Plan",
    "Recommendations",
    "ResizeOutcome",
    "ResizeSettings",
    "blocked_patch",
    "cap_change",
    "condition_differs",
    "condition_patch",
    "coupled_move",
    "decide",
    "exceeds_drift",
    "format_time",
    "parse_interval",
    "parse_percent",
    "parse_server_version",
    "parse_time",
    "plan_oom_raise",
    "plan_resize",
    "pod_qos",
    "recommendations_from",
    "resizable_in_place",
    "resize_outcome",
    "resized_patch",
    "resolve_max_change",
    "resolve_threshold",
    "step_toward",
    "still_ours",
    "supports_in_place",
    "truncate_utf8",
    "unsupported_condition",
    "wanted_condition",
    "within",
]
