"""The consolidation advisor's metrics, after Karpenter's (`karpenter_consolidation_score`, `…_moves_total`) with
a `requests` label: `current` (the pods' requests) or `recommended` (their profiles' recommended requests).

- `ballast_consolidation_score{decision,nodepool,policy,requests}` — histogram of the Balanced scores of the
  moves of each refresh's first round, one observation per Balanced pool scored, Karpenter's buckets;
- `ballast_consolidation_moves_total{decision,nodepool,policy,requests}` — moves evaluated (every policy; one per
  pool of a move), `decision` approved or rejected;
- `ballast_consolidation_freed_nodes{nodepool,requests}` — nodes of the pool in the freed set;
- `ballast_consolidation_savings_per_hour{nodepool,requests}` — what the freed set saves the pool per hour.

The two gauges are replaced as a whole at each refresh (a pool gone leaves no series behind).
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import Counter, Gauge, Histogram

from ballast.runtime.metrics import REGISTRY

SCORE_BUCKETS = (0.1, 0.25, 0.33, 0.5, 1.0, 2.0, 5.0, 10.0)
"""Karpenter's `karpenter_consolidation_score` buckets."""
APPROVED = "approved"
REJECTED = "rejected"
REQUESTS = ("current", "recommended")

CONSOLIDATION_SCORE = Histogram(
    "ballast_consolidation_score",
    "Balanced consolidation scores of the advised moves, by decision, pool, policy and requests (current or "
    "recommended)",
    ["decision", "nodepool", "policy", "requests"], buckets=SCORE_BUCKETS, registry=REGISTRY,
)  # fmt: skip
CONSOLIDATION_MOVES = Counter(
    "ballast_consolidation_moves",
    "Consolidation moves the advisor evaluated, by decision, pool, policy and requests",
    ["decision", "nodepool", "policy", "requests"], registry=REGISTRY,
)  # fmt: skip
CONSOLIDATION_FREED_NODES = Gauge(
    "ballast_consolidation_freed_nodes",
    "Nodes of the pool the advised freed set removes, by requests (current or recommended)",
    ["nodepool", "requests"], registry=REGISTRY,
)  # fmt: skip
CONSOLIDATION_SAVINGS_PER_HOUR = Gauge(
    "ballast_consolidation_savings_per_hour",
    "What the advised freed set saves the pool per hour, by requests (current or recommended)",
    ["nodepool", "requests"], registry=REGISTRY,
)  # fmt: skip

Score = tuple[str, str, str, float]
"""(decision, nodepool, policy, score) of one scored pool of one move."""
Evaluated = tuple[str, str, str]
"""(decision, nodepool, policy) of one pool of one move."""
PoolSaving = tuple[str, int, float]
"""(nodepool, freed nodes, savings per hour)."""


def record_refresh(
    requests: str, scores: Iterable[Score], moves: Iterable[Evaluated], pools: Iterable[PoolSaving]
) -> None:
    """One refresh's figures for one set of requests; the gauges of `requests` are replaced by `pools`."""
    for decision, nodepool, policy, score in scores:
        CONSOLIDATION_SCORE.labels(decision, nodepool, policy, requests).observe(score)
    for decision, nodepool, policy in moves:
        CONSOLIDATION_MOVES.labels(decision, nodepool, policy, requests).inc()
    fresh = list(pools)
    for gauge in (CONSOLIDATION_FREED_NODES, CONSOLIDATION_SAVINGS_PER_HOUR):
        for labels in _series(gauge, requests):
            if labels[0] not in {pool for pool, _, _ in fresh}:
                gauge.remove(*labels)
    for pool, freed, savings in fresh:
        CONSOLIDATION_FREED_NODES.labels(pool, requests).set(freed)
        CONSOLIDATION_SAVINGS_PER_HOUR.labels(pool, requests).set(savings)


def _series(gauge: Gauge, requests: str) -> list[tuple[str, str]]:
    """The (nodepool, requests) label values of `gauge` for `requests`."""
    found = []
    for metric in gauge.collect():
        for sample in metric.samples:
            if sample.labels.get("requests") == requests:
                found.append((sample.labels["nodepool"], requests))
    return found
