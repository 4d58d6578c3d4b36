"""Two more scenarios side by side with real Karpenter v1.15.0 (its kwok provider), on the harness of
tests/e2e/test_karpenter.py (tests/e2e/karpenter_support.py), each on a mini-cluster of its own. Not part of
`make test-e2e`: `make test-load` runs them (`pytest tests/load -m karpenter` alone).

Both start from the same two nodes (allocatable is the type's resources less Karpenter's kwok overhead):

- `web`, 3 pods of 1.3 CPU → one c-4x node A (3.9 CPU: full); then `api`, 1 pod of 1.2 CPU → one c-2x node B
  (1.9; a c-1x's 0.9 is too small). Nothing is worth a move yet: A is full, so B's pod fits nowhere else, and
  neither node has a cheaper type that holds its pods.
- `web` shrinks to 2 (2.6 CPU on A): B's pod now fits in A's 1.3 CPU left. Deleting B saves a third of the pool's
  cost for 2 of its 5 disruption (score 0.83: approved); A's 2.6 CPU need its c-4x (no replace), and A and B
  together need a c-4x, A's own type (no multi-node move). A and B differ in price and pods: no tie.

1. A DELETE: the advisor's first move deletes B, and so does Karpenter's first command (same score); B is the
   only node gone, and `api`'s pod runs on A.
2. Blocked: `api`'s pod carries `karpenter.sh/do-not-disrupt: "true"`. The advisor reports B no candidate with
   Karpenter's reason (the message of Karpenter's own `DisruptionBlocked` Event on Node B) and proposes nothing;
   Karpenter executes no command and scores no move of B, watched until that Event (Karpenter sends one per node
   per 2 minutes, so it may come up to 2 minutes late) and for at least three of its disruption polls.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from ballast.internal.consolidation import Plan
from ballast.internal.consolidation.plan_report import plan_json
from ballast.runtime.envtest import MiniCluster
from ballast.runtime.envtest.tools import module_dir
from ballast.runtime.envtest.wait import WaitTimeoutError, poll_until
from tests.e2e.figures import record
from tests.e2e.karpenter_support import (
    NAMESPACE,
    NOMINATION_SECONDS,
    QUIET_SECONDS,
    Karpenter,
    advise,
    advisor_kubeconfig,
    advisor_rbac_problems,
    catalogue_from_instance_types,
    commands_of,
    create_nodepool,
    disrupted_nodes,
    disruption_blocked,
    instance_type,
    karpenter_minicluster,
    karpenter_nodes,
    nodeclaims,
    scale,
    settled,
    start_karpenter,
    wait_settled,
)
from tests.e2e.support import create_namespace, deployment

pytestmark = [pytest.mark.karpenter, pytest.mark.timeout(600)]

DO_NOT_DISRUPT = {"karpenter.sh/do-not-disrupt": "true"}
BEFORE_SHRINK = {"web": 3, "api": 1}
AFTER_SHRINK = {"web": 2, "api": 1}
BLOCKED_EVENT_SECONDS = 180.0
"""Karpenter's Event dedupe window (2 minutes per reason and node), two of its 10 s disruption polls, a margin."""


@pytest.fixture
def karpenter_cluster() -> Iterator[MiniCluster]:
    """A mini-cluster of the test's own, with no Node: Karpenter's and the product's CRDs, an audit log."""
    yield from karpenter_minicluster()


