"""Short builders for placement tests: targets, policies and summaries as the mappings `place` takes."""

from __future__ import annotations

from typing import Any

from ballast.internal.balancer import PodSummary


def target(name: str, low: int | None = None, high: int | None = None) -> dict[str, Any]:
    """A target mapping; `low`/`high` are min_replicas/max_replicas (None: 0 / unbounded)."""
    return {"name": name, "min_replicas": low, "max_replicas": high}


def priority(*order: str) -> dict[str, Any]:
    return {"name": "priority", "target_order": list(order)}


def proportional(**weights: int) -> dict[str, Any]:
    return {"name": "proportional", "target_proportions": weights}


def pods(total: int, running: int = 0, late: int = 0) -> PodSummary:
    """A summary: `total` pods, `running` of them Running, `late` Pending past the startup timeout."""
    return PodSummary(total, running, late)
