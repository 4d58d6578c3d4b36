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
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ballast.internal.cmd.ballast import connect
from ballast.internal.cmd.consolidation import _move_json as move_json
from ballast.internal.cmd.consolidation import gather, plan_json
from ballast.internal.consolidation import Plan
from ballast.internal.quantity import parse_quantity
from ballast.internal.runtime.envtest import (
    AssetsNotFoundError,
    BuildError,
    MiniCluster,
    in_private_network,
)
from ballast.internal.runtime.envtest.ports import suggest_port
from ballast.internal.runtime.envtest.process import ControlPlaneProcess
from ballast.internal.runtime.envtest.pytest_plugin import unavailable
from ballast.internal.runtime.envtest.tools import find_tool, module_dir
from ballast.internal.runtime.envtest.wait import WaitTimeoutError, poll_until
from tests.e2e.figures import record
from tests.e2e.support import create_namespace, deployment, running_pods
from tests.paths import CRD_DIR

pytestmark = pytest.mark.karpenter

POOL = "default"
ZONE = "test-zone-a"
CAPACITY_TYPE = "on-demand"
INSTANCE_TYPES = ("c-1x-amd64-linux", "c-2x-amd64-linux", "c-4x-amd64-linux", "c-8x-amd64-linux")
# What Karpenter's kwok provider reserves on every instance type (kube-reserved): allocatable = resources - this.
OVERHEAD_CPU_MILLI = 100
OVERHEAD_MEMORY = 10 * 2**20
NAMESPACE = "karpenter-side-by-side"
BATCH_MAX_DURATION_SECONDS = 2  # Karpenter's provisioning batch window (10 s by default)
NOMINATION_SECONDS = 10.0  # max(2 x BATCH_MAX_DURATION, 10 s): how long a node stays nominated for new pods
QUIET_SECONDS = 35.0  # three of Karpenter's 10 s disruption polls after convergence


# ------------------------------------------------------------------------------------------------ the catalogue


def catalogue_from_instance_types(instance_types: list[dict[str, Any]]) -> dict[str, Any]:
    """The advisor's catalogue from the kwok provider's embedded instance_types.json: every offering the NodePool
    may launch (its instance types, capacity type and zone), with allocatable after Karpenter's overhead."""
    offerings = []
    for entry in instance_types:
        if entry["name"] not in INSTANCE_TYPES:
            continue
        resources = entry["resources"]
        cpu = int(parse_quantity(str(resources["cpu"])) * 1000) - OVERHEAD_CPU_MILLI
        memory = int(parse_quantity(str(resources["memory"]))) - OVERHEAD_MEMORY
        for offering in entry["offerings"]:
            labels = {r["key"]: r["values"] for r in offering["Requirements"]}
            if labels.get("karpenter.sh/capacity-type") != [CAPACITY_TYPE] or labels.get(
                "topology.kubernetes.io/zone"
            ) != [ZONE]:
                continue
            offerings.append(
                {
                    "instanceType": entry["name"],
                    "capacityType": CAPACITY_TYPE,
                    "zone": ZONE,
                    "cpu": f"{cpu}m",
                    "memory": str(memory),
                    "pods": int(resources.get("pods", 110)),
                    "pricePerHour": offering["Price"],
                }
            )
    assert {o["instanceType"] for o in offerings} == set(INSTANCE_TYPES), "instance_types.json lacks a type"
    return {"defaults": {"capacityType": CAPACITY_TYPE, "zone": ZONE}, "offerings": offerings,
            "pools": {POOL: list(INSTANCE_TYPES)}}  # fmt: skip


# ------------------------------------------------------------------------------------------------ Karpenter


@dataclass
class Karpenter:
    """The Karpenter process and where its log is."""

    process: ControlPlaneProcess
    log_path: Path

    def lines(self) -> list[dict[str, Any]]:
        """Its JSON log lines (anything else it printed is skipped)."""
        parsed = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            with contextlib.suppress(json.JSONDecodeError):  # a non-JSON line (a Go panic's trace): not a record
                value = json.loads(line)
                if isinstance(value, dict):
                    parsed.append(value)
        return parsed

    def messages(self, message: str) -> list[dict[str, Any]]:
        return [line for line in self.lines() if (line.get("message") or line.get("msg")) == message]

    def tail(self, lines: int = 60) -> str:
        text = self.log_path.read_text(errors="replace").splitlines()
        return "Karpenter's log (last lines):\n" + "\n".join(text[-lines:])


def _karpenter_crds() -> list[Path]:
    root = module_dir("karpenter")
    return [root / "pkg" / "apis" / "crds", root / "kwok" / "apis" / "crds"]


@pytest.fixture(scope="module")
def karpenter_cluster() -> Iterator[MiniCluster]:
    """A mini-cluster with no Node of its own: Karpenter's and the product's CRDs."""
    if not in_private_network():
        unavailable("the Karpenter scenario needs the private test network: run it under `ballast-envtest netns`")
    try:
        find_tool("karpenter")
        minicluster = MiniCluster(nodes=0, metrics=False, crd_paths=[CRD_DIR, *_karpenter_crds()])
        minicluster.start()
    except (AssetsNotFoundError, BuildError) as exc:
        unavailable(f"the mini-cluster's or Karpenter's binaries are missing: {exc}")
    yield minicluster
    minicluster.stop()


