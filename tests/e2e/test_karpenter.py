"""The consolidation advisor side by side with real Karpenter v1.15.0 (its kwok cloud provider) on a mini-cluster
of its own: Karpenter launches kwok Nodes for a workload, the workload shrinks, the advisor plans from the state
right after the shrink, and what Karpenter then does is compared with the plan.

The scenario (the NodePool may launch c-1x/2x/4x/8x-amd64-linux, on-demand, in test-zone-a; allocatable is the
type's resources less Karpenter's kwok overhead, 100m CPU and 10Mi):

- `web`, 3 pods of 1.3 CPU → one c-4x node A (3.9 CPU: full); then `batch`, 8 pods of 100m, and `extra`, 1 pod
  of 1 CPU → one c-2x node B (1.9 CPU).
- `extra` goes, then `web` shrinks to 1 (neither step alone leaves a move worth taking). A → a c-2x saves a third
  of the pool's cost for 2 of its 11 disruption (score 1.83: approved, Karpenter's first command); A and B
  together need a c-4x, A's own type (no multi-node move); B is no candidate, since even deleting it would score
  (1/3)/(9/11) = 0.41 < 0.5 — rejected — and once A is replaced Karpenter scores B → a c-1x at (1/4)/(9/11) = 0.31
  and rejects it too. Karpenter's candidate order (SavingsRatio) has no ties: A and B differ in price and pods.

Karpenter's decisions are read from its own log (`LOG_LEVEL=debug`): `disrupting node(s)` lines are the commands
it executes and the `consolidation score` lines are every move it scored, approved or not (rejections are not
events). The mini-cluster is this module's, so Karpenter's CRDs and Nodes never meet the suite's `cluster`.

The advisor reads as the operator's ServiceAccount under `config/rbac/` as committed (the manager ClusterRole and
the consolidation and karpenter Components): the API server's audit log shows it was refused nothing, used every
grant of `config/rbac/karpenter` and nothing outside the consolidation advisor's declared rules
(tests/e2e/karpenter_support.py).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from ballast.internal.consolidation.plan_report import _move_json as move_json
from ballast.internal.consolidation.plan_report import plan_json
from ballast.runtime.envtest import MiniCluster
from ballast.runtime.envtest.tools import module_dir
from ballast.runtime.envtest.wait import WaitTimeoutError, poll_until
from tests.e2e.figures import record
from tests.e2e.karpenter_support import (
    NAMESPACE,
    NOMINATION_SECONDS,
    QUIET_SECONDS,
    advise,
    advisor_kubeconfig,
    advisor_rbac_problems,
    catalogue_from_instance_types,
    commands_of,
    create_nodepool,
    disrupted_nodes,
    instance_type,
    karpenter_minicluster,
    karpenter_nodes,
    nodeclaims,
    scale,
    settled,
    start_karpenter,
)
from tests.e2e.karpenter_support import wait_settled as wait_for
from tests.e2e.support import create_namespace, deployment

# alone: a mini-cluster of its own plus Karpenter's controller, too much beside another worker's
pytestmark = [pytest.mark.karpenter, pytest.mark.alone]


@pytest.fixture(scope="module")
def karpenter_cluster() -> Iterator[MiniCluster]:
    """A mini-cluster of this module's, with no Node: Karpenter's and the product's CRDs, an audit log."""
    yield from karpenter_minicluster()


# ------------------------------------------------------------------------------------------------ the scenario


