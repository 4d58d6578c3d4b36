"""The Balancer's status conditions fit what the API server takes (`ballast.internal.balancer.status`)."""

from __future__ import annotations

import copy
import datetime

from ballast.api.balancer.v1alpha1 import TARGET_CONFLICT, Balancer
from ballast.api.scheme import add_to_scheme
from ballast.internal.balancer.run import BalancerError, BalancerRun
from ballast.internal.balancer.status import balancer_status
from ballast.runtime import Scheme
from ballast.runtime.conditions import find_status_condition
from ballast.runtime.crd.meta import CONDITION_MESSAGE_MAX_LENGTH
from tests.unit.api.balancer_samples import balancer

NOW = datetime.datetime(2026, 12, 7, 23, 0, tzinfo=datetime.UTC)
NAMES = [f"{index:03d}".rjust(63, "t") for index in range(100)]
"""The largest Balancer the CRD accepts: 100 targets with names of 63 characters."""


def largest_balancer() -> BalancerRun:
    document = balancer("nginx-priority")
    template = document["spec"]["targets"][1]
    document["spec"]["targets"] = [{**copy.deepcopy(template), "name": name} for name in NAMES]
    document["spec"]["policy"]["priorities"]["targetOrder"] = list(reversed(NAMES))
    document["metadata"] = {**document["metadata"], "namespace": "shop", "generation": 1}
    return BalancerRun.of(add_to_scheme(Scheme()).from_wire(document, Balancer))


def test_every_target_of_one_deployment_in_conflict_is_counted_within_the_message_limit() -> None:
    run = largest_balancer()
    for target in run.targets:  # all on one Deployment: each conflicts with the 99 others
        target.conflict = ", ".join(f"target {name} of this Balancer" for name in NAMES if name != target.name)

    conflict = find_status_condition(balancer_status(run, NOW).conditions, TARGET_CONFLICT)

    assert conflict is not None
    message = conflict.message
    assert len(message) <= CONDITION_MESSAGE_MAX_LENGTH
    assert message.startswith(f"target {NAMES[0]} is not scaled, also scaled by target {NAMES[1]} of this Balancer")
    shown = message.count(" is not scaled, ")
    assert 0 < shown < len(NAMES)
    assert message.endswith(f"; and {len(NAMES) - shown} more targets in conflict")


def test_a_few_conflicts_are_listed_whole_and_a_long_error_is_cut() -> None:
    run = largest_balancer()
    run.targets[0].conflict = "HorizontalPodAutoscaler nginx"
    run.error = BalancerError("ScaleSubresourcePolling", "x" * (CONDITION_MESSAGE_MAX_LENGTH + 10))

    conditions = balancer_status(run, NOW).conditions

    conflict = find_status_condition(conditions, TARGET_CONFLICT)
    balancing = find_status_condition(conditions, "Balancing")
    assert conflict is not None
    assert conflict.message == f"target {NAMES[0]} is not scaled, also scaled by HorizontalPodAutoscaler nginx"
    assert balancing is not None
    assert len(balancing.message) == CONDITION_MESSAGE_MAX_LENGTH
    assert balancing.message.endswith("x…")


def test_one_conflict_longer_than_a_message_is_cut_and_one_just_at_the_limit_is_whole() -> None:
    run = largest_balancer()
    run.targets[0].conflict = ", ".join(f"Balancer owner-{index}" for index in range(5000))
    run.targets[1].conflict = "HorizontalPodAutoscaler nginx"

    cut = find_status_condition(balancer_status(run, NOW).conditions, TARGET_CONFLICT)

    assert cut is not None
    assert len(cut.message) == CONDITION_MESSAGE_MAX_LENGTH
    assert cut.message.endswith("…; and 1 more targets in conflict")

    run.targets[1].conflict = None
    prefix = f"target {NAMES[0]} is not scaled, also scaled by "
    run.targets[0].conflict = "o" * (CONDITION_MESSAGE_MAX_LENGTH - len(prefix))

    whole = find_status_condition(balancer_status(run, NOW).conditions, TARGET_CONFLICT)

    assert whole is not None
    assert whole.message == prefix + run.targets[0].conflict
