"""The spec and status shared by ClusterResourcePolicy and ResourcePolicy: which pods a policy selects, how
their recommendations are computed, when a profile is ready, and how fast resizes go.

The CRD schema has no defaults here: an omitted field is defaulted when a policy is resolved, by
`ResourcePolicySpec.with_defaults()`.

The decimals (headrooms, `maxCV`, thresholds, `maxChangePerCycle`) and the `cvMeanFloor` quantities carry a CRD
`pattern` (docs/design.md, difference 25): the API server refuses exponents, signs and absurd magnitudes
(`"1e-400"`, `"1e26"`) before anything reads them. The patterns change the schema only, never the models'
validation, so a policy stored before them is still read; the exact ranges, with messages naming the field, are
checked by the validating webhook (`ballast.internal.policy.settings_problems`) and again at use time.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ballast.api.meta import ConditionList, Conditions, LabelSelector
from ballast.api.wire import ATOMIC_LIST, CRDSchema, Int32, Int64, WireModel

Aggregation = Literal["p50", "p75", "p90", "p95", "p99", "max", "avg"]
MetricField = Literal["request", "limit"]

VALID = "Valid"
"""Condition type saying whether the policy's regexes, selectors and quantities are usable."""

DEFAULT_MIN_DATA_POINTS = 500
DEFAULT_MIN_TIME_SPAN = "24h"
DEFAULT_MAX_CV = "1.5"
DEFAULT_CV_MEAN_FLOOR = {"cpu": "25m", "memory": "25Mi", "ephemeral-storage": "2Mi"}
DEFAULT_THRESHOLD = "10%"
DEFAULT_MAX_CHANGE_PER_CYCLE = "50%"
DEFAULT_RESIZE_INTERVAL = "15m"
DEFAULT_OOM_BUMP_RATIO = "1.2"
DEFAULT_OOM_MIN_BUMP = "100Mi"
DEFAULT_OOM_WINDOW = "24h"
DEFAULT_OOM_MAX_KILLS = 3
DEFAULT_OOM_MAX_LIMIT_FACTOR = 2
"""`behaviors.oom.maxLimit` when omitted: this many times the limit of the window's first kill (the limit the
pre-OOM recommendation set)."""

DECIMAL_PATTERN = r"^([0-9]{1,3}(\.[0-9]{1,6})?)?$"
"""A headroom or `maxCV` as the CRD accepts it: empty (omitted), or a plain decimal of at most 3 integer digits and
6 decimal places (`1.25`; no sign, exponent or spaces). The range (0 < headroom ≤ 100, 0 ≤ maxCV ≤ 100) is the
webhook's."""
PERCENT_PATTERN = r"^([0-9]{1,3}(\.[0-9]{1,6})?%?)?$"
"""A threshold or `maxChangePerCycle`: empty, or such a decimal optionally followed by `%` (`10%`, `12.5`); the
webhook checks 0 < p ≤ 100."""
QUANTITY_PATTERN = r"^([0-9]+(\.[0-9]*)?|\.[0-9]+)([KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]{1,2})?$"
"""A `cvMeanFloor` value: a non-negative Kubernetes quantity (`25m`, `25Mi`, `1e6`) with an exponent of at most two
digits; the webhook checks that it fits 2**63 − 1 units."""

PolicyDecimal = Annotated[str | None, CRDSchema({"pattern": DECIMAL_PATTERN})]
PolicyPercent = Annotated[str | None, CRDSchema({"pattern": PERCENT_PATTERN})]
FloorQuantity = Annotated[str, CRDSchema({"pattern": QUANTITY_PATTERN})]
FloorQuantityOrNone = Annotated[str | None, CRDSchema({"pattern": QUANTITY_PATTERN})]


class NamespaceFilter(WireModel):
    """Namespaces a policy applies to: exact names or /regex/ (RE2, anchored)."""

    include: list[str] | None = None
    """Namespaces included; empty means all."""
    exclude: list[str] | None = None
    """Namespaces excluded; wins over include."""


