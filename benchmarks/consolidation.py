"""What one consolidation `plan` costs over 500 nodes and 10,000 pods, against parsing the same inputs in the same run.

The cluster is generated from a seed, so every run plans the same one:

- three pools: `general` (Balanced, m-family on-demand), `compute` (WhenEmptyOrUnderutilized, c-family spot,
  20 % budget), `memory` (Balanced, r-family on-demand, tainted); nodes in three zones, priced from a catalogue
  of 9 instance types × 2 capacity types;
- 10,000 pods: two DaemonSets (one on every node, one off the tainted pool), the rest from Deployments of 1–3
  ReplicaSets each in 10 namespaces, placed on their pools unevenly (some nodes nearly full, some half empty);
  PodDisruptionBudgets on some Deployments (a few allowing no disruption), hostname anti-affinity and zone spread
  on a few, `karpenter.sh/do-not-disrupt` on 0.5 % of the pods, some priorities and deletion costs;
- a what-if of recommended requests (each Deployment's containers at 30–80 % of their current requests), so
  consolidation has real work: the what-if plan frees many nodes, one command at a time.

Timed: `plan()` over the current requests and over the what-if (the Kubernetes JSON in, the complete Plan out:
the first round's moves for every node, the multi-node binary search, the freed set played round after round).
Baseline: `node_from_wire` and `pod_from_wire` over the same objects (what any planner must at least do with its
input), measured interleaved with the plans. Each plan's digest (SHA-256 of its `repr`) is printed, so a change
that should not change the advice can be checked against an earlier run. These machines are shared: read the
medians and ratios.

    .venv/bin/python benchmarks/consolidation.py [--runs 3] [--nodes 500] [--pods 10000] [--seed 17]
        [--profile [what-if|current]]
"""

from __future__ import annotations

import argparse
import cProfile
import datetime
import hashlib
import os
import platform
import pstats
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ballast.internal.consolidation import Plan, node_from_wire, parse_catalogue, plan, pod_from_wire

from machine import cpu_model

ZONES = ("zone-a", "zone-b", "zone-c")
NAMESPACES = tuple(f"team-{i}" for i in range(10))
# name: (cpu, memory GiB, on-demand $/h); spot is 35 % of on-demand.
TYPES = {
    "m.xlarge": (4, 16, 0.192),
    "m.2xlarge": (8, 32, 0.384),
    "m.4xlarge": (16, 64, 0.768),
    "c.xlarge": (4, 8, 0.170),
    "c.2xlarge": (8, 16, 0.340),
    "c.4xlarge": (16, 32, 0.680),
    "r.xlarge": (4, 32, 0.252),
    "r.2xlarge": (8, 64, 0.504),
    "r.4xlarge": (16, 128, 1.008),
}
MEMORY_TAINT = {"key": "workload", "value": "memory", "effect": "NoSchedule"}
# pool: (share of the nodes, instance types with weights, capacity type)
POOL_SHAPES = {
    "general": (0.5, {"m.xlarge": 2, "m.2xlarge": 5, "m.4xlarge": 3}, "on-demand"),
    "compute": (0.3, {"c.xlarge": 2, "c.2xlarge": 5, "c.4xlarge": 3}, "spot"),
    "memory": (0.2, {"r.xlarge": 2, "r.2xlarge": 5, "r.4xlarge": 3}, "on-demand"),
}
POOLS: dict[str, dict[str, Any]] = {
    "general": {"consolidationPolicy": "Balanced", "instanceTypes": ["m.xlarge", "m.2xlarge", "m.4xlarge"]},
    "compute": {
        "consolidationPolicy": "WhenEmptyOrUnderutilized",
        "budgets": [{"nodes": "20%"}],
        "instanceTypes": ["c.xlarge", "c.2xlarge", "c.4xlarge"],
        "capacityTypes": ["spot"],
    },
    "memory": {
        "consolidationPolicy": "Balanced",
        "instanceTypes": ["r.xlarge", "r.2xlarge", "r.4xlarge"],
        "taints": [MEMORY_TAINT],
    },
}
GI = 2**30
MI = 2**20


@dataclass(frozen=True)
class Cluster:
    nodes: list[dict[str, Any]]
    pods: list[dict[str, Any]]
    pdbs: list[dict[str, Any]]
    what_if: dict[str, dict[str, dict[str, str]]]
    catalogue: dict[str, Any]


