"""The history sweep lane (`workloadwatcher-historysweep`) on the in-memory API server and a FakeClock: history no
profile carries is purged once it has had none for the BallastConfig's orphanTTL, never before, and nothing is
swept while the WorkloadProfile CRD is terminating (docs/design.md, difference 53)."""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from ballast.api.scheme import add_to_scheme
from ballast.controllers import historysweep
from ballast.internal.cmd.wiring import new_manager
from ballast.internal.enrollment import WORKLOAD_PROFILE_CRD
from ballast.internal.history import Cycle, HistoryStore, Sample, SeriesKey, open_store
from ballast.internal.operator import OperatorOptions
from ballast.runtime import Client, FakeAPI, FakeClock, GroupVersionKind, Scheme
from tests.unit.internal.runtime.support import eventually, running, sample
from tests.unit.support import register_our_kinds

START = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)
API_VERSION = "ballast.tightlinesoftware.com/v1"
OWNED, UNOWNED = "8746f67fe9f3d343", "0123456789abcdef"
CRD = GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
CRD_REF = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": WORKLOAD_PROFILE_CRD}}  # fmt: skip


def _sweeps() -> float:
    return sample("controller_runtime_reconcile_total", controller=historysweep.NAME, result="requeue_after")


@dataclass
class World:
    client: Client
    clock: FakeClock
    store: HistoryStore
    sweeps_before: float

    def stored(self, digest: str) -> int:
        return len(self.store.read(SeriesKey(digest, "app", "cpu")).values)

    def advance(self, **delta: float) -> None:
        """Move the clock once the lane is idle, so its requeue is scheduled from the time before the move."""
        eventually(self._idle, what="the sweep to be idle")
        self.clock.advance(datetime.timedelta(**delta).total_seconds())
        eventually(self._idle, what="the sweep to be idle again")

    def swept(self) -> bool:
        """Whether a sweep has run in this test (it always asks to run again; the metric spans tests)."""
        return _sweeps() > self.sweeps_before

    def _idle(self) -> bool:
        if sample("controller_runtime_active_workers", controller=historysweep.NAME):
            return False
        time.sleep(0.05)
        return not sample("controller_runtime_active_workers", controller=historysweep.NAME)


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    clock = FakeClock(START)
    api = FakeAPI(clock=clock)
    register_our_kinds(api)
    api.register(CRD, "customresourcedefinitions", namespaced=False)
    client = api.client(scheme=add_to_scheme(Scheme()), field_owner="tests")
    client.create({**CRD_REF, "metadata": {"name": WORKLOAD_PROFILE_CRD, "finalizers": ["customresourcecleanup.test"]}})
    client.create({"apiVersion": API_VERSION, "kind": "WorkloadProfile", "metadata": {"name": "billing"},
                   "status": {"measurementHash": OWNED}})  # fmt: skip
    store = open_store(f"sqlite:///{tmp_path / 'h.db'}")
    for digest in (OWNED, UNOWNED):
        store.write_cycle(Cycle(f"seed/{digest}", 1_700_000_000_000, [Sample(SeriesKey(digest, "app", "cpu"), 7)]))
    manager = new_manager(api.client(scheme=add_to_scheme(Scheme())), namespace="ballast-system", clock=clock)
    historysweep.setup(manager, store=store, options=OperatorOptions(clock=clock))
    sweeps_before = _sweeps()
    with running(manager):
        yield World(client, clock, store, sweeps_before)
    store.close()
    api.close()


def _config(client: Client, orphan_ttl: str) -> None:
    client.create({"apiVersion": API_VERSION, "kind": "BallastConfig", "metadata": {"name": "ballast"},
                   "spec": {"identityLabels": ["app.kubernetes.io/name"], "orphanTTL": orphan_ttl}})  # fmt: skip


def test_history_without_a_profile_is_purged_after_the_orphan_ttl_and_a_profiles_history_never(world: World) -> None:
    _config(world.client, "2h")
    eventually(world.swept, what="the first sweep")
    world.advance(hours=1)
    assert (world.stored(OWNED), world.stored(UNOWNED)) == (1, 1)

    world.advance(hours=1)
    eventually(lambda: world.stored(UNOWNED) == 0, what="the history purged at its orphanTTL")
    assert world.stored(OWNED) == 1
    assert world.store.measurement_hashes() == {OWNED}


def test_nothing_is_swept_while_the_crd_is_terminating(world: World) -> None:
    world.client.delete(CRD_REF)  # held by its finalizer: terminating, as while the API server empties it
    _config(world.client, "1h")
    eventually(world.swept, what="the sweep to run and wait")
    world.advance(hours=3)
    assert (world.stored(OWNED), world.stored(UNOWNED)) == (1, 1)
    assert world.store.unowned_since(set(), 0) == {}  # not even counted
