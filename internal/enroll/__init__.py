"""Bulk enrollment (`ballast enroll`, a port of the Go project's `scripts/enroll.sh`, docs/compatibility.md):
which Deployments, StatefulSets and DaemonSets to label with the mode, how (restart or in place), the patches,
and the records, summary line and exit code. Pure functions; `enroller.Enroller` does the I/O.

    identity = resolve_identity(None, config.spec.identity_labels, context=None)
    found = scan([Workload.from_object(o) for o in objects], identity, Options("measure"), ignore=None)
    decision = plan_statefulset(Workload.from_object(live), identity, Options("measure"))
    if isinstance(decision, Step): print(decision.record().line())   # PLAN  statefulset db/pg  no restart: …
    print(Tally.of(records).summary())                               # Summary: 1 enrolled, 0 failed, …
"""

from .identity import (
    DEFAULT_IDENTITY_LABELS,
    Identity,
    IdentityError,
    has_tuple,
    qualifies,
    resolve_identity,
    template_mode,
)
from .plan import (
    Converged,
    Decision,
    Options,
    Route,
    Scan,
    Step,
    is_ignored,
    plan_daemonset,
    plan_deployment,
    plan_statefulset,
    scan,
)
from .report import EXIT_FAILED, EXIT_OK, EXIT_USAGE, Record, Status, Tally
from .rollout import (
    RolloutStatus,
    counts_pods_updated,
    current_replica_set,
    newest_revision_hash,
    pods_missing_mode,
    rollout_status,
    running_pod_uids,
)
from .workload import API_KINDS, KINDS, Kind, Workload, selector_string, settled

__all__ = [
    "API_KINDS",
    "DEFAULT_IDENTITY_LABELS",
    "EXIT_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "KINDS",
    "Converged",
    "Decision",
    "Identity",
    "IdentityError",
    "Kind",
    "Options",
    "Record",
    "RolloutStatus",
    "Route",
    "Scan",
    "Status",
    "Step",
    "Tally",
    "Workload",
    "counts_pods_updated",
    "current_replica_set",
    "has_tuple",
    "is_ignored",
    "newest_revision_hash",
    "plan_daemonset",
    "plan_deployment",
    "plan_statefulset",
    "pods_missing_mode",
    "qualifies",
    "resolve_identity",
    "rollout_status",
    "running_pod_uids",
    "scan",
    "selector_string",
    "settled",
    "template_mode",
]
