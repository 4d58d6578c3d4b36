"""The VPA baseline of the fleet simulator: Kubernetes' Vertical Pod Autoscaler 1.6.0 with its default flags, one
VPA object per workload, so the figures compare Ballast with what a cluster owner would otherwise run.

It follows VPA 1.6.0: cpu samples weigh a constant 0.1 (since 1.4.0, no longer the cpu request), and
`InPlaceOrRecreate` is GA (an option here; `Recreate`, VPA's default, otherwise). The rules, in VPA's words:

* Recommender (every minute, `--memory-saver=false`: every pod tracked). Usage lands in an aggregate per
  (namespace, full pod label set, container name): a cpu histogram fed one sample a minute (weight 0.1), a memory
  histogram fed one peak per container and 24 h interval (weight 1.0, dated at the interval's end; a higher sample
  in the same interval replaces the peak), the first and last cpu sample times and the cpu sample count. An OOM kill
  feeds `max(used + 100 MiB, used × 1.2)` as a memory peak, `used` being the larger of the memory request at the
  kill and the interval's usage peak. Both histograms halve their old weights every 24 h (`vpa_histogram`).
* A VPA (named after the workload's app, in its namespace, targeting its Deployment) merges every aggregate of its
  namespace whose labels include the app's labels, per container name: so a rollout (new pod-template-hash, new
  keys) keeps the history, a new namespace starts from nothing.
* Estimation per container: target p90, lowerBound p50, upperBound p95 of the merged histograms, each + 15 %; the
  bounds scaled by the confidence `c = min(days between first and last cpu sample, cpu samples / 1440)`: upper
  × (1 + 1/c), lower × (1 + 0.001/c)^-2; then at least 25 m cpu and 250 MiB divided by the number of containers in
  the recommendation; truncated to whole millicores and bytes. cpu and memory only (VPA has no ephemeral-storage).
* Admission: a new pod's requests become the target; `RequestsAndLimits` keeps each manifest limit/request ratio
  (no limit stays no limit; a limit equal to the request, or without one, becomes the new request).
* Updater (every minute): a pod is a candidate when a request lies outside [lowerBound, upperBound], or it has run
  12 h and `Σ_resources |Σ requests − Σ targets| / Σ requests ≥ 0.1`, or a container was OOM-killed less than
  10 min after it started and the recommendation differs from its requests. Candidates go in order of that
  difference; a workload with fewer than 2 running pods is never touched, and one updater pass evicts at most
  `max(1, floor(0.5 × replicas))` of a workload's pods (eviction tolerance 0.5). `InPlaceOrRecreate` resizes in
  place first and evicts when the node cannot fit the resize (Infeasible).
* A redeploy the fleet marks `vpa_cold` (new labels, or a recommender restart without a checkpoint under the VPA's
  name) starts that VPA without history; otherwise its aggregates carry over, as VPA's in-memory state would.

Everything per container and per key lives in numpy arrays (rows: aggregates or VPA containers, columns: the 176
buckets), so a loop over the default fleet costs about a millisecond; `vpa_histogram.DecayingHistogram` states the
same rules on one histogram.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from .model import CPU, MEMORY, Cluster, ContainerSpec, Fleet, FleetEvent, OomKill, PodState
from .vpa_histogram import (
    CPU_SCHEME,
    EPSILON,
    HALF_LIFE_S,
    MAX_DECAY_EXPONENT,
    MEMORY_SCHEME,
    BucketScheme,
    DecayingHistogram,
    bucket_of,
    percentiles,
)

UpdateMode = Literal["Recreate", "InPlaceOrRecreate"]
LOOP_S = 60
"""`--recommender-interval` and `--updater-interval`."""
MEMORY_INTERVAL_S = 86_400
"""`--memory-aggregation-interval`: one memory peak per container and interval."""
CPU_SAMPLE_WEIGHT = 0.1
MEMORY_PEAK_WEIGHT = 1.0
OOM_BUMP_RATIO = 1.2
OOM_MIN_BUMP_BYTES = 104_857_600.0
TARGET, LOWER, UPPER = 0.9, 0.5, 0.95
MARGIN = 0.15
CONFIDENCE_DAY_S = 86_400
SAMPLES_PER_DAY = 1440
POD_MIN_CPU_MILLICORES = 25
POD_MIN_MEMORY_BYTES = 262_144_000
ROUND_CPU_MILLICORES = 1
ROUND_MEMORY_BYTES = 1
EVICTION_LIFETIME_S = 12 * 3600
EVICTION_DIFF = 0.1
QUICK_OOM_S = 600
MIN_REPLICAS = 2
EVICTION_TOLERANCE = 0.5
RESOURCES = ("cpu", "memory")
COLUMNS = (CPU, MEMORY)
"""Where cpu and memory sit in `Cluster.observed()`."""

Key = tuple[str, frozenset[tuple[str, str]], str]
"""An aggregation key: namespace, the pod's whole label set, container name."""