def catalogue() -> dict[str, Any]:
    offerings = []
    for name, (cpu, memory, price) in TYPES.items():
        for capacity_type, factor in (("on-demand", 1.0), ("spot", 0.35)):
            offerings.append(
                {
                    "instanceType": name,
                    "capacityType": capacity_type,
                    # allocatable after the kubelet's and the system's reservations
                    "cpu": f"{cpu * 1000 - 70 - 10 * cpu}m",
                    "memory": f"{int(memory * 1024 * 0.92)}Mi",
                    "pods": 110,
                    "pricePerHour": round(price * factor, 4),
                }
            )
    return {"offerings": offerings}


def _node(name: str, pool: str, instance_type: str, capacity_type: str, zone: str) -> dict[str, Any]:
    cpu, memory, _ = TYPES[instance_type]
    labels = {
        "kubernetes.io/hostname": name,
        "node.kubernetes.io/instance-type": instance_type,
        "karpenter.sh/nodepool": pool,
        "karpenter.sh/capacity-type": capacity_type,
        "topology.kubernetes.io/zone": zone,
    }
    return {
        "metadata": {"name": name, "labels": labels, "annotations": {}},
        "spec": {"taints": [MEMORY_TAINT] if pool == "memory" else []},
        "status": {
            "allocatable": {"cpu": f"{cpu * 1000 - 70 - 10 * cpu}m", "memory": f"{int(memory * 1024 * 0.92)}Mi",
                            "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }  # fmt: skip


def _pod(
    namespace: str,
    name: str,
    node: str,
    labels: dict[str, str],
    containers: list[tuple[str, int, int]],
    owner: tuple[str, str],
    **spec: Any,
) -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels,
            "annotations": {},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": owner[0], "name": owner[1], "controller": True}],
        },
        "spec": {
            "nodeName": node,
            "containers": [
                {"name": c, "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{memory}Mi"}}}
                for c, cpu, memory in containers
            ],
            **spec,
        },
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
    }


@dataclass
class _Room:
    name: str
    pool: str
    zone: str
    cpu: int
    memory: int
    weight: float  # how much the scheduler "liked" this node: uneven fill


def _nodes(rng: random.Random, node_count: int) -> tuple[list[dict[str, Any]], dict[str, list[_Room]]]:
    nodes: list[dict[str, Any]] = []
    rooms: dict[str, list[_Room]] = {pool: [] for pool in POOL_SHAPES}
    for pool, (share, types, capacity_type) in POOL_SHAPES.items():
        count = round(node_count * share) if pool != "memory" else node_count - len(nodes)
        for index in range(count):
            instance_type = rng.choices(list(types), weights=list(types.values()))[0]
            zone = ZONES[index % len(ZONES)]
            name = f"{pool}-{index:03d}"
            nodes.append(_node(name, pool, instance_type, capacity_type, zone))
            cpu, memory, _ = TYPES[instance_type]
            rooms[pool].append(
                _Room(name, pool, zone, cpu * 1000 - 70 - 10 * cpu, int(memory * 1024 * 0.92), rng.betavariate(4, 1))
            )
    return nodes, rooms


def _daemon_pods(rooms: dict[str, list[_Room]]) -> list[dict[str, Any]]:
    """node-agent everywhere (it tolerates everything), log-shipper off the tainted pool."""
    pods = []
    for pool, members in rooms.items():
        for room in members:
            daemonsets = [("node-agent", 100, 128)] + ([("log-shipper", 150, 256)] if pool != "memory" else [])
            for ds, cpu, memory in daemonsets:
                spec: dict[str, Any] = {"tolerations": [{"operator": "Exists"}]} if ds == "node-agent" else {}
                pods.append(
                    _pod("kube-system", f"{ds}-{room.name}", room.name, {"app": ds},
                         [(ds, cpu, memory)], ("DaemonSet", ds), **spec)
                )  # fmt: skip
                room.cpu -= cpu
                room.memory -= memory
    return pods


