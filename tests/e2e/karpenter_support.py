"""The harness of the scenarios side by side with real Karpenter v1.15.0 (its kwok cloud provider), shared by
tests/e2e/test_karpenter.py and the load suite's Karpenter scenarios: a mini-cluster of its own (no Node, an
audit log), Karpenter with its debug log, a NodePool of the kwok instance types, the advisor's catalogue, and the
advisor reading the cluster as the operator's ServiceAccount under the repository's RBAC.

The advisor's identity is ServiceAccount ballast-system/ballast bound by `config/rbac/` as written: the manager
ClusterRole (every pod and WorkloadProfile the advisor lists is granted there), the consolidation Component and
the karpenter Component, and nothing else. `advisor_rbac_problems` reads the API server's audit log: nothing the
advisor asked was refused, every grant of `config/rbac/karpenter` was used, and every grant it used is one
`internal/manifests/rbac.py` declares for the consolidation advisor.
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

from ballast.internal.cmd.ballast import connect
from ballast.internal.consolidation import Plan
from ballast.internal.consolidation.plan_report import gather
from ballast.internal.manifests.rbac import NAMESPACE as OPERATOR_NAMESPACE
from ballast.internal.manifests.rbac import roles
from ballast.internal.quantity import parse_quantity
from ballast.runtime.envtest import (
    AssetsNotFoundError,
    BuildError,
    MiniCluster,
    in_private_network,
)
from ballast.runtime.envtest.ports import suggest_port
from ballast.runtime.envtest.process import ControlPlaneProcess
from ballast.runtime.envtest.pytest_plugin import unavailable
from ballast.runtime.envtest.tools import find_tool, module_dir
from ballast.runtime.envtest.wait import WaitTimeoutError, poll_until
from ballast.runtime.rbacgen import Grant
from tests.e2e.support import running_pods
from tests.integration.config.rbac.config_rbac import (
    CONFIG_RBAC,
    apply_config_rbac,
    audit_problems,
    documents_of,
    grants,
    read_audit_log,
    user_of,
)
from tests.paths import CRD_DIR

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


def karpenter_minicluster() -> Iterator[MiniCluster]:
    """A mini-cluster with no Node of its own, Karpenter's and the product's CRDs, and an audit log (Metadata
    level): a fixture's body (`yield from karpenter_minicluster()`), stopped when the fixture ends."""
    if not in_private_network():
        unavailable("the Karpenter scenario needs the private test network: run it under `ballast-envtest netns`")
    try:
        find_tool("karpenter")
        minicluster = MiniCluster(nodes=0, metrics=False, crd_paths=[CRD_DIR, *_karpenter_crds()], audit_log=True)
        minicluster.start()
    except (AssetsNotFoundError, BuildError) as exc:
        unavailable(f"the mini-cluster's or Karpenter's binaries are missing: {exc}")
    try:
        yield minicluster
    finally:
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


def scale(cluster: MiniCluster, name: str, replicas: int, namespace: str = NAMESPACE) -> None:
    cluster.env.rest.request(
        "PATCH",
        f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
        {"spec": {"replicas": replicas}},
        content_type="application/merge-patch+json",
    )


def pods_of(cluster: MiniCluster, namespace: str = NAMESPACE) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = cluster.env.rest.get(f"/api/v1/namespaces/{namespace}/pods")["items"]
    return items


def settled(cluster: MiniCluster, expected: Mapping[str, int], namespace: str = NAMESPACE) -> dict[str, str] | None:
    """Pod → node once every Deployment has exactly its replicas Running (none pending or terminating) on Ready
    Nodes of the pool, else None."""
    placed: dict[str, str] = {}
    for name, replicas in expected.items():
        running = running_pods(cluster, namespace, f"app={name}")
        if len(running) != replicas:
            return None
        placed.update({p["metadata"]["name"]: p["spec"]["nodeName"] for p in running})
    if len(pods_of(cluster, namespace)) != sum(expected.values()):
        return None
    nodes = karpenter_nodes(cluster)
    if not set(placed.values()) <= set(nodes) or not all(cluster.node_ready(n) for n in placed.values()):
        return None
    return placed


def instance_type(node: Mapping[str, Any]) -> str:
    return str(node["metadata"]["labels"]["node.kubernetes.io/instance-type"])


