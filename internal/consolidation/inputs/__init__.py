"""What the consolidation advisor reads from the cluster, and the two plans it makes from it (not pure: the pure
planner is `ballast.internal.consolidation`).

    settings = ReadSettings(catalogue=("ballast-system", "consolidation-catalogue"))   # ConfigMap NS/NAME
    inputs = read_inputs(client, settings)      # paged, uncached LISTs (limit/continue); a Client, not the cache
    advice = advise(inputs, k=2, default_policy="Balanced")
    advice.current, advice.recommended          # `Plan`s: the pods' requests now, and as their profiles recommend
    advice.problems                             # every object left out or held, every catalogue entry skipped
    inputs.catalogue_problems, inputs.observed, inputs.karpenter

Inputs: Nodes; bound, unfinished Pods; PodDisruptionBudgets; Karpenter `karpenter.sh/v1` NodePools when the
cluster serves them (their `spec.disruption` is honoured; other pools get `default_policy`); the catalogue from a
ConfigMap's `catalogue.yaml` key (`parse_catalogue`'s document); WorkloadProfiles, whose ready containers'
recommended requests — the requests admission would write (`whatif.profile_requests`) — are each enrolled pod's
what-if, found by its `profile-ref` annotation. A node's pool is its `karpenter.sh/nodepool` label, else
`ReadSettings.pool_label` (the instance type by default).

`read_inputs` raises only the API error of a read that failed as a whole; an object that does not parse is named
in `Inputs.problems` and handled so that the advice only gets more cautious (`read`'s docstring says how).
"""

from .read import (
    CATALOGUE_KEY,
    DEFAULT_PAGE_SIZE,
    NODEPOOL,
    Advice,
    Inputs,
    Observed,
    ReadSettings,
    advise,
    read_catalogue,
    read_inputs,
    read_nodepools,
    read_profiles,
)
from .whatif import PLANNED_RESOURCES, ContainerRequests, pod_requests, profile_name, profile_requests

__all__ = [
    "CATALOGUE_KEY",
    "DEFAULT_PAGE_SIZE",
    "NODEPOOL",
    "PLANNED_RESOURCES",
    "Advice",
    "ContainerRequests",
    "Inputs",
    "Observed",
    "ReadSettings",
    "advise",
    "pod_requests",
    "profile_name",
    "profile_requests",
    "read_catalogue",
    "read_inputs",
    "read_nodepools",
    "read_profiles",
]