@dataclass(frozen=True, slots=True)
class Recommendation:
    """One container's recommendation: cores and bytes per resource (`upper` is infinite without history)."""

    target: Mapping[str, float]
    lower: Mapping[str, float]
    upper: Mapping[str, float]


@dataclass(frozen=True, slots=True)
class _Group:
    """A VPA's container: its workload, container name, and the workload's index in the fleet."""

    workload: str
    namespace: str
    selector: frozenset[tuple[str, str]]
    container: str


class _Aggregates:
    """Every aggregate's histograms and cpu sample statistics, one row per key; rows are never reused."""

    def __init__(self) -> None:
        self.rows: dict[Key, int] = {}
        self.keys: list[Key] = []
        self.cpu = np.zeros((0, CPU_SCHEME.size))
        self.memory = np.zeros((0, MEMORY_SCHEME.size))
        self.first_s = np.zeros(0)
        self.last_s = np.zeros(0)
        self.count = np.zeros(0)
        self.alive = np.zeros(0, dtype=np.bool_)

    def row(self, key: Key) -> int:
        if key in self.rows:
            return self.rows[key]
        row = len(self.keys)
        self.rows[key] = row
        self.keys.append(key)
        if row >= self.cpu.shape[0]:
            self._grow(max(16, 2 * row))
        self.alive[row] = True
        return row

    def forget(self, rows: list[int]) -> None:
        for row in rows:
            self.alive[row] = False
            self.rows.pop(self.keys[row], None)

    def scale(self, factor: float) -> None:
        for histograms in (self.cpu, self.memory):
            np.multiply(histograms, factor, out=histograms)
            histograms[histograms < EPSILON] = 0.0

    def _grow(self, size: int) -> None:
        extra = size - self.cpu.shape[0]
        self.cpu = np.vstack([self.cpu, np.zeros((extra, CPU_SCHEME.size))])
        self.memory = np.vstack([self.memory, np.zeros((extra, MEMORY_SCHEME.size))])
        self.first_s = np.concatenate([self.first_s, np.full(extra, np.inf)])
        self.last_s = np.concatenate([self.last_s, np.full(extra, -np.inf)])
        self.count = np.concatenate([self.count, np.zeros(extra)])
        self.alive = np.concatenate([self.alive, np.zeros(extra, dtype=np.bool_)])


@dataclass(slots=True)
class _Estimates:
    """The last loop's recommendation of every VPA container (rows: groups, columns: cpu, memory)."""

    target: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    known: NDArray[np.bool_]


