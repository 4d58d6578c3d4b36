"""The Balancer's typed status (`ballast.internal.placement.status`) is the body the dict builders made before it,
for the same runs (expected/balancer-*.json, captured from them at 0c6d409)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ballast.api.balancer.v1alpha1 import Balancer
from ballast.api.scheme import add_to_scheme
from ballast.internal.placement import Placement, PodSummary
from ballast.internal.placement.status import RunOutcome, TargetOutcome, balancer_status
from ballast.runtime import Scheme

from .scenarios import BALANCER_RUNS, EXPECTED, NOW


def typed(run: dict[str, Any]) -> Balancer:
    document = {**run["balancer"], "metadata": {**run["balancer"]["metadata"], "namespace": "shop", "generation": 3}}
    if run["previous"] is not None:
        document["status"] = run["previous"]
    found: Balancer = add_to_scheme(Scheme()).from_wire(document, Balancer)
    return found


def outcome(run: dict[str, Any]) -> RunOutcome:
    targets = []
    for name, seen in run["targets"].items():
        summary = None
        if seen["running"] is not None:
            summary = PodSummary(seen["running"] + seen["notStarted"], seen["running"], seen["notStarted"])
        targets.append(TargetOutcome(name, seen["desired"], seen["placed"], summary, seen["conflict"]))
    phase, failure = (None, "") if run["error"] is None else (run["error"][0], ": ".join(run["error"]))
    placement = None if run["placement"] is None else Placement({}, **run["placement"])
    return RunOutcome(targets, phase, failure, placement, run["observed"])


@pytest.mark.parametrize("name", sorted(BALANCER_RUNS))
def test_the_typed_status_is_the_previous_body(name: str) -> None:
    run = BALANCER_RUNS[name]
    expected = json.loads((EXPECTED / f"balancer-{name}.json").read_text(encoding="utf-8"))
    found = balancer_status(typed(run), outcome(run), NOW).to_wire()
    assert found == expected
    assert json.dumps(found, sort_keys=True) == json.dumps(expected, sort_keys=True)
