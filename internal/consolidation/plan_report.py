"""What `ballast consolidation plan` reads, plans and prints (`ballast.internal.cmd.consolidation` parses its
flags and reads a catalogue file).

The consolidation advisor's analysis (`ballast.internal.consolidation.plan`) from a kubeconfig: which nodes the
pods' requests free, what that saves, and whether each move is worth the pods it disturbs, as Karpenter's Balanced
policy would judge it. With `--what-if recommended` the same cluster is planned twice, with the pods' current
requests and with the requests their WorkloadProfiles recommend, and both are printed side by side: per pool its
nodes, $/hour and $/month now and after the freed set, then every node's move with its score and reason — a
table to paste into a ticket, or `-o json` for machines.

The catalogue (the price list, config/samples/consolidation/) is a local file — the document itself, YAML or
JSON, or a ConfigMap manifest holding it under `catalogue.yaml` — or `cm/NAMESPACE/NAME`, the ConfigMap in the
cluster. Writes nothing. Exit 0, or 1 for a bad `--k`, a catalogue that is missing, unreadable or has no
offering, or an unreachable API server.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

import yaml

from ballast.internal.consolidation import (
    BALANCED,
    BALANCED_K,
    HOURS_PER_MONTH,
    REPLACE,
    Catalogue,
    Move,
    Offering,
    Plan,
    PoolFigures,
    node_from_wire,
    parse_catalogue,
)
from ballast.internal.consolidation.inputs import CATALOGUE_KEY, Inputs, Observed, ReadSettings, advise, read_inputs
from ballast.internal.consolidation.pools import INSTANCE_TYPE_LABEL
from ballast.internal.consolidation.report import (
    fraction,
    hundredths,
    per_hour,
    per_month,
    report_freed,
    report_move,
    report_pool,
)
from ballast.internal.tabular import columns

CURRENT = "current"
RECOMMENDED = "recommended"


class PlanError(Exception):
    """What keeps the plan from being made; the message names the flag, file or object and the cause."""


# ------------------------------------------------------------------------------------------------ inputs


def _document(text: str, where: str) -> Mapping[str, Any]:
    """The one YAML (or JSON) document in `text` (a bare list is the catalogue's offerings); raises PlanError
    naming `where`."""
    try:
        documents = [doc for doc in yaml.safe_load_all(text) if doc is not None]
    except yaml.YAMLError as exc:
        raise PlanError(f"{where}: not YAML or JSON: {exc}") from None
    if len(documents) != 1:
        raise PlanError(f"{where}: holds {len(documents)} documents; expected one catalogue")
    (document,) = documents
    if isinstance(document, list):
        return {"offerings": document}
    if not isinstance(document, Mapping):
        raise PlanError(f"{where}: is a {type(document).__name__}, not a mapping")
    return document


def configmap_catalogue(configmap: Mapping[str, Any], where: str) -> Mapping[str, Any]:
    """The catalogue document a ConfigMap holds under `catalogue.yaml`; raises PlanError naming `where`."""
    data = configmap.get("data") or {}
    if CATALOGUE_KEY not in data:
        keys = ", ".join(sorted(map(str, data))) or "none"
        raise PlanError(f"{where}: no data key {CATALOGUE_KEY!r} (keys: {keys})")
    return _document(str(data[CATALOGUE_KEY]), f"{where} data[{CATALOGUE_KEY!r}]")


def catalogue_from_text(text: str, where: str) -> Mapping[str, Any]:
    """A catalogue file's document: the catalogue itself, or a ConfigMap manifest holding it."""
    document = _document(text, where)
    if document.get("kind") == "ConfigMap":
        return configmap_catalogue(document, where)
    return document


# ------------------------------------------------------------------------------------------------ the advice


@dataclass(frozen=True, slots=True)
class Analysis:
    """What the command shows: the plan with the current requests and, with `--what-if recommended`, the plan
    with the recommended ones; where the catalogue came from, k, what was read, and every problem (objects left
    out or held, catalogue entries skipped); the policy of pools no NodePool describes and the label grouping
    nodes without `karpenter.sh/nodepool`."""

    current: Plan
    catalogue: str
    k: float = BALANCED_K
    recommended: Plan | None = None
    observed: Observed = field(default_factory=Observed)
    karpenter: bool = False
    problems: tuple[str, ...] = ()
    policy: str = BALANCED
    pool_label: str = INSTANCE_TYPE_LABEL

    @property
    def plans(self) -> tuple[tuple[str, Plan], ...]:
        shown = ((CURRENT, self.current), (RECOMMENDED, self.recommended))
        return tuple((label, plan) for label, plan in shown if plan is not None)


def nodes_freed(figures: PoolFigures) -> int:
    """Of the pool's nodes today, how many are gone once the freed set has run — the one meaning of "freed" in
    the table, the text and the ConsolidationReport (`freed.count` is their sum); replacements are counted apart
    (`figures.launched`)."""
    return figures.freed


def _total(plan: Plan) -> tuple[int, int, float, float]:
    pools = plan.pools.values()
    return (
        sum(p.nodes for p in pools),
        sum(p.nodes_after for p in pools),
        sum((p.cost_per_hour for p in pools), 0.0),
        sum((p.cost_per_hour_after for p in pools), 0.0),
    )


def _moved(plan: Plan) -> tuple[int, int]:
    """Nodes freed and launched over every pool."""
    pools = plan.pools.values()
    return sum(p.freed for p in pools), sum(p.launched for p in pools)


# ------------------------------------------------------------------------------------------------ table


def _hour(value: float) -> str:
    return f"{value:,.3f}"


def _month(value: float) -> str:
    return f"{value:,.2f}"


def _score(score: float | None) -> str:
    if score is None:
        return "-"
    return "inf" if math.isinf(score) else f"{score:.3f}"


def _k_text(k: float) -> str:
    return "inf" if math.isinf(k) else f"{k:g}"


def _decision(move: Move) -> str:
    launch = move.replacement.launch if move.replacement is not None else None
    if move.decision == REPLACE and launch is not None:
        return f"{move.decision} → {launch.instance_type}/{launch.capacity_type}"
    return move.decision


def _pool_rows(analysis: Analysis) -> list[list[str]]:
    rows = [["POOL", "POLICY", "REQUESTS", "NODES", "FREED", "LAUNCHED", "AFTER", "$/HOUR", "AFTER", "$/MONTH",
             "AFTER", "SAVING/MONTH"]]  # fmt: skip
    names = sorted({name for _, plan in analysis.plans for name in plan.pools})
    for name in names:
        for label, plan in analysis.plans:
            pool = plan.pools.get(name)
            if pool is None:
                continue
            rows.append([
                name, pool.policy, label, str(pool.nodes), str(nodes_freed(pool)), str(pool.launched),
                str(pool.nodes_after),
                _hour(pool.cost_per_hour), _hour(pool.cost_per_hour_after), _month(pool.cost_per_month),
                _month(pool.cost_per_hour_after * HOURS_PER_MONTH), _month(pool.savings_per_month),
            ])  # fmt: skip
    if len(names) > 1:
        for label, plan in analysis.plans:
            nodes, after, cost, cost_after = _total(plan)
            freed, launched = _moved(plan)
            rows.append([
                "TOTAL", "", label, str(nodes), str(freed), str(launched), str(after), _hour(cost), _hour(cost_after),
                _month(cost * HOURS_PER_MONTH), _month(cost_after * HOURS_PER_MONTH),
                _month((cost - cost_after) * HOURS_PER_MONTH),
            ])  # fmt: skip
    return rows


def saving_split(recommended: Plan, current: Plan) -> tuple[float, float]:
    """The recommended freed set's saving per hour in two parts: what today's requests already allow (the current
    plan's saving: cheaper offerings such as on-demand → spot, tighter packing), and what right-sizing adds."""
    today = current.freed.savings_per_hour
    return recommended.freed.savings_per_hour - today, today


def _freed_lines(label: str, plan: Plan, baseline: Plan | None = None) -> list[str]:
    """The freed set's lines; with `baseline` (the current plan, for the recommended one) its saving split."""
    freed = plan.freed
    if not freed.steps:
        return [f"Freed with the {label} requests: none"]
    count = len(freed.steps)
    how = "in 1 command:" if count == 1 else f"in {count} commands, each on the state the last left:"
    lines = [
        f"Freed with the {label} requests: {len(freed.nodes)} of today's nodes, {', '.join(freed.nodes) or 'none'}"
        f"{f', for {len(freed.launched)} launched' if freed.launched else ''} (saving "
        f"${_hour(freed.savings_per_hour)}/hour, ${_month(freed.savings_per_month)}/month{_split(plan, baseline)}), "
        f"{how}"
    ]
    for number, step in enumerate(freed.steps, 1):
        launch = step.replacement.launch if step.replacement is not None else None
        by = f" by {launch.instance_type}/{launch.capacity_type}" if launch is not None else ""
        lines.append(f"  {number}. {step.method}: {step.decision} {', '.join(step.nodes)}{by} (score "
                     f"{_score(step.score)})")  # fmt: skip
    if freed.launched:
        lines.append("  launched: " + ", ".join(f"{name} ({what})" for name, what in freed.launched.items()))
    if freed.unplaced:
        lines.append("  left without a node (their eviction cost counts as 0): " + ", ".join(freed.unplaced))
    return lines


def _split(plan: Plan, baseline: Plan | None) -> str:
    if baseline is None:
        return ""
    right_sizing, today = saving_split(plan, baseline)
    return (
        f": ${_month(right_sizing * HOURS_PER_MONTH)} from right-sized requests, ${_month(today * HOURS_PER_MONTH)} "
        "from cheaper offerings and packing today's requests allow"
    )


def _move_rows(plan: Plan) -> list[list[str]]:
    rows = [["NODES", "POOL", "METHOD", "DECISION", "SCORE", "SAVING/MONTH", "DISRUPTION", "APPROVED", "REASON"]]
    for move in (plan.multi_node, *plan.moves) if plan.multi_node is not None else plan.moves:
        rows.append([
            ",".join(move.nodes), ",".join(move.pools) or "-", move.method, _decision(move), _score(move.score),
            _month(move.savings * HOURS_PER_MONTH), f"{move.disruption_cost:.2f}", "yes" if move.approved else "no",
            move.reason,
        ])  # fmt: skip
    return rows


def _pools_text(analysis: Analysis) -> str:
    policy = analysis.policy
    if analysis.karpenter:
        count = analysis.observed.nodepools
        return f"{count} Karpenter NodePool{'s' if count != 1 else ''} (a pool none describes is {policy})"
    grouping = "their instance type" if analysis.pool_label == INSTANCE_TYPE_LABEL else analysis.pool_label
    return f"no Karpenter NodePools served: nodes grouped by {grouping}, each group {policy}"


def _groups_text(analysis: Analysis) -> str:
    """How today's nodes were really grouped: each pool with its node count."""
    pools = [pool for _, pool in sorted(analysis.current.pools.items()) if pool.nodes]
    return ", ".join(f"{pool.name} ({pool.nodes} node{'s' if pool.nodes != 1 else ''})" for pool in pools) or "none"


def render_table(analysis: Analysis) -> list[str]:
    """For people (and tickets): the pools now and after, the freed sets, every node's move, the problems."""
    nodes, _, cost, _ = _total(analysis.current)
    pools = len(analysis.current.pools)
    requests = "current"
    if analysis.recommended is not None:
        requests += f", and recommended for {analysis.observed.pods_with_recommendations} pods (their WorkloadProfiles)"
    threshold = _score(1 / analysis.k)
    lines = [
        f"Consolidation plan: {nodes} nodes in {pools} pool{'s' if pools != 1 else ''}, "
        f"${_month(cost * HOURS_PER_MONTH)}/month now",
        f"Requests: {requests}",
        f"Pools: {_pools_text(analysis)}; grouped as {_groups_text(analysis)}",
        f"Catalogue: {analysis.catalogue}; k {_k_text(analysis.k)}: a Balanced move needs a score ≥ {threshold}",
        "",
    ]
    lines += columns(_pool_rows(analysis))
    for label, plan in analysis.plans:
        lines += ["", *_freed_lines(label, plan, analysis.current if label == RECOMMENDED else None)]
    for label, plan in analysis.plans:
        lines += ["", f"Moves with the {label} requests (the first round; a multi-node command first):"]
        lines += [f"  {line}" for line in columns(_move_rows(plan))] if plan.moves else ["  none (no node)"]
    lines += ["", "Problems:"] + [f"  {problem}" for problem in analysis.problems or ("none",)]
    return lines


# ------------------------------------------------------------------------------------------------ JSON
# The ConsolidationReport's mapping and number format (`ballast.internal.consolidation.report`: decimal strings),
# with what only the command shows beside it: each pool's score, where each pod goes, the replacement's offering.


def _offering_json(offering: Offering) -> dict[str, Any]:
    return {"instanceType": offering.instance_type, "capacityType": offering.capacity_type, "zone": offering.zone,
            "pricePerHour": per_hour(offering.price)}  # fmt: skip


def _move_json(move: Move) -> dict[str, Any]:
    """The report's move (`report_move`), with every Balanced pool's score, the pods' placements and the launch."""
    body = report_move(move).to_wire()
    body["scores"] = {
        pool: {"score": hundredths(result.score), "threshold": hundredths(result.threshold),
               "savingsFraction": fraction(result.savings_fraction),
               "disruptionFraction": fraction(result.disruption_fraction)}
        for pool, result in sorted(move.scores.items())
    }  # fmt: skip
    body["placements"] = dict(sorted(move.placements.items()))
    replacement = move.replacement
    body["launch"] = None if replacement is None else {
        "name": replacement.name, "pool": replacement.pool, "instanceTypes": list(replacement.instance_types),
        "offering": None if replacement.launch is None else _offering_json(replacement.launch),
    }  # fmt: skip
    return body


def _pool_json(pool: PoolFigures) -> dict[str, Any]:
    """The report's pool (`report_pool`), with the nodes freed, the cost per hour after and the saving."""
    return {**report_pool(pool).to_wire(), "nodesFreed": nodes_freed(pool), "nodesLaunched": pool.launched,
            "costPerHourAfter": per_hour(pool.cost_per_hour_after),
            "savingsPerMonth": per_month(pool.cost_per_hour - pool.cost_per_hour_after)}  # fmt: skip


def plan_json(plan: Plan, baseline: Plan | None = None) -> dict[str, Any]:
    """One plan in the CLI's JSON: pools, the freed set (the report's, with its commands as `steps`; with
    `baseline`, the current plan, its saving split as `saving_split`), the first command, every move, the
    problems."""
    freed: dict[str, Any] = {
        **report_freed(plan.freed).to_wire(),
        "steps": [_move_json(step) for step in plan.freed.steps],
    }
    if baseline is not None:
        right_sizing, today = saving_split(plan, baseline)
        freed |= {"savingsFromRightSizingPerMonth": per_month(right_sizing),
                  "savingsWithCurrentRequestsPerMonth": per_month(today)}  # fmt: skip
    return {
        "pools": [_pool_json(pool) for _, pool in sorted(plan.pools.items())],
        "freed": freed,
        "first": None if plan.first is None else _move_json(plan.first),
        "moves": [_move_json(move) for move in plan.moves],
        "problems": list(plan.problems),
    }


def render_json(analysis: Analysis) -> str:
    """For machines: `plans.current` and (with --what-if) `plans.recommended`, each as `plan_json`; what was
    read (`observed`) and every problem."""
    observed = analysis.observed
    document = {
        "catalogue": analysis.catalogue,
        "k": "inf" if math.isinf(analysis.k) else analysis.k,
        "threshold": hundredths(1 / analysis.k),
        "whatIf": RECOMMENDED if analysis.recommended is not None else None,
        "defaultPolicy": analysis.policy,
        "poolLabel": analysis.pool_label,
        "observed": {
            "nodes": observed.nodes,
            "pods": observed.pods,
            "podDisruptionBudgets": observed.pdbs,
            "nodePools": observed.nodepools,
            "karpenter": analysis.karpenter,
            "profiles": observed.profiles,
            "podsWithRecommendations": observed.pods_with_recommendations,
        },
        "plans": {
            label: plan_json(plan, analysis.current if label == RECOMMENDED else None) for label, plan in analysis.plans
        },
        "problems": list(analysis.problems),
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False)


# ------------------------------------------------------------------------------------------------ running


def priced(inputs: Inputs, catalogue: Catalogue) -> Inputs:
    """`inputs`, read without a catalogue, priced from a local one: each node's capacity type, zone and price
    resolved from its labels as `node_from_wire` resolves them (nothing else about a node depends on the
    catalogue), and the catalogue's problems in place of "no catalogue"."""
    nodes = []
    for node in inputs.nodes:
        labelled = node_from_wire({"metadata": {"name": node.name, "labels": dict(node.labels)}}, catalogue)
        nodes.append(replace(node, capacity_type=labelled.capacity_type, zone=labelled.zone, price=labelled.price))
    others = tuple(problem for problem in inputs.problems if problem not in inputs.catalogue_problems)
    return replace(inputs, nodes=tuple(nodes), catalogue=catalogue, problems=(*catalogue.problems, *others),
                   catalogue_problems=catalogue.problems)  # fmt: skip


def analyse(inputs: Inputs, source: str, k: float, *, what_if: bool, policy: str = BALANCED,
            pool_label: str = INSTANCE_TYPE_LABEL) -> Analysis:  # fmt: skip
    """Plan `inputs` (the reader's `advise`: current and recommended requests); the recommended plan is shown
    only `what_if`; `policy` is that of pools no Karpenter NodePool describes. Raises PlanError for a catalogue
    with no offering: every node would cost 0, and no move would be worth anything."""
    if not inputs.catalogue.offerings:
        problems = "; ".join(inputs.catalogue_problems) or "the document lists none"
        raise PlanError(f"catalogue {source}: no offering read ({problems})")
    advice = advise(inputs, k=k, default_policy=policy)
    return Analysis(advice.current, source, k, advice.recommended if what_if else None, inputs.observed,
                    inputs.karpenter, advice.problems, policy, pool_label)  # fmt: skip


def gather(client: Any, catalogue: tuple[str, str] | Mapping[str, Any], source: str, k: float, *,
           what_if: bool, policy: str = BALANCED, pool_label: str = INSTANCE_TYPE_LABEL,
           now: datetime | None = None) -> Analysis:  # fmt: skip
    """Read the cluster and plan, as `ballastd --consolidation-policy/--consolidation-pool-label` would.
    `catalogue` is `(namespace, name)` of the ConfigMap, read as the ConsolidationReport's controller reads it,
    or the document of a local file; NodePool budgets with a schedule apply when their window covers `now`
    (default: the current time). Raises PlanError for a catalogue that is missing or has no offering."""
    now = now or datetime.now(UTC)
    if isinstance(catalogue, tuple):
        inputs = read_inputs(client, ReadSettings(catalogue=catalogue, pool_label=pool_label), now=now)
    else:
        read = read_inputs(client, ReadSettings(pool_label=pool_label), now=now)
        inputs = priced(read, parse_catalogue(catalogue))
    return analyse(inputs, source, k, what_if=what_if, policy=policy, pool_label=pool_label)
