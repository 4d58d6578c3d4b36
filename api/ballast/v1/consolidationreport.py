"""ConsolidationReport: the consolidation advisor's output — which nodes the pods' requests free, now and with the
requests their WorkloadProfiles recommend, what that saves, and each move's Balanced score. Only the object named
`cluster` is written (by the `consolidation` controller); it has no spec, everything is status.

Money and scores are decimal strings (`"0.1920"` per hour, `"140.16"` per month of 730 hours, `"1.00"`), as the
Kubernetes API conventions ask of non-integers.
"""

from __future__ import annotations

from ballast.api.customresource import CustomResource
from ballast.api.meta import ConditionList, Conditions, Time
from ballast.api.wire import Int32, WireModel
from ballast.runtime.crdgen import AGE, PrinterColumn

from .groupversion import GROUP, VERSION

CONSOLIDATION_REPORT_NAME = "cluster"
"""The only ConsolidationReport the advisor writes."""
REFRESH_ANNOTATION = f"{GROUP}/refresh"
"""Set (to any new value) on the report to have it recomputed now."""

READY = "Ready"
"""Condition type: the last refresh read the cluster and planned (False: why it could not)."""
CATALOGUE_VALID = "CatalogueValid"
"""Condition type: the catalogue was read and every entry parsed (False: the entries skipped, by name)."""
INPUTS_VALID = "InputsValid"
"""Condition type: every node, pod, PDB, NodePool and profile parsed (False: those left out or held, by name)."""


class ReportMove(WireModel):
    """One decision about one or more nodes, as Karpenter's consolidation would take it."""

    nodes: list[str]
    """The nodes the move removes (or replaces)."""
    pools: list[str] | None = None
    """Their pools."""
    method: str
    """emptiness, multi-node, single-node, or candidates (never became a candidate)."""
    decision: str
    """delete, replace or no-op."""
    approved: bool
    """Whether the move would be taken (for a Balanced pool: its score reaches the threshold)."""
    score: str | None = None
    """The deciding Balanced score (lowest of the pools scored); absent when no Balanced pool was scored."""
    savings_per_hour: str = "0.0000"
    """What the move saves per hour."""
    savings_per_month: str = "0.00"
    """The same per month (730 hours)."""
    disruption_cost: str = "0.00"
    """Karpenter's disruption cost of the move's nodes."""
    replacement: str | None = None
    """What a replace launches: pool/instance type/capacity type."""
    reason: str | None = None
    """Karpenter's reason, or the score against the threshold."""


class ReportPool(WireModel):
    """One pool now and after the freed set."""

    name: str
    """The pool: a NodePool's name, or the fallback label's value."""
    policy: str
    """Its consolidation policy."""
    nodes: Int32
    """Nodes now."""
    nodes_after: Int32
    """Nodes once the freed set is gone."""
    cost_per_hour: str
    """Cost per hour now."""
    cost_per_month: str
    """Cost per month (730 hours) now."""
    cost_per_month_after: str
    """Cost per month once the freed set is gone."""
    disruption_cost: str
    """The pool's total disruption cost (the Balanced score's denominator)."""


class ReportFreed(WireModel):
    """The freed set: the nodes gone once every command has run, each on the state the previous left."""

    count: Int32 = 0
    """How many of today's nodes are gone."""
    nodes: list[str] | None = None
    """Their names."""
    launched: list[str] | None = None
    """Replacements launched on the way (`name: pool/instance type/capacity type`)."""
    savings_per_hour: str = "0.0000"
    """Saving per hour."""
    savings_per_month: str = "0.00"
    """Saving per month (730 hours)."""
    unplaced: list[str] | None = None
    """Pods an Emptiness deletion left without a node."""


class RequestsReport(WireModel):
    """The advice for one set of requests (the pods' current ones, or those their profiles recommend)."""

    nodes: Int32 = 0
    """Nodes in a pool now."""
    nodes_after: Int32 = 0
    """Nodes once the freed set is gone."""
    cost_per_hour: str = "0.0000"
    """Cost per hour of the pools now."""
    cost_per_month: str = "0.00"
    """Cost per month (730 hours) now."""
    disruption_cost: str = "0.00"
    """Total disruption cost of the pools."""
    pools: list[ReportPool] | None = None
    """Per pool."""
    freed: ReportFreed | None = None
    """The freed set and its saving."""
    first: ReportMove | None = None
    """What Karpenter would do first."""
    approved: Int32 = 0
    """Moves of the first round that would be taken."""
    rejected: Int32 = 0
    """Moves of the first round that would not."""
    moves: list[ReportMove] | None = None
    """The first round's moves, approved first; at most 100 of each kind (`movesOmitted` counts the rest)."""
    moves_omitted: Int32 | None = None
    """Moves left out of `moves` to keep the object small."""


class ObservedInputs(WireModel):
    """What the last refresh read."""

    nodes: Int32 = 0
    """Nodes listed."""
    pods: Int32 = 0
    """Bound, unfinished pods listed."""
    pod_disruption_budgets: Int32 = 0
    """PodDisruptionBudgets listed."""
    node_pools: Int32 = 0
    """Karpenter NodePools listed."""
    karpenter: bool = False
    """Whether the cluster serves karpenter.sh/v1 NodePools."""
    profiles: Int32 = 0
    """WorkloadProfiles with recommended requests."""
    pods_with_recommendations: Int32 = 0
    """Pods whose recommended requests the recommended plan uses."""
    default_policy: str | None = None
    """The consolidation policy of pools no NodePool describes (--consolidation-policy)."""
    k: Int32 | None = None
    """The Balanced threshold is 1/k."""
    catalogue: str | None = None
    """The catalogue ConfigMap (namespace/name)."""


class ConsolidationReportStatus(WireModel):
    """The advice, current and recommended requests side by side."""

    last_refresh_time: Time | None = None
    """When the advice was last computed."""
    observed_refresh: str | None = None
    """The refresh annotation's value the last refresh answered."""
    observed: ObservedInputs | None = None
    """What was read."""
    current: RequestsReport | None = None
    """With the pods' current requests."""
    recommended: RequestsReport | None = None
    """With the requests their WorkloadProfiles recommend."""
    conditions: Conditions = ConditionList()
    """Ready, CatalogueValid and InputsValid."""


class ConsolidationReport(CustomResource):
    """ConsolidationReport is the consolidation advisor's advice for the cluster; written by the operator."""

    GROUP = GROUP
    VERSION = VERSION
    KIND = "ConsolidationReport"
    PLURAL = "consolidationreports"
    SCOPE = "Cluster"
    PRINTER_COLUMNS = (
        PrinterColumn("Nodes", "integer", ".status.current.nodes"),
        PrinterColumn("Freed", "integer", ".status.current.freed.count", "nodes freed with today's requests"),
        PrinterColumn("Saving", "string", ".status.current.freed.savingsPerMonth", "per month, today's requests"),
        PrinterColumn("Recommended-Freed", "integer", ".status.recommended.freed.count",
                      "nodes freed with the recommended requests"),
        PrinterColumn("Recommended-Saving", "string", ".status.recommended.freed.savingsPerMonth",
                      "per month, the recommended requests"),
        PrinterColumn("Ready", "string", ".status.conditions[?(@.type=='Ready')].status"),
        PrinterColumn("Refreshed", "date", ".status.lastRefreshTime"),
        AGE,
    )  # fmt: skip
    STATUS_SUBRESOURCE = True

    status: ConsolidationReportStatus | None = None
    """Written by the operator."""