class SideBySide:
    """One scenario's cluster, Karpenter, the advisor's catalogue and credentials, and the two nodes."""

    def __init__(self, cluster: MiniCluster) -> None:
        self.cluster = cluster
        self.started = time.monotonic()
        instance_types = json.loads(
            (module_dir("karpenter") / "kwok" / "cloudprovider" / "instance_types.json").read_text()
        )
        self.catalogue = catalogue_from_instance_types(instance_types)
        self.karpenter: Karpenter = start_karpenter(cluster)
        self.kubeconfig = advisor_kubeconfig(cluster)
        create_nodepool(cluster)
        create_namespace(cluster, NAMESPACE)
        self.node_a = self.node_b = ""
        self.nodes: set[str] = set()
        self.types: dict[str, str] = {}
        self.shrunk = 0.0

    def launch_and_shrink(self, api_annotations: Mapping[str, str] | None = None) -> None:
        """A (c-4x, web's 3 pods) and B (c-2x, api's pod), then web 3 → 2 once B's nomination window is over."""
        cluster, karpenter = self.cluster, self.karpenter
        deployments = f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments"
        cluster.env.rest.create(deployments, deployment("web", replicas=3, cpu="1300m"))
        placed = wait_settled(cluster, karpenter, {"web": 3}, "web's 3 pods Running on a Karpenter node")
        (self.node_a,) = set(placed.values())
        cluster.env.rest.create(deployments, deployment("api", replicas=1, cpu="1200m", annotations=api_annotations))
        placed = wait_settled(cluster, karpenter, BEFORE_SHRINK, "api's pod Running on a second Karpenter node")
        nodes = karpenter_nodes(cluster)
        self.nodes = set(nodes)
        assert len(nodes) == 2, (nodes, placed, karpenter.tail())
        (self.node_b,) = self.nodes - {self.node_a}
        types = self.types = {name: instance_type(node) for name, node in nodes.items()}
        assert types == {self.node_a: "c-4x-amd64-linux", self.node_b: "c-2x-amd64-linux"}, karpenter.tail()
        # As in tests/e2e/test_karpenter.py: B is left alone for its nomination window; the shrink comes after it.
        time.sleep(NOMINATION_SECONDS + 2.0)
        assert settled(cluster, BEFORE_SHRINK) == placed, karpenter.tail()
        assert commands_of(karpenter) == [], f"Karpenter disrupted a node before the shrink\n{karpenter.tail()}"
        scale(cluster, "web", 2)
        self.shrunk = time.monotonic()
        wait_settled(cluster, karpenter, AFTER_SHRINK, "web shrunk to 2 pods", timeout=60.0)

    def advise(self) -> tuple[Plan, dict[str, Any]]:
        """The advisor's plan of the state right after the shrink, checked to be read before Karpenter acted."""
        claims_before = {c["metadata"]["name"] for c in nodeclaims(self.cluster)}
        advice = advise(self.cluster, self.catalogue, self.kubeconfig)
        claims_after = {c["metadata"]["name"] for c in nodeclaims(self.cluster)}
        assert claims_after == claims_before, f"Karpenter acted while the advisor read\n{self.karpenter.tail()}"
        assert set(karpenter_nodes(self.cluster)) == self.nodes, self.karpenter.tail()
        plan = plan_json(advice)
        (self.cluster.env.work_dir / "advisor" / "plan.json").write_text(json.dumps(plan, indent=2))
        return advice, plan

    def context(self, plan: Mapping[str, Any]) -> str:
        commands = self.karpenter.messages("disrupting node(s)")
        scores = self.karpenter.messages("consolidation score")
        return (
            f"\nthe advisor's plan: {json.dumps(plan, indent=2)}\nKarpenter's commands: "
            f"{json.dumps(commands, indent=2)}\nits scores: {json.dumps(scores, indent=2)}\n{self.karpenter.tail()}"
        )

    def rbac(self) -> None:
        problems = advisor_rbac_problems(self.cluster)
        assert not problems, "\n".join(problems)


def test_karpenter_deletes_the_node_the_advisor_deletes(karpenter_cluster: MiniCluster) -> None:
    scenario = SideBySide(karpenter_cluster)
    cluster, karpenter = scenario.cluster, scenario.karpenter
    scenario.launch_and_shrink()
    advice, plan = scenario.advise()
    first = plan["first"]
    assert advice.first is not None, f"the advisor proposes nothing{scenario.context(plan)}"
    assert (first["method"], first["decision"], first["nodes"]) == ("single-node", "delete", [scenario.node_b]), (
        scenario.context(plan)
    )
    assert first["approved"], scenario.context(plan)
    assert first["launch"] is None, scenario.context(plan)
    advisor_score = advice.first.score  # the plan's own figure: the JSON has the report's two decimals
    assert advisor_score is not None, scenario.context(plan)

    def first_command() -> dict[str, Any] | None:
        commands = commands_of(karpenter)
        return commands[0] if commands else None

    try:
        command = poll_until(first_command, timeout=120.0, interval=1.0, what="Karpenter's first disruption")
    except WaitTimeoutError as exc:
        raise AssertionError(f"{exc}{scenario.context(plan)}") from None
    decided_after = time.monotonic() - scenario.shrunk

    def converged() -> set[str] | None:
        current = karpenter_nodes(cluster)
        gone = scenario.nodes - set(current)
        if not gone or settled(cluster, AFTER_SHRINK) is None or len(nodeclaims(cluster)) != len(current):
            return None
        return gone

    try:
        poll_until(converged, timeout=120.0, interval=1.0, what="the deleted node gone, every pod Running")
    except WaitTimeoutError as exc:
        raise AssertionError(f"{exc}{scenario.context(plan)}") from None
    converged_after = time.monotonic() - scenario.shrunk
    time.sleep(QUIET_SECONDS)  # Karpenter goes on evaluating: a further command would show here

    context = scenario.context(plan)
    # Karpenter's first command is the advisor's first move: the delete of B, nothing launched, the same score.
    assert command.get("decision") == "delete", context
    assert disrupted_nodes(command) == {scenario.node_b}, context
    assert not command.get("replacement-nodes"), context
    scores = karpenter.messages("consolidation score")
    approved = [
        line for line in scores if set(line.get("candidates", [])) == {scenario.node_b} and line.get("approved")
    ]
    assert approved, context
    assert float(approved[0]["score"]) == pytest.approx(advisor_score, rel=1e-9), context
    # The nodes gone are the advisor's freed set, by one command; api's pod now runs on A.
    assert set(plan["freed"]["nodes"]) == {scenario.node_b} == scenario.nodes - set(karpenter_nodes(cluster)), context
    assert len(commands_of(karpenter)) == len(plan["freed"]["steps"]) == 1, context
    placed = settled(cluster, AFTER_SHRINK)
    assert placed is not None, context
    assert set(placed.values()) == {scenario.node_a}, context
    scenario.rbac()

    record(
        "karpenter_delete",
        {
            "first_move": f"delete {scenario.types[scenario.node_b]}",
            "advisor_score": round(advisor_score, 3),
            "karpenter_score": round(float(approved[0]["score"]), 3),
            "freed_nodes": len(plan["freed"]["nodes"]),
            "karpenter_commands": len(commands_of(karpenter)),
            "decided_after_seconds": round(decided_after, 1),
            "converged_after_seconds": round(converged_after, 1),
            "scenario_seconds": round(time.monotonic() - scenario.started, 1),
        },
    )


