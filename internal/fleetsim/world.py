"""The simulated cluster one recommender runs in: pods created, replaced and deleted as the fleet says, placed on
nodes, their containers killed when memory passes the limit and held at a cpu limit, every 15 s.

The same fleet and the same usage go into every recommender's world; what differs is what each recommender sets at
admission and changes later, and so what its pods reserve, when they are OOM-killed and restarted. A world is the
kubelet and the scheduler of the simulation (`model.Cluster`): it never decides sizes.

What it does, in order, at each step (`advance`):

1. the fleet's lifecycle due at that time — a workload's pods created (each admitted by the recommender, then
   placed on the node with the most free memory that fits its requests; a pod that fits nowhere is still placed
   there and counted in `Trace.overcommitted`), a workload deleted, a redeploy, a rollout (every pod replaced);
   for a recording (`model.PodSpans`) each replica's pod exists only while its recorded pod does, and a new
   recorded pod in a slot replaces the one before;
2. the usage of every running container (`Usage.at`), then the kubelet's limits: memory above the memory limit is
   an OOM kill (the container restarts at once, so a leak starts over; what the step measures is the limit), cpu
   above a cpu limit is throttled (measured at the limit); ephemeral-storage is measured as used (its limit is not
   enforced here);
3. node memory pressure: on a node whose pods' Σ memory working set exceeds its allocatable memory, the kubelet
   evicts pods one at a time in its order (`pressure.to_evict`) until the rest fit; an evicted pod restarts on the
   same node with the requests it had (its containers start over, so a leak does too), recorded in
   `Trace.pressure_evictions` against the recommender that set those requests; the step measures what the pod
   used before it went;
4. the record: per workload and 5-minute window, the sums of requests and of measured usage, the running pods, and
   per container-step the counters of `model.WorkloadTrace`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from .model import (
    BUCKET_SECONDS,
    CPU,
    MEMORY,
    RESOURCES,
    STEP_SECONDS,
    Change,
    ContainerState,
    Fleet,
    OomKill,
    PodSpans,
    PodState,
    PressureEviction,
    Recommender,
    Trace,
    Usage,
    Workload,
    WorkloadTrace,
)
from .pressure import Candidate, to_evict

STEPS_PER_BUCKET = BUCKET_SECONDS // STEP_SECONDS
FIT_TOLERANCE = 1e-6
"""Slack in fit checks: sums of float requests taken off and put back differ in the last bits."""
RESIZABLE = ("cpu", "memory")
"""What an in-place resize may change (the kubelet resizes cpu and memory only)."""


@dataclass(slots=True)
class _Running:
    """A workload's lifecycle state: its pod template generation and the pods of each replica."""

    generation: int = 0
    alive: bool = False
    pods: dict[int, str] | None = None


