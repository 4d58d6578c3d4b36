"""Captures the status bodies of the dict builders (controllers/balancer.py `_conditions`/`_targets_status` and
controllers/consolidation.py `report_status`/`advised_message`, as at 0bb6abe) for `scenarios`, into expected/.
Run once at that commit: `.venv/bin/python -m tests.unit.bodies.capture`."""

from __future__ import annotations

import json
from typing import Any

from ballast.api.balancer.v1alpha1 import Balancer
from ballast.api.scheme import add_to_scheme
from ballast.controllers import balancer as old_balancer
from ballast.controllers import consolidation as old_advisor
from ballast.internal.consolidationinputs import ReadSettings, advise
from ballast.internal.placement import Placement, PodSummary
from ballast.runtime import Scheme
from ballast.runtime import labels as label_selectors

from .scenarios import ADVISOR_RUNS, BALANCER_RUNS, EXPECTED, NOW, advisor_inputs


def balancer_status(run: dict[str, Any]) -> dict[str, Any]:
    """`_write_status`'s status, the same steps without the client."""
    scheme = add_to_scheme(Scheme())
    document = {**run["balancer"], "metadata": {**run["balancer"]["metadata"], "namespace": "shop", "generation": 3}}
    if run["previous"] is not None:
        document["status"] = run["previous"]
    typed = scheme.from_wire(document, Balancer)
    targets = []
    for target in typed.spec.targets:
        seen = run["targets"][target.name]
        targets.append(old_balancer._TargetRun(
            target, scale=None if seen["placed"] is None else {"spec": {"replicas": seen["placed"]}},
            summary=None if seen["running"] is None else PodSummary(
                seen["running"] + seen["notStarted"], seen["running"], seen["notStarted"]),
            desired=seen["desired"], conflict=seen["conflict"],
        ))  # fmt: skip
    placement = None if run["placement"] is None else Placement({}, **run["placement"])
    error = None if run["error"] is None else old_balancer.BalancerError(*run["error"])
    state = old_balancer._Run(typed, targets, error, placement, run["observed"])
    current = typed.status
    wire_status = scheme.to_wire(current) if current is not None else {}
    previous = (current.conditions if current else None) or []
    conditions = old_balancer._conditions(state, previous, wire_status, NOW)
    status: dict[str, Any] = {"conditions": conditions, "targets": old_balancer._targets_status(state, wire_status)}
    observed = state.observed if state.observed is not None else wire_status.get("replicas")
    if observed is not None:
        status["replicas"] = observed
    try:
        status["selector"] = old_balancer.selector_string(typed.spec.selector.model_dump(by_alias=True))
    except label_selectors.SelectorError:
        if wire_status.get("selector") is not None:
            status["selector"] = wire_status["selector"]
    return status


def advisor_status(run: dict[str, Any]) -> dict[str, Any]:
    read = advisor_inputs(tuple(run["problems"]))
    settings = old_advisor.AdvisorSettings(
        read=ReadSettings(catalogue=("ballast-system", "catalogue") if run["catalogue"] else None),
        default_policy=run["policy"], k=run["k"],
    )  # fmt: skip
    if run["failure"] is not None:
        reason, message = run["failure"]
        outcome = old_advisor.Outcome(inputs=read if reason == "PlanFailed" else None, failure=message, reason=reason)
    else:
        outcome = old_advisor.Outcome(read, advise(read, k=run["k"], default_policy=run["policy"]))
    status = old_advisor.report_status(outcome, settings, now=NOW, refresh=run["refresh"],
                                       previous=run["previous"] or {})  # fmt: skip
    message = None if outcome.advice is None else old_advisor.advised_message(outcome.advice)
    return {"status": status, "event": message}


def main() -> None:
    EXPECTED.mkdir(exist_ok=True)
    for name, run in BALANCER_RUNS.items():
        text = json.dumps(balancer_status(run), indent=1)
        (EXPECTED / f"balancer-{name}.json").write_text(text + "\n", encoding="utf-8")
    for name, run in ADVISOR_RUNS.items():
        text = json.dumps(advisor_status(run), indent=1, ensure_ascii=False)
        (EXPECTED / f"advisor-{name}.json").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
