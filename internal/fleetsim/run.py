"""One recommender's run over a fleet: the world advanced step by step, the recommender ticked after each step,
from one thread in a fixed order — so one seed gives one result (docs/simulate.md, "Determinism")."""

from __future__ import annotations

from collections.abc import Callable

from .model import STEP_SECONDS, Cluster, Fleet, PodState, Recommender, Trace, Usage
from .world import World

Progress = Callable[[int, int], None]
"""Called as `progress(step, steps)` every simulated hour and at the end."""
HOUR_STEPS = 3600 // STEP_SECONDS


class AsWritten:
    """ "No recommender": the manifests as written, never changed (the baseline of every figure)."""

    name = "none"

    def admit(self, pod: PodState, cluster: Cluster) -> None:
        return None

    def tick(self, cluster: Cluster) -> None:
        return None

    def close(self) -> None:
        return None


def simulate(fleet: Fleet, usage: Usage, recommender: Recommender, progress: Progress | None = None) -> Trace:
    """Run `recommender` over the whole fleet; returns what the run recorded. The recommender is closed after."""
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
