"""The ceilings of a profile's recommendations (docs/design.md, difference 25).

A recommended value of 0, or one above the largest allocatable of its resource among the Nodes the profile's pods
have run on, is not written to the status — so neither admission nor in-place resize applies it — and the profile's
`Ready` message names it (`not_applied`). Neither value can be right: a zero request or limit is a pod without
that resource, and no pod of the profile can be given more than the largest node it ran on offers.

    ceilings = RecommendationCeilings()                        # leader-local, in CollectionMemory
    for node in ceilings.due(nodes, now_ms):                   # never read, or read NODE_REFRESH_MS ago
        ceilings.remember_node(node, node_allocatable(live Node read), now_ms)
    ceilings.raise_for(profile, uid, nodes_by_profile(pods)[profile])
    kept, refused = bounded("app", "cpu", {"request": "0", "limit": "2"}, ceilings.of(profile, uid))

A profile's ceilings only grow while this process leads (a fresh leader starts from the nodes its pods run on
now). Without a known node (pods not scheduled yet, a Node that cannot be read) or for a resource no node
reports, there is no node ceiling: only the zero check and the bound of every quantity, 2**63 − 1 units, apply.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ballast.internal.quantity import QuantityError, format_units, to_units

from .attribution import MeasuredPod, PodKey

NODE_REFRESH_MS = 10 * 60 * 1000
"""How long a node's allocatable is trusted before it is read again (allocatable changes only with the node)."""

Ceilings = Mapping[str, int]
"""Resource → the largest value a recommendation may have, in units (millicores for cpu, bytes otherwise)."""


def node_allocatable(node: Mapping[str, Any]) -> dict[str, int]:
    """A Node's `status.allocatable` (its JSON) in integer units; values that are not quantities are left out."""
    status = node.get("status")
    allocatable = status.get("allocatable") if isinstance(status, Mapping) else None
    units: dict[str, int] = {}
    for resource, value in (allocatable if isinstance(allocatable, Mapping) else {}).items():
        if not resource or not isinstance(value, str):
            continue
        try:
            units[str(resource)] = to_units(value, str(resource))
        except QuantityError:
            continue
    return units


def largest(allocatables: Iterable[Mapping[str, int]]) -> dict[str, int]:
    """Per resource, the largest of `allocatables`."""
    result: dict[str, int] = {}
    for allocatable in allocatables:
        for resource, units in allocatable.items():
            result[resource] = max(units, result.get(resource, units))
    return result


def nodes_by_profile(pods: Mapping[PodKey, MeasuredPod]) -> dict[str, frozenset[str]]:
    """The nodes each profile's measured pods run on (unscheduled pods count for none)."""
    nodes: dict[str, set[str]] = {}
    for pod in pods.values():
        if pod.node:
            nodes.setdefault(pod.profile.name, set()).add(pod.node)
    return {profile: frozenset(names) for profile, names in nodes.items()}


ZERO = "zero"
NODE = "node"
RANGE = "range"


@dataclass(frozen=True, slots=True)
class NotApplied:
    """A recommended value left out of the status, and why: `ZERO`, above the largest allocatable `ceiling` of the
    profile's nodes (`NODE`), or not a quantity of at most 2**63 − 1 units (`RANGE`)."""

    container: str
    resource: str
    field: str
    value: str
    reason: str
    ceiling: int = 0

    def __str__(self) -> str:
        what = f"{self.container} {self.resource} {self.field} {self.value}"
        if self.reason == ZERO:
            return f"{what} is 0"
        if self.reason == NODE:
            limit = format_units(self.ceiling, self.resource)
            return f"{what} is above {limit}, the largest allocatable {self.resource} of the nodes its pods ran on"
        return f"{what} is not a quantity of at most 2**63 − 1 units"


def bounded(
    container: str, resource: str, recommendation: Mapping[str, str], ceilings: Ceilings
) -> tuple[dict[str, str], list[NotApplied]]:
    """Split one (container, resource) recommendation into the values kept and those not applied: a value of 0,
    one above `ceilings[resource]`, or one that is not a quantity of at most 2**63 − 1 units."""
    kept: dict[str, str] = {}
    refused: list[NotApplied] = []
    ceiling = ceilings.get(resource)
    for field, value in recommendation.items():
        try:
            units = to_units(value, resource)
        except QuantityError:
            refused.append(NotApplied(container, resource, field, value, RANGE))
            continue
        if units <= 0:
            refused.append(NotApplied(container, resource, field, value, ZERO))
        elif ceiling is not None and units > ceiling:
            refused.append(NotApplied(container, resource, field, value, NODE, ceiling))
        else:
            kept[field] = value
    return kept, refused


_LARGEST_KEPT = 4096
"""Sets of nodes `RecommendationCeilings` remembers the largest allocatable of (about one per profile)."""


class RecommendationCeilings:
    """The leader-local memory of ceilings: each node's allocatable (with when it was read) and each profile's
    ceilings (with its uid). Locked: status writers report from threads."""

    def __init__(self, refresh_ms: int = NODE_REFRESH_MS) -> None:
        self.refresh_ms = refresh_ms
        self._lock = threading.Lock()
        self._nodes: dict[str, tuple[int, dict[str, int]]] = {}
        self._profiles: dict[str, tuple[str, dict[str, int]]] = {}
        self._largest: dict[frozenset[str], dict[str, int]] = {}
        """The largest allocatable of each set of nodes asked for since a node was last read (profiles share
        nodes: a cycle asks for the same few sets again and again)."""

    def due(self, nodes: Iterable[str], now_ms: int) -> list[str]:
        """The nodes of `nodes` to read now (never read, or read `refresh_ms` ago or longer), sorted; nodes not
        among them and not read for three refresh periods are forgotten."""
        wanted = set(nodes)
        with self._lock:
            stale = [n for n, (at, _) in self._nodes.items() if n not in wanted and now_ms - at >= 3 * self.refresh_ms]
            for gone in stale:
                del self._nodes[gone]
            if stale:
                self._largest.clear()
            return sorted(n for n in wanted if n not in self._nodes or now_ms - self._nodes[n][0] >= self.refresh_ms)

    def remember_node(self, node: str, allocatable: Mapping[str, int], now_ms: int) -> None:
        """A node's allocatable as read at `now_ms` (empty: not found or not readable)."""
        with self._lock:
            self._nodes[node] = (now_ms, dict(allocatable))
            self._largest.clear()

    def raise_for(self, profile: str, uid: str, nodes: Iterable[str]) -> None:
        """Raise the profile's ceilings to the largest allocatable of `nodes` (those read); a new uid starts over."""
        names = frozenset(nodes)
        with self._lock:
            found = self._largest.get(names)
            if found is None:
                if len(self._largest) >= _LARGEST_KEPT:
                    self._largest.clear()
                found = self._largest[names] = largest(self._nodes[n][1] for n in names if n in self._nodes)
            known_uid, ceilings = self._profiles.get(profile, (uid, {}))
            self._profiles[profile] = (uid, largest((ceilings if known_uid == uid else {}, found)))

    def of(self, profile: str, uid: str) -> dict[str, int]:
        """The profile's ceilings (empty when none is known for this uid)."""
        with self._lock:
            known_uid, ceilings = self._profiles.get(profile, ("", {}))
            return dict(ceilings) if known_uid == uid else {}

    def keep_only(self, profiles: Collection[str]) -> None:
        """Forget profiles that are gone."""
        with self._lock:
            for gone in [name for name in self._profiles if name not in profiles]:
                del self._profiles[gone]