class PolicySelector(WireModel):
    """Which pods a policy applies to; every part must match, and an empty selector matches every pod."""

    kinds: list[str] | None = None
    """Owner kinds (the pod's controller, or its top-level owner such as Deployment); empty means all."""
    namespaces: NamespaceFilter | None = None
    """Namespace include and exclude lists."""
    annotations: dict[str, str] | None = None
    """Pod annotations that must be present, each value an exact string or /regex/."""
    label_selector: LabelSelector | None = None
    """A standard label selector on the pod's labels."""


class MetricConfig(WireModel):
    """One recommended value: a resource's request or limit from an aggregation of a source's samples."""

    resource: str = Field(min_length=1)
    """The resource: cpu, memory or ephemeral-storage."""
    field: MetricField | None = None
    """Which value is recommended: request or limit."""
    source: str = Field(min_length=1)
    """The MetricsSource name the samples come from."""
    aggregation: Aggregation | None = None
    """The statistic: p50, p75, p90, p95, p99, max or avg."""
    headroom: PolicyDecimal = None
    """Multiplier applied to the statistic, a decimal 0 < h ≤ 100 with at most 6 decimal places such as "1.2";
    empty means 1.0."""


class Readiness(WireModel):
    """When a profile's statistics are trusted enough to apply."""

    min_data_points: Int64 | None = Field(default=None, ge=1)
    """Samples needed per container and resource (500 when omitted)."""
    min_time_span: str | None = None
    """Time since the first sample needed (Go duration; 24h when omitted)."""
    max_cv: PolicyDecimal = None
    """Largest coefficient of variation accepted: a decimal 0 ≤ v ≤ 100 with at most 6 decimal places (1.5 when
    omitted)."""
    cv_mean_floor: dict[str, FloorQuantity] | None = None
    """Per resource, a mean below which the CV check is skipped: a quantity from 0 to 2**63 − 1 units (millicores
    for cpu, bytes otherwise). Omitted means cpu 25m, memory 25Mi, ephemeral-storage 2Mi; an empty map disables
    every floor."""


class ResourceThreshold(WireModel):
    """Drift thresholds of one resource."""

    request: PolicyPercent = None
    """Threshold for the request, a percentage 0 < p ≤ 100 such as "10%"."""
    limit: PolicyPercent = None
    """Threshold for the limit, a percentage 0 < p ≤ 100 such as "10%"."""


class ResizeThresholds(WireModel):
    """Drift thresholds used by in-place resize."""

    default: PolicyPercent = None
    """Threshold for every resource (0 < p ≤ 100); falls back to thresholds.default when omitted."""
    resource_thresholds: dict[str, ResourceThreshold] | None = None
    """Per-resource thresholds."""


class Thresholds(WireModel):
    """How far a running value may drift from the recommendation before it is changed."""

    default: PolicyPercent = None
    """Threshold for every resource and field, a percentage 0 < p ≤ 100 ("10%" when omitted)."""
    resize: ResizeThresholds | None = None
    """Thresholds specific to in-place resize."""


class ResizeBehavior(WireModel):
    """Pace of in-place resizes."""

    max_change_per_cycle: PolicyPercent = None
    """Largest step toward the recommendation per resize, a percentage of the gap 0 < p ≤ 100 ("50%" when
    omitted)."""
    interval: str | None = None
    """Time between two resizes of a pod (Go duration; 15m when omitted)."""


class OOMBehavior(WireModel):
    """How OOM kills raise a profile's memory limit (docs/design.md, difference 62)."""

    enabled: bool | None = None
    """Whether OOM kills raise the memory limit (true when omitted; false is the Go operator's behaviour)."""
    bump_ratio: PolicyDecimal = None
    """The floor is at least the limit at OOM times this decimal, 1 ≤ r ≤ 100 ("1.2" when omitted, VPA's)."""
    min_bump: FloorQuantityOrNone = None
    """The floor is at least the limit at OOM plus this quantity of bytes ("100Mi" when omitted, VPA's)."""
    window: str | None = None
    """How long a kill counts and its floor binds (Go duration > 0; 24h when omitted)."""
    max_limit: FloorQuantityOrNone = None
    """The highest floor (bytes); omitted means twice the limit of the window's first kill."""
    max_kills: Int32 | None = Field(default=None, ge=1, le=10)
    """Raises per window, 1 to 10; a kill past them at or above the floor stops raising (`OOMKillsRepeated`). 3
    when omitted."""


