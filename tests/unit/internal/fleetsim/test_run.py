"""One recommender's run: the garbage collector's settings during the run, and as they were after it."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from ballast.internal.fleetsim.model import App, Cluster, ContainerSpec, Fleet, NodeSpec, PodState, Workload
from ballast.internal.fleetsim.run import RUN_GC_THRESHOLDS, AsWritten, simulate
from ballast.internal.fleetsim.usage import SyntheticUsage


class Watching(AsWritten):
    """The manifests as written, noting the collector's state at every tick."""

    def __init__(self) -> None:
        self.seen: set[tuple[tuple[int, int, int], bool, bool]] = set()

    def tick(self, cluster: Cluster) -> None:
        self.seen.add((gc.get_threshold(), gc.get_freeze_count() > 0, gc.isenabled()))

    def admit(self, pod: PodState, cluster: Cluster) -> None:
        return None


def small_fleet() -> Fleet:
    app = App("web", {"app": "web"}, (ContainerSpec("main", {"cpu": 0.1, "memory": 64 * 2**20}, {}),), {"main": "idle"})
    node = NodeSpec("node-1", {"cpu": 4.0, "memory": 2**30, "ephemeral-storage": 2**30})
    return Fleet((Workload("team-a", app, 1),), (node,), 600)


@pytest.fixture
def default_collector() -> Iterator[None]:
    thresholds = gc.get_threshold()
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    yield
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("default_collector")
def test_a_run_collects_rarely_over_a_frozen_heap_and_puts_the_collector_back_after() -> None:
    fleet = small_fleet()
    recommender = Watching()

    simulate(fleet, SyntheticUsage(fleet), recommender)

    assert recommender.seen == {(RUN_GC_THRESHOLDS, True, True)}
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0


@pytest.mark.usefixtures("default_collector")
def test_objects_a_caller_froze_stay_frozen_after_a_run() -> None:
    fleet = small_fleet()
    kept = [fleet]  # a container, so tracked by the collector
    gc.freeze()
    try:
        simulate(fleet, SyntheticUsage(fleet), Watching())
        assert not any(tracked is kept for tracked in gc.get_objects())  # still in the permanent generation
    finally:
        gc.unfreeze()
    assert any(tracked is kept for tracked in gc.get_objects())
