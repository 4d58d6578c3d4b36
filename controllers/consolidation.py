"""Consolidation advisor (`consolidation`, leader only): the ConsolidationReport `cluster`, recomputed every
`interval` (`--consolidation-interval`, 10 minutes by default) and at once when its
`ballast.tightlinesoftware.com/refresh` annotation changes; created when missing.

Each refresh reads the cluster through `ballast.internal.consolidation.inputs` (paged, uncached LISTs: nothing of
the cluster's pods stays in memory between refreshes), plans twice with `ballast.internal.consolidation` — the
pods' current requests and the requests their WorkloadProfiles recommend — and writes:

- the report's status by server-side apply (field manager `ballast-consolidation`), a typed
  `ConsolidationReportStatus` built by `ballast.internal.consolidation.status`: both plans side by side and the
  conditions `Ready` (the refresh read and planned; False with reason `ReadFailed` or `PlanFailed`, the previous
  advice kept), `CatalogueValid` (the catalogue entries skipped, by name) and `InputsValid` (objects left out or
  held, by name);
- a Normal event `ConsolidationAdvised` on the report, never on a Node or NodePool: the advisor deletes nothing
  and must not read as Karpenter's `ConsolidationApproved`;
- the metrics of `ballast.internal.consolidation.metrics`.

An object of the cluster that does not parse never fails the refresh (the reader names it, `InputsValid=False`);
an API error fails only that refresh, retried after `RETRY_AFTER` or the interval, whichever is shorter.
"""

from __future__ import annotations

import datetime
import queue
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ballast.api.ballast.v1 import (
    CONSOLIDATION_REPORT_NAME,
    REFRESH_ANNOTATION,
    ConsolidationReport,
    ConsolidationReportStatus,
)
from ballast.internal.consolidation import BALANCED, BALANCED_K, ConsolidationInputError, Plan
from ballast.internal.consolidation.inputs import ReadSettings, advise, read_inputs
from ballast.internal.consolidation.metrics import APPROVED, REJECTED, record_refresh
from ballast.internal.consolidation.report import advised_message
from ballast.internal.consolidation.status import AdvisorView, Outcome, report_status
from ballast.runtime import (
    APPLY,
    AlreadyExistsError,
    APIStatusError,
    Builder,
    Context,
    Controller,
    EnqueueRequestsFromMapFunc,
    GroupVersionKind,
    Manager,
    NotFoundError,
    Request,
    Result,
    objects,
)
from ballast.runtime.predicate import Funcs
from ballast.runtime.restmapper import NoKindMatchError
from ballast.runtime.source import Channel

NAME = "consolidation"
FIELD_MANAGER = "ballast-consolidation"
EVENT_COMPONENT = "consolidation-advisor"
REPORT_KIND = GroupVersionKind(ConsolidationReport.GROUP, ConsolidationReport.VERSION, ConsolidationReport.KIND)
DEFAULT_INTERVAL = 600.0
"""Seconds between two refreshes (`--consolidation-interval`, 10m)."""
RETRY_AFTER = 60.0
"""Seconds before a refresh that failed on an API error is tried again (capped by the interval)."""

CONSOLIDATION_ADVISED = "ConsolidationAdvised"
READ_FAILED = "ReadFailed"
PLAN_FAILED = "PlanFailed"
CURRENT = "current"
RECOMMENDED = "recommended"


@dataclass(frozen=True, slots=True)
class AdvisorSettings:
    """What the wiring passes: where to read (`ReadSettings`), how often, and how to judge the moves."""

    read: ReadSettings = field(default_factory=ReadSettings)
    interval: float = DEFAULT_INTERVAL
    default_policy: str = BALANCED
    """The consolidation policy of pools no NodePool describes (`--consolidation-policy`)."""
    k: float = BALANCED_K

    def view(self) -> AdvisorView:
        return AdvisorView(self.read.catalogue, self.default_policy, self.k)


def metric_figures(
    plan: Plan, node_pools: Mapping[str, str]
) -> tuple[list[tuple[str, str, str, float]], list[tuple[str, str, str]], list[tuple[str, int, float]]]:
    """The scores, evaluated moves and per-pool savings of one plan, for `record_refresh`. `node_pools` maps
    each node to its pool (for the freed set's count per pool)."""
    policies = {name: figures.policy for name, figures in plan.pools.items()}
    scores, moves = [], []
    for move in plan.moves:
        decision = APPROVED if move.approved else REJECTED
        for pool, result in sorted(move.scores.items()):
            scores.append((APPROVED if result.approved else REJECTED, pool, policies.get(pool, ""), result.score))
        if move.decision != "no-op" or move.scores:  # evaluated: a command was computed or a score taken
            moves += [(decision, pool, policies.get(pool, "")) for pool in move.pools]
    freed: dict[str, int] = {}
    for node in plan.freed.nodes:
        if (owner := node_pools.get(node)) is not None:
            freed[owner] = freed.get(owner, 0) + 1
    pools = [(name, freed.get(name, 0), f.cost_per_hour - f.cost_per_hour_after) for name, f in plan.pools.items()]
    return scores, moves, pools


# ------------------------------------------------------------------------------------------------ reconciler


def _refresh_value(report: Any) -> str | None:
    value = objects.annotations(report).get(REFRESH_ANNOTATION)
    return None if value is None else str(value)


def _status(report: Mapping[str, Any]) -> ConsolidationReportStatus | None:
    """The report's status as it is now (empty when it has none); None when this version cannot read it, which
    the refresh then replaces."""
    try:
        return ConsolidationReportStatus.model_validate(report.get("status") or {})
    except ValueError:
        return None


