"""A plan as the ConsolidationReport's typed models (`ReportMove`, `ReportPool`, `ReportFreed`, `RequestsReport` of
`ballast.api.ballast.v1`): the one mapping of a move, a pool and a freed set to the wire, and the one number
format — decimal strings, as the Kubernetes API conventions ask of non-integers — used by the report and by
`ballast consolidation plan -o json` alike."""

from __future__ import annotations

from ballast.api.ballast.v1.consolidationreport import ReportFreed, ReportMove, ReportPool, RequestsReport

from .results import HOURS_PER_MONTH, Freed, Move, Plan, PoolFigures

MAX_MOVES = 100
"""Approved, and rejected, moves kept in the report per set of requests (the object must stay well under etcd's
1.5 MiB); the rest are counted in `movesOmitted`."""


def per_hour(value: float) -> str:
    """Money per hour: `"0.1920"`."""
    return f"{value:.4f}"


def per_month(value_per_hour: float) -> str:
    """Money per hour as per month (730 hours): `"140.16"`."""
    return f"{value_per_hour * HOURS_PER_MONTH:.2f}"


def hundredths(value: float) -> str:
    """Scores, thresholds and disruption costs: `"1.00"` (`"inf"` for an infinite score)."""
    return f"{value:.2f}"


def fraction(value: float) -> str:
    """A share of a pool's cost or disruption: `"0.1667"`."""
    return f"{value:.4f}"


def report_move(move: Move) -> ReportMove:
    """One move as the report writes it."""
    launch = move.replacement.launch if move.replacement is not None else None
    return ReportMove(
        nodes=list(move.nodes), pools=list(move.pools) or None, method=move.method, decision=move.decision,
        approved=move.approved, score=None if move.score is None else hundredths(move.score),
        savings_per_hour=per_hour(move.savings), savings_per_month=per_month(move.savings),
        disruption_cost=hundredths(move.disruption_cost),
        replacement=None if launch is None or move.replacement is None
        else f"{move.replacement.pool}/{launch.instance_type}/{launch.capacity_type}",
        reason=move.reason or None,
    )  # fmt: skip


def report_pool(pool: PoolFigures) -> ReportPool:
    """One pool now and after the freed set."""
    return ReportPool(
        name=pool.name, policy=pool.policy, nodes=pool.nodes, nodes_after=pool.nodes_after,
        cost_per_hour=per_hour(pool.cost_per_hour), cost_per_month=per_month(pool.cost_per_hour),
        cost_per_month_after=per_month(pool.cost_per_hour_after),
        disruption_cost=hundredths(pool.total_disruption_cost),
    )  # fmt: skip


def report_freed(freed: Freed) -> ReportFreed:
    """The freed set and its saving."""
    return ReportFreed(
        count=len(freed.nodes), nodes=list(freed.nodes),
        launched=[f"{name}: {what}" for name, what in sorted(freed.launched.items())],
        savings_per_hour=per_hour(freed.savings_per_hour), savings_per_month=per_month(freed.savings_per_hour),
        unplaced=list(freed.unplaced),
    )  # fmt: skip


def requests_report(plan: Plan) -> RequestsReport:
    """One plan for one set of requests: totals, pools, the freed set, the first move, the moves (approved first,
    each kind capped at `MAX_MOVES`)."""
    pools = list(plan.pools.values())
    cost = sum((p.cost_per_hour for p in pools), 0.0)
    approved = [m for m in plan.moves if m.approved]
    rejected = [m for m in plan.moves if not m.approved]
    kept = approved[:MAX_MOVES] + rejected[:MAX_MOVES]
    return RequestsReport(
        nodes=sum(p.nodes for p in pools), nodes_after=sum(p.nodes_after for p in pools),
        cost_per_hour=per_hour(cost), cost_per_month=per_month(cost),
        disruption_cost=hundredths(sum((p.total_disruption_cost for p in pools), 0.0)),
        pools=[report_pool(p) for p in pools], freed=report_freed(plan.freed),
        first=None if plan.first is None else report_move(plan.first),
        approved=len(approved), rejected=len(rejected), moves=[report_move(m) for m in kept],
        moves_omitted=len(plan.moves) - len(kept),
    )  # fmt: skip


def advised_message(recommended: Plan, current: Plan) -> str:
    """The `ConsolidationAdvised` event's text: what each set of requests frees and saves."""

    def part(label: str, plan: Plan) -> str:
        freed = plan.freed
        names = f" ({', '.join(freed.nodes[:5])}{', …' if len(freed.nodes) > 5 else ''})" if freed.nodes else ""
        return (
            f"{label} requests free {len(freed.nodes)} nodes{names}, saving {per_month(freed.savings_per_hour)}/month"
        )

    return f"{part('recommended', recommended)}; {part('current', current)}"