def start_karpenter(cluster: MiniCluster) -> Karpenter:
    env = cluster.env
    kubeconfig = env.add_user("karpenter", groups=("system:masters",)).write_kubeconfig(
        env.work_dir / "karpenter" / "kubeconfig"
    )
    metrics_port, health_port = suggest_port(), suggest_port()
    variables = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(env.work_dir / "karpenter"),
        "KUBECONFIG": str(kubeconfig),  # Karpenter has no --kubeconfig flag
        "DISABLE_LEADER_ELECTION": "true",
        "METRICS_PORT": str(metrics_port),  # both bind on every interface: only the test network's
        "HEALTH_PROBE_PORT": str(health_port),
        "LOG_LEVEL": "debug",  # the `consolidation score` lines
        "SYSTEM_NAMESPACE": "kube-system",
        "BATCH_MAX_DURATION": f"{BATCH_MAX_DURATION_SECONDS}s",
    }
    process = env.spawn("karpenter", [str(find_tool("karpenter"))], env=variables)
    karpenter = Karpenter(process, env.work_dir / "karpenter.log")

    def ready() -> bool:
        if process.exit_code() is not None:
            raise AssertionError(f"Karpenter exited ({process.exit_code()})\n{karpenter.tail()}")
        status, _ = _http_get(f"http://127.0.0.1:{health_port}/readyz")
        return status == 200

    try:
        poll_until(ready, timeout=60.0, interval=0.5, what="Karpenter's /readyz")
    except WaitTimeoutError as exc:
        raise AssertionError(f"{exc}\n{karpenter.tail()}") from None
    return karpenter


def _http_get(url: str) -> tuple[int, bytes]:
    import urllib.error  # noqa: PLC0415
    import urllib.request  # noqa: PLC0415

    try:
        with urllib.request.urlopen(url, timeout=2.0) as response:
            return int(response.status), response.read()
    except (urllib.error.URLError, OSError):
        return 0, b""


def create_nodepool(cluster: MiniCluster) -> None:
    rest = cluster.env.rest
    nodeclass = rest.create(
        "/apis/karpenter.kwok.sh/v1alpha1/kwoknodeclasses",
        {"apiVersion": "karpenter.kwok.sh/v1alpha1", "kind": "KWOKNodeClass", "metadata": {"name": POOL}},
    )
    # Nothing in the kwok provider sets its NodeClass Ready, and a NodePool of a class not Ready launches nothing.
    nodeclass["status"] = {
        "conditions": [
            {
                "type": "Ready",
                "status": "True",
                "reason": "Ready",
                "message": "",
                "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "observedGeneration": nodeclass["metadata"].get("generation", 1),
            }
        ]
    }
    rest.request("PUT", f"/apis/karpenter.kwok.sh/v1alpha1/kwoknodeclasses/{POOL}/status", nodeclass)
    rest.create(
        "/apis/karpenter.sh/v1/nodepools",
        {
            "apiVersion": "karpenter.sh/v1",
            "kind": "NodePool",
            "metadata": {"name": POOL},
            "spec": {
                "template": {
                    "spec": {
                        "nodeClassRef": {"group": "karpenter.kwok.sh", "kind": "KWOKNodeClass", "name": POOL},
                        "requirements": [
                            {
                                "key": "node.kubernetes.io/instance-type",
                                "operator": "In",
                                "values": list(INSTANCE_TYPES),
                            },
                            {"key": "karpenter.sh/capacity-type", "operator": "In", "values": [CAPACITY_TYPE]},
                            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [ZONE]},
                        ],
                        "expireAfter": "Never",
                    }
                },
                "disruption": {
                    "consolidationPolicy": "Balanced",
                    "consolidateAfter": "0s",
                    "budgets": [{"nodes": "100%"}],
                },
            },
        },
    )


# ------------------------------------------------------------------------------------------------ cluster state


def karpenter_nodes(cluster: MiniCluster) -> dict[str, dict[str, Any]]:
    """Nodes of the NodePool by name."""
    items = cluster.env.rest.get("/api/v1/nodes", params={"labelSelector": f"karpenter.sh/nodepool={POOL}"})
    return {item["metadata"]["name"]: item for item in items["items"]}


def nodeclaims(cluster: MiniCluster) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = cluster.env.rest.get("/apis/karpenter.sh/v1/nodeclaims")["items"]
    return items


def scale(cluster: MiniCluster, name: str, replicas: int) -> None:
    cluster.env.rest.request(
        "PATCH",
        f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/{name}",
        {"spec": {"replicas": replicas}},
        content_type="application/merge-patch+json",
    )


def pods_of(cluster: MiniCluster) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = cluster.env.rest.get(f"/api/v1/namespaces/{NAMESPACE}/pods")["items"]
    return items


