"""The cluster as the planner sees it: nodes, pods and PodDisruptionBudgets read once from Kubernetes JSON into
small frozen values, quantities parsed (millicores, bytes), pool, capacity type and zone resolved.

What a pod asks for is its effective request, as the scheduler counts it: the larger of its containers' sum and
its init containers' peak (sidecars, `restartPolicy: Always`, run beside everything after them), plus the pod
overhead. `what_if` replaces the requests of named containers (a recommendation), the rest stay as they are.
Constraints the simulation does not model make a pod `unsupported` (the text says which); the planner then
refuses to move it rather than guess.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ballast.internal.quantity import QuantityError, to_units
from ballast.internal.stats.duration import parse_duration
from ballast.runtime.labels import Selector, SelectorError, from_label_selector

from .catalogue import ON_DEMAND, SPOT, Catalogue
from .cost import eviction_cost, is_daemonset_pod, is_mirror_pod, is_reschedulable, is_terminating, pod_key
from .errors import ConsolidationInputError
from .pools import CAPACITY_TYPE_LABEL, INSTANCE_TYPE_LABEL, NODEPOOL_LABEL, ZONE_LABEL

DO_NOT_DISRUPT_ANNOTATION = "karpenter.sh/do-not-disrupt"
DISRUPTED_TAINT_KEY = "karpenter.sh/disrupted"
UNSCHEDULABLE_TAINT = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}
_MODELLED = ("cpu", "memory")
_IGNORED = ("ephemeral-storage",)  # nodes have disk to spare far more often than cpu or memory; not modelled


@dataclass(frozen=True, slots=True)
class Resources:
    """Millicores, bytes and a pod count."""

    cpu: int = 0
    memory: int = 0
    pods: int = 0

    def __add__(self, other: Resources) -> Resources:
        return Resources(self.cpu + other.cpu, self.memory + other.memory, self.pods + other.pods)

    def __sub__(self, other: Resources) -> Resources:
        return Resources(self.cpu - other.cpu, self.memory - other.memory, self.pods - other.pods)

    def fits_in(self, room: Resources) -> bool:
        return self.cpu <= room.cpu and self.memory <= room.memory and self.pods <= room.pods


@dataclass(frozen=True, slots=True)
class PodTerm:
    """A required pod (anti-)affinity term: pods matching `selector` in `namespaces` (None: all) within the same
    `topology_key` domain."""

    selector: Selector
    namespaces: frozenset[str] | None
    topology_key: str

    def matches(self, pod: Pod) -> bool:
        return (self.namespaces is None or pod.namespace in self.namespaces) and self.selector.matches(pod.labels)


@dataclass(frozen=True, slots=True)
class Spread:
    """A `DoNotSchedule` topology spread constraint."""

    max_skew: int
    topology_key: str
    selector: Selector


@dataclass(frozen=True, slots=True)
class Pod:
    key: str
    namespace: str
    name: str
    node_name: str | None
    labels: Mapping[str, str]
    requests: Resources
    eviction_cost: float
    reschedulable: bool
    daemonset: bool
    mirror: bool
    terminating: bool
    do_not_disrupt: bool
    evictable: bool  # what the eviction API would be asked to evict (so what PDBs are checked for)
    not_ready: bool
    node_selector: Mapping[str, str] = field(default_factory=dict)
    node_terms: tuple[Selector, ...] | None = None  # required node affinity, ORed; None: no constraint
    tolerations: tuple[Mapping[str, Any], ...] = ()
    anti_affinity: tuple[PodTerm, ...] = ()
    spread: tuple[Spread, ...] = ()
    unsupported: str | None = None
    owner: str | None = None  # the DaemonSet a daemon pod belongs to


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    labels: Mapping[str, str]
    taints: tuple[Mapping[str, Any], ...]
    allocatable: Resources
    pool: str | None
    instance_type: str | None
    capacity_type: str | None
    zone: str | None
    price: float
    ready: bool = True
    deleting: bool = False
    do_not_disrupt: bool = False


@dataclass(frozen=True, slots=True)
class Pdb:
    key: str
    namespace: str
    selector: Selector
    disruptions_allowed: int
    fully_blocking: bool
    evicts_unhealthy: bool

    def covers(self, pod: Pod) -> bool:
        return pod.namespace == self.namespace and self.selector.matches(pod.labels)


def _quantity(value: Any, resource: str, path: str) -> int:
    try:
        return to_units(value, resource)
    except (QuantityError, TypeError) as error:
        raise ConsolidationInputError(path, str(error)) from None


def _container_requests(
    container: Mapping[str, Any], path: str, override: Mapping[str, Any] | None
) -> tuple[Resources, str | None]:
    """A container's cpu and memory requests (the override's where given) and the first resource it requests that
    the simulation does not model."""
    requests = dict((container.get("resources") or {}).get("requests") or {})
    if override is not None:
        requests.update({resource: override[resource] for resource in _MODELLED if resource in override})
    unmodelled = next((r for r in sorted(requests) if r not in _MODELLED and r not in _IGNORED), None)
    cpu = _quantity(requests["cpu"], "cpu", f"{path}.cpu") if "cpu" in requests else 0
    memory = _quantity(requests["memory"], "memory", f"{path}.memory") if "memory" in requests else 0
    return Resources(cpu, memory), unmodelled


def effective_requests(
    spec: Mapping[str, Any], path: str, overrides: Mapping[str, Mapping[str, Any]] | None = None
) -> tuple[Resources, str | None]:
    """What the scheduler reserves for a pod with `spec` (pod count 1), and the first unmodelled resource it asks
    for. `overrides` maps container names to replacement `{"cpu", "memory"}` requests."""
    overrides = overrides or {}
    unmodelled = None
    total = Resources()
    for index, container in enumerate(spec.get("containers") or ()):
        name = container.get("name")
        requests, extra = _container_requests(
            container, f"{path}.containers[{index}].resources.requests", overrides.get(name)
        )
        total += requests
        unmodelled = unmodelled or extra
    sidecars = Resources()
    peak = Resources()
    for index, container in enumerate(spec.get("initContainers") or ()):
        requests, extra = _container_requests(container, f"{path}.initContainers[{index}].resources.requests", None)
        unmodelled = unmodelled or extra
        if container.get("restartPolicy") == "Always":
            sidecars += requests
            current = sidecars
        else:
            current = sidecars + requests
        peak = Resources(max(peak.cpu, current.cpu), max(peak.memory, current.memory))
    running = total + sidecars
    overhead, extra = _container_requests({"resources": {"requests": spec.get("overhead") or {}}}, path, None)
    unmodelled = unmodelled or extra
    return Resources(
        max(running.cpu, peak.cpu) + overhead.cpu, max(running.memory, peak.memory) + overhead.memory, 1
    ), (unmodelled)


def _selector(value: Any, path: str) -> Selector:
    try:
        return from_label_selector(value)
    except SelectorError as error:
        raise ConsolidationInputError(path, str(error)) from None


_NODE_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "doesnotexist"}


def _node_term(term: Mapping[str, Any], path: str) -> Selector | str:
    """A node selector term as a label selector, or what makes it unsupported (`matchFields`, `Gt`, `Lt`)."""
    if term.get("matchFields"):
        return "required node affinity on matchFields"
    expressions = []
    for expression in term.get("matchExpressions") or ():
        operator = expression.get("operator")
        if operator not in _NODE_OPERATORS:
            return f"required node affinity operator {operator}"
        expressions.append(expression)
    return _selector({"matchExpressions": expressions}, path)


def _unsupported_volume(spec: Mapping[str, Any]) -> str | None:
    for volume in spec.get("volumes") or ():
        if "persistentVolumeClaim" in volume:
            return f"persistentVolumeClaim {volume['persistentVolumeClaim'].get('claimName')!r} (volume zones)"
        if "ephemeral" in volume:
            return f"ephemeral volume {volume.get('name')!r} (volume zones)"
    return None


def _host_port(spec: Mapping[str, Any]) -> str | None:
    for container in [*(spec.get("initContainers") or ()), *(spec.get("containers") or ())]:
        for port in container.get("ports") or ():
            if port.get("hostPort"):
                return f"hostPort {port['hostPort']}"
    return None


def _terms(
    affinity: Mapping[str, Any], field_name: str, namespace: str, path: str
) -> tuple[tuple[PodTerm, ...], str | None]:
    terms = []
    for index, term in enumerate(
        (affinity.get(field_name) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or ()
    ):
        where = f"{path}.{field_name}.requiredDuringSchedulingIgnoredDuringExecution[{index}]"
        if term.get("matchLabelKeys") or term.get("mismatchLabelKeys"):
            return (), "pod anti-affinity with matchLabelKeys"
        namespaces: frozenset[str] | None = frozenset(term.get("namespaces") or ()) or frozenset({namespace})
        namespace_selector = term.get("namespaceSelector")
        if namespace_selector is not None:
            if namespace_selector:
                return (), "pod anti-affinity with a namespaceSelector"
            namespaces = None  # {} selects every namespace
        terms.append(
            PodTerm(
                _selector(term.get("labelSelector"), f"{where}.labelSelector"), namespaces, str(term.get("topologyKey"))
            )
        )
    return tuple(terms), None


def _spread(spec: Mapping[str, Any], path: str) -> tuple[tuple[Spread, ...], str | None]:
    spreads = []
    for index, constraint in enumerate(spec.get("topologySpreadConstraints") or ()):
        if constraint.get("whenUnsatisfiable", "DoNotSchedule") != "DoNotSchedule":
            continue  # ScheduleAnyway is a preference
        if constraint.get("minDomains") is not None or constraint.get("matchLabelKeys"):
            return (), "topology spread with minDomains or matchLabelKeys"
        if (
            constraint.get("nodeAffinityPolicy", "Honor") != "Honor"
            or constraint.get("nodeTaintsPolicy", "Ignore") != "Ignore"
        ):
            return (), "topology spread with a non-default node policy"
        where = f"{path}.topologySpreadConstraints[{index}]"
        skew = constraint.get("maxSkew")
        if isinstance(skew, bool) or not isinstance(skew, int) or skew < 1:
            raise ConsolidationInputError(f"{where}.maxSkew", f"{skew!r} is not a positive integer")
        selector = constraint.get("labelSelector")
        spreads.append(Spread(skew, str(constraint.get("topologyKey")), _selector(selector, f"{where}.labelSelector")))
    return tuple(spreads), None


def _do_not_disrupt(value: Any) -> bool:
    """Karpenter's pod-level `karpenter.sh/do-not-disrupt`: "true", or a positive Go duration counted from the
    pod's start. Without a clock the planner cannot tell whether a duration has run out, so a duration blocks (as
    Karpenter blocks when it cannot tell); any other value is ignored, as Karpenter ignores it."""
    if value == "true":
        return True
    try:
        return isinstance(value, str) and parse_duration(value) > 0
    except ValueError:
        return False


def pod_from_wire(obj: Mapping[str, Any], overrides: Mapping[str, Mapping[str, Any]] | None = None) -> Pod:
    """A Pod (Kubernetes JSON) as the planner sees it; `overrides` are its what-if container requests.

    Raises `ConsolidationInputError` naming the field for a request that is not a quantity, a priority that is
    not an int32, or a selector the API server would refuse.
    """
    key = pod_key(obj)
    path = f"pods[{key!r}].spec"
    metadata = obj.get("metadata") or {}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    labels = {str(k): str(v) for k, v in (metadata.get("labels") or {}).items()}
    annotations = metadata.get("annotations") or {}
    requests, unmodelled = effective_requests(spec, path, overrides)
    affinity = spec.get("affinity") or {}
    node_terms: tuple[Selector, ...] | None = None
    unsupported = None
    required = (affinity.get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
    if required:
        parsed = [_node_term(term, f"{path}.affinity.nodeAffinity") for term in required.get("nodeSelectorTerms") or ()]
        unsupported = next((p for p in parsed if isinstance(p, str)), None)
        node_terms = tuple(p for p in parsed if isinstance(p, Selector))
    anti, anti_problem = _terms(
        affinity, "podAntiAffinity", str(metadata.get("namespace") or "default"), f"{path}.affinity"
    )
    spread, spread_problem = _spread(spec, path)
    if (affinity.get("podAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution"):
        unsupported = unsupported or "required pod affinity"
    unsupported = (
        unsupported
        or anti_problem
        or spread_problem
        or _host_port(spec)
        or _unsupported_volume(spec)
        or ("dynamic resource claims" if spec.get("resourceClaims") else None)
        or (f"requests for {unmodelled}" if unmodelled else None)
    )
    is_daemon = is_daemonset_pod(obj)
    owner = None
    if is_daemon:
        owner = next(o.get("name") for o in metadata.get("ownerReferences") or () if o.get("kind") == "DaemonSet")
        owner = f"{metadata.get('namespace') or 'default'}/{owner}"
    active = status.get("phase") not in ("Succeeded", "Failed") and not is_terminating(obj)
    do_not_disrupt = active and _do_not_disrupt(annotations.get(DO_NOT_DISRUPT_ANNOTATION))
    tolerations = tuple(spec.get("tolerations") or ())
    tolerates_disrupted = any(_tolerates(t, {"key": DISRUPTED_TAINT_KEY, "effect": "NoSchedule"}) for t in tolerations)
    not_ready = any(c.get("type") == "Ready" and c.get("status") == "False" for c in status.get("conditions") or ())
    return Pod(
        key=key,
        namespace=str(metadata.get("namespace") or "default"),
        name=str(metadata.get("name") or ""),
        node_name=spec.get("nodeName") or None,
        labels=labels,
        requests=requests,
        eviction_cost=eviction_cost(obj),
        reschedulable=is_reschedulable(obj),
        daemonset=is_daemon,
        mirror=is_mirror_pod(obj),
        terminating=is_terminating(obj),
        do_not_disrupt=do_not_disrupt,
        evictable=active and not tolerates_disrupted and not is_mirror_pod(obj) and not do_not_disrupt,
        not_ready=not_ready,
        node_selector={str(k): str(v) for k, v in (spec.get("nodeSelector") or {}).items()},
        node_terms=node_terms,
        tolerations=tolerations,
        anti_affinity=anti,
        spread=spread,
        unsupported=unsupported,
        owner=owner,
    )


def _tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """Whether one toleration covers one taint, as the scheduler decides it."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or "Equal"
    if not key:
        return operator == "Exists"
    if key != taint.get("key"):
        return False
    return operator == "Exists" or (toleration.get("value") or "") == (taint.get("value") or "")