def wait_settled(
    cluster: MiniCluster, karpenter: Karpenter, expected: Mapping[str, int], what: str, timeout: float = 120.0
) -> dict[str, str]:
    """`settled`, awaited: pod → node; a timeout fails with Karpenter's log."""
    try:
        placed: dict[str, str] = poll_until(
            lambda: settled(cluster, expected), timeout=timeout, interval=1.0, what=what
        )
    except WaitTimeoutError as exc:
        raise AssertionError(f"{exc}\n{karpenter.tail()}") from None
    return placed


def commands_of(karpenter: Karpenter) -> list[dict[str, Any]]:
    """The commands Karpenter executed so far (its `disrupting node(s)` lines); fails when it has exited."""
    if karpenter.process.exit_code() is not None:
        raise AssertionError(f"Karpenter exited ({karpenter.process.exit_code()})\n{karpenter.tail()}")
    return karpenter.messages("disrupting node(s)")


def disrupted_nodes(command: Mapping[str, Any]) -> set[str]:
    return {entry["Node"]["name"] for entry in command["disrupted-nodes"]}


def disruption_blocked(cluster: MiniCluster, node: str) -> list[str]:
    """The messages of Karpenter's `DisruptionBlocked` Events about Node `node`."""
    events = cluster.env.rest.get(
        "/api/v1/events", params={"fieldSelector": f"reason=DisruptionBlocked,involvedObject.name={node}"}
    )["items"]
    return [str(event.get("message", "")) for event in events if event["involvedObject"].get("kind") == "Node"]


# ------------------------------------------------------------------------------------------------ the advisor


ADVISOR = user_of(OPERATOR_NAMESPACE, "ballast")
"""The operator's ServiceAccount, which the advisor reads the cluster as."""
ADVISOR_RBAC = (
    CONFIG_RBAC / "service_account.yaml",
    CONFIG_RBAC / "role.yaml",  # the manager ClusterRole: pods and WorkloadProfiles listed
    CONFIG_RBAC / "role_binding.yaml",
    CONFIG_RBAC / "consolidation",
    CONFIG_RBAC / "karpenter",
)
"""The files of `config/rbac/` that bind the advisor's identity, as committed."""
KARPENTER_RBAC = CONFIG_RBAC / "karpenter"


def advisor_kubeconfig(cluster: MiniCluster) -> Path:
    """A kubeconfig for the advisor's ServiceAccount, with `ADVISOR_RBAC` applied and granted."""
    env = cluster.env
    apply_config_rbac(env, documents_of(ADVISOR_RBAC))
    credentials = env.service_account(OPERATOR_NAMESPACE, "ballast")
    return credentials.write_kubeconfig(env.work_dir / "advisor" / "kubeconfig")


def advise(cluster: MiniCluster, catalogue: Mapping[str, Any], kubeconfig: Path) -> Plan:
    """The advisor's plan of the cluster (what `ballast consolidation plan --catalogue FILE` prints), k = 2, read
    with `kubeconfig` (`advisor_kubeconfig`)."""
    client = connect(argparse.Namespace(kubeconfig=str(kubeconfig), context=None), typed=False)
    try:
        return gather(client, catalogue, "instance_types.json", 2, what_if=False).current
    finally:
        client.close()


def consolidation_grants() -> set[Grant]:
    """Every grant of a rule `internal/manifests/rbac.py` declares used by the consolidation advisor."""
    return {g for role in roles() for rule in role.rules if "consolidation" in rule.used_by for g in rule.grants()}


def advisor_rbac_problems(cluster: MiniCluster) -> list[str]:
    """What the audit log holds against the advisor's reads: a request refused, a grant of
    `config/rbac/karpenter` never used, a grant used outside `ADVISOR_RBAC` or outside the consolidation
    advisor's declared rules."""
    records = list(read_audit_log(cluster.env.audit_log_path))
    bound = grants(documents_of(ADVISOR_RBAC))[ADVISOR]
    karpenter = grants(documents_of([KARPENTER_RBAC]))[ADVISOR]
    assert karpenter, f"{KARPENTER_RBAC} grants the advisor nothing"
    return audit_problems(records, ADVISOR, bound & consolidation_grants(), must_use=karpenter)