def test_karpenter_leaves_the_node_the_advisor_reports_blocked(karpenter_cluster: MiniCluster) -> None:
    scenario = SideBySide(karpenter_cluster)
    cluster, karpenter = scenario.cluster, scenario.karpenter
    scenario.launch_and_shrink(api_annotations=DO_NOT_DISRUPT)
    advice, plan = scenario.advise()
    context = scenario.context(plan)
    (api_pod,) = [pod for pod, node in (settled(cluster, AFTER_SHRINK) or {}).items() if node == scenario.node_b]
    reason = f'Pod has "karpenter.sh/do-not-disrupt" annotation (Pod={NAMESPACE}/{api_pod})'
    # The advisor: B is no candidate, with Karpenter's reason; nothing else is worth a move.
    blocked = [move for move in plan["moves"] if move["nodes"] == [scenario.node_b]]
    assert [(m["method"], m["decision"], m["approved"], m["reason"]) for m in blocked] == [
        ("candidates", "no-op", False, reason)
    ], context
    assert advice.first is None, context
    assert plan["freed"]["nodes"] == [], context

    # Karpenter: through three of its disruption polls, and until Node B's DisruptionBlocked Event gives the same
    # reason, it executes nothing and B stays. (Karpenter publishes one such Event per node per 2 minutes whatever
    # the message: the first one may be "Node is nominated for a pending pod", from B's launch.)
    deadline = time.monotonic() + BLOCKED_EVENT_SECONDS
    messages: list[str] = []
    blocked_after = 0.0
    while reason not in messages or time.monotonic() - scenario.shrunk < QUIET_SECONDS:
        assert commands_of(karpenter) == [], scenario.context(plan)
        assert set(karpenter_nodes(cluster)) == scenario.nodes, scenario.context(plan)
        if reason not in messages:
            messages = disruption_blocked(cluster, scenario.node_b)
            blocked_after = time.monotonic() - scenario.shrunk
        assert time.monotonic() < deadline, (
            f"no DisruptionBlocked Event of Node B says {reason!r} in {BLOCKED_EVENT_SECONDS} s: {messages}{context}"
        )
        time.sleep(1.0)
    scores = karpenter.messages("consolidation score")
    assert not [line for line in scores if scenario.node_b in line.get("candidates", [])], scenario.context(plan)
    assert settled(cluster, AFTER_SHRINK) is not None, scenario.context(plan)
    scenario.rbac()

    record(
        "karpenter_blocked",
        {
            "reason": reason.split(" (", 1)[0],
            "karpenter_blocked_after_seconds": round(blocked_after, 1),
            "watched_seconds": round(time.monotonic() - scenario.shrunk, 1),
            "karpenter_commands": len(commands_of(karpenter)),
            "scenario_seconds": round(time.monotonic() - scenario.started, 1),
        },
    )
