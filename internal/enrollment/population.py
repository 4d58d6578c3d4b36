"""Who feeds a profile: its active pods and the namespaces they come from.

A shared profile's history is the usage of every pod with its identity tuple under its policy, whatever the
namespace — the product's point, and its trust boundary. The profile lane shows who is inside that boundary as
`status.contributingNamespaces` (docs/design.md, difference 24); a ClusterResourcePolicy per trust zone
(`selector.namespaces`) gives each zone profiles of its own.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .keys import is_enrolled
from .pod import PodProjection

NAMES_SHOWN = 10
"""How many namespace names the status lists (the count is always exact)."""


@dataclass(frozen=True, slots=True)
class Population:
    """A profile's active pods (enrolled, not terminating) and their namespaces, sorted and distinct."""

    active: int
    namespaces: tuple[str, ...]

    def contributing_namespaces(self) -> dict[str, object]:
        """`status.contributingNamespaces`: the count and the first `NAMES_SHOWN` names."""
        shown: dict[str, object] = {"count": len(self.namespaces)}
        if self.namespaces:
            shown["names"] = list(self.namespaces[:NAMES_SHOWN])
        return shown


def population(pods: Iterable[PodProjection]) -> Population:
    """The population of a profile from the cached pods carrying its `profile-ref`."""
    active = [pod for pod in pods if is_enrolled(pod.metadata.labels) and not pod.metadata.deletion_timestamp]
    return Population(len(active), tuple(sorted({pod.metadata.namespace for pod in active})))
