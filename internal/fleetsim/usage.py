"""The synthetic fleet's true usage: what every container uses, every 15 s, whatever its recommender reserves.

The model carries manifests, not usage, so a container's typical usage is derived from what its manifest asks
for and its shape (`SHAPES`): owners over-provision, and by how much is the point of the simulation. The
parameters follow published trace statistics rather than being fitted to any run:

- typical cpu a quarter to a half of the request, memory about half (requests 2–4× the typical cpu, ~2× the
  memory): the 46 % slack of manually sized jobs in Autopilot (Rzadca et al., EuroSys 2020);
- serving cpu follows the day, peak/trough 2.5 with the peak in the afternoon (14:00–17:00), as online services do
  in the Google (Reiss et al., SoCC 2012) and Alibaba 2018 (Guo et al., IWQoS 2019) traces;
- cpu bursts short (one step) and heavy-tailed: Pareto, α = 1.5, at least 3× the typical usage, capped at 25×;
- memory mostly flat (±1 % step to step) with slow growth (a few % a day) where the shape grows;
- replicas of one workload similar but not identical: cpu ±15 % and memory ±10 % per replica, ±5 % per
  namespace, and per app ±25 % (cpu) and ±15 % (memory) around the shape's share (how over-provisioned each
  team's manifest is).

Determinism is the contract (`model.Usage`): three runs ask for the same steps with different container ages and
must see the same usage. Per-slot parameters are drawn once, keyed by names (an added workload changes no other
workload's usage); per-step noise comes from a generator keyed by `(seed, hour of the step)`, never one advanced
by earlier calls. `at` is called once per step per run (~17,000 times for ~600 slots), so it is plain vectorised
numpy over precomputed per-slot arrays.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .model import CPU, DAY_SECONDS, EPHEMERAL, MEMORY, RESOURCES, STEP_SECONDS, ContainerSpec, Fleet, Slot, Workload

MI = 2**20

SHAPES: Mapping[str, str] = {
    "diurnal": "cpu follows the day (peak/trough 2.5, peak in the afternoon), memory flat",
    "steady-growth": "cpu nearly flat, memory flat with slow growth (~4 % a day)",
    "spiky": "low cpu with rare heavy-tailed bursts (Pareto, 3–25× for one step)",
    "idle": "near-idle: a few millicores, a small flat memory",
    "leak": "memory grows with container age until the limit kills it (OOMs under any fixed limit)",
    "jvm": "a high flat memory floor (the heap), moderate cpu",
    "startup": "a cpu and memory spike in the first 5 minutes after every start, then quiet",
}
"""The usage shapes a synthetic fleet's containers may have (`App.shapes`), with what each does."""

STARTUP_STEPS = 300 // STEP_SECONDS
"""How long a startup spike lasts: the first 5 minutes of a container's age."""
BURST_ALPHA = 1.5
BURST_MIN = 3.0
BURST_CAP = 25.0
BURST_CAP_QUANTILE = (BURST_MIN / BURST_CAP) ** BURST_ALPHA
"""Below this rescaled draw the Pareto factor would pass the cap: the draw is held here instead."""
EPHEMERAL_BASE = 32 * MI
EPHEMERAL_GROWTH_PER_HOUR = 8 * MI
STEPS_PER_HOUR = 3600 // STEP_SECONDS
NOISE_BLOCK_STEPS = STEPS_PER_HOUR
DEFAULT_REQUESTS: Mapping[str, float] = {"cpu": 0.1, "memory": 256 * MI}
"""What a container without a request is taken to have asked for (its usage is a share of it)."""
SPREAD_APP = np.array([0.25, 0.15])
SPREAD_NAMESPACE = np.array([0.05, 0.05])
SPREAD_REPLICA = np.array([0.15, 0.10])
"""How far (±, cpu then memory) an app, a namespace's deployment and a replica stray from the shape's share.
Memory strays less: a memory limit is a hard wall, and only the leak is meant to hit it."""


@dataclass(frozen=True, slots=True)
class _Profile:
    """One shape's parameters. Shares are of the container's request; `diurnal_ratio` is cpu's peak/trough."""

    cpu_share: float
    memory_share: float
    diurnal_ratio: float = 1.2
    cpu_sigma: float = 0.15
    memory_sigma: float = 0.01
    growth_per_day: float = 0.0
    burst_probability: float = 0.0
    leak_hours: float = 0.0
    startup_cpu: float = 0.0
    startup_memory: float = 0.0
    ephemeral_scale: float = 1.0


