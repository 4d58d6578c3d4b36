"""Reading the cluster for the consolidation advisor: paged, uncached lists turned into the planner's values.

Every read is a LIST in pages of `page_size` (`limit`/`continue`), straight from the API server: nothing is
cached between runs, so the operator's memory follows one run's inputs, not an informer of every pod. A page is
parsed as it arrives and its JSON dropped; a continue token that expires (410) restarts that kind's list.

One object that cannot be read does not stop the run: it is named in `Inputs.problems` and handled so that the
advice can only get more cautious — a node that does not parse is left out with its pods, a node hosting a pod
that does not parse (or a pod of a namespace whose PodDisruptionBudget does not parse) is held (planned as
`karpenter.sh/do-not-disrupt`), a NodePool that does not parse is planned as `consolidateAfter: Never`, a pod
whose recommended requests do not parse keeps its current ones in the what-if.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TypeVar

import yaml

from ballast.api.ballast.v1 import WorkloadProfile
from ballast.internal.consolidation import (
    BALANCED,
    BALANCED_K,
    Catalogue,
    ConsolidationInputError,
    Node,
    Pdb,
    Plan,
    Pod,
    Pool,
    node_from_wire,
    parse_catalogue,
    pdb_from_wire,
    plan,
    pod_from_wire,
    pool_from_nodepool,
)
from ballast.internal.consolidation.pools import INSTANCE_TYPE_LABEL
from ballast.runtime import GroupVersionKind, NotFoundError
from ballast.runtime.apierrors import GoneError
from ballast.runtime.client import APIServerClient
from ballast.runtime.restmapper import NoKindMatchError

from .whatif import ContainerRequests, pod_requests, profile_name, profile_requests

NODEPOOL = GroupVersionKind("karpenter.sh", "v1", "NodePool")
WORKLOAD_PROFILE = GroupVersionKind(WorkloadProfile.GROUP, WorkloadProfile.VERSION, WorkloadProfile.KIND)
CATALOGUE_KEY = "catalogue.yaml"
"""The ConfigMap data key holding the catalogue document (YAML or JSON, `parse_catalogue`'s format)."""
DEFAULT_PAGE_SIZE = 500
BOUND_AND_RUNNING = "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"
"""Pods the planner places: bound to a node and not finished (the API server filters them)."""
FINISHED = ("Succeeded", "Failed")
_RESTARTS = 3
"""Times one kind's list starts over after its continue token expired, before the 410 is raised."""

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ReadSettings:
    """Where the inputs are and how nodes are grouped.

    - `catalogue`: `(namespace, name)` of the catalogue ConfigMap (None: no catalogue, so no prices);
      `catalogue_key` its data key.
    - `pool_label`: the label naming the pool of a node without `karpenter.sh/nodepool`.
    - `page_size`: the `limit` of each LIST page.
    """

    catalogue: tuple[str, str] | None = None
    catalogue_key: str = CATALOGUE_KEY
    pool_label: str = INSTANCE_TYPE_LABEL
    page_size: int = DEFAULT_PAGE_SIZE


@dataclass(frozen=True, slots=True)
class Observed:
    """How many objects of each kind the run read (before any was left out)."""

    nodes: int = 0
    pods: int = 0
    pdbs: int = 0
    nodepools: int = 0
    profiles: int = 0
    pods_with_recommendations: int = 0


@dataclass(frozen=True, slots=True)
class Inputs:
    """One run's inputs, parsed: what `advise` plans from.

    `pods` have their current requests, `recommended_pods` the requests their profiles recommend (the same pod
    where there is no recommendation). `karpenter` is whether the cluster serves `karpenter.sh/v1` NodePools;
    `problems` names every object left out, held or planned cautiously, and every catalogue entry skipped.
    """

    nodes: tuple[Node, ...]
    pods: tuple[Pod, ...]
    recommended_pods: tuple[Pod, ...]
    pdbs: tuple[Pdb, ...]
    pools: Mapping[str, Pool]
    catalogue: Catalogue
    karpenter: bool
    observed: Observed
    problems: tuple[str, ...] = ()
    catalogue_problems: tuple[str, ...] = ()
    """The catalogue's own problems (the ConfigMap missing or unparsable, entries skipped), also in `problems`."""


@dataclass(frozen=True, slots=True)
class Advice:
    """The plan with the pods' current requests and the one with their recommended requests."""

    current: Plan
    recommended: Plan
    problems: tuple[str, ...] = ()
    """`Inputs.problems` plus what either plan ignored (without repeats)."""


def _paged(
    client: APIServerClient, kind: Any, parse: Callable[[Any], T | None], *, page_size: int, **options: Any
) -> list[T]:
    """Every object of `kind`, page by page (`Client.list_all`), each turned by `parse` (None: dropped) before the
    next page is read; a continue token that expired (410 after a first page) starts the list over."""
    for attempt in range(_RESTARTS + 1):
        parsed: list[T] = []
        started = False  # a 410 before any page came back is no expired token: not retried
        try:
            for item in client.list_all(kind, page_size=page_size, **options):
                started = True
                value = parse(item)
                if value is not None:
                    parsed.append(value)
            return parsed
        except GoneError:
            if attempt == _RESTARTS or not started:
                raise
    raise AssertionError("unreachable")  # the loop returns or raises


def _name(obj: Mapping[str, Any]) -> str:
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace")
    return f"{namespace}/{metadata.get('name') or ''}" if namespace else str(metadata.get("name") or "")


def read_catalogue(client: APIServerClient, settings: ReadSettings) -> Catalogue:
    """The catalogue ConfigMap's document, parsed; a missing ConfigMap, key or document is an empty catalogue
    whose `problems` say why (every node is then priced 0 and no move saves anything)."""
    if settings.catalogue is None:
        return Catalogue(problems=("no catalogue configured (--consolidation-catalogue): every node priced 0",))
    namespace, name = settings.catalogue
    where = f"catalogue ConfigMap {namespace}/{name}"
    try:
        configmap = client.get("v1/ConfigMap", name, namespace)
    except NotFoundError:
        return Catalogue(problems=(f"{where} not found: every node priced 0",))
    text = (configmap.get("data") or {}).get(settings.catalogue_key)
    if text is None:
        return Catalogue(problems=(f"{where} has no data key {settings.catalogue_key!r}: every node priced 0",))
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        first = str(error).splitlines()[0] if str(error) else type(error).__name__
        return Catalogue(
            problems=(f"{where} key {settings.catalogue_key!r} is not YAML ({first}): every node priced 0",)
        )
    try:
        return parse_catalogue(document if document is not None else {})
    except ConsolidationInputError as error:
        return Catalogue(problems=(f"{where} key {settings.catalogue_key!r}: {error.message}: every node priced 0",))


def read_nodepools(
    client: APIServerClient, settings: ReadSettings, problems: list[str], now: datetime | None = None
) -> tuple[dict[str, Pool], bool]:
    """Karpenter's NodePools as pools (their scheduled budgets decided at `now`), and whether the cluster serves
    them (a 404 or no such kind: none)."""
    raw: list[Mapping[str, Any]]
    try:
        raw = _paged(client, NODEPOOL, lambda item: item, page_size=settings.page_size)
    except (NoKindMatchError, NotFoundError):
        return {}, False
    pools: dict[str, Pool] = {}
    for nodepool in raw:
        name = _name(nodepool)
        try:
            pools[name] = pool_from_nodepool(nodepool, now=now)
        except ConsolidationInputError as error:
            problems.append(f"NodePool {name}: {error}; planned as consolidateAfter: Never")
            pools[name] = Pool(name, consolidation_disabled=True)
    return pools, True


def read_profiles(client: APIServerClient, settings: ReadSettings, problems: list[str]) -> dict[str, ContainerRequests]:
    """Each WorkloadProfile's recommended requests (`profile_requests`), by profile name; profiles without any
    are left out."""

    def keep(obj: Mapping[str, Any]) -> tuple[str, ContainerRequests] | None:
        # Validated here rather than by the client's scheme, which need not have our kinds (a CLI's client).
        try:
            profile = WorkloadProfile.model_validate(obj)
        except ValueError as error:
            problems.append(f"WorkloadProfile {_name(obj)}: {str(error).splitlines()[0]}; its pods keep their requests")
            return None
        requests = profile_requests(profile.status)
        return (profile.metadata.name or "", requests) if requests else None

    return dict(_paged(client, WORKLOAD_PROFILE, keep, page_size=settings.page_size))


def _pod_pair(
    obj: Mapping[str, Any], profiles: Mapping[str, ContainerRequests], problems: list[str]
) -> tuple[Pod, Pod, bool]:
    """The pod with its current requests, with its recommended ones, and whether it had recommendations; raises
    ConsolidationInputError when the pod itself does not parse."""
    current = pod_from_wire(obj)
    profile = profile_name(obj)
    overrides = pod_requests(obj, profiles[profile]) if profile is not None and profile in profiles else {}
    if not overrides:
        return current, current, False
    try:
        return current, pod_from_wire(obj, overrides), True
    except ConsolidationInputError as error:
        problems.append(f"pod {current.key}: recommended requests of profile {profile} refused ({error}); "
                        "current requests kept")  # fmt: skip
        return current, current, False


def read_inputs(
    client: APIServerClient, settings: ReadSettings = ReadSettings(), *, now: datetime | None = None
) -> Inputs:
    """Read everything the advisor plans from: the catalogue, Karpenter's NodePools (if served), Nodes,
    WorkloadProfiles, PodDisruptionBudgets and the bound, unfinished Pods, each a paged uncached LIST. A
    NodePool budget with a `schedule` applies when its window covers `now` (None: always, the cautious reading).

    Raises the API error of a read that failed as a whole (the caller retries the run); objects that do not
    parse are `problems` (module docstring).
    """
    problems: list[str] = []
    catalogue = read_catalogue(client, settings)
    pools, karpenter = read_nodepools(client, settings, problems, now)

    node_count = 0
    rejected_nodes: set[str] = set()

    def node(obj: Mapping[str, Any]) -> Node | None:
        nonlocal node_count
        node_count += 1
        try:
            return node_from_wire(obj, catalogue, settings.pool_label)
        except ConsolidationInputError as error:
            rejected_nodes.add(_name(obj))
            problems.append(f"node {_name(obj)}: {error}; left out with its pods")
            return None

    nodes = {n.name: n for n in _paged(client, "v1/Node", node, page_size=settings.page_size)}
    profiles = read_profiles(client, settings, problems)

    pdb_count = 0
    held_namespaces: set[str] = set()

    def pdb(obj: Mapping[str, Any]) -> Pdb | None:
        nonlocal pdb_count
        pdb_count += 1
        try:
            return pdb_from_wire(obj)
        except ConsolidationInputError as error:
            namespace = str((obj.get("metadata") or {}).get("namespace") or "default")
            held_namespaces.add(namespace)
            problems.append(f"PodDisruptionBudget {_name(obj)}: {error}; nodes with pods of {namespace} held")
            return None

    pdbs = _paged(client, "policy/v1/PodDisruptionBudget", pdb, page_size=settings.page_size)

    pod_count = with_recommendations = 0
    held: dict[str, str] = {}  # node → why

    def pod(obj: Mapping[str, Any]) -> tuple[Pod, Pod] | None:
        nonlocal pod_count, with_recommendations
        pod_count += 1
        spec = obj.get("spec") or {}
        node_name = str(spec.get("nodeName") or "")
        if not node_name or (obj.get("status") or {}).get("phase") in FINISHED or node_name in rejected_nodes:
            return None  # the field selector already left out the first two; a page of another server may not
        try:
            current, recommended, changed = _pod_pair(obj, profiles, problems)
        except ConsolidationInputError as error:
            problems.append(f"pod {_name(obj)}: {error}; its node {node_name} held")
            held.setdefault(node_name, f"pod {_name(obj)} could not be read")
            return None
        with_recommendations += changed
        if current.namespace in held_namespaces:
            held.setdefault(node_name, f"a PodDisruptionBudget of namespace {current.namespace} could not be read")
        return current, recommended

    pairs = _paged(client, "v1/Pod", pod, page_size=settings.page_size, field_selector=BOUND_AND_RUNNING)
    for name in sorted(held):
        if name in nodes:
            nodes[name] = dataclasses.replace(nodes[name], do_not_disrupt=True)
    catalogue_problems = tuple(catalogue.problems)
    return Inputs(
        nodes=tuple(nodes[name] for name in sorted(nodes)),
        pods=tuple(current for current, _ in pairs),
        recommended_pods=tuple(recommended for _, recommended in pairs),
        pdbs=tuple(pdbs),
        pools=pools,
        catalogue=catalogue,
        karpenter=karpenter,
        observed=Observed(node_count, pod_count, pdb_count, len(pools), len(profiles), with_recommendations),
        problems=(*catalogue_problems, *problems),
        catalogue_problems=catalogue_problems,
    )


def advise(
    inputs: Inputs, *, k: float = BALANCED_K, default_policy: str = BALANCED, spot_to_spot: bool = False
) -> Advice:
    """Plan `inputs` twice: with the pods' current requests and with their recommended requests.

    `default_policy` is the consolidation policy of pools no NodePool describes (every pool, without Karpenter).
    Raises `ConsolidationInputError` for a `k` or a policy the planner refuses.
    """
    options: dict[str, Any] = {"k": k, "pdbs": inputs.pdbs, "default_policy": default_policy,
                               "spot_to_spot": spot_to_spot}  # fmt: skip
    current = plan(inputs.nodes, inputs.pods, inputs.pools, inputs.catalogue, **options)
    recommended = plan(inputs.nodes, inputs.recommended_pods, inputs.pools, inputs.catalogue, **options)
    return Advice(current, recommended, _unique((*inputs.problems, *current.problems, *recommended.problems)))


def _unique(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))
