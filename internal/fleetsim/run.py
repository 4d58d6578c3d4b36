"""One recommender's run over a fleet: the world advanced step by step, the recommender ticked after each step,
from one thread in a fixed order — so one seed gives one result (docs/simulate.md, "Determinism")."""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from .model import STEP_SECONDS, Cluster, Fleet, PodState, Recommender, Trace, Usage
from .world import World

Progress = Callable[[int, int], None]
"""Called as `progress(step, steps)` every simulated hour and at the end."""
HOUR_STEPS = 3600 // STEP_SECONDS
RUN_GC_THRESHOLDS = (100_000, 50, 100)
"""CPython's cyclic collector during a run (its defaults: 700, 10, 10) — see `few_collections`."""


class AsWritten:
    """ "No recommender": the manifests as written, never changed (the baseline of every figure)."""

    name = "none"

    def admit(self, pod: PodState, cluster: Cluster) -> None:
        return None

    def tick(self, cluster: Cluster) -> None:
        return None

    def close(self) -> None:
        return None


@contextmanager
def few_collections() -> Iterator[None]:
    """The cyclic garbage collector tuned for one long run, and put back as it was after.

    A run allocates millions of short-lived objects (API bodies, samples, statuses) over a heap of long-lived ones
    (the fleet, the caches, the history's read cache, each series' sorted values). With CPython's defaults each
    full collection walks that whole heap again, dozens of times a run: a third of Ballast's side of the demo
    (benchmarks/RESULTS.md). What exists when the run starts is frozen (never scanned), and the young
    generation is collected every 100,000 net allocations instead of 700; the run's reference cycles are still
    collected, and the figures cannot change (the collector frees memory, it computes nothing). Objects a caller
    froze before stay frozen."""
    thresholds, frozen_before = gc.get_threshold(), gc.get_freeze_count()
    gc.freeze()
    gc.set_threshold(*RUN_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        if frozen_before == 0:
            gc.unfreeze()


def simulate(fleet: Fleet, usage: Usage, recommender: Recommender, progress: Progress | None = None) -> Trace:
    """Run `recommender` over the whole fleet; returns what the run recorded. The recommender is closed after."""
    with few_collections():
        return _simulate(fleet, usage, recommender, progress)


def _simulate(fleet: Fleet, usage: Usage, recommender: Recommender, progress: Progress | None) -> Trace:
    world = World(fleet, usage, recommender)
    steps = fleet.duration_s // STEP_SECONDS
    try:
        for step in range(steps):
            world.advance(step)
            recommender.tick(world)
            if progress is not None and step % HOUR_STEPS == 0:
                progress(step, steps)
    finally:
        recommender.close()
    if progress is not None:
        progress(steps, steps)
    return world.trace()
