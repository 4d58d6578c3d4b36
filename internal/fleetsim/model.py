"""The fleet simulator's vocabulary: a fleet, the usage it generates, the pods a recommender sizes, and what one
run records.

Units everywhere: cores for `cpu`, bytes for `memory` and `ephemeral-storage`, seconds of virtual time since the
start of the run. Usage is known at `STEP_SECONDS` resolution; a run records it in `BUCKET_SECONDS` windows (the
5-minute windows the figures are defined on, docs/simulate.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Matrix = NDArray[np.float64]

RESOURCES: tuple[str, ...] = ("cpu", "memory", "ephemeral-storage")
"""The columns of every usage matrix, in this order."""
CPU, MEMORY, EPHEMERAL = 0, 1, 2
STEP_SECONDS = 15
"""Usage resolution: one value per container and resource every 15 s (the kubelet's housekeeping period)."""
BUCKET_SECONDS = 300
"""What a run records: 5-minute windows (mean reserved, mean usage), as the figures are defined (docs/simulate.md)."""
DAY_SECONDS = 86_400

RECORDED_SHAPE = "recorded"
"""The shape name of every replayed container (`App.shapes`): recorded usage has no synthetic shape."""


@dataclass(frozen=True, slots=True)
class ContainerSpec:
    """One container of an app's pod template: its requests and limits as the manifest states them (a missing
    key: not set)."""

    name: str
    requests: Mapping[str, float]
    limits: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class App:
    """What runs: a pod template (labels and containers) and the usage shape of each container.

    `shapes` maps a container name to its shape's name in `usage.SHAPES` (`recorded` for a replayed fleet).
    """

    name: str
    labels: Mapping[str, str]
    containers: tuple[ContainerSpec, ...]
    shapes: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Workload:
    """A Deployment of `app` in `namespace`, alive from `created_s` until `deleted_s` (None: to the end)."""

    namespace: str
    app: App
    replicas: int
    created_s: int = 0
    deleted_s: int | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.app.name}"


@dataclass(frozen=True, slots=True)
class NodeSpec:
    name: str
    allocatable: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class FleetEvent:
    """Something the fleet's owners do at `at_s`.

    `rollout`: every pod of the workload is replaced, one at a time (new pods, admitted afresh).
    `redeploy`: a workload deleted earlier (its `deleted_s`) comes back with its pods admitted afresh;
    `vpa_cold` says why VPA would start it without history (`new-labels`, `recommender-restart`), empty when its
    in-memory history carries over, as it would.
    """

    at_s: int
    kind: Literal["rollout", "redeploy"]
    workload: str
    vpa_cold: str = ""


@dataclass(frozen=True, slots=True)
class ColdStart:
    """A workload whose first pods are timed: from `at_s` until its request is within 15 % of `reference`'s
    (an established workload of the same app) steady state."""

    workload: str
    at_s: int
    kind: Literal["new-namespace", "redeploy"]
    reference: str


@dataclass(frozen=True, slots=True)
class Fleet:
    """Everything a run needs besides the usage itself. `workloads` are in a fixed order (the run's order)."""

    workloads: tuple[Workload, ...]
    nodes: tuple[NodeSpec, ...]
    duration_s: int
    events: tuple[FleetEvent, ...] = ()
    cold_starts: tuple[ColdStart, ...] = ()
    identity_labels: tuple[str, ...] = ("app.kubernetes.io/name", "app.kubernetes.io/component")
    seed: int = 0

    def workload(self, key: str) -> Workload:
        for workload in self.workloads:
            if workload.key == key:
                return workload
        raise KeyError(key)


@dataclass(frozen=True, slots=True)
class Slot:
    """One usage stream: replica `replica` of a workload, one container. A pod replacing another (rollout,
    eviction, restart) takes over its slot's stream."""

    workload: str
    replica: int
    container: str


class Usage(Protocol):
    """The true usage of every slot, the same for every recommender.

    `slots` is fixed for the run; `at(step, age_steps)` returns a `(len(slots), 3)` matrix (columns
    `RESOURCES`) for step `step` (time `step * STEP_SECONDS`), where `age_steps[i]` is how many steps ago slot
    `i`'s container last (re)started — leaks and startup spikes depend on it; a recorded usage ignores it.
    Values of slots whose workload is not running are unspecified. Deterministic: the same step and ages give the
    same matrix, whatever was asked before.
    """

    @property
    def slots(self) -> Sequence[Slot]: ...

    def at(self, step: int, age_steps: NDArray[np.int64]) -> Matrix: ...


@runtime_checkable
class PodSpans(Protocol):
    """A usage that also knows when each slot's pod exists (a recording): the world creates a slot's pod at
    `started`, keeps it while `alive` and removes it after, instead of running every replica for the workload's
    whole life. Both return one bool per slot."""

    def alive(self, step: int) -> NDArray[np.bool_]: ...

    def started(self, step: int) -> NDArray[np.bool_]: ...