class ConsolidationReconciler:
    """The reconciler of the consolidation advisor; see the module docstring."""

    def __init__(self, manager: Manager, settings: AdvisorSettings) -> None:
        self.client = manager.client
        self.api = manager.api_reader
        self.clock = manager.clock
        self.recorder = manager.get_event_recorder(EVENT_COMPONENT)
        self.settings = settings

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        if request.name != CONSOLIDATION_REPORT_NAME:
            return None  # only the report named `cluster` is ours
        report = self._report()
        wire = self.api.scheme.to_wire(report) if not isinstance(report, Mapping) else dict(report)
        previous = _status(wire)
        refresh = _refresh_value(wire)
        now = self.clock.now()
        last = previous.last_refresh_time if previous is not None else None
        if previous is not None and last is not None and refresh == previous.observed_refresh:
            remaining = self.settings.interval - (now - last).total_seconds()
            if remaining > 0:
                return Result(requeue_after=remaining)
        outcome = self._refresh(ctx, now)
        status = report_status(outcome, self.settings.view(), now=now, refresh=refresh, previous=previous)
        try:
            self._write_status(status)
        except NotFoundError:
            return Result(requeue_after=1.0)  # deleted meanwhile: recreated on the next run
        if (advice := outcome.advice) is not None:
            message = advised_message(advice.recommended, advice.current)
            self.recorder.event(wire, "Normal", CONSOLIDATION_ADVISED, message, kind=REPORT_KIND)
            self._record_metrics(outcome)
        if outcome.failure is not None:
            return Result(requeue_after=min(RETRY_AFTER, self.settings.interval))
        return Result(requeue_after=self.settings.interval)

    def _report(self) -> Any:
        """The report, created (empty) when missing."""
        try:
            return self.api.get(REPORT_KIND, CONSOLIDATION_REPORT_NAME)
        except NotFoundError:
            pass
        body = {"apiVersion": REPORT_KIND.api_version, "kind": REPORT_KIND.kind,
                "metadata": {"name": CONSOLIDATION_REPORT_NAME}}  # fmt: skip
        try:
            return self.api.create(body, field_manager=FIELD_MANAGER)
        except AlreadyExistsError:
            return self.api.get(REPORT_KIND, CONSOLIDATION_REPORT_NAME)

    def _refresh(self, ctx: Context, now: datetime.datetime) -> Outcome:
        settings = self.settings
        try:
            inputs = read_inputs(self.api, settings.read, now=now)
        except (APIStatusError, NoKindMatchError) as error:
            message = getattr(error, "message", "") or str(error)
            ctx.logger.warning("consolidation inputs not read", extra={"error": message})
            return Outcome(failure=f"reading the cluster failed: {message}", reason=READ_FAILED)
        try:
            advice = advise(inputs, k=settings.k, default_policy=settings.default_policy)
        except ConsolidationInputError as error:
            ctx.logger.warning("consolidation not planned", extra={"error": str(error)})
            return Outcome(inputs=inputs, failure=f"planning failed: {error}", reason=PLAN_FAILED)
        ctx.logger.info("consolidation advised", extra={
            "current_freed": len(advice.current.freed.nodes), "recommended_freed": len(advice.recommended.freed.nodes),
            "problems": len(advice.problems),
        })  # fmt: skip
        return Outcome(inputs=inputs, advice=advice)

    def _write_status(self, status: ConsolidationReportStatus) -> None:
        body = {
            "apiVersion": REPORT_KIND.api_version, "kind": REPORT_KIND.kind,
            "metadata": {"name": CONSOLIDATION_REPORT_NAME}, "status": status.to_wire(),
        }  # fmt: skip
        self.api.status().patch(body, body, patch_type=APPLY, field_manager=FIELD_MANAGER, force=True)

    def _record_metrics(self, outcome: Outcome) -> None:
        assert outcome.inputs is not None
        assert outcome.advice is not None
        node_pools = {node.name: node.pool for node in outcome.inputs.nodes if node.pool is not None}
        for requests, plan in ((CURRENT, outcome.advice.current), (RECOMMENDED, outcome.advice.recommended)):
            record_refresh(requests, *metric_figures(plan, node_pools))


# ------------------------------------------------------------------------------------------------------ setup


def _refresh_changed() -> Funcs:
    """Report updates pass only when the refresh annotation changed: the controller's own status writes must not
    start another refresh. Creates, deletes and generic events pass."""
    return Funcs(update_func=lambda e: _refresh_value(e.object_old) != _refresh_value(e.object_new))


def setup(manager: Manager, *, settings: AdvisorSettings = AdvisorSettings()) -> Controller:
    """Register the consolidation advisor on `manager` (leader only). The report kind must be in the manager's
    scheme; the report is watched through the cache (one object), every input is read live, paged."""
    reconciler = ConsolidationReconciler(manager, settings)
    start: queue.Queue[Any] = queue.Queue()
    start.put({"metadata": {"name": CONSOLIDATION_REPORT_NAME}})  # the first run, when the report does not exist yet
    cluster = EnqueueRequestsFromMapFunc(lambda _: [Request("", CONSOLIDATION_REPORT_NAME)])
    return (
        Builder(manager)
        .for_(ConsolidationReport, predicates=[_refresh_changed()])
        .watches_source(Channel(start, cluster))
        .named(NAME)
        .complete(reconciler)
    )