_PROFILES: Mapping[str, _Profile] = {
    "diurnal": _Profile(cpu_share=0.33, memory_share=0.45, diurnal_ratio=2.5),
    "steady-growth": _Profile(cpu_share=0.35, memory_share=0.42, diurnal_ratio=1.3, growth_per_day=0.04),
    # Bursts in 2 % of steps: rare, yet enough to sit above the 99th percentile of the steps.
    "spiky": _Profile(cpu_share=0.2, memory_share=0.45, cpu_sigma=0.25, burst_probability=0.02),
    "idle": _Profile(cpu_share=0.05, memory_share=0.3, diurnal_ratio=1.0, cpu_sigma=0.1, ephemeral_scale=0.25),
    "leak": _Profile(cpu_share=0.3, memory_share=0.35, leak_hours=20.0),
    "jvm": _Profile(cpu_share=0.3, memory_share=0.6, diurnal_ratio=1.5, memory_sigma=0.005),
    "startup": _Profile(cpu_share=0.25, memory_share=0.45, startup_cpu=5.0, startup_memory=0.6),
}


@dataclass(frozen=True, slots=True)
class _Parameters:
    """Per-slot arrays, one entry per slot: everything `at` needs besides the step's noise, folded ahead of time
    into as few array operations per step as possible."""

    cpu_typical: NDArray[np.float64]
    cpu_cos: NDArray[np.float64]
    """`cpu_typical × a × cos(peak)`: with `cpu_sin`, the day's cycle `1 + a cos(t − peak)` without a per-slot cos."""
    cpu_sin: NDArray[np.float64]
    jitter_span: NDArray[np.float64]
    jitter_offset: NDArray[np.float64]
    burst_probability: NDArray[np.float64]
    memory_low: NDArray[np.float64]
    memory_span: NDArray[np.float64]
    growth_per_step: NDArray[np.float64]
    leak_per_age_step: NDArray[np.float64]
    startup_cpu_factor: NDArray[np.float64]
    startup_memory: NDArray[np.float64]
    ephemeral_base: NDArray[np.float64]
    ephemeral_per_age_step: NDArray[np.float64]


class SyntheticUsage:
    """The usage of a synthetic fleet (`fleet.default_fleet`), one stream per replica and container
    (`model.Usage`). Raises `ValueError` for a container whose shape is not in `SHAPES`."""

    def __init__(self, fleet: Fleet) -> None:
        self._seed = fleet.seed
        self._slots = tuple(slots_of(fleet))
        rows = [_slot_row(fleet.seed, w, replica, c) for w in fleet.workloads for replica, c in _replicas(w)]
        columns = list(zip(*rows, strict=True)) if rows else [()] * len(_Parameters.__slots__)
        self._p = _Parameters(*(np.array(column, dtype=np.float64) for column in columns))
        self._bursty = np.flatnonzero(self._p.burst_probability > 0)
        self._burst_probability = self._p.burst_probability[self._bursty]
        self._noise_block = -1
        self._noise: NDArray[np.float64] = np.empty((0, 3, len(self._slots)))

    @property
    def slots(self) -> Sequence[Slot]:
        return self._slots

    def at(self, step: int, age_steps: NDArray[np.int64]) -> NDArray[np.float64]:
        p = self._p
        jitter, wobble, burst = self._noise_at(step)
        angle = 2 * math.pi * (step * STEP_SECONDS % DAY_SECONDS) / DAY_SECONDS
        usage = np.empty((len(self._slots), len(RESOURCES)))
        cpu = p.cpu_typical + p.cpu_cos * math.cos(angle) + p.cpu_sin * math.sin(angle)
        cpu *= np.exp(p.jitter_span * jitter + p.jitter_offset)
        memory = p.memory_low + p.memory_span * wobble + p.growth_per_step * step + p.leak_per_age_step * age_steps
        young = age_steps < STARTUP_STEPS
        if young.any():  # most steps start no container
            cpu[young] *= p.startup_cpu_factor[young]
            memory[young] += p.startup_memory[young]
        _apply_bursts(cpu, burst, self._bursty, self._burst_probability)
        usage[:, CPU] = cpu
        usage[:, MEMORY] = memory
        usage[:, EPHEMERAL] = p.ephemeral_base + p.ephemeral_per_age_step * age_steps
        return usage

    def _noise_at(self, step: int) -> NDArray[np.float64]:
        """The step's uniform draws `(3, slots)`: jitter, memory wobble, burst. Drawn an hour at a time from a
        generator keyed by `(seed, hour)` (one generator a step would cost a third of `at`); a run asks the steps
        in order, so the hour in hand is the one asked for, and any other order gets the same values. Uniform
        draws only, a third of the cost of normals: the jitter is uniform in log space, the bursts Pareto."""
        block, offset = divmod(step, NOISE_BLOCK_STEPS)
        if block != self._noise_block:
            self._noise = np.random.default_rng([self._seed, block]).random((NOISE_BLOCK_STEPS, 3, len(self._slots)))
            self._noise_block = block
        draws: NDArray[np.float64] = self._noise[offset]
        return draws


