"""WorkloadProfile: the operator-owned record of one workload identity (a label tuple under one policy), with
its usage statistics and recommendations. It has no spec; everything is status.
"""

from __future__ import annotations

from typing import Annotated, Literal

from ballast.api.customresource import CustomResource
from ballast.api.meta import ConditionList, Conditions, Time
from ballast.api.wire import Int32, Int64, WireModel, list_map
from ballast.runtime.crdgen import AGE, PrinterColumn

from .groupversion import GROUP, VERSION

ProfileState = Literal["Accruing", "Sufficient"]
PolicyKind = Literal["ClusterResourcePolicy", "ResourcePolicy"]

ACCRUING: ProfileState = "Accruing"
SUFFICIENT: ProfileState = "Sufficient"
ORPHANED = "Orphaned"
"""Condition type: no pod uses the profile any more (it is deleted after the BallastConfig's orphanTTL)."""
READY = "Ready"
"""Condition type: every policy resource produced samples in the latest collection cycle."""
OOM_KILLS_REPEATED = "OOMKillsRepeated"
"""Condition type: a container kept being OOM-killed at its raised limit, so raising stopped (a leak)."""


class PolicyRef(WireModel):
    """The policy a profile was resolved under."""

    kind: PolicyKind
    """ClusterResourcePolicy or ResourcePolicy."""
    namespace: str | None = None
    """The ResourcePolicy's namespace; empty for a ClusterResourcePolicy."""
    name: str
    """The policy's name."""


class UsageStats(WireModel):
    """Statistics of one resource of one container, formatted for display."""

    resource: str
    """cpu, memory or ephemeral-storage."""
    source: str | None = None
    """The MetricsSource the samples came from."""
    samples: Int64 | None = None
    """Number of samples."""
    time_span: str | None = None
    """Time since the first sample (Go duration)."""
    p50: str | None = None
    """50th percentile."""
    p75: str | None = None
    """75th percentile."""
    p90: str | None = None
    """90th percentile."""
    p95: str | None = None
    """95th percentile."""
    p99: str | None = None
    """99th percentile."""
    mean: str | None = None
    """Mean."""
    std_dev: str | None = None
    """Population standard deviation."""
    cv: str | None = None
    """Coefficient of variation, three decimals."""
    last_updated: Time | None = None
    """When these statistics were computed."""


class Recommendation(WireModel):
    """Recommended values of one resource (quantities)."""

    request: str | None = None
    """The recommended request."""
    limit: str | None = None
    """The recommended limit."""


class ContainerProfile(WireModel):
    """Statistics and recommendations of one container name."""

    name: str
    """The container name."""
    usage_stats: list[UsageStats] | None = None
    """One entry per measured resource."""
    recommendations: dict[str, Recommendation] | None = None
    """Recommended values by resource name."""


class OOMKill(WireModel):
    """One OOM kill, as its pod's status reported it; kept so that each kill is counted once."""

    pod: str
    """The killed pod's name."""
    namespace: str
    """The killed pod's namespace."""
    uid: str | None = None
    """The killed pod's UID."""
    finished_at: Time
    """When the container terminated (its termination's `finishedAt`)."""
    limit: str
    """The container's memory limit when it was killed."""


class ContainerOOMKills(WireModel):
    """The OOM kills of one container name inside the policy's `behaviors.oom.window`, and the memory-limit floor
    they set (docs/design.md, difference 63)."""

    container: str
    """The container name."""
    count: Int32
    """Kills inside the window."""
    last_time: Time | None = None
    """When the latest kill happened."""
    last_limit: str | None = None
    """The memory limit the latest kill happened at."""
    floor: str | None = None
    """The memory limit the profile's pods get at least while the floor lasts."""
    floor_until: Time | None = None
    """When the floor lapses (the window after the kill that last raised it)."""
    repeated: bool | None = None
    """True once raising stopped: kills kept coming at the raised limit (`OOMKillsRepeated`)."""
    namespaces: list[str] | None = None
    """The namespaces the kills came from, sorted."""
    kills: list[OOMKill] | None = None
    """The latest kills (at most 16), oldest first."""


class ContributingNamespaces(WireModel):
    """The namespaces whose pods feed the profile (docs/design.md, difference 24): who shares its history."""

    count: Int32
    """How many namespaces have enrolled pods in the profile."""
    names: list[str] | None = None
    """The first ten of them, sorted by name."""


class WorkloadProfileStatus(WireModel):
    """Identity, statistics, recommendations and state of the profile."""

    tuple_labels: dict[str, str] | None = None
    """Identity label key to the pods' value, or a placeholder such as nocomponent when pods lack the label."""
    policy_ref: PolicyRef | None = None
    """The policy the profile is governed by; absent when no policy matched."""
    measurement_hash: str | None = None
    """16 hex characters naming the profile's sample history."""
    selector_labels: dict[str, str] | None = None
    """Identity label key to the pods' value, or --missing-- when pods lack the label."""
    containers: list[ContainerProfile] | None = None
    """Per-container statistics and recommendations."""
    meets_threshold: bool | None = None
    """Whether every container is ready."""
    state: ProfileState = ACCRUING
    """Accruing until every container is ready, then Sufficient."""
    active_workloads: Int32 | None = None
    """Pods currently using the profile."""
    contributing_namespaces: ContributingNamespaces | None = None
    """The namespaces of those pods: their count and the first ten names."""
    oom_kills: Annotated[list[ContainerOOMKills] | None, list_map("container")] = None
    """OOM kills per container inside the window and the memory-limit floors they set (written by the OOM
    watcher)."""
    conditions: Conditions = ConditionList()
    """Orphaned, Ready and OOMKillsRepeated."""


class WorkloadProfile(CustomResource):
    """WorkloadProfile records the usage and recommendations of one workload identity; written by the operator."""

    GROUP = GROUP
    VERSION = VERSION
    KIND = "WorkloadProfile"
    PLURAL = "workloadprofiles"
    SCOPE = "Cluster"
    SHORT_NAMES = ("wp",)
    PRINTER_COLUMNS = (
        PrinterColumn("ActiveWorkloads", "integer", ".status.activeWorkloads"),
        PrinterColumn("Policy", "string", ".status.policyRef.name"),
        PrinterColumn("State", "string", ".status.state"),
        PrinterColumn("Orphaned", "string", ".status.conditions[?(@.type=='Orphaned')].status"),
        AGE,
    )
    STATUS_SUBRESOURCE = True

    status: WorkloadProfileStatus | None = None
    """Written by the operator."""
