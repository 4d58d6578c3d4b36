"""Consolidation advisor (`consolidation`, leader only): the ConsolidationReport `cluster`, recomputed every
`interval` (`--consolidation-interval`, 10 minutes by default) and at once when its
`ballast.tightlinesoftware.com/refresh` annotation changes; created when missing.

Each refresh reads the cluster through `ballast.internal.consolidation.inputs` (paged, uncached LISTs: nothing of
the cluster's pods stays in memory between refreshes), plans twice with `ballast.internal.consolidation` — the
pods' current requests and the requests their WorkloadProfiles recommend — and writes:

- the report's status by server-side apply (field manager `ballast-consolidation`): both plans side by side
  (`report_status`) and the conditions `Ready` (the refresh read and planned; False with reason `ReadFailed` or
  `PlanFailed`, the previous advice kept), `CatalogueValid` (the catalogue entries skipped, by name) and
  `InputsValid` (objects left out or held, by name);
- a Normal event `ConsolidationAdvised` on the report, never on a Node or NodePool: the advisor deletes nothing
  and must not read as Karpenter's `ConsolidationApproved`;
- the metrics of `ballast.internal.consolidation.metrics`.

An object of the cluster that does not parse never fails the refresh (the reader names it, `InputsValid=False`);
an API error fails only that refresh, retried after `RETRY_AFTER` or the interval, whichever is shorter.
"""

from __future__ import annotations

import datetime
import queue
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ballast.api.ballast.v1 import (
    CONSOLIDATION_REPORT_NAME,
    REFRESH_ANNOTATION,
    ConsolidationReport,
)
from ballast.api.ballast.v1.consolidationreport import CATALOGUE_VALID, INPUTS_VALID, READY
from ballast.internal.consolidation import BALANCED, BALANCED_K, HOURS_PER_MONTH, ConsolidationInputError, Move, Plan
from ballast.internal.consolidation.inputs import Advice, Inputs, ReadSettings, advise, read_inputs
from ballast.internal.consolidation.metrics import APPROVED, REJECTED, record_refresh
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
    rfc3339,
)
from ballast.runtime.conditions import FALSE, TRUE, condition, find_status_condition
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
MAX_MOVES = 100
"""Approved, and rejected, moves kept in the report per set of requests (the object must stay well under etcd's
1.5 MiB); the rest are counted in `movesOmitted`."""
MAX_MESSAGE = 4096
"""Longest condition message: the first problems, then how many more."""

CONSOLIDATION_ADVISED = "ConsolidationAdvised"
REFRESHED = "Refreshed"
READ_FAILED = "ReadFailed"
PLAN_FAILED = "PlanFailed"
VALID = "Valid"
ENTRIES_SKIPPED = "EntriesSkipped"
OBJECTS_SKIPPED = "ObjectsSkipped"
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


# ------------------------------------------------------------------------------------------ status mapping


def _hourly(value: float) -> str:
    return f"{value:.4f}"


def _monthly(value_per_hour: float) -> str:
    return f"{value_per_hour * HOURS_PER_MONTH:.2f}"


def _move(move: Move) -> dict[str, Any]:
    """One move in wire form."""
    body: dict[str, Any] = {
        "nodes": list(move.nodes), "method": move.method, "decision": move.decision, "approved": move.approved,
        "savingsPerHour": _hourly(move.savings), "savingsPerMonth": _monthly(move.savings),
        "disruptionCost": f"{move.disruption_cost:.2f}",
    }  # fmt: skip
    if move.pools:
        body["pools"] = list(move.pools)
    if move.score is not None:
        body["score"] = f"{move.score:.2f}"
    if move.replacement is not None and move.replacement.launch is not None:
        launch = move.replacement.launch
        body["replacement"] = f"{move.replacement.pool}/{launch.instance_type}/{launch.capacity_type}"
    if move.reason:
        body["reason"] = move.reason
    return body


def requests_report(plan: Plan) -> dict[str, Any]:
    """One plan as a `RequestsReport` (wire form): totals, pools, the freed set, the first move, the moves
    (approved first, each kind capped at `MAX_MOVES`)."""
    pools = list(plan.pools.values())
    cost = sum((p.cost_per_hour for p in pools), 0.0)
    freed = plan.freed
    approved = [m for m in plan.moves if m.approved]
    rejected = [m for m in plan.moves if not m.approved]
    kept = approved[:MAX_MOVES] + rejected[:MAX_MOVES]
    body: dict[str, Any] = {
        "nodes": sum(p.nodes for p in pools),
        "nodesAfter": sum(p.nodes_after for p in pools),
        "costPerHour": _hourly(cost),
        "costPerMonth": _monthly(cost),
        "disruptionCost": f"{sum((p.total_disruption_cost for p in pools), 0.0):.2f}",
        "pools": [
            {"name": p.name, "policy": p.policy, "nodes": p.nodes, "nodesAfter": p.nodes_after,
             "costPerHour": _hourly(p.cost_per_hour), "costPerMonth": _monthly(p.cost_per_hour),
             "costPerMonthAfter": _monthly(p.cost_per_hour_after),
             "disruptionCost": f"{p.total_disruption_cost:.2f}"}
            for p in pools
        ],
        "freed": {
            "count": len(freed.nodes), "nodes": list(freed.nodes),
            "launched": [f"{name}: {what}" for name, what in sorted(freed.launched.items())],
            "savingsPerHour": _hourly(freed.savings_per_hour), "savingsPerMonth": _monthly(freed.savings_per_hour),
            "unplaced": list(freed.unplaced),
        },
        "approved": len(approved),
        "rejected": len(rejected),
        "moves": [_move(m) for m in kept],
        "movesOmitted": len(plan.moves) - len(kept),
    }  # fmt: skip
    if plan.first is not None:
        body["first"] = _move(plan.first)
    return body


