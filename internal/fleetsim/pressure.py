"""Node memory pressure as the kubelet answers it: which pods go, one at a time, until the node's working set fits.

When Σ working set of a node's pods exceeds its allocatable memory, the kubelet evicts pods in its ranking for
memory pressure, re-checking after each one:

1. pods whose memory usage exceeds their request before pods within it;
2. then lower priority before higher;
3. then the larger usage above the request (usage − request) first.

Ties go by pod name, so one seed gives one result. The simulator's world restarts an evicted pod on the same node
(its containers start over), and the eviction counts against the recommender that set the pod's requests
(docs/simulate.md, "The simulated cluster"). Pure code: no world, no numpy.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Candidate:
    """A running pod on a node under pressure: its working set and its memory request (bytes), its priority."""

    pod: str
    usage: float
    request: float
    priority: int = 0

    @property
    def above_request(self) -> bool:
        return self.usage > self.request


def eviction_order(candidates: Iterable[Candidate]) -> list[Candidate]:
    """`candidates` in the kubelet's order for memory pressure, the first to go first."""
    return sorted(
        candidates,
        key=lambda c: (not c.above_request, c.priority, -(c.usage - c.request), c.pod),
    )


def to_evict(candidates: Iterable[Candidate], allocatable: float) -> list[Candidate]:
    """The pods evicted, in order, until the rest's working set fits `allocatable` (none when it already fits)."""
    ordered = eviction_order(candidates)
    remaining = sum(candidate.usage for candidate in ordered)
    evicted: list[Candidate] = []
    for candidate in ordered:
        if remaining <= allocatable:
            break
        evicted.append(candidate)
        remaining -= candidate.usage
    return evicted
