"""The scheduling webhook's metrics: kupid's own request counter, unchanged, and per-policy outcomes.

`kupid_aggr_requests_total{type}` counts as kupid does (its five types exist from the start at 0): `processed`
for every request; `error` for a kind without a pod template, an object that does not decode, or policies that
could not be read; `allowed` when no policy matched, or a patch was sent (then `mutated` too); `denied` when an
enforced policy refused the object. A request whose policies matched but changed nothing counts only as
`processed`, as upstream.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from ballast.runtime.metrics import REGISTRY

KUPID_REQUEST_TYPES = ("processed", "allowed", "denied", "mutated", "error")

KUPID_REQUESTS = Counter(
    "requests", "The accumulated total number of requests processed by kupid.",
    ["type"], namespace="kupid", subsystem="aggr", registry=REGISTRY,
)  # fmt: skip
for _type in KUPID_REQUEST_TYPES:
    KUPID_REQUESTS.labels(_type)

SCHEDULING_POLICY_APPLICATIONS = Counter(
    "ballast_scheduling_policy_applications",
    "Matched scheduling policies at admission by policy, object kind and result "
    "(applied, unchanged, conflict, denied, error)",
    ["policy", "kind", "result"], registry=REGISTRY,
)  # fmt: skip

SCHEDULING_ADMISSION_DURATION = Histogram(
    "ballast_scheduling_admission_duration_seconds",
    "Time the scheduling webhook took to answer, by object kind",
    ["kind"], buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0), registry=REGISTRY,
)  # fmt: skip