def _bounded(problems: Sequence[str]) -> str:
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


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one refresh produced: the advice and its inputs, or why there is none (`failure`, `reason`)."""

    inputs: Inputs | None = None
    advice: Advice | None = None
    failure: str | None = None
    reason: str = REFRESHED


def report_conditions(outcome: Outcome, previous: Sequence[Any], now: datetime.datetime) -> list[dict[str, Any]]:
    """Ready, and (when the refresh read the cluster) CatalogueValid and InputsValid; the previous ones kept when
    it did not."""

    def build(type_: str, status: str, reason: str, message: str) -> dict[str, Any]:
        return condition(type_, status, reason, message, now=now, previous=find_status_condition(previous, type_))

    if outcome.failure is not None or outcome.inputs is None or outcome.advice is None:
        kept = [dict(c) for t in (CATALOGUE_VALID, INPUTS_VALID) if (c := _wire(find_status_condition(previous, t)))]
        return [build(READY, FALSE, outcome.reason, outcome.failure or "no advice"), *kept]
    inputs, advice = outcome.inputs, outcome.advice
    catalogue = list(inputs.catalogue_problems)
    others = [p for p in advice.problems if p not in set(catalogue)]
    offerings = len(inputs.catalogue.offerings)
    return [
        build(READY, TRUE, REFRESHED, f"advice computed from {len(inputs.nodes)} nodes and {len(inputs.pods)} pods"),
        build(CATALOGUE_VALID, FALSE, ENTRIES_SKIPPED, _bounded(catalogue)) if catalogue
        else build(CATALOGUE_VALID, TRUE, VALID, f"{offerings} offerings read"),
        build(INPUTS_VALID, FALSE, OBJECTS_SKIPPED, _bounded(others)) if others
        else build(INPUTS_VALID, TRUE, VALID, "every object was read"),
    ]  # fmt: skip


def _wire(value: Any) -> dict[str, Any] | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return dict(value)
    dumped: dict[str, Any] = value.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


def report_status(
    outcome: Outcome,
    settings: AdvisorSettings,
    *,
    now: datetime.datetime,
    refresh: str | None,
    previous: Mapping[str, Any],
) -> dict[str, Any]:
    """The report's status (wire form) after one refresh; `previous` is the status it has now (wire form), whose
    advice is kept when this refresh failed."""
    status: dict[str, Any] = {
        "conditions": report_conditions(outcome, previous.get("conditions") or [], now),
        "lastRefreshTime": rfc3339(now),
    }
    if refresh is not None:
        status["observedRefresh"] = refresh
    if outcome.inputs is None or outcome.advice is None:
        for key in ("observed", CURRENT, RECOMMENDED):
            if previous.get(key) is not None:
                status[key] = previous[key]
        return status
    inputs, advice = outcome.inputs, outcome.advice
    observed = inputs.observed
    catalogue = settings.read.catalogue
    status["observed"] = {
        "nodes": observed.nodes, "pods": observed.pods, "podDisruptionBudgets": observed.pdbs,
        "nodePools": observed.nodepools, "karpenter": inputs.karpenter, "profiles": observed.profiles,
        "podsWithRecommendations": observed.pods_with_recommendations, "defaultPolicy": settings.default_policy,
        "k": int(settings.k), **({"catalogue": "/".join(catalogue)} if catalogue else {}),
    }  # fmt: skip
    status[CURRENT] = requests_report(advice.current)
    status[RECOMMENDED] = requests_report(advice.recommended)
    return status


def advised_message(advice: Advice) -> str:
    """The `ConsolidationAdvised` event's text: what each set of requests frees and saves."""

    def part(label: str, plan: Plan) -> str:
        freed = plan.freed
        names = f" ({', '.join(freed.nodes[:5])}{', …' if len(freed.nodes) > 5 else ''})" if freed.nodes else ""
        return f"{label} requests free {len(freed.nodes)} nodes{names}, saving {_monthly(freed.savings_per_hour)}/month"

    return f"{part('recommended', advice.recommended)}; {part('current', advice.current)}"


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


def _parse_time(text: Any) -> datetime.datetime | None:
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text)
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
        previous: dict[str, Any] = dict(wire.get("status") or {})
        refresh = _refresh_value(wire)
        now = self.clock.now()
        last = _parse_time(previous.get("lastRefreshTime"))
        if last is not None and refresh == previous.get("observedRefresh"):
            remaining = self.settings.interval - (now - last).total_seconds()
            if remaining > 0:
                return Result(requeue_after=remaining)
        outcome = self._refresh(ctx, now)
        status = report_status(outcome, self.settings, now=now, refresh=refresh, previous=previous)
        try:
            self._write_status(status)
        except NotFoundError:
            return Result(requeue_after=1.0)  # deleted meanwhile: recreated on the next run
        if outcome.advice is not None:
            self.recorder.event(
                wire, "Normal", CONSOLIDATION_ADVISED, advised_message(outcome.advice), kind=REPORT_KIND
            )
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

    def _write_status(self, status: Mapping[str, Any]) -> None:
        body = {
            "apiVersion": REPORT_KIND.api_version, "kind": REPORT_KIND.kind,
            "metadata": {"name": CONSOLIDATION_REPORT_NAME}, "status": dict(status),
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
