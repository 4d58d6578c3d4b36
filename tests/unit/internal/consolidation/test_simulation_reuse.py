"""A world works out its index once and every simulation of it starts from there: what one simulation placed must
never leak into the next. Each simulation, run after many others on the same world, equals the same simulation on
a fresh copy of the world; and a multi-node trial that gives up early reaches the same decision."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ballast.internal.consolidation import Host, Pool, World, node_from_wire, parse_catalogue, pod_from_wire, simulate
from ballast.internal.consolidation.commands import Candidate, compute_command

from .builders import catalogue, daemon, node, offering, pod

ZONES = ("zone-a", "zone-b")
CATALOGUE = parse_catalogue(
    catalogue(
        offering("m.large", 0.10, "2", "8Gi"),
        offering("m.xlarge", 0.20, "4", "16Gi"),
        offering("m.2xlarge", 0.40, "8", "32Gi", zone="zone-b"),
    )
)
POOLS = {"general": Pool("general"), "tainted": Pool("tainted", taints=({"key": "t", "effect": "NoSchedule"},))}


def anti_affinity(app: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def spread(app: str) -> list[dict[str, Any]]:
    selector = {"matchLabels": {"app": app}}
    return [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone", "labelSelector": selector}]


@st.composite
def worlds(draw: st.DrawFn) -> tuple[World, list[str], dict[str, list[Any]]]:
    """A world of 3–12 nodes (some tainted, one maybe not Ready) with pods of four kinds: plain, pinned to a zone,
    anti-affine on the hostname, spread over the zones; and the pods on each node."""
    hosts: dict[str, Host] = {}
    pods_on: dict[str, list[Any]] = {}
    for index in range(draw(st.integers(3, 12))):
        name = f"n{index:02d}"
        tainted = draw(st.booleans()) and index % 3 == 0
        wire = node(
            name,
            draw(st.sampled_from(["m.large", "m.xlarge"])),
            pool="tainted" if tainted else "general",
            cpu=draw(st.sampled_from(["2", "4"])),
            memory="8Gi",
            pods=draw(st.sampled_from([4, 110])),
            zone=ZONES[index % 2],
            taints=[{"key": "t", "effect": "NoSchedule"}] if tainted else None,
            ready=index != 5 or draw(st.booleans()),
        )
        parsed = node_from_wire(wire, CATALOGUE)
        residents = [pod_from_wire(daemon(f"agent-{name}", name, cpu="100m", memory="64Mi"))]
        for number in range(draw(st.integers(0, 4))):
            kind = draw(st.sampled_from(["plain", "zoned", "anti", "spread"]))
            app = f"{kind}-{draw(st.integers(0, 1))}"
            spec: dict[str, Any] = {}
            if kind == "zoned":
                spec["nodeSelector"] = {"topology.kubernetes.io/zone": draw(st.sampled_from(ZONES))}
            if kind == "anti":
                spec["affinity"] = anti_affinity(app)
            if kind == "spread":
                spec["topologySpreadConstraints"] = spread(app)
            cpu = f"{draw(st.sampled_from([100, 250, 500, 1000]))}m"
            residents.append(pod_from_wire(pod(f"{name}-{number}", name, cpu, "512Mi", labels={"app": app}, **spec)))
        hosts[name] = Host(parsed, tuple(residents))
        pods_on[name] = [p for p in residents if p.reschedulable]
    daemons = tuple(p for host in hosts.values() for p in host.pods if p.daemonset)[:1]
    return World(hosts, POOLS, CATALOGUE, daemons), sorted(hosts), pods_on


def fresh(world: World) -> World:
    return World(dict(world.hosts), world.pools, world.catalogue, world.daemons)


@settings(max_examples=80, deadline=None)
@given(worlds(), st.data())
def test_every_simulation_of_a_world_equals_one_on_a_fresh_copy(case: Any, data: st.DataObject) -> None:
    world, names, pods_on = case
    for _ in range(6):
        removed = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=4, unique=True))
        movers = [p for name in removed for p in pods_on[name]]
        reused = simulate(world, removed, movers)
        assert reused == simulate(fresh(world), removed, movers)


@settings(max_examples=80, deadline=None)
@given(worlds(), st.data())
def test_a_trial_that_gives_up_early_reaches_the_same_decision(case: Any, data: st.DataObject) -> None:
    world, names, pods_on = case
    removed = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=5, unique=True))
    batch = [Candidate(world.hosts[name].node, POOLS["general"], tuple(pods_on[name]), 1.0) for name in removed]
    movers = [p for name in removed for p in pods_on[name]]
    full = compute_command(world, batch, movers)
    early = compute_command(fresh(world), batch, movers, decision_only=True)
    assert early.decision == full.decision
    if full.decision != "no-op":
        assert early == full