@dataclass(slots=True)
class ContainerState:
    """A running container as its kubelet sees it: what it reserves, and since when it runs."""

    name: str
    requests: dict[str, float]
    limits: dict[str, float]
    started_s: int
    restarts: int = 0


@dataclass(slots=True)
class PodState:
    """A running pod. `slot` indexes `Usage.slots` per container (same order as `containers`)."""

    name: str
    namespace: str
    workload: str
    replica: int
    labels: dict[str, str]
    node: str
    created_s: int
    containers: list[ContainerState]
    slots: list[int] = field(default_factory=list)
    priority: int = 0
    """The pod's priority (its PriorityClass's value): the kubelet evicts lower priorities first under pressure."""


@dataclass(frozen=True, slots=True)
class OomKill:
    at_s: int
    pod: str
    workload: str
    container: str
    request: float
    limit: float


@dataclass(frozen=True, slots=True)
class PressureEviction:
    """A pod the kubelet evicted because its node's memory working set exceeded the node's allocatable
    (`pressure.to_evict`); it restarted on the same node with the requests it had. `usage` and `request` are the
    pod's memory working set and request (bytes) when it was evicted."""

    at_s: int
    pod: str
    workload: str
    node: str
    usage: float
    request: float


@dataclass(frozen=True, slots=True)
class Change:
    """A pod's requests being set: at its `admission` (every new pod, whoever created it), by an in-place
    `resize`, or by an `eviction` (the recommender restarted it; `pod` is the replacement, admitted with
    `requests`). `requests` maps container → resource → value after the change."""

    at_s: int
    pod: str
    workload: str
    kind: Literal["admission", "resize", "eviction"]
    requests: Mapping[str, Mapping[str, float]]
    replica: int = 0
    """The workload's replica slot the pod fills: a new pod in a slot replaces the one that was there."""


class Cluster(Protocol):
    """What a recommender sees of, and may do to, the simulated cluster (`world.World`)."""

    @property
    def now_s(self) -> int: ...

    @property
    def pods(self) -> Mapping[str, PodState]:
        """Running pods by name, in creation order."""
        ...

    def observed(self) -> Matrix:
        """This step's usage of every slot as a recommender can measure it (`(len(slots), 3)`): capped at the
        limits — memory of a container OOM-killed this step reads as its limit, cpu stops at a cpu limit."""
        ...

    def running(self) -> NDArray[np.bool_]:
        """Which slots have a running container this step."""
        ...

    def ooms_since(self, at_s: int) -> Sequence[OomKill]:
        """OOM kills at or after `at_s`, oldest first."""
        ...

    def resize(self, pod: str, container: str, requests: Mapping[str, float], limits: Mapping[str, float]) -> bool:
        """Resize a container in place (cpu and memory only); False (Infeasible) when its node lacks room."""
        ...

    def evict(self, pod: str) -> str:
        """Evict `pod`: its replacement is created at once (admitted by the recommender); returns its name."""
        ...


class Recommender(Protocol):
    """One side of the comparison, driven by `run.simulate` from one thread in a fixed order."""

    @property
    def name(self) -> str: ...

    def admit(self, pod: PodState, cluster: Cluster) -> None:
        """Set `pod`'s container requests and limits as this recommender's admission would (a new pod)."""
        ...

    def tick(self, cluster: Cluster) -> None:
        """Called once every step after usage is known: sample at the recommender's own cadence, resize or evict
        as its updater would."""
        ...

    def close(self) -> None: ...


@dataclass(slots=True)
class WorkloadTrace:
    """One workload over a run, per `BUCKET_SECONDS` window `b` (rows) and resource (columns `RESOURCES`).

    `reserved[b]` and `usage[b]` are the window's means of Σ requests and Σ observed usage (capped, what a
    cluster measures) over the workload's running containers; `replicas[b]` the mean running pods. Counters are
    per container-step (`STEP_SECONDS`): `above_request` usage above request, `measured` steps counted,
    `throttled` cpu at its limit, `limited` steps with a cpu limit.
    """

    workload: str
    reserved: Matrix
    usage: Matrix
    replicas: NDArray[np.float64]
    above_request: NDArray[np.int64]
    measured: NDArray[np.int64]
    throttled: int = 0
    limited: int = 0


@dataclass(slots=True)
class Trace:
    """What one recommender's run records: per-workload windows, every OOM kill, every node-pressure eviction and
    every change of requests.
    Deterministic for one seed (no wall time)."""

    recommender: str
    duration_s: int
    allocatable: Mapping[str, float]
    workloads: dict[str, WorkloadTrace]
    ooms: list[OomKill] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    pressure_evictions: list[PressureEviction] = field(default_factory=list)
    overcommitted: int = 0
    """Pods placed on a node that could not fit their requests (the scheduler would have left them Pending)."""
