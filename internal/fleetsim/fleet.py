"""The synthetic fleet the simulator replays: apps of a few well-known kinds, deployed by several teams, with the
manifests a real fleet has — requests well above use, a few memory limits, hardly any cpu limit.

The scenario reproduces one picture (docs/simulate.md): over three days, the sum of requests rides near the
nodes' allocatable while the real usage stays under half of it. So the nodes are sized from the requests (enough
identical nodes that Σ requests is 85–90 % of Σ allocatable at the start), and the usage (`usage.SyntheticUsage`)
is a shape-dependent share of those requests.

Besides the steady fleet it holds the moments a recommender is judged on: a known app deployed into a new
namespace mid-run (does the recommender know it already?), a workload deleted and redeployed — once with its
history kept by VPA, once with new labels that VPA cannot match (`vpa_cold`; the model carries no per-event label
change, so only the event says so) — and rollouts that replace every pod of a few workloads a day.

Deterministic for a seed: the apps and their manifests are a fixed catalogue; the seed only picks which workloads
roll out when (and, in `usage`, how each container's usage varies).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .model import DAY_SECONDS, STEP_SECONDS, App, ColdStart, ContainerSpec, Fleet, FleetEvent, NodeSpec, Workload

GI = 2**30
MI = 2**20
HOUR = 3600
NODE_ALLOCATABLE: Mapping[str, float] = {"cpu": 8.0, "memory": 32.0 * GI, "ephemeral-storage": 100.0 * GI}
TARGET_FILL = 0.90
"""Σ requests / Σ allocatable at the start is at most this on the binding resource (nodes come whole): the requests
ride the ceiling, and the scheduler still finds room for every pod, the new namespace's included."""
ROLLOUT_SHARE_PER_DAY = 0.10
ROLLOUT_HOURS = (9, 17)
"""Rollouts happen in working hours."""
NEW_NAMESPACE = "team-new"
NAME_LABEL = "app.kubernetes.io/name"
COMPONENT_LABEL = "app.kubernetes.io/component"
PRODUCTS = ("checkout", "search", "payments", "catalog", "accounts", "orders", "inventory", "shipping")


@dataclass(frozen=True, slots=True)
class Archetype:
    """A kind of app: its name's suffix (`checkout-api`), its component label, and its containers with their
    usage shapes (`usage.SHAPES`)."""

    suffix: str
    component: str
    containers: tuple[tuple[ContainerSpec, str], ...]


def _container(
    name: str, cpu: float, memory_mi: int, *, memory_limit_mi: int = 0, cpu_limit: float = 0.0
) -> ContainerSpec:
    """A container's manifest: its requests, and the limits it states (0: none)."""
    limits = {"memory": float(memory_limit_mi * MI)} if memory_limit_mi else {}
    if cpu_limit:
        limits["cpu"] = cpu_limit
    return ContainerSpec(name, {"cpu": cpu, "memory": float(memory_mi * MI)}, limits)


def _log_shipper() -> tuple[ContainerSpec, str]:
    return ContainerSpec("log-shipper", {"cpu": 0.05, "memory": 64.0 * MI}, {"memory": 128.0 * MI}), "idle"


