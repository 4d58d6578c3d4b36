"""`ballast_*` metrics with the Go operator's names and attributes, on the runtime's Prometheus registry.

The Go operator records OpenTelemetry instruments whose "profile attributes" are one attribute per identity
label (named after the label key's last segment), so the label set depends on the cluster's BallastConfig. A
prometheus_client metric needs its label names up front; these counters and gauges instead keep one value per
label set and are exposed by a collector, so every sample carries exactly the attributes the Go operator's do.
The Prometheus names are the OTel names with `.` → `_`, plus `_total` on counters.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Mapping

from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from ballast.runtime.metrics import REGISTRY

LabelSet = frozenset[tuple[str, str]]
OTEL_NAMES: dict[str, str] = {}
"""Prometheus family name → OpenTelemetry instrument name, for every `ballast_*` metric."""
_UNSAFE = re.compile(r"[^a-z0-9_]")


def _attribute_name(key: str) -> str:
    return _UNSAFE.sub("_", key.lower())


def profile_attributes(profile: str | None, tuple_labels: Mapping[str, str] | None) -> dict[str, str]:
    """`profile` plus one attribute per identity label, keyed by the key's last `/` segment (sanitized); keys
    that collide after that use their whole key, sanitized the same way."""
    attributes: dict[str, str] = {}
    if profile:
        attributes["profile"] = profile
    labels = dict(tuple_labels or {})
    short = {key: _attribute_name(key.rpartition("/")[2]) for key in labels}
    counts: dict[str, int] = {}
    for name in short.values():
        counts[name] = counts.get(name, 0) + 1
    for key, value in labels.items():
        name = short[key] if counts[short[key]] == 1 else _attribute_name(key)
        attributes[name] = value
    return attributes


class _Labelled(Collector):
    """One value per label set, exposed as one metric family."""

    kind = "untyped"
    suffix = ""

    def __init__(self, name: str, documentation: str, *, otel_name: str) -> None:
        self.name = name
        self.otel_name = otel_name  # the Go operator's instrument name, used for OTLP export
        OTEL_NAMES[name] = otel_name
        self.documentation = documentation
        self._values: dict[LabelSet, float] = {}
        self._lock = threading.Lock()
        REGISTRY.register(self)

    def value(self, **labels: str) -> float:
        """The current value for exactly this label set (0 when never recorded) — for tests and health."""
        with self._lock:
            return self._values.get(frozenset(labels.items()), 0.0)

    def describe(self) -> Iterable[Metric]:
        return [Metric(self.name, self.documentation, self.kind)]

    def collect(self) -> Iterable[Metric]:
        metric = Metric(self.name, self.documentation, self.kind)
        with self._lock:
            values = list(self._values.items())
        for labels, value in values:
            metric.add_sample(self.name + self.suffix, dict(labels), value)
        return [metric]


class LabelledCounter(_Labelled):
    kind = "counter"
    suffix = "_total"

    def inc(self, labels: Mapping[str, str], amount: float = 1.0) -> None:
        key = frozenset(labels.items())
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount


class LabelledGauge(_Labelled):
    kind = "gauge"

    def set(self, labels: Mapping[str, str], value: float) -> None:
        with self._lock:
            self._values[frozenset(labels.items())] = value

    def replace(self, values: Iterable[tuple[Mapping[str, str], float]]) -> None:
        """Swap in a whole new set of samples (observable gauges recomputed from the cache)."""
        fresh = {frozenset(labels.items()): value for labels, value in values}
        with self._lock:
            self._values = fresh


SAMPLES_COLLECTED = LabelledCounter(
    "ballast_samples_collected", "Samples written to the history store", otel_name="ballast.samples.collected"
)
FETCH_ERRORS = LabelledCounter("ballast_fetch_errors", "Metric source fetch errors", otel_name="ballast.fetch.errors")
STORE_ERRORS = LabelledCounter(
    "ballast_store_errors",
    "History store calls that failed (the collection cycle or its status update skipped), by operation",
    otel_name="ballast.store.errors",
)
PROFILES_THRESHOLD_MET = LabelledCounter(
    "ballast_profiles_threshold_met", "Profiles that became ready", otel_name="ballast.profiles.threshold_met"
)
PODS_PROCESSED = LabelledCounter(
    "ballast_pods_processed", "Pods enrolled, migrated, unenrolled or deleted", otel_name="ballast.pods.processed"
)
WORKLOAD_PROFILES_CREATED = LabelledCounter(
    "ballast_workload_profiles_created", "WorkloadProfiles created", otel_name="ballast.workload_profiles.created"
)
WORKLOAD_PROFILES_PURGED = LabelledCounter(
    "ballast_workload_profiles_purged", "Profile histories purged", otel_name="ballast.workload_profiles.purged"
)
RESIZE_APPLIED = LabelledCounter(
    "ballast_resize_applied", "In-place resizes applied", otel_name="ballast.resize.applied"
)
RESIZE_FAILED = LabelledCounter(
    "ballast_resize_failed", "In-place resizes refused or failed", otel_name="ballast.resize.failed"
)
RESIZE_SKIPPED = LabelledCounter(
    "ballast_resize_skipped", "In-place resizes skipped, by reason", otel_name="ballast.resize.skipped"
)
APPLY_APPLIED = LabelledCounter(
    "ballast_apply_applied", "Admissions that applied recommendations", otel_name="ballast.apply.applied"
)
APPLY_SKIPPED = LabelledCounter(
    "ballast_apply_skipped", "Admissions that wanted recommendations but got none", otel_name="ballast.apply.skipped"
)
APPLY_LIMIT_SCALED = LabelledCounter(
    "ballast_apply_limit_scaled",
    "Limits raised to keep request ≤ limit (the container's limit:request ratio kept; docs/design.md, difference 4)",
    otel_name="ballast.apply.limit_scaled",
)
WEBHOOK_MUTATIONS = LabelledCounter(
    "ballast_webhook_mutations", "Pod admissions by outcome", otel_name="ballast.webhook.mutations"
)
KILL_SWITCH_TRANSITIONS = LabelledCounter(
    "ballast_kill_switch_transitions",
    "Kill switch activations/deactivations",
    otel_name="ballast.kill_switch.transitions",
)
KILL_SWITCH_ACTIVE = LabelledGauge(
    "ballast_kill_switch_active", "1 while the kill switch is active", otel_name="ballast.kill_switch.active"
)
PROFILES = LabelledGauge(
    "ballast_profiles", "WorkloadProfiles in the cache by identity and state", otel_name="ballast.profiles"
)
# The history store past one instance (docs/design.md, difference 67): ours, no Go counterpart.
HISTORY_WRITES_RETRIED = LabelledCounter(
    "ballast_history_writes_retried",
    "Held collection cycles written again after the store came back (or a failover)",
    otel_name="ballast.history.writes_retried",
)
HISTORY_CYCLES_BUFFERED = LabelledGauge(
    "ballast_history_cycles_buffered",
    "Collection cycles held in memory because the store did not acknowledge them",
    otel_name="ballast.history.cycles_buffered",
)
HISTORY_BUFFERED_BYTES = LabelledGauge(
    "ballast_history_buffered_bytes",
    "Estimated bytes of the held collection cycles (bounded by --history-buffer-bytes)",
    otel_name="ballast.history.buffered_bytes",
)
HISTORY_CYCLES_DROPPED = LabelledCounter(
    "ballast_history_cycles_dropped",
    "Held collection cycles given up, by reason (buffer full, refused by the store, leadership lost)",
    otel_name="ballast.history.cycles_dropped",
)
HISTORY_PRIMARY = LabelledGauge(
    "ballast_history_primary",
    "1 for the store primary (Sentinel) or primaries (Cluster) the last cycle was written to",
    otel_name="ballast.history.primary",
)
OOM_KILLS = LabelledCounter(
    "ballast_oom_kills",
    "OOM kills of enrolled containers recorded against their profile (docs/design.md, difference 62)",
    otel_name="ballast.oom.kills",
)
OOM_FLOOR_BYTES = LabelledGauge(
    "ballast_oom_floor_bytes",
    "The memory-limit floor OOM kills set for a profile's container, in bytes (0 once it lapsed)",
    otel_name="ballast.oom.floor_bytes",
)
