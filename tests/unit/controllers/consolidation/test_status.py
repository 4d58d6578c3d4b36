"""The ConsolidationReport's status from the two plans: figures, the freed set, moves, conditions, the event text
and the metric figures (the reconciler only reads, calls these and writes)."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from ballast.api.ballast.v1 import ConsolidationReportStatus, WorkloadProfileStatus
from ballast.controllers.consolidation import AdvisorSettings, metric_figures
from ballast.internal.consolidation import (
    WHEN_EMPTY_OR_UNDERUTILIZED,
    Plan,
    node_from_wire,
    parse_catalogue,
    pod_from_wire,
)
from ballast.internal.consolidation import report as consolidation_report
from ballast.internal.consolidation import status as consolidation_status
from ballast.internal.consolidation.inputs import Inputs, Observed, ReadSettings, advise, pod_requests, profile_requests
from ballast.internal.consolidation.report import advised_message
from ballast.internal.consolidation.status import Outcome, report_status

from .scenario import BROKEN_ENTRY, CATALOGUE, PROFILE_STATUS, nodes, pods

NOW = datetime.datetime(2026, 12, 2, 12, 0, tzinfo=datetime.UTC)
SETTINGS = AdvisorSettings(read=ReadSettings(catalogue=("ballast-system", "catalogue")))


def inputs(problems: tuple[str, ...] = ()) -> Inputs:
    catalogue = parse_catalogue(CATALOGUE)
    profile = profile_requests(WorkloadProfileStatus.model_validate(PROFILE_STATUS))
    wire = pods("shop")
    return Inputs(
        nodes=tuple(node_from_wire(n, catalogue) for n in nodes()),
        pods=tuple(pod_from_wire(p) for p in wire),
        recommended_pods=tuple(pod_from_wire(p, pod_requests(p, profile) if "web" in p["metadata"]["name"] else None)
                               for p in wire),
        pdbs=(), pools={}, catalogue=catalogue, karpenter=False, observed=Observed(nodes=4, pods=16, profiles=1),
        problems=(*catalogue.problems, *problems), catalogue_problems=catalogue.problems,
    )  # fmt: skip


def status(outcome: Outcome, previous: dict[str, Any] | None = None) -> dict[str, Any]:
    before = None if previous is None else ConsolidationReportStatus.model_validate(previous)
    return report_status(outcome, SETTINGS.view(), now=NOW, refresh="r1", previous=before).to_wire()


def requests_report(plan: Plan) -> dict[str, Any]:
    return consolidation_report.requests_report(plan).to_wire()


def by_type(found: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["type"]: c for c in found["conditions"]}


def test_current_and_recommended_side_by_side() -> None:
    read = inputs()
    found = status(Outcome(read, advise(read)))
    ConsolidationReportStatus.model_validate(found)  # the CRD's model takes it

    current, recommended = found["current"], found["recommended"]
    assert (current["nodes"], current["costPerHour"], current["costPerMonth"]) == (4, "0.7000", "511.00")
    assert current["freed"]["count"] == 0
    assert current["freed"]["savingsPerMonth"] == "0.00"
    assert recommended["freed"]["count"] >= 2
    saved = float(recommended["freed"]["savingsPerHour"])
    assert recommended["freed"]["savingsPerMonth"] == f"{saved * 730:.2f}"
    launched = len(recommended["freed"]["launched"])
    assert recommended["nodesAfter"] == 4 - recommended["freed"]["count"] + launched
    assert [p["name"] for p in recommended["pools"]] == ["general"]
    assert found["observed"]["catalogue"] == "ballast-system/catalogue"
    assert found["observedRefresh"] == "r1"
    assert found["lastRefreshTime"] == "2026-12-02T12:00:00Z"


def test_the_marginal_move_is_rejected_by_balanced_and_taken_by_when_empty_or_underutilized() -> None:
    read = inputs()
    balanced = {tuple(m["nodes"]): m for m in status(Outcome(read, advise(read)))["current"]["moves"]}
    move = balanced[("d",)]
    assert (move["decision"], move["approved"]) == ("no-op", False)
    assert float(move["score"]) < 0.5
    assert move["reason"] == f"score {move['score']} < threshold 0.50 (k: 2), even as a delete"

    plain = advise(read, default_policy=WHEN_EMPTY_OR_UNDERUTILIZED)
    taken = {m.nodes: m for m in plain.current.moves}[("d",)]
    assert (taken.decision, taken.approved) == ("delete", True)


def test_moves_list_approved_first_and_are_capped(monkeypatch: pytest.MonkeyPatch) -> None:
    advice = advise(inputs())
    report = requests_report(advice.recommended)
    flags = [m["approved"] for m in report["moves"]]
    assert flags == sorted(flags, reverse=True)
    assert (report["approved"], report["rejected"], report["movesOmitted"]) == (
        flags.count(True),
        flags.count(False),
        0,
    )

    monkeypatch.setattr(consolidation_report, "MAX_MOVES", 1)
    capped = requests_report(advice.recommended)
    assert len(capped["moves"]) == min(1, report["approved"]) + min(1, report["rejected"])
    assert capped["movesOmitted"] == len(report["moves"]) - len(capped["moves"])


def test_conditions_name_the_catalogue_entry_and_the_objects_skipped() -> None:
    read = inputs(problems=("pod shop/odd: bad request; its node d held",))
    conditions = by_type(status(Outcome(read, advise(read))))

    assert conditions["Ready"]["status"] == "True"
    catalogue = conditions["CatalogueValid"]
    assert (catalogue["status"], catalogue["reason"]) == ("False", "EntriesSkipped")
    assert BROKEN_ENTRY in catalogue["message"]
    objects_ = conditions["InputsValid"]
    assert (objects_["status"], objects_["reason"]) == ("False", "ObjectsSkipped")
    assert "pod shop/odd" in objects_["message"]
    assert BROKEN_ENTRY not in objects_["message"]


def test_a_failed_refresh_keeps_the_previous_advice() -> None:
    read = inputs()
    before = status(Outcome(read, advise(read)))
    after = status(Outcome(failure="reading the cluster failed: boom", reason="ReadFailed"), previous=before)

    ready = by_type(after)["Ready"]
    assert (ready["status"], ready["reason"], ready["message"]) == (
        "False",
        "ReadFailed",
        "reading the cluster failed: boom",
    )
    assert after["recommended"] == before["recommended"]
    assert by_type(after)["CatalogueValid"] == by_type(before)["CatalogueValid"]


def test_long_problem_lists_are_cut_with_a_count() -> None:
    many = tuple(f"pod shop/p-{i}: a problem described at some length to fill the message" for i in range(500))
    read = inputs(problems=many)
    message = by_type(status(Outcome(read, advise(read))))["InputsValid"]["message"]
    assert len(message) <= consolidation_status.MAX_MESSAGE
    assert message.endswith("more")


def test_event_text_and_metric_figures() -> None:
    read = inputs()
    advice = advise(read)
    text = advised_message(advice.recommended, advice.current)
    assert text.startswith(f"recommended requests free {len(advice.recommended.freed.nodes)} nodes (")
    assert text.endswith("current requests free 0 nodes, saving 0.00/month")

    scores, moves, pools = metric_figures(advice.current, {n.name: n.pool or "" for n in read.nodes})
    assert ("rejected", "general", "Balanced") in moves
    assert any(s[:3] == ("rejected", "general", "Balanced") and s[3] < 0.5 for s in scores)
    assert pools == [("general", 0, 0.0)]
    _, _, recommended = metric_figures(advice.recommended, {n.name: n.pool or "" for n in read.nodes})
    assert recommended[0][1] == len(advice.recommended.freed.nodes)
