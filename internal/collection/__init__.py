"""Collection as pure code: from one MetricsSource cycle's samples to each fed profile's status.

    fed = FedProfile(profile, PolicyView.from_spec(policy.spec), MeasuredProfile(name, hash, resources), stamp)
    attributed = attribute(samples, pods)              # fail closed: unknown pods/containers/resources skipped
    plan = plan_status(fed, state, memos, attributed.observed[name], fed.policy.owned_by(source), now_ms)
    recompute(plan, series_read, RefreshPolicy(), now_ms, now_text)        # only the series that are due
    body = status_body(name, profile_status(plan.state, fed.policy), ready_condition(...))

- `attribution`: (namespace, pod, container, resource) → the profile's history series, through the cached pod;
- `policy`: what collection needs of a policy; `status`: `usageStats` entries, containers, `meetsThreshold`;
- `ready`: the `Ready` condition, each resource judged by the latest cycle of its own source;
- `ceilings`: the bounds of a profile's recommendations (0 and above the largest allocatable of its nodes are
  left out);
- `refresh`: when a series' statistics are recomputed and when its last computation is reused (the tolerance);
- `plan`: a profile's work in one cycle; `cycle`: the cycle's values; `memory`: the leader-local memory;
- `schedule`: which sources a cycle collects together (one status per profile for all of them).
"""

from __future__ import annotations

from ballast.runtime import rfc3339  # the times a cycle writes

from .attribution import Attribution, MeasuredPod, MeasuredProfile, PodKey, attribute, measured_pod
from .ceilings import (
    NODE_REFRESH_MS,
    Ceilings,
    NotApplied,
    RecommendationCeilings,
    bounded,
    largest,
    node_allocatable,
    nodes_by_profile,
)
from .cycle import (
    DEFAULT_POLL_INTERVAL,
    CollectionCycle,
    FedProfile,
    poll_interval_seconds,
    retention_window,
)
from .memory import CollectionMemory, ProfileMemory
from .pending import DEFAULT_BUFFER_BYTES, HeldCycle, PendingCycles, held_bytes
from .plan import READ_CHUNK, StatusPlan, chunks, is_stale, plan_status, recompute, series_to_read
from .policy_resources import PolicyView
from .profile_ready import (
    ALL_COLLECTED_MESSAGE,
    MISSING_PREFIX,
    MISSING_SAMPLES_REASON,
    NOT_APPLIED,
    SAMPLES_COLLECTED_REASON,
    collected_in_latest_cycles,
    previously_missing,
    ready_condition,
)
from .refresh import (
    ACCRUING,
    AGE,
    NEW,
    POLICY,
    REASONS,
    SAMPLES,
    PolicyStamp,
    RefreshPolicy,
    SeriesMemo,
    phase,
    refresh_reason,
)
from .runner import SeriesReads, StatusRun, StatusWrite
from .schedule import TOGETHER_WINDOW, Polled, PollSchedule
from .selection import (
    FedProfiles,
    LoadedPolicy,
    MeasuredPodMemo,
    PolicyKey,
    fed_profiles,
    measured_pods,
    policy_key,
    policy_keys,
)
from .status import (
    ContainerState,
    Pair,
    ProfileStatus,
    ResourceStatus,
    profile_condition,
    profile_status,
    resource_status,
    state_from_status,
    status_body,
)

__all__ = [
    "ACCRUING",
    "AGE",
    "ALL_COLLECTED_MESSAGE",
    "DEFAULT_BUFFER_BYTES",
    "DEFAULT_POLL_INTERVAL",
    "MISSING_PREFIX",
    "MISSING_SAMPLES_REASON",
    "NEW",
    "NODE_REFRESH_MS",
    "NOT_APPLIED",
    "POLICY",
    "READ_CHUNK",
    "REASONS",
    "SAMPLES",
    "SAMPLES_COLLECTED_REASON",
    "TOGETHER_WINDOW",
    "Attribution",
    "Ceilings",
    "CollectionCycle",
    "CollectionMemory",
    "ContainerState",
    "FedProfile",
    "FedProfiles",
    "HeldCycle",
    "LoadedPolicy",
    "MeasuredPod",
    "MeasuredPodMemo",
    "MeasuredProfile",
    "NotApplied",
    "Pair",
    "PendingCycles",
    "PodKey",
    "PolicyKey",
    "PolicyStamp",
    "PolicyView",
    "PollSchedule",
    "Polled",
    "ProfileMemory",
    "ProfileStatus",
    "RecommendationCeilings",
    "RefreshPolicy",
    "ResourceStatus",
    "SeriesMemo",
    "SeriesReads",
    "StatusPlan",
    "StatusRun",
    "StatusWrite",
    "attribute",
    "bounded",
    "chunks",
    "collected_in_latest_cycles",
    "fed_profiles",
    "held_bytes",
    "is_stale",
    "largest",
    "measured_pod",
    "measured_pods",
    "node_allocatable",
    "nodes_by_profile",
    "phase",
    "plan_status",
    "policy_key",
    "policy_keys",
    "poll_interval_seconds",
    "previously_missing",
    "profile_condition",
    "profile_status",
    "ready_condition",
    "recompute",
    "refresh_reason",
    "resource_status",
    "retention_window",
    "rfc3339",
    "series_to_read",
    "state_from_status",
    "status_body",
]
