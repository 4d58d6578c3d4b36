"""The `kubeletSummary` source: ephemeral-storage from the kubelet Summary API, through the API server's node proxy.

Only nodes hosting enrolled pods are called (`FetchTarget.nodes`, from the label-scoped pod cache —
docs/design.md, difference 16; the Go operator lists every node and every pod), a few at a time (bounded thread
pool), each `GET /api/v1/nodes/<node>/proxy/stats/summary` with its own timeout. A node whose call fails keeps its
last good summary for up to two cycles — the Go operator's 2×TTL staleness rule (docs/compatibility.md) — and is
skipped after that; the poll fails as a whole only when no node produced anything.

Per pod with `ephemeral-storage.usedBytes`, each container listed in the summary gets `usedBytes // number of
listed containers` (integer division, as the Go operator).
"""

from __future__ import annotations

import contextvars
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol

import msgspec

from ballast.runtime import APIStatusError

from .base import FetchError, FetchResult, FetchTarget, UsageSample

TYPE = "kubeletSummary"
RESOURCE = "ephemeral-storage"
DEFAULT_CONCURRENCY = 8
DEFAULT_NODE_TIMEOUT = 10.0
STALE_CYCLES = 2
"""A failed node's last good summary is used for this many more cycles (the Go operator: age < 2 × cache TTL)."""


class Response(Protocol):
    @property
    def data(self) -> bytes: ...


class Transport(Protocol):
    """The part of `ballast.runtime.rest.Transport` this source uses (`client.transport`)."""

    def request(self, method: str, path: str, *, timeout: float | None = None) -> Response: ...


class _PodRef(msgspec.Struct):
    name: str = ""
    namespace: str = ""


class _ContainerStats(msgspec.Struct):
    name: str = ""


class _FsStats(msgspec.Struct, rename="camel"):
    used_bytes: int | None = None


class _PodStats(msgspec.Struct):
    podRef: _PodRef = msgspec.field(default_factory=_PodRef)  # noqa: N815 - wire name
    containers: list[_ContainerStats] = msgspec.field(default_factory=list)
    ephemeral_storage: _FsStats | None = msgspec.field(default=None, name="ephemeral-storage")


class _Summary(msgspec.Struct):
    pods: list[_PodStats] = msgspec.field(default_factory=list)


_DECODER = msgspec.json.Decoder(_Summary)


def summary_path(node: str) -> str:
    """The node-proxy path of a node's Summary API."""
    return f"/api/v1/nodes/{node}/proxy/stats/summary"


def summary_samples(body: bytes, now_ms: int) -> list[UsageSample]:
    """The ephemeral-storage samples of one Summary API answer; raises `FetchError` for a body that is not one."""
    try:
        summary = _DECODER.decode(body)
    except msgspec.DecodeError as exc:
        raise FetchError(f"not a kubelet Summary: {exc}") from exc
    samples: list[UsageSample] = []
    for pod in summary.pods:
        used = pod.ephemeral_storage.used_bytes if pod.ephemeral_storage else None
        if used is None or used < 0 or not pod.containers:
            continue
        share = used // len(pod.containers)
        ref = pod.podRef
        samples.extend(UsageSample(ref.namespace, ref.name, c.name, RESOURCE, share, now_ms) for c in pod.containers)
    return samples


@dataclass(slots=True)
class _LastGood:
    cycle: int
    samples: list[UsageSample]


class KubeletSummarySource:
    """Polls the Summary API of the target nodes; keeps each node's last good answer for `STALE_CYCLES` cycles.
    Not thread-safe: one MetricsSource's polls never overlap.

    `transport` is the API server transport (`client.transport`): requests go through the node proxy, so the
    operator needs `nodes/proxy` get, never direct kubelet access.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        concurrency: int = DEFAULT_CONCURRENCY,
        node_timeout: float = DEFAULT_NODE_TIMEOUT,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be ≥ 1, got {concurrency}")
        self._transport = transport
        self._concurrency = concurrency
        self._node_timeout = node_timeout
        self._cycle = 0
        self._last_good: dict[str, _LastGood] = {}

    def fetch(self, target: FetchTarget) -> FetchResult:
        """Call every target node (a few at a time). Raises `FetchError` when every node failed without a usable
        earlier summary."""
        self._cycle += 1
        cycle = self._cycle
        # Nodes no longer hosting enrolled pods are forgotten, so memory follows the target.
        self._last_good = {n: good for n, good in self._last_good.items() if n in target.nodes}
        nodes = sorted(target.nodes)
        if not nodes:
            return FetchResult([])
        outcomes = self._fetch_all(nodes, target.now_ms)
        samples: list[UsageSample] = []
        problems: list[str] = []
        produced = 0
        for node, outcome in zip(nodes, outcomes, strict=True):
            if isinstance(outcome, list):
                self._last_good[node] = _LastGood(cycle, outcome)
                samples.extend(outcome)
                produced += 1
                continue
            good = self._last_good.get(node)
            if good is not None and cycle - good.cycle <= STALE_CYCLES:
                problems.append(f"node {node}: {outcome}; using its summary of {cycle - good.cycle} cycle(s) ago")
                samples.extend(sample._replace(timestamp_ms=target.now_ms) for sample in good.samples)
                produced += 1
            else:
                problems.append(f"node {node}: {outcome}; skipped (no summary younger than {STALE_CYCLES} cycles)")
        if produced == 0:
            raise FetchError(f"no node answered the Summary API: {'; '.join(problems)}")
        return FetchResult(samples, problems)

    def _fetch_all(self, nodes: Sequence[str], now_ms: int) -> list[list[UsageSample] | str]:
        def one(node: str) -> list[UsageSample] | str:
            try:
                body = self._transport.request("GET", summary_path(node), timeout=self._node_timeout).data
                return summary_samples(body, now_ms)
            except (APIStatusError, FetchError, ConnectionError, TimeoutError) as exc:
                return str(exc)

        if len(nodes) == 1 or self._concurrency == 1:  # one call at a time: no pool to start and join per fetch
            return [one(node) for node in nodes]
        # Each call runs in a copy of this context, so the reconcile's cooperative deadline applies there too.
        with ThreadPoolExecutor(min(self._concurrency, len(nodes)), thread_name_prefix="kubelet-summary") as pool:
            futures = [pool.submit(contextvars.copy_context().run, one, node) for node in nodes]
            return [future.result() for future in futures]
