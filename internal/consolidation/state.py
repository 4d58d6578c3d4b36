"""The state a round of Karpenter's disruption loop looks at (nodes and the pods on them), the settings every round
shares, and one round: its candidates, the pools' Balanced totals, the simulation's world and the budgets."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from .blockers import Pdbs, non_candidate_cost, why_blocked
from .catalogue import Catalogue
from .cluster import Node, Pod
from .commands import Candidate, Command, Totals, compute_command, movers
from .cost import reschedule_disruption_cost
from .pools import Pool
from .simulate import Host, World


@dataclass(slots=True)
class State:
    """The nodes by name and the pods on each. A command only ever appends to a node's list of pods (or gives a
    new node a new list), so a list and its length say what is on the node: `Summaries` relies on it."""

    nodes: dict[str, Node]
    pods_on: dict[str, list[Pod]]
    launched: int = 0


@dataclass(frozen=True, slots=True)
class Summary:
    """What a round needs of one node and its pods, kept from round to round while neither changes."""

    node: Node
    pods: list[Pod]
    count: int
    blocked: str | None
    candidate: Candidate | None
    disruption_cost: float
    host: Host


class Summaries:
    """Each node's summary, by node, reused while the node's list of pods has not grown."""

    def __init__(self) -> None:
        self._known: dict[int, Summary] = {}

    def of(self, node: Node, pods: list[Pod], settings: Settings) -> Summary:
        known = self._known.get(id(node))
        if known is not None and known.node is node and known.pods is pods and known.count == len(pods):
            return known
        reason = why_blocked(node, pods, settings.pdbs)
        candidate = None
        if reason is None:
            assert node.pool is not None
            reschedulable = tuple(p for p in pods if p.reschedulable)
            cost = reschedule_disruption_cost(p.eviction_cost for p in reschedulable)
            candidate = Candidate(node, settings.pool(node.pool), reschedulable, cost)
        disruption = candidate.disruption_cost if candidate else non_candidate_cost(pods)
        summary = Summary(node, pods, len(pods), reason, candidate, disruption, Host(node, tuple(pods)))
        self._known[id(node)] = summary  # the summary holds the node, so its id names it
        return summary


@dataclass(frozen=True, slots=True)
class Settings:
    pools: Mapping[str, Pool]
    default_pool: Pool
    catalogue: Catalogue
    pdbs: Pdbs
    k: float
    spot_to_spot: bool
    summaries: Summaries = field(default_factory=Summaries, compare=False, repr=False)

    def pool(self, name: str) -> Pool:
        return self.pools.get(name) or replace(self.default_pool, name=name)


@dataclass(slots=True)
class Round:
    """One pass of Karpenter's loop over a state."""

    state: State
    settings: Settings
    candidates: list[Candidate] = field(default_factory=list)
    blocked: dict[str, str] = field(default_factory=dict)
    totals: dict[str, Totals] = field(default_factory=dict)
    world: World | None = None
    deleting: list[Pod] | None = None

    def __post_init__(self) -> None:
        settings = self.settings
        summaries = {}
        for name in sorted(self.state.nodes):
            pods = self.state.pods_on.get(name)
            summary = settings.summaries.of(self.state.nodes[name], [] if pods is None else pods, settings)
            summaries[name] = summary
            if summary.blocked is not None:
                self.blocked[name] = summary.blocked
            elif summary.candidate is not None:
                self.candidates.append(summary.candidate)
        cost: dict[str, float] = {}
        disruption: dict[str, float] = {}
        for name, node in self.state.nodes.items():
            if node.pool is None:
                continue
            cost[node.pool] = cost.get(node.pool, 0.0) + node.price
            disruption[node.pool] = disruption.get(node.pool, 0.0) + summaries[name].disruption_cost
        self.totals = {pool: Totals(cost[pool], disruption[pool]) for pool in cost}
        hosts = {name: summaries[name].host for name in self.state.nodes}
        daemons: dict[str, Pod] = {}
        for pods in self.state.pods_on.values():
            for pod in pods:
                if pod.daemonset and pod.owner is not None:
                    known = daemons.get(pod.owner)
                    if known is None or (pod.requests.cpu, pod.requests.memory) > (
                        known.requests.cpu,
                        known.requests.memory,
                    ):
                        daemons[pod.owner] = pod
        pools = {
            name: settings.pool(name)
            for name in {*settings.pools, *(n.pool for n in self.state.nodes.values() if n.pool)}
        }
        self.world = World(hosts, pools, settings.catalogue, tuple(daemons[k] for k in sorted(daemons)))

    def budgets(self, reason: str) -> dict[str, int]:
        """Disruptions each pool allows now for `reason`: its budgets over its live nodes, less those already
        disrupting (not Ready or being deleted)."""
        counts: dict[str, tuple[int, int]] = {}
        for node in self.state.nodes.values():
            if node.pool is None:
                continue
            live, disrupting = counts.get(node.pool, (0, 0))
            if node.ready and not node.deleting:
                live += 1
            else:
                disrupting += 1
            counts[node.pool] = (live, disrupting)
        return {
            pool: max(self.settings.pool(pool).allowed_disruptions(live, reason) - disrupting, 0)
            for pool, (live, disrupting) in counts.items()
        }

    def deleting_pods(self) -> list[Pod]:
        """The pods still on nodes being deleted: every command of the round must place them too."""
        if self.deleting is None:
            self.deleting = []
            for name, node in self.state.nodes.items():
                if node.deleting:
                    pods = self.state.pods_on.get(name, [])
                    self.deleting += [p for p in pods if p.reschedulable and not p.do_not_disrupt]
        return self.deleting

    def command(self, batch: Sequence[Candidate], *, decision_only: bool = False) -> Command:
        assert self.world is not None
        pods = movers(batch, self.deleting_pods(), self.settings.pdbs.fully_blocking)
        return compute_command(
            self.world, batch, pods, spot_to_spot=self.settings.spot_to_spot, decision_only=decision_only
        )


def ordered(candidates: Iterable[Candidate]) -> list[Candidate]:
    """By savings per disruption, highest first; the name breaks ties (Karpenter's sort is not stable)."""
    return sorted(candidates, key=lambda c: (-c.ratio, c.name))


def interleaved(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Single-node order: round-robin over the pools (by name), each pool's candidates in ratio order."""
    by_pool: dict[str, list[Candidate]] = {}
    for candidate in ordered(candidates):
        by_pool.setdefault(candidate.pool.name, []).append(candidate)
    pools = sorted(by_pool)
    longest = max((len(members) for members in by_pool.values()), default=0)
    return [by_pool[pool][i] for i in range(longest) for pool in pools if i < len(by_pool[pool])]