class Behaviors(WireModel):
    """Thresholds, resize pace and OOM handling."""

    thresholds: Thresholds | None = None
    """Drift thresholds."""
    resize: ResizeBehavior | None = None
    """Resize pace."""
    oom: OOMBehavior | None = None
    """How OOM kills raise the memory limit."""


class ResourcePolicySpec(WireModel):
    """The policy: selection, precedence, metrics, readiness and behaviours."""

    priority: Int32 | None = None
    """Precedence among matching policies of the same scope; higher wins, omitted means 0."""
    selector: PolicySelector | None = None
    """Which pods the policy applies to; omitted matches every pod."""
    metrics: Annotated[list[MetricConfig] | None, ATOMIC_LIST] = None
    """The recommended values and how each is computed."""
    readiness: Readiness | None = None
    """When recommendations are trusted."""
    behaviors: Behaviors | None = None
    """Drift thresholds and resize pace."""

    def with_defaults(self) -> ResourcePolicySpec:
        """A copy with the resolve-time defaults filled in: minDataPoints 500 (also for values ≤ 0),
        minTimeSpan 24h, maxCV 1.5, cvMeanFloor cpu 25m / memory 25Mi / ephemeral-storage 2Mi (an explicit
        empty map is kept), thresholds.default 10%, resize.maxChangePerCycle 50%, resize.interval 15m,
        oom.enabled true, oom.bumpRatio 1.2, oom.minBump 100Mi, oom.window 24h, oom.maxKills 3 (oom.maxLimit
        stays empty: its default depends on the kills).
        thresholds.resize.default stays empty so it falls through to thresholds.default; headrooms are not
        touched (1.0 is applied at use time)."""
        spec = self.model_copy(deep=True)
        readiness = spec.readiness or Readiness()
        if readiness.min_data_points is None or readiness.min_data_points <= 0:
            readiness.min_data_points = DEFAULT_MIN_DATA_POINTS
        readiness.min_time_span = readiness.min_time_span or DEFAULT_MIN_TIME_SPAN
        readiness.max_cv = readiness.max_cv or DEFAULT_MAX_CV
        if readiness.cv_mean_floor is None:
            readiness.cv_mean_floor = dict(DEFAULT_CV_MEAN_FLOOR)
        behaviors = spec.behaviors or Behaviors()
        thresholds = behaviors.thresholds or Thresholds()
        thresholds.default = thresholds.default or DEFAULT_THRESHOLD
        resize = behaviors.resize or ResizeBehavior()
        resize.max_change_per_cycle = resize.max_change_per_cycle or DEFAULT_MAX_CHANGE_PER_CYCLE
        resize.interval = resize.interval or DEFAULT_RESIZE_INTERVAL
        oom = behaviors.oom or OOMBehavior()
        oom.enabled = True if oom.enabled is None else oom.enabled
        oom.bump_ratio = oom.bump_ratio or DEFAULT_OOM_BUMP_RATIO
        oom.min_bump = oom.min_bump or DEFAULT_OOM_MIN_BUMP
        oom.window = oom.window or DEFAULT_OOM_WINDOW
        oom.max_kills = oom.max_kills or DEFAULT_OOM_MAX_KILLS
        behaviors.thresholds, behaviors.resize, behaviors.oom = thresholds, resize, oom
        spec.readiness, spec.behaviors = readiness, behaviors
        return spec


class ResourcePolicyStatus(WireModel):
    """What the operator reports about a policy."""

    profile_discriminator: str | None = None
    """The suffix of the names of the WorkloadProfiles this policy governs."""
    conditions: Conditions = ConditionList()
    """Valid: whether the policy's regexes, selectors and quantities are usable."""