def test_the_advisor_predicts_what_karpenter_does_after_a_workload_shrinks(karpenter_cluster: MiniCluster) -> None:
    cluster = karpenter_cluster
    started = time.monotonic()
    instance_types = json.loads(
        (module_dir("karpenter") / "kwok" / "cloudprovider" / "instance_types.json").read_text()
    )
    catalogue = catalogue_from_instance_types(instance_types)

    karpenter = start_karpenter(cluster)
    kubeconfig = advisor_kubeconfig(cluster)
    create_nodepool(cluster)
    create_namespace(cluster, NAMESPACE)
    rest = cluster.env.rest
    deployments = f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments"

    def wait_settled(expected: Mapping[str, int], what: str, timeout: float = 120.0) -> dict[str, str]:
        return wait_for(cluster, karpenter, expected, what, timeout)

    # A: web's 3 pods of 1.3 CPU fill one c-4x (3.9 CPU allocatable), so nothing else is placed there.
    scale_up = time.monotonic()
    rest.create(deployments, deployment("web", replicas=3, cpu="1300m"))
    placed = wait_settled({"web": 3}, "web's 3 pods Running on a Karpenter node")
    ready_after_scale_up = time.monotonic() - scale_up
    (node_a,) = set(placed.values())
    # B: batch's 8 pods of 100m and extra's pod of 1 CPU, 1.8 CPU together: a c-2x (1.9).
    rest.create(deployments, deployment("batch", replicas=8, cpu="100m"))
    rest.create(deployments, deployment("extra", replicas=1, cpu="1"))
    before_shrink = {"web": 3, "batch": 8, "extra": 1}
    placed = wait_settled(before_shrink, "batch's and extra's pods Running on a second Karpenter node")
    nodes = karpenter_nodes(cluster)
    assert len(nodes) == 2, (nodes, placed, karpenter.tail())
    (node_b,) = set(nodes) - {node_a}
    types = {name: instance_type(node) for name, node in nodes.items()}
    assert types == {node_a: "c-4x-amd64-linux", node_b: "c-2x-amd64-linux"}, karpenter.tail()
    # Karpenter leaves a node it has just launched pods onto alone for its nomination window (2 x
    # BATCH_MAX_DURATION, at least 10 s): the shrink comes after it, so both nodes are candidates at once.
    time.sleep(NOMINATION_SECONDS + 2.0)
    assert settled(cluster, before_shrink) == placed, karpenter.tail()
    assert karpenter.messages("disrupting node(s)") == [], (
        f"Karpenter disrupted a node before the shrink\n{karpenter.tail()}"
    )

    # The shrink, in two steps each leaving Karpenter nothing else to approve on the way: extra 1 → 0 (A is full,
    # B alone would save too little for its 9 of 13 disruption), then web 3 → 1 (with 2 pods left A needs its
    # c-4x). The advisor plans from the state right after it, before Karpenter has launched anything: Karpenter
    # validates a decision for 15 s before it executes it.
    scale(cluster, "extra", 0)
    wait_settled({"web": 3, "batch": 8, "extra": 0}, "extra shrunk to none", timeout=60.0)
    scale(cluster, "web", 1)
    shrunk = time.monotonic()
    after_shrink = {"web": 1, "batch": 8, "extra": 0}
    wait_settled(after_shrink, "web shrunk to 1 pod", timeout=60.0)
    claims_before = {c["metadata"]["name"] for c in nodeclaims(cluster)}
    advice = advise(cluster, catalogue, kubeconfig)
    claims_after = {c["metadata"]["name"] for c in nodeclaims(cluster)}
    assert len(claims_before) == 2, karpenter.tail()
    assert claims_after == claims_before, f"Karpenter acted before the advisor had read the cluster\n{karpenter.tail()}"
    assert set(karpenter_nodes(cluster)) == set(nodes), karpenter.tail()
    plan = plan_json(advice)
    (cluster.env.work_dir / "advisor" / "plan.json").write_text(json.dumps(plan, indent=2))
    assert advice.first is not None, f"the advisor proposes nothing: {json.dumps(plan, indent=2)}"
    first = plan["first"]
    advisor_score = advice.first.score  # the plan's own figure: the JSON has the report's two decimals
    assert advisor_score is not None, f"the advisor's first move has no score: {json.dumps(plan, indent=2)}"
    considered = [*advice.moves, *(m for m in (advice.multi_node, advice.emptiness) if m is not None)]
    rejected = [move_json(m) for m in considered if not m.approved and m.nodes and m.score is not None]
    freed = set(plan["freed"]["nodes"])

    def first_command() -> dict[str, Any] | None:
        commands = commands_of(karpenter)
        return commands[0] if commands else None

    try:
        command = poll_until(first_command, timeout=120.0, interval=1.0, what="Karpenter's first disruption")
    except WaitTimeoutError as exc:
        raise AssertionError(f"{exc}\nthe advisor's first move: {first}\n{karpenter.tail()}") from None
    decided_after = time.monotonic() - shrunk

    def converged() -> set[str] | None:
        current = karpenter_nodes(cluster)
        gone = set(nodes) - set(current)
        if not gone or settled(cluster, after_shrink) is None or len(nodeclaims(cluster)) != len(current):
            return None
        return gone

    try:
        poll_until(converged, timeout=120.0, interval=1.0, what="the disrupted nodes gone, every pod Running")
    except WaitTimeoutError as exc:
        raise AssertionError(f"{exc}\n{karpenter.tail()}") from None
    converged_after = time.monotonic() - shrunk
    # Karpenter goes on evaluating (every 10 s): a further command, or the rejection of the move left, shows here.
    time.sleep(QUIET_SECONDS)
    commands = karpenter.messages("disrupting node(s)")
    gone = set(nodes) - set(karpenter_nodes(cluster))
    scores = karpenter.messages("consolidation score")

    disrupted = disrupted_nodes(command)
    replacement_types = [str(r.get("instance-types", "")) for r in command.get("replacement-nodes", [])]
    context = (
        f"\nthe advisor's plan: {json.dumps(plan, indent=2)}\nKarpenter's commands: {json.dumps(commands, indent=2)}"
        f"\nits scores: {json.dumps(scores, indent=2)}\n{karpenter.tail()}"
    )
    # 1. Karpenter's first executed command is the advisor's first move.
    assert command.get("decision") == first["decision"], context
    assert disrupted == set(first["nodes"]), context
    if first["decision"] == "replace":
        launch = first["launch"]["offering"]["instanceType"]
        assert replacement_types, context
        assert replacement_types[0].split(",")[0].strip() == launch, context
    first_scores = [line for line in scores if set(line.get("candidates", [])) == disrupted and line.get("approved")]
    assert first_scores, context
    assert float(first_scores[0]["score"]) == pytest.approx(advisor_score, rel=1e-9), context
    # 2. The nodes gone after convergence are the advisor's freed set, one command per step.
    assert gone == freed, context
    assert len(commands) == len(plan["freed"]["steps"]), context
    # 3. A move the advisor rejects Karpenter does not take; Karpenter scored one of them and rejected it too.
    assert rejected, f"the advisor rejects no scored move{context}"
    executed = [{e["Node"]["name"] for e in c["disrupted-nodes"]} for c in commands]
    approved_sets = [set(line.get("candidates", [])) for line in scores if line.get("approved")]
    for move in rejected:
        assert not any(set(move["nodes"]) & nodes for nodes in executed), context
        assert not any(set(move["nodes"]) & nodes for nodes in approved_sets), context
        assert set(move["nodes"]) <= set(karpenter_nodes(cluster)), context
    rejected_sets = [set(line.get("candidates", [])) for line in scores if not line.get("approved")]
    assert any(set(move["nodes"]) in rejected_sets for move in rejected), context
    # 4. The advisor read all it needed with the operator's grants: nothing refused, config/rbac/karpenter used.
    problems = advisor_rbac_problems(cluster)
    assert not problems, "\n".join(problems)

    record(
        "karpenter_side_by_side",
        {
            "first_move": f"{first['decision']} {types[node_a]} → {replacement_types[0] if replacement_types else '-'}",
            "advisor_score": round(advisor_score, 3),
            "karpenter_score": round(float(first_scores[0]["score"]), 3),
            "advisor_rejected": len(rejected),
            "karpenter_rejected": len(rejected_sets),
            "freed_nodes": len(freed),
            "karpenter_commands": len(commands),
            "ready_after_scale_up_seconds": round(ready_after_scale_up, 1),
            "decided_after_seconds": round(decided_after, 1),
            "converged_after_seconds": round(converged_after, 1),
            "scenario_seconds": round(time.monotonic() - started, 1),
        },
    )