def _constraints(app: str, pool: str, *, spread: bool, anti: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if pool != "general":
        spec["nodeSelector"] = {"karpenter.sh/nodepool": pool}
    if pool == "memory":
        spec["tolerations"] = [{"key": "workload", "operator": "Equal", "value": "memory", "effect": "NoSchedule"}]
    selector = {"matchLabels": {"app": app}}
    if anti:
        term = {"labelSelector": selector, "topologyKey": "kubernetes.io/hostname"}
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    if spread:
        constraint = {"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "whenUnsatisfiable": "DoNotSchedule"}
        spec["topologySpreadConstraints"] = [{**constraint, "labelSelector": selector}]
    return spec


FILL = {"general": 0.9, "compute": 0.88, "memory": 0.86}
"""How full each pool's cpu gets (requests over allocatable, DaemonSets included)."""


@dataclass
class _Builder:
    rng: random.Random
    rooms: dict[str, list[_Room]]
    pods: list[dict[str, Any]]
    pdbs: list[dict[str, Any]]
    what_if: dict[str, dict[str, dict[str, str]]]
    used: dict[str, int]
    capacity: dict[str, int]  # cpu left once the DaemonSets run

    def full(self, pool: str, need: int) -> bool:
        return self.used[pool] + need > self.capacity[pool] * FILL[pool]

    def deployment(self, number: int, pod_count: int) -> bool:
        """One Deployment's replicas, placed; False when its pool filled up before they all were."""
        rng = self.rng
        pool = rng.choices(list(POOL_SHAPES), weights=[0.55, 0.3, 0.15])[0]
        namespace = rng.choice(NAMESPACES)
        app = f"app-{number:03d}"
        replicas = min(pod_count - len(self.pods), rng.choice([1, 2, 3, 3, 5, 8, 12, 20, 30, 60, 120]))
        cpu = rng.choice([50, 100, 100, 150, 250, 250, 400, 500, 750, 1000])
        memory = int(cpu * {"general": 2, "compute": 1, "memory": 6}[pool] * rng.uniform(0.5, 1.5))
        containers = [("app", cpu, memory)]
        if rng.random() < 0.3:
            containers.append(("proxy", 50, 64))
        factor = rng.uniform(0.3, 0.8)
        recommended = {c: {"cpu": f"{max(10, int(m * factor))}m", "memory": f"{max(16, int(b * factor))}Mi"}
                       for c, m, b in containers}  # fmt: skip
        spread = (number + 1) % 23 == 5 and replicas >= 3
        anti = (number + 1) % 29 == 7 and replicas <= 12
        spec = _constraints(app, pool, spread=spread, anti=anti)
        if rng.random() < 0.15:
            allowed = 0 if replicas <= 2 and rng.random() < 0.5 else max(1, replicas // 10)
            self.pdbs.append(
                {"metadata": {"name": app, "namespace": namespace},
                 "spec": {"selector": {"matchLabels": {"app": app}}, "maxUnavailable": max(1, replicas // 10)},
                 "status": {"disruptionsAllowed": allowed}}
            )  # fmt: skip
        priority = rng.choice([None, None, None, 0, 1000, 100_000])
        if priority is not None:
            spec["priority"] = priority
        sets = [f"{app}-{rng.getrandbits(32):08x}" for _ in range(rng.choice([1, 1, 2, 3]))]
        need = sum(c[1] for c in containers)
        hosts: set[str] = set()
        for replica in range(replicas):
            if self.full(pool, need):
                return False
            wanted = ZONES[replica % len(ZONES)] if spread else None
            fitting = [
                r for r in self.rooms[pool]
                if r.cpu >= need and r.memory >= memory + 64 and (wanted is None or r.zone == wanted)
                and not (anti and r.name in hosts)
            ]  # fmt: skip
            if not fitting:
                continue
            room = rng.choices(fitting, weights=[r.weight for r in fitting])[0]
            hosts.add(room.name)
            room.cpu -= need
            room.memory -= sum(c[2] for c in containers)
            self.used[pool] += need
            replica_set = sets[min(len(sets) - 1, replica * len(sets) // replicas)]
            name = f"{replica_set}-{rng.getrandbits(24):06x}"
            body = _pod(namespace, name, room.name, {"app": app, "pod-template-hash": replica_set[-8:]},
                        containers, ("ReplicaSet", replica_set), **spec)  # fmt: skip
            annotations = body["metadata"]["annotations"]
            if rng.random() < 0.005:
                annotations["karpenter.sh/do-not-disrupt"] = "true"
            if rng.random() < 0.05:
                annotations["controller.kubernetes.io/pod-deletion-cost"] = str(rng.randint(-100, 1000))
            self.pods.append(body)
            self.what_if[f"{namespace}/{name}"] = recommended
        return True


def generate(seed: int = 17, node_count: int = 500, pod_count: int = 10_000) -> Cluster:
    """The seeded cluster: nodes, bound pods, PDBs, the what-if and the catalogue."""
    rng = random.Random(seed)
    nodes, rooms = _nodes(rng, node_count)
    daemons = _daemon_pods(rooms)
    capacity = {pool: sum(r.cpu for r in members) for pool, members in rooms.items()}
    builder = _Builder(rng, rooms, daemons, [], {}, dict.fromkeys(rooms, 0), capacity)
    number = 0
    while len(builder.pods) < pod_count:
        placed = builder.deployment(number, pod_count)
        number += 1
        if not placed and all(builder.full(pool, 50) for pool in rooms):
            break  # every pool is as full as it should be: fewer pods than asked
    return Cluster(nodes, builder.pods, builder.pdbs, builder.what_if, catalogue())


# -------------------------------------------------------------------------------------------------- timing


def digest(result: Plan) -> str:
    return hashlib.sha256(repr(result).encode()).hexdigest()[:16]


def parse_inputs(cluster: Cluster) -> None:
    parsed = parse_catalogue(cluster.catalogue)
    for node in cluster.nodes:
        node_from_wire(node, parsed)
    for pod in cluster.pods:
        pod_from_wire(pod)


def seconds(call: Callable[[], object]) -> tuple[float, float, Any]:
    """Wall and process CPU seconds of `call`, and what it returned (CPU is the steadier figure on a busy host)."""
    wall, cpu = time.perf_counter(), time.process_time()
    value = call()
    return time.perf_counter() - wall, time.process_time() - cpu, value


def summary(result: Plan) -> str:
    freed = result.freed
    return (
        f"{len(result.moves)} moves, first {result.first.method if result.first else None}, "
        f"{len(freed.steps)} commands, {len(freed.nodes)} nodes freed, {len(freed.launched)} launched, "
        f"{freed.savings_per_month:,.0f} $/month, digest {digest(result)}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--profile", nargs="?", const="what-if", choices=["what-if", "current"],
                        help="cProfile one plan (default: the what-if) instead of timing")  # fmt: skip
    args = parser.parse_args()

    print(f"machine: {cpu_model()}, {os.cpu_count()} cores ({len(os.sched_getaffinity(0))} usable)")
    print(f"python: {platform.python_implementation()} {platform.python_version()} ({platform.platform()})")
    print(f"date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, load average {os.getloadavg()}")
    cluster = generate(args.seed, args.nodes, args.pods)
    daemons = sum(1 for p in cluster.pods if p["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet")
    print(
        f"cluster: {len(cluster.nodes)} nodes, {len(cluster.pods):,} pods ({daemons} DaemonSet pods), "
        f"{len(cluster.pdbs)} PDBs, seed {args.seed}; runs: {args.runs} interleaved"
    )

    def current() -> Plan:
        return plan(cluster.nodes, cluster.pods, POOLS, cluster.catalogue, pdbs=cluster.pdbs)

    def what_if() -> Plan:
        return plan(cluster.nodes, cluster.pods, POOLS, cluster.catalogue, pdbs=cluster.pdbs, what_if=cluster.what_if)

    if args.profile:
        profiler = cProfile.Profile()
        profiler.runcall(what_if if args.profile == "what-if" else current)
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(25)
        return
    cases: dict[str, Callable[[], object]] = {
        "parse nodes and pods (`node_from_wire`, `pod_from_wire`; baseline)": lambda: parse_inputs(cluster),
        "`plan()`, current requests": current,
        "`plan()`, what-if (recommended requests)": what_if,
    }
    walls: dict[str, list[float]] = {label: [] for label in cases}
    cpus: dict[str, list[float]] = {label: [] for label in cases}
    results: dict[str, set[str]] = {label: set() for label in cases}
    for _ in range(args.runs):
        for label, call in cases.items():
            wall, cpu, value = seconds(call)
            walls[label].append(wall)
            cpus[label].append(cpu)
            if isinstance(value, Plan):
                if not results[label]:
                    print(f"  {label}: {summary(value)}")
                results[label].add(digest(value))
    assert all(len(d) <= 1 for d in results.values()), f"a plan changed between runs: {results}"
    baseline = statistics.median(walls[next(iter(walls))])
    cpu_baseline = statistics.median(cpus[next(iter(cpus))])
    print("\n| call | wall (median) | min | max | process CPU (median) | × baseline (wall) | × baseline (CPU) |")
    print("|---|---|---|---|---|---|---|")
    for label, values in walls.items():
        median, cpu = statistics.median(values), statistics.median(cpus[label])
        print(
            f"| {label} | {median:.2f} s | {min(values):.2f} s | {max(values):.2f} s | {cpu:.2f} s | "
            f"{median / baseline:.1f} | {cpu / cpu_baseline:.1f} |"
        )
    print(f"\nload average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