def tolerates(pod: Pod, taints: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The first `NoSchedule` or `NoExecute` taint `pod` does not tolerate, or None."""
    for taint in taints:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not any(
            _tolerates(t, taint) for t in pod.tolerations
        ):
            return taint
    return None


# Where Karpenter, EKS, GKE and AKS say how a node was bought, and what their values mean in Karpenter's terms
# (None: the value is already one).
_CAPACITY_LABELS: tuple[tuple[str, Mapping[str, str] | None], ...] = (
    (CAPACITY_TYPE_LABEL, None),
    ("eks.amazonaws.com/capacityType", {"ON_DEMAND": ON_DEMAND, "SPOT": SPOT}),
    ("cloud.google.com/gke-spot", {"true": SPOT}),
    ("cloud.google.com/gke-preemptible", {"true": SPOT}),
    ("kubernetes.azure.com/scalesetpriority", {"spot": SPOT, "regular": ON_DEMAND}),
)
# A GKE or AKS node that says nothing of spot is on-demand.
_ON_DEMAND_MARKERS = ("cloud.google.com/gke-nodepool", "kubernetes.azure.com/agentpool")


def capacity_type_of(labels: Mapping[str, str], default: str | None) -> str | None:
    """The capacity type from Karpenter's, EKS's, GKE's or AKS's labels, else `default`."""
    for label, meaning in _CAPACITY_LABELS:
        value = labels.get(label)
        if value is not None and (meaning is None or value in meaning):
            return value if meaning is None else meaning[value]
    if any(marker in labels for marker in _ON_DEMAND_MARKERS):
        return ON_DEMAND
    return default


def zone_of(labels: Mapping[str, str], default: str | None) -> str | None:
    return labels.get(ZONE_LABEL) or labels.get("failure-domain.beta.kubernetes.io/zone") or default


def node_from_wire(obj: Mapping[str, Any], catalogue: Catalogue, pool_label: str = INSTANCE_TYPE_LABEL) -> Node:
    """A Node (Kubernetes JSON) with its pool, instance type, capacity type, zone and hourly price resolved.

    Raises `ConsolidationInputError` for an allocatable value that is not a quantity. A missing allocatable
    resource counts as 0: nothing is placed on a node whose room is unknown.
    """
    metadata = obj.get("metadata") or {}
    name = str(metadata.get("name") or "")
    labels = {str(k): str(v) for k, v in (metadata.get("labels") or {}).items()}
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    allocatable = status.get("allocatable") or {}
    path = f"nodes[{name!r}].status.allocatable"
    room = Resources(
        *(
            _quantity(allocatable[resource], resource, f"{path}.{resource}") if resource in allocatable else 0
            for resource in ("cpu", "memory", "pods")
        )
    )
    taints = tuple(spec.get("taints") or ())
    if spec.get("unschedulable"):
        taints = (*taints, UNSCHEDULABLE_TAINT)
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or ())
    instance_type = labels.get(INSTANCE_TYPE_LABEL) or labels.get("beta.kubernetes.io/instance-type")
    capacity_type = capacity_type_of(labels, catalogue.default_capacity_type)
    zone = zone_of(labels, catalogue.default_zone)
    price = catalogue.price(instance_type, capacity_type, zone) if capacity_type else 0.0
    return Node(
        name=name,
        labels=labels,
        taints=taints,
        allocatable=room,
        pool=labels.get(NODEPOOL_LABEL) or labels.get(pool_label),
        instance_type=instance_type,
        capacity_type=capacity_type,
        zone=zone,
        price=price,
        ready=ready,
        deleting=metadata.get("deletionTimestamp") is not None,
        do_not_disrupt=(metadata.get("annotations") or {}).get(DO_NOT_DISRUPT_ANNOTATION) == "true",
    )


def _intstr_is(value: Any, number: int, percent: str) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool) and value == number) or value == percent


def pdb_from_wire(obj: Mapping[str, Any]) -> Pdb:
    """A PodDisruptionBudget (Kubernetes JSON, with its status) as Karpenter weighs it."""
    metadata = obj.get("metadata") or {}
    namespace = str(metadata.get("namespace") or "default")
    key = f"{namespace}/{metadata.get('name') or ''}"
    spec = obj.get("spec") or {}
    allowed = (obj.get("status") or {}).get("disruptionsAllowed", 0)
    if isinstance(allowed, bool) or not isinstance(allowed, int):
        raise ConsolidationInputError(f"pdbs[{key!r}].status.disruptionsAllowed", f"{allowed!r} is not an integer")
    fully_blocking = _intstr_is(spec.get("maxUnavailable"), 0, "0%") or spec.get("minAvailable") == "100%"
    return Pdb(
        key=key,
        namespace=namespace,
        selector=_selector(spec.get("selector"), f"pdbs[{key!r}].spec.selector"),
        disruptions_allowed=allowed,
        fully_blocking=fully_blocking,
        evicts_unhealthy=spec.get("unhealthyPodEvictionPolicy") == "AlwaysAllow",
    )