class VpaRecommender:
    """`model.Recommender` "vpa": VPA 1.6.0's recommender, admission controller and updater (module docstring)."""

    name = "vpa"

    def __init__(self, fleet: Fleet, *, update_mode: UpdateMode = "Recreate") -> None:
        self.fleet = fleet
        self.update_mode = update_mode
        self._groups = [
            _Group(w.key, w.namespace, frozenset(w.app.labels.items()), spec.name)
            for w in fleet.workloads
            for spec in w.app.containers
        ]
        self._group_of = {(g.workload, g.container): i for i, g in enumerate(self._groups)}
        self._specs = {w.key: {spec.name: spec for spec in w.app.containers} for w in fleet.workloads}
        self._replicas = {w.key: w.replicas for w in fleet.workloads}
        self._cold_events = sorted((e for e in fleet.events if e.kind == "redeploy" and e.vpa_cold), key=_at)
        self._aggregates = _Aggregates()
        self._members: tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]] | None = None
        workload_index = {w.key: i for i, w in enumerate(fleet.workloads)}
        self._workload_of_group = np.array([workload_index[g.workload] for g in self._groups], dtype=np.int64)
        self._reference_s = 0
        self._next_loop_s = 0
        self._last_loop_s = -1
        self._pods: dict[str, PodState] = {}
        self._slots = _Slots()
        size = len(self._groups)
        self._estimates = _Estimates(
            np.zeros((size, 2)), np.zeros((size, 2)), np.zeros((size, 2)), np.zeros(size, dtype=np.bool_)
        )

    # ------------------------------------------------------------------------------------------ Recommender

    def admit(self, pod: PodState, cluster: Cluster) -> None:
        self._cold_starts(cluster.now_s)
        for container in pod.containers:
            group = self._group_of.get((pod.workload, container.name))
            if group is None or not self._estimates.known[group]:
                continue
            spec = self._specs[pod.workload][container.name]
            target = dict(zip(RESOURCES, self._estimates.target[group].tolist(), strict=True))
            container.requests.update(target)
            container.limits = limits_for(spec, target, container.limits)

    def tick(self, cluster: Cluster) -> None:
        now = cluster.now_s
        if now < self._next_loop_s:
            return
        self._next_loop_s = now + LOOP_S
        self._cold_starts(now)
        self._renormalise(now)
        self._sync_pods(cluster)
        self._record_ooms(cluster.ooms_since(self._last_loop_s + 1))
        self._sample(cluster)
        self._last_loop_s = now
        self._estimate()
        self._update(cluster)
        self._sync_pods(cluster)

    def close(self) -> None:
        return None

    # ------------------------------------------------------------------------------------------ inspection

    def recommendation(self, workload: str) -> dict[str, Recommendation]:
        """The workload's VPA status: container → recommendation (containers without history left out)."""
        result: dict[str, Recommendation] = {}
        for index, group in enumerate(self._groups):
            if group.workload == workload and self._estimates.known[index]:
                values = [dict(zip(RESOURCES, array[index].tolist(), strict=True)) for array in self._arrays()]
                result[group.container] = Recommendation(*values)
        return result

    def histograms(self, workload: str, container: str) -> tuple[DecayingHistogram, DecayingHistogram]:
        """The merged cpu and memory histograms of a VPA container, as one `DecayingHistogram` each."""
        group = self._group_of[(workload, container)]
        rows = self._member_rows(group)
        cpu, memory = self._aggregates.cpu[rows].sum(axis=0), self._aggregates.memory[rows].sum(axis=0)
        return (
            DecayingHistogram(CPU_SCHEME, cpu, float(cpu.sum()), self._reference_s),
            DecayingHistogram(MEMORY_SCHEME, memory, float(memory.sum()), self._reference_s),
        )

    def _arrays(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        return self._estimates.target, self._estimates.lower, self._estimates.upper

    # ------------------------------------------------------------------------------------------ recommender

    def _cold_starts(self, now: int) -> None:
        """A due `vpa_cold` redeploy: its VPA forgets every aggregate it matched, live containers start afresh."""
        while self._cold_events and self._cold_events[0].at_s <= now:
            event = self._cold_events.pop(0)
            rows = [r for g in self._groups_of(event.workload) for r in self._member_rows(g)]
            self._aggregates.forget(rows)
            self._slots.reset_rows(set(rows), self._aggregates)
            self._members = None
            self._estimates.known[self._groups_of(event.workload)] = False

    def _renormalise(self, now: int) -> None:
        """Move the shared reference time forward before a weight's exponent would pass 100 half-lives."""
        if (now - self._reference_s) / HALF_LIFE_S <= MAX_DECAY_EXPONENT:
            return
        reference = round(now / HALF_LIFE_S) * HALF_LIFE_S
        self._aggregates.scale(2.0 ** ((self._reference_s - reference) / HALF_LIFE_S))
        self._reference_s = reference

    def _sync_pods(self, cluster: Cluster) -> None:
        """Start tracking new pods' containers (their aggregate rows, fresh memory windows), drop gone pods."""
        current = cluster.pods
        for name in [name for name in self._pods if name not in current]:
            self._slots.release(self._pods.pop(name))
        for name, pod in [(name, pod) for name, pod in current.items() if name not in self._pods]:
            self._pods[name] = pod
            for container, slot in zip(pod.containers, pod.slots, strict=True):
                key: Key = (pod.namespace, frozenset(pod.labels.items()), container.name)
                new_row = key not in self._aggregates.rows
                row = self._aggregates.row(key)
                if new_row:
                    self._members = None
                group = self._group_of.get((pod.workload, container.name), -1)
                self._slots.attach(slot, pod, container.name, row, group, key)
                self._slots.requests[slot] = [container.requests.get(r, 0.0) for r in RESOURCES]

    def _record_ooms(self, ooms: Sequence[OomKill]) -> None:
        for oom in ooms:
            self._record_oom(oom)

    def _record_oom(self, oom: OomKill) -> None:
        """OOM bump-up: the kill becomes a memory peak of max(used + 100 MiB, used × 1.2)."""
        pod = self._pods.get(oom.pod)
        if pod is None:
            return
        slot = pod.slots[[c.name for c in pod.containers].index(oom.container)]
        slots = self._slots
        if slots.last_memory_s[slot] - MEMORY_INTERVAL_S > oom.at_s:
            return
        started = slots.last_oom_s[slot] if slots.last_oom_s[slot] >= 0 else pod.created_s
        slots.quick_oom[slot] = oom.at_s - started < QUICK_OOM_S
        slots.last_oom_s[slot] = oom.at_s
        used = max(oom.request, float(slots.peak[slot]) if slots.window_end[slot] > oom.at_s else 0.0)
        needed = max(used + OOM_MIN_BUMP_BYTES, used * OOM_BUMP_RATIO)
        self._add_memory_peaks(np.array([slot]), np.array([needed]), float(oom.at_s), oom=True)

    def _sample(self, cluster: Cluster) -> None:
        """One cpu sample and one memory sample of every tracked running container."""
        running = cluster.running()
        self._slots.reserve(running.size)
        slots = np.flatnonzero(running & (self._slots.row[: running.size] >= 0))
        if slots.size == 0:
            return
        observed = cluster.observed()
        now = float(cluster.now_s)
        rows = self._slots.row[slots]
        weight = CPU_SAMPLE_WEIGHT * self._decay(now)
        aggregates = self._aggregates
        np.add.at(aggregates.cpu, (rows, bucket_of(CPU_SCHEME, observed[slots, CPU])), weight)
        np.minimum.at(aggregates.first_s, rows, now)
        np.maximum.at(aggregates.last_s, rows, now)
        np.add.at(aggregates.count, rows, 1.0)
        self._add_memory_peaks(slots, observed[slots, MEMORY], now, oom=False)

    def _add_memory_peaks(
        self, slots: NDArray[np.int64], values: NDArray[np.float64], at_s: float, *, oom: bool
    ) -> None:
        """Memory peak logic per container: a sample past its interval opens the next one (peaks reset) and is its
        first peak; a sample above the interval's max(peak, oom peak) replaces that max. Peaks are dated at the
        interval's end."""
        state = self._slots
        if not oom:
            state.last_memory_s[slots] = at_s
        end = state.window_end[slots]
        opening = ~(at_s < end)  # also a container's first sample (no interval yet: NaN)
        first = np.isnan(end)
        end = np.where(first, at_s, end)
        shift = (np.floor((at_s - end) / MEMORY_INTERVAL_S) + 1) * MEMORY_INTERVAL_S
        end = np.where(opening, end + shift, end)
        state.window_end[slots] = end
        state.peak[slots] = np.where(opening, 0.0, state.peak[slots])
        state.oom_peak[slots] = np.where(opening, 0.0, state.oom_peak[slots])
        previous = np.maximum(state.peak[slots], state.oom_peak[slots])
        replacing = values > previous
        rows = state.row[slots]
        decay = MEMORY_PEAK_WEIGHT * self._decay_array(end)
        memory = self._aggregates.memory
        dropping = replacing & (previous > 0.0)
        if dropping.any():
            old = (rows[dropping], bucket_of(MEMORY_SCHEME, previous[dropping]))
            np.subtract.at(memory, old, decay[dropping])
            memory[old] = np.where(memory[old] < EPSILON, 0.0, memory[old])
        np.add.at(memory, (rows[replacing], bucket_of(MEMORY_SCHEME, values[replacing])), decay[replacing])
        target = state.oom_peak if oom else state.peak
        target[slots[replacing]] = values[replacing]

    def _decay(self, at_s: float) -> float:
        return float(2.0 ** ((at_s - self._reference_s) / HALF_LIFE_S))

    def _decay_array(self, at_s: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.asarray(2.0 ** ((at_s - self._reference_s) / HALF_LIFE_S), dtype=np.float64)

    # ------------------------------------------------------------------------------------------ estimation

    def _membership(self) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        """(group, row) pairs: every live aggregate of a VPA's namespace whose labels include the app's labels,
        merged under the VPA's container of the same name, sorted by group, with where each group starts.
        Recomputed only when keys come or go."""
        if self._members is None:
            pairs = sorted(
                (index, row)
                for row, key in enumerate(self._aggregates.keys)
                if self._aggregates.alive[row]
                for index in self._groups_matching(key)
            )
            groups = np.array([g for g, _ in pairs], dtype=np.int64)
            rows = np.array([r for _, r in pairs], dtype=np.int64)
            starts = np.flatnonzero(np.diff(groups, prepend=-1)) if groups.size else np.zeros(0, dtype=np.int64)
            self._members = (groups, rows, starts)
        return self._members

    def _groups_matching(self, key: Key) -> list[int]:
        namespace, labels, container = key
        return [
            index
            for index, group in enumerate(self._groups)
            if group.namespace == namespace and group.container == container and group.selector <= labels
        ]

    def _member_rows(self, group: int) -> list[int]:
        groups, rows, _ = self._membership()
        return [int(row) for row in rows[groups == group]]

    def _groups_of(self, workload: str) -> list[int]:
        return [i for i, g in enumerate(self._groups) if g.workload == workload]

    def _estimate(self) -> None:
        """Every VPA container's recommendation from its merged histograms (module docstring, "Estimation")."""
        cpu, memory, first, last, count = self._merged()
        known = count > 0
        with np.errstate(invalid="ignore"):
            confidence = np.where(known, np.minimum((last - first) / CONFIDENCE_DAY_S, count / SAMPLES_PER_DAY), 0.0)
        containers = np.bincount(self._workload_of_group, weights=known.astype(np.float64))[self._workload_of_group]
        shares = np.maximum(containers, 1.0)
        cpu_floor, memory_floor = POD_MIN_CPU_MILLICORES / shares, POD_MIN_MEMORY_BYTES / shares
        cpu_values = _bounded(CPU_SCHEME, cpu, confidence)
        memory_values = _bounded(MEMORY_SCHEME, memory, confidence)
        for array, cpu_value, memory_value in zip(self._arrays(), cpu_values, memory_values, strict=True):
            array[:, 0] = _to_quantity(cpu_value, cpu_floor, 1000.0, ROUND_CPU_MILLICORES)
            array[:, 1] = _to_quantity(memory_value, memory_floor, 1.0, ROUND_MEMORY_BYTES)
        self._estimates.known = known

    def _merged(self) -> tuple[NDArray[np.float64], ...]:
        """Per VPA container: the bucket-wise sums of its aggregates' histograms (one reference time for all, so
        no alignment is needed), the earliest first and latest last cpu sample, the summed sample count."""
        groups, rows, starts = self._membership()
        size, aggregates = len(self._groups), self._aggregates
        cpu, memory = np.zeros((size, CPU_SCHEME.size)), np.zeros((size, MEMORY_SCHEME.size))
        first, last, count = np.full(size, np.inf), np.full(size, -np.inf), np.zeros(size)
        if rows.size:
            present = groups[starts]
            cpu[present] = np.add.reduceat(aggregates.cpu[rows], starts)
            memory[present] = np.add.reduceat(aggregates.memory[rows], starts)
            first[present] = np.minimum.reduceat(aggregates.first_s[rows], starts)
            last[present] = np.maximum.reduceat(aggregates.last_s[rows], starts)
            count[present] = np.add.reduceat(aggregates.count[rows], starts)
        return cpu, memory, first, last, count

    # ------------------------------------------------------------------------------------------ updater

    def _update(self, cluster: Cluster) -> None:
        """Evict (or resize in place) the candidates, most different first, within the guard rails."""
        evicted: dict[str, int] = {}
        running: dict[str, int] = {}
        for pod in self._pods.values():
            running[pod.workload] = running.get(pod.workload, 0) + 1
        for _, name in self._candidates(cluster.now_s):
            pod = self._pods[name]
            done = evicted.get(pod.workload, 0)
            if running[pod.workload] < MIN_REPLICAS or not _may_evict(
                self._replicas[pod.workload], running[pod.workload], done
            ):
                continue
            evicted[pod.workload] = done + 1
            if self.update_mode == "InPlaceOrRecreate" and self._resize(pod, cluster):
                continue
            cluster.evict(name)

    def _candidates(self, now: int) -> list[tuple[float, str]]:
        """(relative difference, pod) of every pod the updater would act on, largest difference first."""
        state = self._slots
        slots = np.flatnonzero((state.row >= 0) & (state.group >= 0))
        slots = slots[self._estimates.known[state.group[slots]]]
        if slots.size == 0:
            return []
        groups = state.group[slots]
        requests = state.requests[slots]
        target, lower, upper = (array[groups] for array in self._arrays())
        pods, pod_of_slot = np.unique(state.pod_id[slots], return_inverse=True)
        outside = np.bincount(pod_of_slot, ((requests < lower) | (requests > upper)).any(axis=1), pods.size) > 0
        differs = np.bincount(pod_of_slot, (requests != target).any(axis=1), pods.size) > 0
        quick = np.bincount(pod_of_slot, state.quick_oom[slots], pods.size) > 0
        difference = np.zeros(pods.size)
        for column in range(2):
            requested = np.bincount(pod_of_slot, requests[:, column], pods.size)
            wanted = np.bincount(pod_of_slot, target[:, column], pods.size)
            with np.errstate(divide="ignore", invalid="ignore"):
                difference += np.where(requested > 0, np.abs(requested - wanted) / requested, 0.0)
        created = np.bincount(pod_of_slot, state.created_s[slots], pods.size) / np.bincount(pod_of_slot)
        old = now - created >= EVICTION_LIFETIME_S
        chosen = outside | (old & (difference >= EVICTION_DIFF)) | (quick & differs)
        names = [state.pod_names[int(p)] for p in pods[chosen]]
        return sorted(zip(difference[chosen].tolist(), names, strict=True), key=lambda pair: -pair[0])

    def _resize(self, pod: PodState, cluster: Cluster) -> bool:
        """Resize every container of `pod` in place to its target; False when the node cannot fit one."""
        for container, slot in zip(pod.containers, pod.slots, strict=True):
            group = self._group_of.get((pod.workload, container.name))
            if group is None or not self._estimates.known[group]:
                continue
            target = dict(zip(RESOURCES, self._estimates.target[group].tolist(), strict=True))
            limits = limits_for(self._specs[pod.workload][container.name], target, {})
            if not cluster.resize(pod.name, container.name, target, limits):
                return False
            self._slots.requests[slot] = [target[r] for r in RESOURCES]
        return True


def _may_evict(replicas: int, running: int, evicted: int) -> bool:
    """Eviction tolerance 0.5: at least `replicas − floor(0.5 × replicas)` pods must stay running; when that
    tolerance rounds to 0, one pod may still go if all are running and none went this pass."""
    tolerance = math.floor(EVICTION_TOLERANCE * replicas)
    if tolerance == 0:
        return running >= replicas and evicted == 0
    return running - evicted > replicas - tolerance


def _at(event: FleetEvent) -> int:
    return event.at_s


def _bounded(
    scheme: BucketScheme, weights: NDArray[np.float64], confidence: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(target, lower, upper) before the pod minimum: percentiles, + 15 %, bounds scaled by the confidence."""
    target, lower, upper = (value * (1 + MARGIN) for value in percentiles(scheme, weights, (TARGET, LOWER, UPPER)))
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = upper * (1 + 1 / confidence)
        lower = lower * (1 + 0.001 / confidence) ** -2
    upper = np.where(confidence > 0, upper, np.inf)
    lower = np.where(confidence > 0, lower, 0.0)
    return target, lower, upper


def _to_quantity(
    values: NDArray[np.float64], floor: NDArray[np.float64], per_unit: float, multiple: int
) -> NDArray[np.float64]:
    """Truncate to whole millicores (`per_unit` 1000) or bytes, at least the pod minimum's share, rounded up to
    `multiple`; back in cores or bytes. An infinite upper bound stays infinite."""
    finite = np.isfinite(values)
    whole = np.floor(np.where(finite, values * per_unit, 0.0))
    whole = np.maximum(whole, np.floor(floor))
    whole = np.ceil(whole / multiple) * multiple
    return np.where(finite, whole / per_unit, np.inf)


def limits_for(spec: ContainerSpec, requests: Mapping[str, float], current: Mapping[str, float]) -> dict[str, float]:
    """`controlledValues: RequestsAndLimits`: the container's limits for new `requests`, keeping the manifest's
    limit/request ratio (cpu in whole millicores, memory in whole bytes); resources not recommended keep
    `current`."""
    limits = dict(current)
    for resource, request in requests.items():
        original_limit = spec.limits.get(resource)
        original_request = spec.requests.get(resource)
        if original_limit is None:
            limits.pop(resource, None)
        elif original_request is None or original_request == original_limit:
            limits[resource] = request
        else:
            limits[resource] = _scaled(original_limit, request, original_request, resource)
    return limits


def _scaled(limit: float, request: float, original: float, resource: str) -> float:
    unit = 1000 if resource == "cpu" else 1
    whole = (round(limit * unit) * round(request * unit)) // round(original * unit)
    return whole / unit


class _Slots:
    """Per usage slot (one live container): its pod, aggregate row, VPA container, requests and memory window."""

    def __init__(self) -> None:
        self.size = 0
        self._allocate(64)

    def _allocate(self, size: int) -> None:
        old = self.size
        grown = {
            "row": np.full(size, -1, dtype=np.int64),
            "group": np.full(size, -1, dtype=np.int64),
            "pod_id": np.full(size, -1, dtype=np.int64),
            "created_s": np.zeros(size),
            "requests": np.zeros((size, 2)),
            "window_end": np.full(size, np.nan),
            "peak": np.zeros(size),
            "oom_peak": np.zeros(size),
            "last_memory_s": np.full(size, -np.inf),
            "last_oom_s": np.full(size, -1.0),
            "quick_oom": np.zeros(size, dtype=np.bool_),
        }
        for name, array in grown.items():
            if old:
                array[:old] = getattr(self, name)
            setattr(self, name, array)
        if not old:
            self.pod_names: list[str] = []
            self.keys: dict[int, Key] = {}
        self.size = size

    row: NDArray[np.int64]
    group: NDArray[np.int64]
    pod_id: NDArray[np.int64]
    created_s: NDArray[np.float64]
    requests: NDArray[np.float64]
    window_end: NDArray[np.float64]
    peak: NDArray[np.float64]
    oom_peak: NDArray[np.float64]
    last_memory_s: NDArray[np.float64]
    last_oom_s: NDArray[np.float64]
    quick_oom: NDArray[np.bool_]

    def reserve(self, size: int) -> None:
        if size > self.size:
            self._allocate(max(2 * self.size, size))

    def attach(self, slot: int, pod: PodState, container: str, row: int, group: int, key: Key) -> None:
        """A new container on `slot`: its state starts empty (a new pod is a new container to VPA)."""
        self.reserve(slot + 1)
        if not self.pod_names or self.pod_names[-1] != pod.name:
            self.pod_names.append(pod.name)
        self.row[slot], self.group[slot], self.pod_id[slot] = row, group, len(self.pod_names) - 1
        self.created_s[slot] = pod.created_s
        self.keys[slot] = key
        self._clear(slot)

    def release(self, pod: PodState) -> None:
        for slot in pod.slots:
            if slot < self.size and self.pod_id[slot] >= 0 and self.pod_names[self.pod_id[slot]] == pod.name:
                self.row[slot] = self.group[slot] = self.pod_id[slot] = -1
                self.keys.pop(slot, None)

    def reset_rows(self, rows: set[int], aggregates: _Aggregates) -> None:
        """Containers whose aggregate was forgotten start a fresh one under the same key, with empty windows."""
        for slot in np.flatnonzero(np.isin(self.row, list(rows))).tolist():
            self.row[slot] = aggregates.row(self.keys[slot])
            self._clear(slot)

    def _clear(self, slot: int) -> None:
        self.window_end[slot] = np.nan
        self.peak[slot] = self.oom_peak[slot] = 0.0
        self.last_memory_s[slot] = -np.inf
        self.last_oom_s[slot] = -1.0
        self.quick_oom[slot] = False