def settled(cluster: MiniCluster, expected: Mapping[str, int]) -> dict[str, str] | None:
    """Pod → node once every Deployment has exactly its replicas Running (none pending or terminating) on Ready
    Nodes of the pool, else None."""
    placed: dict[str, str] = {}
    for name, replicas in expected.items():
        running = running_pods(cluster, NAMESPACE, f"app={name}")
        if len(running) != replicas:
            return None
        placed.update({p["metadata"]["name"]: p["spec"]["nodeName"] for p in running})
    if len(pods_of(cluster)) != sum(expected.values()):
        return None
    nodes = karpenter_nodes(cluster)
    if not set(placed.values()) <= set(nodes) or not all(cluster.node_ready(n) for n in placed.values()):
        return None
    return placed


def instance_type(node: Mapping[str, Any]) -> str:
    return str(node["metadata"]["labels"]["node.kubernetes.io/instance-type"])


def advise(cluster: MiniCluster, catalogue: Mapping[str, Any]) -> Plan:
    """The advisor's plan of the cluster (what `ballast consolidation plan --catalogue FILE` prints), k = 2."""
    kubeconfig = cluster.env.add_user("advisor", groups=("system:masters",)).write_kubeconfig(
        cluster.env.work_dir / "advisor" / "kubeconfig"
    )
    client = connect(argparse.Namespace(kubeconfig=str(kubeconfig), context=None), typed=False)
    try:
        return gather(client, catalogue, "instance_types.json", 2, what_if=False).current
    finally:
        client.close()


# ------------------------------------------------------------------------------------------------ the scenario


def test_the_advisor_predicts_what_karpenter_does_after_a_workload_shrinks(karpenter_cluster: MiniCluster) -> None:
    cluster = karpenter_cluster
    started = time.monotonic()
    instance_types = json.loads(
        (module_dir("karpenter") / "kwok" / "cloudprovider" / "instance_types.json").read_text()
    )
    catalogue = catalogue_from_instance_types(instance_types)

    karpenter = start_karpenter(cluster)
    create_nodepool(cluster)
    create_namespace(cluster, NAMESPACE)
    rest = cluster.env.rest
    deployments = f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments"

    def wait_settled(expected: Mapping[str, int], what: str, timeout: float = 120.0) -> dict[str, str]:
        try:
            placed: dict[str, str] = poll_until(
                lambda: settled(cluster, expected), timeout=timeout, interval=1.0, what=what
            )
        except WaitTimeoutError as exc:
            raise AssertionError(f"{exc}\n{karpenter.tail()}") from None
        return placed

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
    advice = advise(cluster, catalogue)
    claims_after = {c["metadata"]["name"] for c in nodeclaims(cluster)}
    assert len(claims_before) == 2, karpenter.tail()
    assert claims_after == claims_before, f"Karpenter acted before the advisor had read the cluster\n{karpenter.tail()}"
    assert set(karpenter_nodes(cluster)) == set(nodes), karpenter.tail()
    plan = plan_json(advice)
    (cluster.env.work_dir / "advisor" / "plan.json").write_text(json.dumps(plan, indent=2))
    assert advice.first is not None, f"the advisor proposes nothing: {json.dumps(plan, indent=2)}"
    first = plan["first"]
    considered = [*advice.moves, *(m for m in (advice.multi_node, advice.emptiness) if m is not None)]
    rejected = [move_json(m) for m in considered if not m.approved and m.nodes and m.score is not None]
    freed = set(plan["freed"]["nodes"])

    def first_command() -> dict[str, Any] | None:
        if karpenter.process.exit_code() is not None:
            raise AssertionError(f"Karpenter exited ({karpenter.process.exit_code()})\n{karpenter.tail()}")
        commands = karpenter.messages("disrupting node(s)")
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

    disrupted = {entry["Node"]["name"] for entry in command["disrupted-nodes"]}
    replacement_types = [str(r.get("instance-types", "")) for r in command.get("replacement-nodes", [])]
    context = (
        f"\nthe advisor's plan: {json.dumps(plan, indent=2)}\nKarpenter's commands: {json.dumps(commands, indent=2)}"
        f"\nits scores: {json.dumps(scores, indent=2)}\n{karpenter.tail()}"
    )
    # 1. Karpenter's first executed command is the advisor's first move.
    assert command.get("decision") == first["decision"], context
    assert disrupted == set(first["nodes"]), context
    if first["decision"] == "replace":
        launch = first["replacement"]["launch"]["instanceType"]
        assert replacement_types, context
        assert replacement_types[0].split(",")[0].strip() == launch, context
    first_scores = [line for line in scores if set(line.get("candidates", [])) == disrupted and line.get("approved")]
    assert first_scores, context
    assert float(first_scores[0]["score"]) == pytest.approx(float(first["score"]), rel=1e-9), context
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

    record(
        "karpenter_side_by_side",
        {
            "first_move": f"{first['decision']} {types[node_a]} → {replacement_types[0] if replacement_types else '-'}",
            "advisor_score": round(float(first["score"]), 3),
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
