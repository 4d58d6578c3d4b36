"""Representative inputs of the Balancer's status and the ConsolidationReport's status. `expected/*.json` holds
the bodies the previous dict builders (controllers/balancer.py `_conditions`/`_targets_status`,
controllers/consolidation.py `report_status`/`advised_message`) made for them, captured at commit 0c6d409 by
tests/unit/bodies/capture.py (removed since: it called those builders); the tests compare the typed bodies with
them."""

from __future__ import annotations

import copy
import datetime
from pathlib import Path
from typing import Any

from tests.unit.api.balancer_samples import balancer

JSON = dict[str, Any]
EXPECTED = Path(__file__).parent / "expected"
NOW = datetime.datetime(2026, 12, 2, 12, 0, tzinfo=datetime.UTC)
EARLIER = "2026-12-01T08:00:00Z"


def _proportional_with_unknown() -> JSON:
    document = balancer("nginx-proportional")
    document["spec"]["policy"]["proportions"]["targetProportions"]["nginx-9"] = 10
    return document


def _bad_selector() -> JSON:
    document = balancer("nginx-priority")
    document["spec"]["selector"] = {"matchExpressions": [{"key": "srv", "operator": "Bogus"}]}
    return document


def _previous() -> JSON:
    """A status from an earlier run: Balancing True, replicas 5, both targets placed, missing 1, no overflow."""
    return {
        "replicas": 5, "selector": "srv=nginx",
        "conditions": [
            {"type": "Balancing", "status": "True", "reason": "Completed", "message": "Balancer running OK",
             "lastTransitionTime": EARLIER, "observedGeneration": 1},
            {"type": "ReplicasMissing", "status": "True", "reason": "ReplicasMissing",
             "message": "1 replicas added on top of spec.replicas to satisfy the targets' minReplicas",
             "lastTransitionTime": EARLIER, "observedGeneration": 1},
            {"type": "ReplicasOverflow", "status": "False", "reason": "NoProblem",
             "message": "no replicas that fit in no target (every target that may take them is at maxReplicas)",
             "lastTransitionTime": EARLIER, "observedGeneration": 1},
        ],
        "targets": [{"name": "nginx-1", "desired": 4, "placed": 4, "running": 4, "notStarted": 0},
                    {"name": "nginx-2", "desired": 1, "placed": 1, "running": 0, "notStarted": 1}],
    }  # fmt: skip


def _target(desired: int | None, placed: int | None, running: int | None, not_started: int | None,
            conflict: str | None = None) -> JSON:  # fmt: skip
    return {"desired": desired, "placed": placed, "running": running, "notStarted": not_started, "conflict": conflict}


BALANCER_RUNS: dict[str, JSON] = {
    "first-run-placed": {
        "balancer": balancer("nginx-priority"),
        "previous": None,
        "observed": 5,
        "error": None,
        "placement": {"missing": 0, "overflow": 0},
        "targets": {"nginx-1": _target(4, 4, 4, 0), "nginx-2": _target(1, 1, 1, 0)},
    },
    "missing-overflow-unknown-proportion": {
        "balancer": _proportional_with_unknown(),
        "previous": _previous(),
        "observed": 7,
        "error": None,
        "placement": {"missing": 2, "overflow": 3},
        "targets": {"nginx-1": _target(5, 3, 2, 1), "nginx-2": _target(5, 4, 4, 0)},
    },
    "failed-in-phase-1-previous-kept": {
        "balancer": balancer("nginx-priority"),
        "previous": _previous(),
        "observed": None,
        "error": ["ScaleSubresourcePolling", "failed to query scale subresource for Deployment/shop/nginx-1: gone"],
        "placement": None,
        "targets": {"nginx-1": _target(None, None, None, None), "nginx-2": _target(None, 3, None, None)},
    },
    "conflict-and-bad-selector": {
        "balancer": _bad_selector(),
        "previous": copy.deepcopy(_previous()),
        "observed": None,
        "error": ["PodLabelsChecking", "incorrect selector"],
        "placement": None,
        "targets": {
            "nginx-1": _target(None, 4, None, None, "HorizontalPodAutoscaler nginx"),
            "nginx-2": _target(None, 1, None, None, "Balancer other (target b), target nginx-1 of this Balancer"),
        },
    },
}
"""Name → one run of the Balancer: what each target got, the error, the placement's problems, the status before."""