CATALOGUE: tuple[Archetype, ...] = (
    Archetype("api", "api", ((_container("app", 0.6, 1024, memory_limit_mi=1536), "diurnal"), _log_shipper())),
    Archetype("worker", "worker", ((_container("worker", 0.4, 1536, memory_limit_mi=2048), "steady-growth"),)),
    Archetype("indexer", "worker", ((_container("indexer", 0.4, 1280, cpu_limit=2.0, memory_limit_mi=2048), "spiky"),)),
    Archetype("admin", "ui", ((_container("admin", 0.1, 384), "idle"),)),
    Archetype("backend", "api", ((_container("jvm", 0.8, 5120, memory_limit_mi=5120), "jvm"), _log_shipper())),
    Archetype("exporter", "metrics", ((_container("exporter", 0.1, 512, memory_limit_mi=768), "leak"),)),
    Archetype("gateway", "api", ((_container("gateway", 0.8, 1536), "diurnal"), _log_shipper())),
    Archetype("consumer", "worker", ((_container("consumer", 0.4, 1536, memory_limit_mi=3072), "startup"),)),
    Archetype("cache", "cache", ((_container("cache", 0.25, 4096, memory_limit_mi=5120), "steady-growth"),)),
    Archetype("frontend", "web", ((_container("frontend", 0.4, 1024), "diurnal"),)),
)
"""The apps' kinds, cycled over the fleet's apps. Requests are as owners write them: 2–4× the cpu and ~2× the
memory the shape uses; memory limits on most, a cpu limit only on the bursty indexer. The exporter's limit is what
its leak eventually hits."""


def default_fleet(seed: int = 1, *, apps: int = 40, namespaces: int = 5, replicas: int = 2, days: int = 3) -> Fleet:
    """Every one of `apps` apps in each of `namespaces` namespaces (`team-a`, …), `replicas` replicas each, on
    enough nodes for the requests to ride the ceiling; plus the cold starts, redeploys and rollouts (module
    docstring)."""
    if apps < 3 or namespaces < 2 or replicas < 1 or days < 1:
        raise ValueError("a fleet needs 3 apps and 2 namespaces (for its cold starts), a replica and a day")
    catalogue = [app_of(index) for index in range(apps)]
    teams = [namespace_name(index) for index in range(namespaces)]
    established = [Workload(team, app, replicas) for team in teams for app in catalogue]
    plan = _plan(catalogue, teams, days)
    workloads = [_deleted(w, plan.deleted[w.key]) if w.key in plan.deleted else w for w in established]
    workloads.append(plan.newcomer(replicas))
    rolled = [w.key for w in established if w.key not in plan.deleted]
    events = [*plan.redeploys, *_rollouts(seed, rolled, days)]
    return Fleet(
        workloads=tuple(workloads),
        nodes=nodes_for(established),
        duration_s=days * DAY_SECONDS,
        events=tuple(sorted(events, key=lambda event: (event.at_s, event.workload))),
        cold_starts=plan.cold_starts,
        identity_labels=(NAME_LABEL, COMPONENT_LABEL),
        seed=seed,
    )


@dataclass(frozen=True, slots=True)
class _Plan:
    """The moments a recommender is judged on: which workloads are deleted when, their redeploys, the newcomer."""

    new_app: App
    new_at: int
    deleted: Mapping[str, int]
    redeploys: tuple[FleetEvent, ...]
    cold_starts: tuple[ColdStart, ...]

    def newcomer(self, replicas: int) -> Workload:
        return Workload(NEW_NAMESPACE, self.new_app, replicas, created_s=self.new_at)


def _plan(catalogue: Sequence[App], teams: Sequence[str], days: int) -> _Plan:
    """A known api into `team-new` at day 2 01:00; a worker deleted at day 1 10:00 and back half an hour later
    (VPA keeps its history); a frontend deleted at day 2 09:00 and back with new labels (VPA starts cold). Each
    is timed against the same app in the first namespace."""
    reference = teams[0]
    newcomer = _pick(catalogue, "api", 0)
    kept, relabelled = _pick(catalogue, "worker", 1), _pick(catalogue, "frontend", 2)
    kept_key, relabelled_key = f"{teams[1]}/{kept.name}", f"{teams[-1]}/{relabelled.name}"
    new_at, kept_at, relabelled_at = _time(days, 2, 1.0), _time(days, 1, 10.5), _time(days, 2, 9.5)
    return _Plan(
        new_app=newcomer,
        new_at=new_at,
        deleted={kept_key: _time(days, 1, 10.0), relabelled_key: _time(days, 2, 9.0)},
        redeploys=(
            FleetEvent(kept_at, "redeploy", kept_key),
            FleetEvent(relabelled_at, "redeploy", relabelled_key, vpa_cold="new-labels"),
        ),
        cold_starts=(
            ColdStart(f"{NEW_NAMESPACE}/{newcomer.name}", new_at, "new-namespace", f"{reference}/{newcomer.name}"),
            ColdStart(kept_key, kept_at, "redeploy", f"{reference}/{kept.name}"),
            ColdStart(relabelled_key, relabelled_at, "redeploy", f"{reference}/{relabelled.name}"),
        ),
    )


