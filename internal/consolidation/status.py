"""The ConsolidationReport's status after one refresh, as the typed `ConsolidationReportStatus`: both plans side by
side (`report.requests_report`), what was read, and the conditions `Ready`, `CatalogueValid` and `InputsValid`;
the previous advice kept when the refresh failed."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass

from ballast.api.ballast.v1 import ConsolidationReportStatus
from ballast.api.ballast.v1.consolidationreport import CATALOGUE_VALID, INPUTS_VALID, READY, ObservedInputs
from ballast.api.meta import Condition
from ballast.internal.consolidation.inputs import Advice, Inputs
from ballast.runtime.conditions import FALSE, TRUE, condition, find_status_condition

from .report import requests_report

MAX_MESSAGE = 4096
"""Longest condition message: the first problems, then how many more."""
REFRESHED = "Refreshed"
VALID = "Valid"
ENTRIES_SKIPPED = "EntriesSkipped"
OBJECTS_SKIPPED = "ObjectsSkipped"


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one refresh produced: the advice and its inputs, or why there is none (`failure`, `reason`)."""

    inputs: Inputs | None = None
    advice: Advice | None = None
    failure: str | None = None
    reason: str = REFRESHED


@dataclass(frozen=True, slots=True)
class AdvisorView:
    """How the advisor read and judged, as `status.observed` shows it."""

    catalogue: tuple[str, str] | None
    default_policy: str
    k: float


def bounded(problems: Sequence[str]) -> str:
    """`problems` joined, cut before `MAX_MESSAGE` characters with a count of those left out."""
    shown: list[str] = []
    length = 0
    for index, problem in enumerate(problems):
        if length + len(problem) + 2 > MAX_MESSAGE - 40:
            shown.append(f"… and {len(problems) - index} more")
            break
        shown.append(problem)
        length += len(problem) + 2
    return "; ".join(shown)


def report_conditions(outcome: Outcome, previous: Sequence[Condition], now: datetime.datetime) -> list[Condition]:
    """Ready, and (when the refresh read the cluster) CatalogueValid and InputsValid; the previous ones kept when
    it did not."""

    def build(type_: str, status: str, reason: str, message: str) -> Condition:
        made = condition(type_, status, reason, message, now=now, previous=find_status_condition(previous, type_))
        return Condition.model_validate(made)

    if outcome.failure is not None or outcome.inputs is None or outcome.advice is None:
        kept = [c for t in (CATALOGUE_VALID, INPUTS_VALID) if (c := find_status_condition(previous, t)) is not None]
        return [build(READY, FALSE, outcome.reason, outcome.failure or "no advice"), *kept]
    inputs, advice = outcome.inputs, outcome.advice
    catalogue = list(inputs.catalogue_problems)
    others = [p for p in advice.problems if p not in set(catalogue)]
    offerings = len(inputs.catalogue.offerings)
    return [
        build(READY, TRUE, REFRESHED, f"advice computed from {len(inputs.nodes)} nodes and {len(inputs.pods)} pods"),
        build(CATALOGUE_VALID, FALSE, ENTRIES_SKIPPED, bounded(catalogue)) if catalogue
        else build(CATALOGUE_VALID, TRUE, VALID, f"{offerings} offerings read"),
        build(INPUTS_VALID, FALSE, OBJECTS_SKIPPED, bounded(others)) if others
        else build(INPUTS_VALID, TRUE, VALID, "every object was read"),
    ]  # fmt: skip


def report_status(
    outcome: Outcome,
    view: AdvisorView,
    *,
    now: datetime.datetime,
    refresh: str | None,
    previous: ConsolidationReportStatus | None,
) -> ConsolidationReportStatus:
    """The report's status after one refresh; `previous` is the status it has now, whose advice is kept when this
    refresh failed."""
    before = previous or ConsolidationReportStatus()
    status = ConsolidationReportStatus(
        conditions=report_conditions(outcome, before.conditions or [], now),
        last_refresh_time=now,
        observed_refresh=refresh,
    )
    if outcome.inputs is None or outcome.advice is None:
        return status.model_copy(update={
            "observed": before.observed, "current": before.current, "recommended": before.recommended,
        })  # fmt: skip
    inputs, observed = outcome.inputs, outcome.inputs.observed
    status.observed = ObservedInputs(
        nodes=observed.nodes, pods=observed.pods, pod_disruption_budgets=observed.pdbs,
        node_pools=observed.nodepools, karpenter=inputs.karpenter, profiles=observed.profiles,
        pods_with_recommendations=observed.pods_with_recommendations, default_policy=view.default_policy,
        k=int(view.k), catalogue="/".join(view.catalogue) if view.catalogue else None,
    )  # fmt: skip
    status.current = requests_report(outcome.advice.current)
    status.recommended = requests_report(outcome.advice.recommended)
    return status
