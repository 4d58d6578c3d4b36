"""The Balancer's typed status (`ballast.internal.balancer.status`) is the body the dict builders made before it,
for the same runs (expected/balancer-*.json, captured from them at 0c6d409)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ballast.api.balancer.v1alpha1 import Balancer
from ballast.api.scheme import add_to_scheme
from ballast.internal.balancer import Placement, PodSummary
from ballast.internal.balancer.run import BalancerError, BalancerRun
from ballast.internal.balancer.status import balancer_status
from ballast.runtime import Scheme

from .scenarios import BALANCER_RUNS, EXPECTED, NOW


def typed(run: dict[str, Any]) -> Balancer:
    document = {**run["balancer"], "metadata": {**run["balancer"]["metadata"], "namespace": "shop", "generation": 3}}
    if run["previous"] is not None:
        document["status"] = run["previous"]
    found: Balancer = add_to_scheme(Scheme()).from_wire(document, Balancer)
    return found


def balancer_run(run: dict[str, Any]) -> BalancerRun:
    found = BalancerRun.of(typed(run))
    for target in found.targets:
        seen = run["targets"][target.name]
        target.scale = None if seen["placed"] is None else {"spec": {"replicas": seen["placed"]}}
        if seen["running"] is not None:
            target.summary = PodSummary(seen["running"] + seen["notStarted"], seen["running"], seen["notStarted"])
        target.desired, target.conflict = seen["desired"], seen["conflict"]
    found.error = None if run["error"] is None else BalancerError(*run["error"])
    found.placement = None if run["placement"] is None else Placement({}, **run["placement"])
    found.observed = run["observed"]
    return found


@pytest.mark.parametrize("name", sorted(BALANCER_RUNS))
def test_the_typed_status_is_the_previous_body(name: str) -> None:
    run = BALANCER_RUNS[name]
    expected = json.loads((EXPECTED / f"balancer-{name}.json").read_text(encoding="utf-8"))
    found = balancer_status(balancer_run(run), NOW).to_wire()
    assert found == expected
    assert json.dumps(found, sort_keys=True) == json.dumps(expected, sort_keys=True)
