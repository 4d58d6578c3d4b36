"""The ConsolidationReport's typed status (`ballast.internal.consolidation.status`) and event text are what the
dict builders made before them, for the same refreshes (expected/advisor-*.json, captured from them at 0c6d409):
the report's body is unchanged."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ballast.api.ballast.v1 import ConsolidationReportStatus
from ballast.internal.consolidation.inputs import advise
from ballast.internal.consolidation.report import advised_message
from ballast.internal.consolidation.status import AdvisorView, Outcome, report_status

from .scenarios import ADVISOR_RUNS, EXPECTED, NOW, advisor_inputs


def refreshed(run: dict[str, Any]) -> dict[str, Any]:
    read = advisor_inputs(tuple(run["problems"]))
    view = AdvisorView(("ballast-system", "catalogue") if run["catalogue"] else None, run["policy"], run["k"])
    if run["failure"] is not None:
        reason, message = run["failure"]
        outcome = Outcome(inputs=read if reason == "PlanFailed" else None, failure=message, reason=reason)
    else:
        outcome = Outcome(read, advise(read, k=run["k"], default_policy=run["policy"]))
    previous = None if run["previous"] is None else ConsolidationReportStatus.model_validate(run["previous"])
    status = report_status(outcome, view, now=NOW, refresh=run["refresh"], previous=previous)
    advice = outcome.advice
    return {
        "status": status.to_wire(),
        "event": None if advice is None else advised_message(advice.recommended, advice.current),
    }


@pytest.mark.parametrize("name", sorted(ADVISOR_RUNS))
def test_the_typed_status_is_the_previous_body(name: str) -> None:
    expected = json.loads((EXPECTED / f"advisor-{name}.json").read_text(encoding="utf-8"))
    found = refreshed(ADVISOR_RUNS[name])
    assert found == expected
    assert json.dumps(found, sort_keys=True) == json.dumps(expected, sort_keys=True)