def _deleted(workload: Workload, at_s: int) -> Workload:
    return Workload(workload.namespace, workload.app, workload.replicas, workload.created_s, deleted_s=at_s)


def app_of(index: int) -> App:
    """The `index`-th app: archetypes cycle fastest, then products (`checkout-api`, `checkout-worker`, …)."""
    archetype = CATALOGUE[index % len(CATALOGUE)]
    product_index = index // len(CATALOGUE)
    product = PRODUCTS[product_index % len(PRODUCTS)]
    generation = product_index // len(PRODUCTS)
    name = f"{product}-{archetype.suffix}" + (f"-{generation + 1}" if generation else "")
    labels = {NAME_LABEL: name, COMPONENT_LABEL: archetype.component, "app": name}
    containers = tuple(spec for spec, _ in archetype.containers)
    return App(name, labels, containers, {spec.name: shape for spec, shape in archetype.containers})


def namespace_name(index: int) -> str:
    return f"team-{chr(ord('a') + index)}" if index < 26 else f"team-{index + 1}"


def nodes_for(workloads: Sequence[Workload]) -> tuple[NodeSpec, ...]:
    """Identical nodes, as many as put the binding resource's Σ requests at `TARGET_FILL` of Σ allocatable."""
    totals = _total_requests(workloads)
    count = max(math.ceil(totals.get(r, 0.0) / (TARGET_FILL * capacity)) for r, capacity in NODE_ALLOCATABLE.items())
    return tuple(NodeSpec(f"node-{index + 1:02d}", dict(NODE_ALLOCATABLE)) for index in range(max(count, 1)))


def requests_at_start(fleet: Fleet) -> dict[str, float]:
    """Σ requests of the pods running at time 0, per resource, as the manifests state them."""
    return _total_requests([w for w in fleet.workloads if w.created_s == 0])


def allocatable(fleet: Fleet) -> dict[str, float]:
    return {r: sum(node.allocatable.get(r, 0.0) for node in fleet.nodes) for r in NODE_ALLOCATABLE}


def describe(fleet: Fleet) -> list[str]:
    """The scenario in plain lines, for a report."""
    apps = {w.app.name: w.app for w in fleet.workloads}
    namespaces = sorted({w.namespace for w in fleet.workloads})
    containers = [c for app in apps.values() for c in app.containers]
    shapes = Counter(shape for w in fleet.workloads for shape in _container_shapes(w))
    requests, capacity = requests_at_start(fleet), allocatable(fleet)
    rollouts = [event for event in fleet.events if event.kind == "rollout"]
    node = fleet.nodes[0].allocatable if fleet.nodes else {}
    return [
        f"seed {fleet.seed}, {fleet.duration_s // DAY_SECONDS} days at {STEP_SECONDS} s steps",
        f"apps: {len(apps)} ({len(containers)} containers, "
        f"{sum(1 for c in containers if c.name == 'log-shipper')} with a log-shipper sidecar)",
        f"namespaces: {len(namespaces)} ({', '.join(namespaces)})",
        f"workloads: {len(fleet.workloads)}, pods: {sum(w.replicas for w in fleet.workloads)}, "
        f"containers: {sum(shapes.values())}",
        "container shapes: " + ", ".join(f"{shape} {count}" for shape, count in sorted(shapes.items())),
        f"nodes: {len(fleet.nodes)} × {_quantity(node, 'cpu')} cores / {_quantity(node, 'memory')} GiB / "
        f"{_quantity(node, 'ephemeral-storage')} GiB ephemeral-storage",
        *(
            f"{r} requests at start: {_quantity(requests, r)} of {_quantity(capacity, r)} "
            f"{'cores' if r == 'cpu' else 'GiB'} allocatable ({requests.get(r, 0.0) / capacity[r]:.0%})"
            for r in ("cpu", "memory")
            if capacity.get(r)
        ),
        f"rollouts: {len(rollouts)} ({len({e.workload for e in rollouts})} workloads, every pod replaced)",
        *(_redeploy_line(fleet, event) for event in fleet.events if event.kind == "redeploy"),
        *(_cold_start_line(fleet, cold) for cold in fleet.cold_starts if cold.kind == "new-namespace"),
    ]


