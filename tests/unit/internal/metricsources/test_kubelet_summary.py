"""The kubeletSummary source: ephemeral-storage per container from the nodes hosting enrolled pods, a few nodes
at a time, a failed node's last good summary kept for two cycles (docs/compatibility.md)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from ballast.internal.metricsources import FetchError, FetchTarget, KubeletSummarySource, UsageSample, summary_samples
from ballast.runtime.apierrors import error_from_response


def summary(*pods: tuple[str, str, list[str], int | None]) -> dict[str, Any]:
    entries = []
    for namespace, name, containers, used in pods:
        entry: dict[str, Any] = {
            "podRef": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
            "containers": [{"name": c, "cpu": {"usageNanoCores": 1}} for c in containers],
        }
        if used is not None:
            entry["ephemeral-storage"] = {"usedBytes": used, "availableBytes": 10}
        entries.append(entry)
    return {"node": {"nodeName": "n"}, "pods": entries}


@dataclass
class Answer:
    data: bytes


class Kubelets:
    """Node-proxy answers by node; `failing` nodes answer 503."""

    def __init__(self, summaries: dict[str, dict[str, Any]], delay: float = 0.0) -> None:
        self.summaries = summaries
        self.failing: set[str] = set()
        self.calls: list[tuple[str, float | None]] = []
        self.delay = delay
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()

    def request(self, method: str, path: str, *, timeout: float | None = None) -> Answer:
        node = path.split("/")[4]
        with self._lock:
            self.calls.append((path, timeout))
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.delay:
                time.sleep(self.delay)  # a slow kubelet, so that concurrent calls overlap
            if node in self.failing:
                raise error_from_response(503, b'{"reason":"ServiceUnavailable","message":"kubelet down"}')
            return Answer(orjson.dumps(self.summaries[node]))
        finally:
            with self._lock:
                self.in_flight -= 1


def test_each_listed_container_gets_an_equal_share_of_the_pod_usage() -> None:
    body = orjson.dumps(summary(("shop", "a", ["app", "proxy", "logs"], 1000), ("shop", "b", ["app"], None),
                                ("shop", "c", [], 500)))  # fmt: skip

    assert summary_samples(body, 7) == [
        UsageSample("shop", "a", "app", "ephemeral-storage", 333, 7),
        UsageSample("shop", "a", "proxy", "ephemeral-storage", 333, 7),
        UsageSample("shop", "a", "logs", "ephemeral-storage", 333, 7),
    ]


def test_a_body_that_is_not_a_summary_is_a_fetch_error() -> None:
    with pytest.raises(FetchError):
        summary_samples(b'{"pods": "nope"}', 0)


def test_only_target_nodes_are_called_through_the_node_proxy() -> None:
    kubelets = Kubelets({n: summary(("shop", f"p-{n}", ["app"], 100)) for n in ("a", "b", "c")})
    source = KubeletSummarySource(kubelets, node_timeout=3.0)

    result = source.fetch(FetchTarget(0, frozenset({"a", "b"})))

    assert sorted(path for path, _ in kubelets.calls) == [
        "/api/v1/nodes/a/proxy/stats/summary",
        "/api/v1/nodes/b/proxy/stats/summary",
    ]
    assert {timeout for _, timeout in kubelets.calls} == {3.0}
    assert sorted(s.pod for s in result.samples) == ["p-a", "p-b"]
    assert source.fetch(FetchTarget(0)).samples == []  # no node hosts an enrolled pod: no call at all
    assert len(kubelets.calls) == 2


def test_calls_run_concurrently_but_bounded() -> None:
    nodes = [f"n{i}" for i in range(12)]
    kubelets = Kubelets({n: summary(("shop", n, ["app"], 10)) for n in nodes}, delay=0.05)

    result = KubeletSummarySource(kubelets, concurrency=3).fetch(FetchTarget(0, frozenset(nodes)))

    assert len(result.samples) == 12
    assert 1 < kubelets.max_in_flight <= 3


def test_a_failing_node_keeps_its_last_summary_for_two_cycles() -> None:
    kubelets = Kubelets({"a": summary(("shop", "pa", ["app"], 100)), "b": summary(("shop", "pb", ["app"], 200))})
    source = KubeletSummarySource(kubelets)
    target = FetchTarget(0, frozenset({"a", "b"}))
    source.fetch(target)

    kubelets.failing.add("b")
    for cycle in (1, 2):
        result = source.fetch(FetchTarget(cycle, target.nodes))
        assert sorted((s.pod, s.value, s.timestamp_ms) for s in result.samples) == [("pa", 100, cycle),
                                                                                    ("pb", 200, cycle)]  # fmt: skip
        assert "node b" in result.problems[0]
        assert f"{cycle} cycle(s) ago" in result.problems[0]

    result = source.fetch(FetchTarget(3, target.nodes))
    assert [s.pod for s in result.samples] == ["pa"]
    assert "skipped" in result.problems[0]


def test_a_node_that_never_answered_is_skipped_without_failing_the_others() -> None:
    kubelets = Kubelets({"a": summary(("shop", "pa", ["app"], 100))})
    kubelets.failing.add("b")

    result = KubeletSummarySource(kubelets).fetch(FetchTarget(0, frozenset({"a", "b"})))

    assert [s.pod for s in result.samples] == ["pa"]
    assert len(result.problems) == 1


def test_the_poll_fails_when_no_node_produced_anything() -> None:
    kubelets = Kubelets({})
    kubelets.failing.update({"a", "b"})

    with pytest.raises(FetchError, match="no node answered"):
        KubeletSummarySource(kubelets).fetch(FetchTarget(0, frozenset({"a", "b"})))


def test_concurrency_must_be_positive() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        KubeletSummarySource(Kubelets({}), concurrency=0)