class World:
    """One recommender's simulated cluster (`model.Cluster`); `advance(step)` moves it one step."""

    def __init__(self, fleet: Fleet, usage: Usage, recommender: Recommender) -> None:
        self.fleet = fleet
        self.usage = usage
        self._spans = usage if isinstance(usage, PodSpans) else None
        self.recommender = recommender
        slots = list(usage.slots)
        self._slot_of = {(slot.workload, slot.replica, slot.container): i for i, slot in enumerate(slots)}
        self._workload_index = {workload.key: i for i, workload in enumerate(fleet.workloads)}
        self._slot_workload = np.array([self._workload_index[slot.workload] for slot in slots], dtype=np.int64)
        count = len(slots)
        self._age = np.zeros(count, dtype=np.int64)
        self._running = np.zeros(count, dtype=np.bool_)
        self._requests = np.zeros((count, len(RESOURCES)))
        self._limits = np.full((count, len(RESOURCES)), math.inf)
        self._observed = np.zeros((count, len(RESOURCES)))
        self._slot_pod: list[str | None] = [None] * count
        self._slot_node = np.full(count, -1, dtype=np.int64)
        self._pods: dict[str, PodState] = {}
        self._state = {workload.key: _Running(pods={}) for workload in fleet.workloads}
        self._node_names = [node.name for node in fleet.nodes]
        self._node_index = {name: index for index, name in enumerate(self._node_names)}
        self._allocatable = np.array([[node.allocatable.get(r, 0.0) for r in RESOURCES] for node in fleet.nodes])
        self._node_reserved = np.zeros_like(self._allocatable)
        self._names = 0
        self._now = 0
        self._step = 0
        self._ooms: list[OomKill] = []
        self._pressure_evictions: list[PressureEviction] = []
        self._changes: list[Change] = []
        self.overcommitted = 0
        buckets = math.ceil(fleet.duration_s / BUCKET_SECONDS)
        workloads = len(fleet.workloads)
        self._reserved_sum = np.zeros((buckets, workloads, len(RESOURCES)))
        self._usage_sum = np.zeros((buckets, workloads, len(RESOURCES)))
        self._replicas_sum = np.zeros((buckets, workloads))
        self._pod_counts = np.zeros(workloads)
        self._above = np.zeros((workloads, len(RESOURCES)), dtype=np.int64)
        self._measured = np.zeros((workloads, len(RESOURCES)), dtype=np.int64)
        self._throttled = np.zeros(workloads, dtype=np.int64)
        self._limited = np.zeros(workloads, dtype=np.int64)
        self._events = sorted(fleet.events, key=lambda event: event.at_s)
        self._redeploys: dict[str, int] = {}
        for event in reversed(fleet.events):  # the first redeploy of a workload wins
            if event.kind == "redeploy":
                self._redeploys[event.workload] = event.at_s
        self._lifecycles = [
            (workload, self._state[workload.key], self._redeploys.get(workload.key)) for workload in fleet.workloads
        ]
        """Each workload with its running state and redeploy time, walked at every step (keys built once)."""

    # ------------------------------------------------------------------------------------- Cluster view

    @property
    def now_s(self) -> int:
        return self._now

    @property
    def pods(self) -> Mapping[str, PodState]:
        return self._pods

    def observed(self) -> NDArray[np.float64]:
        return self._observed

    def running(self) -> NDArray[np.bool_]:
        return self._running

    def ooms_since(self, at_s: int) -> Sequence[OomKill]:
        start = len(self._ooms)
        while start > 0 and self._ooms[start - 1].at_s >= at_s:
            start -= 1
        return self._ooms[start:]

    def resize(self, pod: str, container: str, requests: Mapping[str, float], limits: Mapping[str, float]) -> bool:
        state = self._pods[pod]
        index = next(i for i, c in enumerate(state.containers) if c.name == container)
        current = state.containers[index]
        node = self._node_index[state.node]
        wanted = current.requests | {r: v for r, v in requests.items() if r in RESIZABLE}
        delta = np.array([wanted.get(r, 0.0) - current.requests.get(r, 0.0) for r in RESOURCES])
        free = self._allocatable[node] - self._node_reserved[node]
        if np.any((delta > 0) & (delta > free + FIT_TOLERANCE)):
            return False  # Infeasible: the node cannot fit the new requests
        wanted_limits = current.limits | {r: v for r, v in limits.items() if r in RESIZABLE}
        if wanted == current.requests and wanted_limits == current.limits:
            return True
        current.requests = wanted
        current.limits = wanted_limits
        self._node_reserved[node] += delta
        self._load_slot(state.slots[index], current)
        self._changes.append(Change(self._now, pod, state.workload, "resize", _requests_of(state), state.replica))
        return True

    def evict(self, pod: str) -> str:
        state = self._pods[pod]
        self._remove(state)
        replacement = self._create(self.fleet.workload(state.workload), state.replica, kind="eviction")
        return replacement.name

    # ---------------------------------------------------------------------------------------------- step

    def advance(self, step: int) -> None:
        """Move to `step`: lifecycle, usage and limits, record (see the module docstring)."""
        self._step, self._now = step, step * STEP_SECONDS
        self._lifecycle()
        running = self._running
        usage = self.usage.at(step, self._age)
        observed = np.where(running[:, None], usage, 0.0)
        killed = running & (observed[:, MEMORY] > self._limits[:, MEMORY])
        if killed.any():
            for slot in np.flatnonzero(killed):
                self._oom(int(slot))
            observed[killed, MEMORY] = self._limits[killed, MEMORY]
        limited = running & np.isfinite(self._limits[:, CPU])
        throttled = limited & (observed[:, CPU] > self._limits[:, CPU])
        observed[throttled, CPU] = self._limits[throttled, CPU]
        evicted = self._memory_pressure(observed)
        self._observed = observed
        self._record(observed, limited, throttled)
        self._age += running
        self._age[killed] = 0
        self._age[evicted] = 0

    def _memory_pressure(self, observed: NDArray[np.float64]) -> list[int]:
        """Evict pods from each node whose Σ memory working set exceeds its allocatable, in the kubelet's order,
        until the rest fit; each restarts in place. Returns the slots of the evicted pods' containers."""
        running = self._running
        nodes = len(self._node_names)
        working_set = np.bincount(self._slot_node[running], observed[running, MEMORY], nodes)
        over = np.flatnonzero(working_set > self._allocatable[:, MEMORY] + FIT_TOLERANCE)
        evicted: list[int] = []
        for node in over:
            name = self._node_names[node]
            candidates = [
                Candidate(
                    pod.name,
                    float(observed[pod.slots, MEMORY].sum()),
                    sum(c.requests.get("memory", 0.0) for c in pod.containers),
                    pod.priority,
                )
                for pod in self._pods.values()
                if pod.node == name
            ]
            for candidate in to_evict(candidates, float(self._allocatable[node, MEMORY]) + FIT_TOLERANCE):
                pod = self._pods[candidate.pod]
                for container in pod.containers:
                    container.started_s = self._now
                evicted.extend(pod.slots)
                self._pressure_evictions.append(
                    PressureEviction(self._now, pod.name, pod.workload, name, candidate.usage, candidate.request)
                )
        return evicted

    def _record(self, observed: NDArray[np.float64], limited: NDArray[np.bool_], throttled: NDArray[np.bool_]) -> None:
        bucket = self._step // STEPS_PER_BUCKET
        workloads = len(self.fleet.workloads)
        running = self._running
        owner = self._slot_workload[running]
        requests = self._requests[running]
        measured = observed[running]
        for column in range(len(RESOURCES)):
            self._reserved_sum[bucket, :, column] += np.bincount(owner, requests[:, column], workloads)
            self._usage_sum[bucket, :, column] += np.bincount(owner, measured[:, column], workloads)
            above = measured[:, column] > requests[:, column]
            self._above[:, column] += np.bincount(owner[above], minlength=workloads)
            self._measured[:, column] += np.bincount(owner, minlength=workloads)
        self._replicas_sum[bucket] += self._pod_counts
        self._limited += np.bincount(self._slot_workload[limited], minlength=workloads)
        self._throttled += np.bincount(self._slot_workload[throttled], minlength=workloads)

    def _oom(self, slot: int) -> None:
        pod = self._pods[self._slot_pod[slot] or ""]
        container = pod.containers[pod.slots.index(slot)]
        container.restarts += 1
        container.started_s = self._now
        self._ooms.append(
            OomKill(
                self._now,
                pod.name,
                pod.workload,
                container.name,
                container.requests.get("memory", 0.0),
                container.limits.get("memory", math.inf),
            )
        )

    # ----------------------------------------------------------------------------------------- lifecycle

    def _lifecycle(self) -> None:
        for workload, state, redeployed_at in self._lifecycles:
            alive = _alive(workload, self._now, redeployed_at)
            if alive and not state.alive:
                state.alive = True
                if self._spans is None:  # a recording creates each replica's pod when its recorded pod starts
                    for replica in range(workload.replicas):
                        self._create(workload, replica)
            elif state.alive and not alive:
                state.alive = False
                for name in list((state.pods or {}).values()):
                    self._remove(self._pods[name])
        if self._spans is not None:
            self._follow_recording(self._spans)
        while self._events and self._events[0].at_s <= self._now:
            event = self._events.pop(0)
            if event.kind == "rollout":
                self._rollout(self.fleet.workload(event.workload))

    def _follow_recording(self, spans: PodSpans) -> None:
        """Each replica's pod as the recording has it: created at its pod's first sample, removed after its last,
        replaced when another recorded pod takes over the slot (a slot's containers share their pod's span)."""
        alive, started = spans.alive(self._step), spans.started(self._step)
        for workload in self.fleet.workloads:
            state = self._state[workload.key]
            if not state.alive:
                continue
            first_container = workload.app.containers[0].name
            for replica in range(workload.replicas):
                slot = self._slot_of[(workload.key, replica, first_container)]
                name = (state.pods or {}).get(replica)
                if name is not None and (started[slot] or not alive[slot]):
                    self._remove(self._pods[name])
                    name = None
                if name is None and alive[slot]:
                    self._create(workload, replica)

    def _rollout(self, workload: Workload) -> None:
        state = self._state[workload.key]
        if not state.alive:
            return
        state.generation += 1
        for replica, name in sorted((state.pods or {}).items()):
            self._remove(self._pods[name])
            self._create(workload, replica)

    def _create(
        self, workload: Workload, replica: int, *, kind: Literal["admission", "eviction"] = "admission"
    ) -> PodState:
        state = self._state[workload.key]
        self._names += 1
        template = f"{state.generation:x}{self._workload_index[workload.key]:x}"
        containers = [
            ContainerState(spec.name, dict(spec.requests), dict(spec.limits), self._now)
            for spec in workload.app.containers
        ]
        pod = PodState(
            name=f"{workload.app.name}-{template}-{self._names:05x}",
            namespace=workload.namespace,
            workload=workload.key,
            replica=replica,
            labels={**workload.app.labels, "pod-template-hash": template},
            node="",
            created_s=self._now,
            containers=containers,
            slots=[self._slot_of[(workload.key, replica, c.name)] for c in containers],
        )
        self.recommender.admit(pod, self)
        pod.node = self._place(pod)
        self._pods[pod.name] = pod
        assert state.pods is not None
        state.pods[replica] = pod.name
        self._pod_counts[self._workload_index[workload.key]] += 1
        node = self._node_index[pod.node]
        for slot, container in zip(pod.slots, pod.containers, strict=True):
            self._slot_pod[slot] = pod.name
            self._slot_node[slot] = node
            self._running[slot] = True
            self._age[slot] = 0
            self._load_slot(slot, container)
        self._changes.append(Change(self._now, pod.name, pod.workload, kind, _requests_of(pod), replica))
        return pod

    def _remove(self, pod: PodState) -> None:
        del self._pods[pod.name]
        state = self._state[pod.workload]
        if state.pods is not None and state.pods.get(pod.replica) == pod.name:
            del state.pods[pod.replica]
        self._pod_counts[self._workload_index[pod.workload]] -= 1
        node = self._node_index[pod.node]
        self._node_reserved[node] -= _pod_requests(pod)
        for slot in pod.slots:
            self._slot_pod[slot] = None
            self._slot_node[slot] = -1
            self._running[slot] = False

    def _place(self, pod: PodState) -> str:
        """The node with the most free memory that fits the pod's requests (any node when none fits, counted)."""
        wanted = _pod_requests(pod)
        free = self._allocatable - self._node_reserved
        fits = np.all(free + FIT_TOLERANCE >= wanted, axis=1)
        candidates = np.flatnonzero(fits)
        if candidates.size == 0:
            self.overcommitted += 1
            candidates = np.arange(len(self._node_names))
        node = int(candidates[np.argmax(free[candidates, MEMORY])])
        self._node_reserved[node] += wanted
        return self._node_names[node]

    def _load_slot(self, slot: int, container: ContainerState) -> None:
        self._requests[slot] = [container.requests.get(r, 0.0) for r in RESOURCES]
        self._limits[slot] = [container.limits.get(r, math.inf) for r in RESOURCES]

    # -------------------------------------------------------------------------------------------- trace

    def trace(self) -> Trace:
        """What this run recorded, as 5-minute means."""
        workloads: dict[str, WorkloadTrace] = {}
        for index, workload in enumerate(self.fleet.workloads):
            workloads[workload.key] = WorkloadTrace(
                workload=workload.key,
                reserved=self._reserved_sum[:, index, :] / STEPS_PER_BUCKET,
                usage=self._usage_sum[:, index, :] / STEPS_PER_BUCKET,
                replicas=self._replicas_sum[:, index] / STEPS_PER_BUCKET,
                above_request=self._above[index].copy(),
                measured=self._measured[index].copy(),
                throttled=int(self._throttled[index]),
                limited=int(self._limited[index]),
            )
        allocatable = {r: float(self._allocatable[:, i].sum()) for i, r in enumerate(RESOURCES)}
        return Trace(
            recommender=self.recommender.name,
            duration_s=self.fleet.duration_s,
            allocatable=allocatable,
            workloads=workloads,
            ooms=list(self._ooms),
            changes=list(self._changes),
            pressure_evictions=list(self._pressure_evictions),
            overcommitted=self.overcommitted,
        )


def _alive(workload: Workload, now: int, redeployed_at: int | None) -> bool:
    if now < workload.created_s:
        return False
    if workload.deleted_s is None or now < workload.deleted_s:
        return True
    return redeployed_at is not None and now >= redeployed_at


def _pod_requests(pod: PodState) -> NDArray[np.float64]:
    return np.array([sum(c.requests.get(r, 0.0) for c in pod.containers) for r in RESOURCES])


def _requests_of(pod: PodState) -> dict[str, dict[str, float]]:
    return {c.name: dict(c.requests) for c in pod.containers}
