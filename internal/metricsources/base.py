"""What a metric source is: polled once per collection cycle, it returns usage samples of pods' containers.

A source knows nothing of profiles or the history store: it reports `(namespace, pod, container, resource,
value)` as the cluster sees it, and the collector decides which samples belong to which profile (fail closed).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol


class UsageSample(NamedTuple):
    """One usage reading: millicores for `cpu`, bytes for every other resource (the Go operator's integers).

    `timestamp_ms` is when the source read it (epoch ms); the collector dates a whole cycle at its poll time, as
    the Go operator dates samples at "now".
    """

    namespace: str
    pod: str
    container: str
    resource: str
    value: int
    timestamp_ms: int


@dataclass(frozen=True, slots=True)
class FetchTarget:
    """What one poll is for: its time, and the nodes hosting the enrolled pods it measures.

    `nodes` lets per-node sources (the kubelet Summary API) call only where enrolled pods run
    (docs/design.md, difference 16); cluster-wide sources ignore it.
    """

    now_ms: int
    nodes: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class FetchResult:
    """The samples of one poll, and the partial failures it survived (e.g. one node out of fifty).

    `problems` are human-readable (`"node n1: 503 ServiceUnavailable"`): the collector logs them. A source that
    could not produce anything raises `FetchError` instead.
    """

    samples: Sequence[UsageSample]
    problems: Sequence[str] = field(default=())


class FetchError(Exception):
    """The source produced nothing this cycle (the API answered with an error, timed out, or sent garbage).

    The collector counts it in `ballast_fetch_errors_total` and the source backs off (`Backoff`).
    """


class BackingOffError(FetchError):
    """The source failed recently and is not called again until its backoff has passed."""

    def __init__(self, source: str, remaining: float) -> None:
        super().__init__(f"source {source} is backing off after failures; next attempt in {remaining:.1f}s")
        self.remaining = remaining


class Source(Protocol):
    """A metric plugin instance for one MetricsSource; called once per cycle, never concurrently."""

    def fetch(self, target: FetchTarget) -> FetchResult:
        """Read usage once. Raises `FetchError` when nothing could be read."""
        ...