def _container_shapes(workload: Workload) -> list[str]:
    return [workload.app.shapes.get(c.name, "?") for _ in range(workload.replicas) for c in workload.app.containers]


def _redeploy_line(fleet: Fleet, event: FleetEvent) -> str:
    deleted_s = fleet.workload(event.workload).deleted_s
    gone = f"deleted at {clock(deleted_s)}, " if deleted_s is not None else ""
    why = f"VPA starts cold ({event.vpa_cold})" if event.vpa_cold else "VPA keeps its history"
    return f"redeploy: {event.workload} {gone}back at {clock(event.at_s)}, {why}"


def _cold_start_line(fleet: Fleet, cold: ColdStart) -> str:
    replicas = fleet.workload(cold.workload).replicas
    return f"new namespace: {cold.workload} ({replicas} pods) at {clock(cold.at_s)}, twin of {cold.reference}"


def clock(at_s: int) -> str:
    """`day 2 01:00`: days counted from 0, as the run's time axis."""
    day, rest = divmod(at_s, DAY_SECONDS)
    return f"day {day} {rest // HOUR:02d}:{rest % HOUR // 60:02d}"


def _quantity(values: Mapping[str, float], resource: str) -> str:
    value = values.get(resource, 0.0) / (1.0 if resource == "cpu" else GI)
    return f"{value:.4g}"


def _total_requests(workloads: Sequence[Workload]) -> dict[str, float]:
    totals: dict[str, float] = {}
    for w in workloads:
        for c in w.app.containers:
            for resource, value in c.requests.items():
                totals[resource] = totals.get(resource, 0.0) + value * w.replicas
    return totals


def _pick(catalogue: Sequence[App], component_suffix: str, fallback: int) -> App:
    """The first app of an archetype (by name suffix), or the `fallback`-th app of a catalogue too small for it."""
    for app in catalogue:
        if app.name.endswith(f"-{component_suffix}"):
            return app
    return catalogue[fallback % len(catalogue)]


def _time(days: int, day: int, hour: float) -> int:
    """`hour` o'clock on `day`, or on the last day of a shorter run; on a step."""
    at_s = min(day, days - 1) * DAY_SECONDS + round(hour * HOUR)
    return at_s - at_s % STEP_SECONDS


def _rollouts(seed: int, keys: Sequence[str], days: int) -> list[FleetEvent]:
    """`ROLLOUT_SHARE_PER_DAY` of the workloads each day, each at a working-hours time on a step."""
    rng = np.random.default_rng([seed, 0x5011])
    per_day = max(1, round(ROLLOUT_SHARE_PER_DAY * len(keys)))
    events = []
    first, last = ROLLOUT_HOURS
    for day in range(days):
        chosen = rng.choice(len(keys), size=min(per_day, len(keys)), replace=False)
        steps = rng.integers(first * HOUR // STEP_SECONDS, last * HOUR // STEP_SECONDS, size=chosen.size)
        events += [
            FleetEvent(day * DAY_SECONDS + int(s) * STEP_SECONDS, "rollout", keys[int(i)])
            for i, s in zip(chosen, steps, strict=True)
        ]
    return events