# ------------------------------------------------------------------------------------------- consolidation


def advisor_inputs(problems: tuple[str, ...] = ()) -> Any:
    """The small cluster of tests/unit/controllers/consolidation/scenario.py, read."""
    from ballast.api.ballast.v1 import WorkloadProfileStatus  # noqa: PLC0415
    from ballast.internal.consolidation import node_from_wire, parse_catalogue, pod_from_wire  # noqa: PLC0415
    from ballast.internal.consolidation.inputs import Inputs, Observed, pod_requests, profile_requests  # noqa: PLC0415
    from tests.unit.controllers.consolidation.scenario import CATALOGUE, PROFILE_STATUS, nodes, pods  # noqa: PLC0415

    catalogue = parse_catalogue(CATALOGUE)
    profile = profile_requests(WorkloadProfileStatus.model_validate(PROFILE_STATUS))
    wire = pods("shop")
    return Inputs(
        nodes=tuple(node_from_wire(n, catalogue) for n in nodes()),
        pods=tuple(pod_from_wire(p) for p in wire),
        recommended_pods=tuple(pod_from_wire(p, pod_requests(p, profile) if "web" in p["metadata"]["name"] else None)
                               for p in wire),
        pdbs=(), pools={}, catalogue=catalogue, karpenter=False,
        observed=Observed(nodes=4, pods=16, profiles=1, pods_with_recommendations=6),
        problems=(*catalogue.problems, *problems), catalogue_problems=catalogue.problems,
    )  # fmt: skip


PREVIOUS_REPORT: JSON = {
    "lastRefreshTime": EARLIER, "observedRefresh": "r0",
    "observed": {"nodes": 3, "pods": 9, "podDisruptionBudgets": 0, "nodePools": 0, "karpenter": False, "profiles": 0,
                 "podsWithRecommendations": 0, "defaultPolicy": "Balanced", "k": 2},
    "current": {"nodes": 3, "nodesAfter": 3, "costPerHour": "0.6000", "costPerMonth": "438.00",
                "disruptionCost": "9.00", "approved": 0, "rejected": 0, "moves": [], "movesOmitted": 0},
    "conditions": [
        {"type": "Ready", "status": "True", "reason": "Refreshed", "message": "advice computed from 3 nodes and 9 pods",
         "lastTransitionTime": EARLIER},
        {"type": "CatalogueValid", "status": "True", "reason": "Valid", "message": "2 offerings read",
         "lastTransitionTime": EARLIER},
        {"type": "InputsValid", "status": "True", "reason": "Valid", "message": "every object was read",
         "lastTransitionTime": EARLIER},
    ],
}  # fmt: skip
"""A report's status from an earlier refresh."""

ADVISOR_RUNS: dict[str, JSON] = {
    "balanced": {"policy": "Balanced", "k": 2, "catalogue": True, "problems": [], "failure": None, "previous": None,
                 "refresh": "r1"},
    "when-empty-or-underutilized-with-problems": {
        "policy": "WhenEmptyOrUnderutilized", "k": 4, "catalogue": False, "refresh": None,
        "problems": [f"pod shop/p-{i}: a problem described at some length to fill the message" for i in range(80)],
        "failure": None, "previous": PREVIOUS_REPORT,
    },
    "read-failed-previous-kept": {"policy": "Balanced", "k": 2, "catalogue": True, "problems": [],
                                  "failure": ["ReadFailed", "reading the cluster failed: boom"],
                                  "previous": PREVIOUS_REPORT, "refresh": "r2"},
    "plan-failed-nothing-before": {"policy": "Balanced", "k": 2, "catalogue": True, "problems": [],
                                   "failure": ["PlanFailed", "planning failed: k"], "previous": None, "refresh": "r3"},
}  # fmt: skip
"""Name → one refresh of the advisor: settings, the read's problems, a failure, the status before."""