def slots_of(fleet: Fleet) -> list[Slot]:
    """One slot per replica per container of every workload: workloads in the fleet's order, then replica, then
    container."""
    return [Slot(w.key, replica, c.name) for w in fleet.workloads for replica, c in _replicas(w)]


def _replicas(workload: Workload) -> list[tuple[int, ContainerSpec]]:
    return [(replica, c) for replica in range(workload.replicas) for c in workload.app.containers]


def _apply_bursts(
    cpu: NDArray[np.float64], uniform: NDArray[np.float64], bursty: NDArray[np.int64], probability: NDArray[np.float64]
) -> None:
    """Multiply the cpu of the bursty slots (`bursty`, each bursting with `probability`) that burst this step by a
    Pareto factor. The same uniform draw decides whether a slot bursts and, rescaled, how hard: one draw a step."""
    burst = uniform[bursty] < probability
    if not burst.any():
        return
    hits = bursty[burst]
    rescaled = np.maximum(uniform[hits] / probability[burst], BURST_CAP_QUANTILE)
    cpu[hits] *= BURST_MIN * rescaled ** (-1.0 / BURST_ALPHA)


def _slot_row(seed: int, workload: Workload, replica: int, spec: ContainerSpec) -> tuple[float, ...]:
    """One slot's parameters, in `_Parameters` field order."""
    shape = workload.app.shapes.get(spec.name, "")
    if shape not in _PROFILES:
        raise ValueError(f"{workload.key}/{spec.name}: shape {shape!r} is not one of {', '.join(SHAPES)}")
    profile = _PROFILES[shape]
    app = _rng(seed, workload.app.name, spec.name)
    namespace = _rng(seed, workload.key, spec.name)
    single = _rng(seed, workload.key, spec.name, str(replica))
    scale_cpu, scale_memory = (
        app.uniform(1 - SPREAD_APP, 1 + SPREAD_APP, 2)
        * namespace.uniform(1 - SPREAD_NAMESPACE, 1 + SPREAD_NAMESPACE, 2)
        * single.uniform(1 - SPREAD_REPLICA, 1 + SPREAD_REPLICA, 2)
    )
    peak_hour = app.uniform(14.0, 17.0)
    amplitude = (profile.diurnal_ratio - 1) / (profile.diurnal_ratio + 1)
    peak_angle = 2 * math.pi * peak_hour / 24
    cpu_typical = _request(spec, "cpu") * profile.cpu_share * scale_cpu
    memory_floor = _request(spec, "memory") * profile.memory_share * scale_memory
    ephemeral = profile.ephemeral_scale * app.uniform(0.5, 2.0)
    jitter = profile.cpu_sigma * math.sqrt(3)  # half-width of a uniform with the sigma's standard deviation
    memory_wobble = profile.memory_sigma * math.sqrt(3)
    return (
        cpu_typical,
        cpu_typical * amplitude * math.cos(peak_angle),
        cpu_typical * amplitude * math.sin(peak_angle),
        2 * jitter,
        _mean_preserving_offset(jitter),
        profile.burst_probability,
        memory_floor * (1 - memory_wobble),
        memory_floor * 2 * memory_wobble,
        memory_floor * profile.growth_per_day * STEP_SECONDS / DAY_SECONDS,
        _leak_per_age_step(spec, profile, memory_floor, single.uniform(0.75, 1.25)),
        1 + profile.startup_cpu,
        memory_floor * profile.startup_memory,
        EPHEMERAL_BASE * ephemeral,
        EPHEMERAL_GROWTH_PER_HOUR * ephemeral / STEPS_PER_HOUR,
    )


def _mean_preserving_offset(half_width: float) -> float:
    """The offset that keeps `exp(U(0, 2w) + offset)` at mean 1: `E[exp U(−w, w)] = sinh w / w`."""
    return -half_width - math.log(math.sinh(half_width) / half_width) if half_width > 0 else 0.0


def _leak_per_age_step(spec: ContainerSpec, profile: _Profile, floor: float, pace: float) -> float:
    """A leak reaches the memory limit (twice the request without one) after about `leak_hours` of age."""
    if profile.leak_hours <= 0:
        return 0.0
    ceiling = spec.limits.get("memory", 2 * _request(spec, "memory"))
    return max(ceiling - floor, 0.0) / (profile.leak_hours * pace * STEPS_PER_HOUR)


def _request(spec: ContainerSpec, resource: str) -> float:
    return spec.requests.get(resource, DEFAULT_REQUESTS[resource])


def _rng(seed: int, *names: str) -> np.random.Generator:
    """A generator keyed by the seed and names (crc32: stable across processes, unlike `hash`)."""
    return np.random.default_rng([seed, *(zlib.crc32(name.encode()) for name in names)])
