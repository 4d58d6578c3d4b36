"""The profile lifecycle lane (`workloadwatcher-profile`) on the in-memory API server: active-workload counts,
the Orphaned condition and its time, deletion after the BallastConfig's orphanTTL, and the cleanup finalizer
that purges a profile's history from the store — unless the profile goes with its CRD or while the install is
being removed (docs/design.md, difference 53).

The manager and the lane share one FakeClock, so `requeue_after(TTL - age)` fires only when the test advances it.
"""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from ballast.api.ballast.v1 import BallastConfig, WorkloadProfile
from ballast.api.scheme import add_to_scheme
from ballast.controllers import profile
from ballast.internal.cmd.wiring import new_manager
from ballast.internal.enrollment import (
    MODE_LABEL,
    PROFILE_CLEANUP_FINALIZER,
    PROFILE_REF,
    UNINSTALLING_ANNOTATION,
    WORKLOAD_PROFILE_CRD,
)
from ballast.internal.history import Cycle, HistoryStore, Sample, SeriesKey, open_store
from ballast.internal.naming import tuple_hash
from ballast.internal.operator import OperatorOptions
from ballast.runtime import Client, FakeAPI, FakeClock, GroupVersionKind, Manager, NotFoundError, Scheme
from tests.unit.internal.runtime.support import eventually, running, sample
from tests.unit.support import register_our_kinds

START = datetime.datetime(2026, 3, 1, 12, 0, tzinfo=datetime.UTC)
API_VERSION = "ballast.tightlinesoftware.com/v1"
NAME = "billing--api--default-a9696153"
OTHER = "billing--web--default-a9696153"
HASH = "8746f67fe9f3d343"
OTHER_HASH = "0123456789abcdef"
NAMESPACE = "shop"
HOLD = "example.com/hold"
IDENTITY = ["app.kubernetes.io/name"]
QUIET = 0.1
CRD = GroupVersionKind("apiextensions.k8s.io", "v1", "CustomResourceDefinition")
CRD_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
"""Seconds of real time a negative check waits: several reconciles' worth on the fake API."""


@dataclass
class World:
    api: FakeAPI
    client: Client
    manager: Manager
    clock: FakeClock
    store: HistoryStore

    def advance(self, **delta: float) -> None:
        """Move the fake clock once the lane is idle, so no reconcile reads the time before the move and
        schedules its requeue after it."""
        eventually(self.settled, what="the profile lane to be idle")
        self.clock.advance(datetime.timedelta(**delta).total_seconds())

    def settled(self) -> bool:
        """Whether no reconcile of the lane is running, none having finished for 20 ms."""

        def reconciles() -> float:
            return sum(sample("controller_runtime_reconcile_total", controller=profile.NAME, result=result)
                       for result in ("success", "error", "requeue", "requeue_after"))  # fmt: skip

        before = reconciles()
        if sample("controller_runtime_active_workers", controller=profile.NAME):
            return False
        time.sleep(0.02)
        return not sample("controller_runtime_active_workers", controller=profile.NAME) and reconciles() == before

    def profile(self, name: str = NAME) -> WorkloadProfile | None:
        try:
            found: WorkloadProfile = self.client.get(WorkloadProfile, name)
        except NotFoundError:
            return None
        return found

    def orphaned(self, name: str = NAME) -> Any:
        """The profile's Orphaned condition (None when it has none or is gone)."""
        found = self.profile(name)
        conditions = found.status.conditions if found and found.status else None
        return next((c for c in conditions or [] if c.type == "Orphaned"), None)

    def active(self, name: str = NAME) -> int | None:
        found = self.profile(name)
        return found.status.active_workloads if found and found.status else None

    def history(self, digest: str) -> tuple[int, ...]:
        return self.store.read(SeriesKey(digest, "app", "cpu")).values


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    clock = FakeClock(START)
    api = FakeAPI(clock=clock)
    register_our_kinds(api)
    api.register(CRD, "customresourcedefinitions", namespaced=False)
    client = api.client(scheme=add_to_scheme(Scheme()), field_owner="tests")
    # Served, as on a real server: the lane reads it to tell a profile deleted on its own from one going with it.
    client.create({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                   "metadata": {"name": WORKLOAD_PROFILE_CRD, "finalizers": [CRD_FINALIZER]}})  # fmt: skip
    manager = new_manager(api.client(scheme=add_to_scheme(Scheme())), namespace="ballast-system", clock=clock)
    store = open_store(f"sqlite:///{tmp_path / 'h.db'}")
    for digest, value in ((HASH, 250), (OTHER_HASH, 300)):
        store.write_cycle(Cycle(f"test/{digest}", 1_700_000_000_000, [Sample(SeriesKey(digest, "app", "cpu"), value)]))
    profile.setup(manager, store=store, options=OperatorOptions(clock=clock))
    with running(manager):
        yield World(api, client, manager, clock, store)
    store.close()
    api.close()


def _config(client: Client, orphan_ttl: str, identity: list[str] | None = None) -> None:
    spec = {"identityLabels": identity or IDENTITY, "orphanTTL": orphan_ttl}
    body = {"apiVersion": API_VERSION, "kind": "BallastConfig", "metadata": {"name": "ballast"}, "spec": spec}
    try:
        current = client.get("ballast.tightlinesoftware.com/v1/BallastConfig", "ballast")
    except NotFoundError:
        client.create(body)
        return
    client.patch(current, {"spec": spec})


def _config_cached(world: World, orphan_ttl: str, identity: list[str] | None = None) -> bool:
    """Whether the lane's cache serves this BallastConfig (the lane reads the config from there)."""
    try:
        config: BallastConfig = world.manager.client.get(BallastConfig, "ballast")
    except NotFoundError:
        return False
    return (config.spec.orphan_ttl, config.spec.identity_labels) == (orphan_ttl, identity or IDENTITY)


def _new_profile(client: Client, *, finalizers: list[str] | None = None, **status: Any) -> None:
    metadata: dict[str, Any] = {"name": NAME}
    if finalizers:
        metadata["finalizers"] = finalizers
    written = {key: value for key, value in {"measurementHash": HASH, **status}.items() if value is not None}
    client.create({"apiVersion": API_VERSION, "kind": "WorkloadProfile", "metadata": metadata, "status": written})


def _pod(name: str, mode: str | None = "measure", *, ref: str = NAME, **metadata: Any) -> dict[str, Any]:
    labels = {"app.kubernetes.io/name": "billing"}
    if mode is not None:
        labels[MODE_LABEL] = mode
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels, "annotations": {PROFILE_REF: ref},
                         **metadata},
            "spec": {"containers": [{"name": "app", "image": "example/app:1"}]}}  # fmt: skip


def _orphaned_at(world: World, moment: datetime.datetime) -> bool:
    condition = world.orphaned()
    return (
        world.active() == 0
        and condition is not None
        and condition.status == "True"
        and condition.last_transition_time == moment
    )


def test_a_profile_without_pods_is_orphaned_then_deleted_after_the_ttl_with_its_history(world: World) -> None:
    _config(world.client, "1h")
    eventually(lambda: _config_cached(world, "1h"), what="the config in the cache")
    _new_profile(world.client)

    eventually(lambda: _orphaned_at(world, START), what="the profile to be orphaned")
    found = world.profile()
    assert found is not None
    assert PROFILE_CLEANUP_FINALIZER in (found.metadata.finalizers or [])
    condition = world.orphaned()
    assert (condition.reason, condition.message) == ("NoActiveWorkloads", "No active workloads for this profile")

    world.advance(minutes=59, seconds=59)  # one second short of the TTL: the requeue has not fired
    _config(world.client, "1h", identity=["app"])  # and a reconcile now (the config watch) does not delete it
    eventually(lambda: _config_cached(world, "1h", identity=["app"]), what="the new config in the cache")
    eventually(world.settled, what="the profile lane to be idle")
    assert world.profile() is not None
    assert world.history(HASH) == (250,)

    world.advance(seconds=1)
    eventually(lambda: world.profile() is None, what="the profile to be deleted at its TTL")
    assert world.history(HASH) == ()  # the cleanup finalizer purged its series
    assert world.history(OTHER_HASH) == (300,)  # and only its series


def _contributing(world: World) -> tuple[int, list[str]] | None:
    found = world.profile()
    shown = found.status.contributing_namespaces if found and found.status else None
    return (shown.count, shown.names or []) if shown else None


def test_the_profile_shows_how_many_namespaces_feed_it_and_the_first_ten(world: World) -> None:
    _config(world.client, "1h")
    eventually(lambda: _config_cached(world, "1h"), what="the config in the cache")
    zones = [f"zone-{n:02d}" for n in range(10)]
    for index, namespace in enumerate(["team-b", "team-a", "team-a", *zones]):
        world.client.create(_pod(f"web-{index}", namespace=namespace))
    world.client.create(_pod("leaving", namespace="team-c", finalizers=[HOLD]))
    _new_profile(world.client)

    everyone = (13, ["team-a", "team-b", "team-c", *zones[:7]])
    eventually(lambda: _contributing(world) == everyone, what="13 namespaces, the first ten by name")
    assert world.active() == 14

    world.client.delete(world.client.get("v1/Pod", "leaving", "team-c"))  # terminating: no longer contributes
    world.client.delete(world.client.get("v1/Pod", "web-0", "team-b"))
    eventually(lambda: _contributing(world) == (11, ["team-a", *zones[:9]]), what="team-b and team-c gone")
    assert world.active() == 12


def test_enrolled_pods_are_counted_and_keep_the_profile_until_the_last_goes(world: World) -> None:
    _config(world.client, "1h")
    eventually(lambda: _config_cached(world, "1h"), what="the config in the cache")
    world.client.create(_pod("web-0"))
    world.client.create(_pod("web-1", "apply"))
    world.client.create(_pod("web-2", "resize", finalizers=[HOLD]))
    world.client.create(_pod("unlabelled", None))  # outside the pod cache: not enrolled
    world.client.create(_pod("bad-mode", "sometimes"))  # cached, but not a valid mode
    world.client.create(_pod("elsewhere", ref=OTHER))
    _new_profile(world.client)

    eventually(lambda: world.active() == 3, what="three active workloads")
    assert world.orphaned() is None
    world.advance(hours=3)
    time.sleep(QUIET)
    assert world.active() == 3
    assert world.orphaned() is None

    # A pod re-pointed at another profile: its old state's profile is reconciled too.
    world.client.patch(_pod("web-0"), {"metadata": {"annotations": {PROFILE_REF: OTHER}}})
    eventually(lambda: world.active() == 2, what="the count to follow a re-pointed pod")
    world.client.delete(_pod("web-1"))
    eventually(lambda: world.active() == 1, what="the count to follow a deleted pod")
    assert world.orphaned() is None
    world.client.delete(_pod("web-2"))  # held by its finalizer: terminating pods do not count
    eventually(lambda: _orphaned_at(world, START + datetime.timedelta(hours=3)), what="orphaned when the last went")
    assert world.client.get("v1/Pod", "web-2", NAMESPACE)["metadata"]["deletionTimestamp"]

    world.advance(minutes=30)
    world.client.create(_pod("web-3"))  # a workload comes back before the TTL: no longer orphaned
    eventually(lambda: world.active() == 1 and world.orphaned() is None, what="the Orphaned condition to go")
    world.advance(hours=2)
    time.sleep(QUIET)
    assert world.active() == 1


def test_the_orphaned_time_is_kept_across_rewrites_and_the_ttl_counts_from_it(world: World) -> None:
    _config(world.client, "1h")
    eventually(lambda: _config_cached(world, "1h"), what="the config in the cache")
    _new_profile(world.client)
    eventually(lambda: _orphaned_at(world, START), what="the profile to be orphaned")

    world.advance(minutes=40)
    # Another writer puts a wrong count: the lane rewrites its status, Orphaned stays True and keeps its time.
    world.client.status().patch(_ref(), {"status": {"activeWorkloads": 7}})
    eventually(lambda: world.active() == 0, what="the count to be rewritten")
    assert _orphaned_at(world, START)

    # A longer TTL (the config watch re-reconciles every profile) is measured from START, not from now.
    _config(world.client, "2h")
    eventually(lambda: _config_cached(world, "2h"), what="the new TTL in the cache")
    world.advance(minutes=79)  # START + 1h59m: the first requeue (at 1h) has fired and found 2h not yet reached
    time.sleep(QUIET)
    assert _orphaned_at(world, START)
    world.advance(minutes=1)
    eventually(lambda: world.profile() is None, what="the profile to be deleted 2h after it was orphaned")
    assert world.history(HASH) == ()


def test_without_a_ballast_config_an_orphaned_profile_is_kept_until_one_appears(world: World) -> None:
    _new_profile(world.client)
    eventually(lambda: _orphaned_at(world, START), what="the profile to be orphaned")
    world.advance(hours=1000)
    time.sleep(QUIET)
    assert world.profile() is not None

    _config(world.client, "168h")  # the config watch enqueues every profile; it has been orphaned longer
    eventually(lambda: world.profile() is None, what="the profile to be deleted once a TTL exists")
    assert world.history(HASH) == ()


@pytest.mark.parametrize(
    ("orphan_ttl", "identity"), [("banana", None), ("1h", ["not a label!!"])], ids=["bad-ttl", "bad-identity-key"]
)
def test_an_invalid_ballast_config_deletes_no_orphaned_profile_until_it_is_fixed(
    world: World, orphan_ttl: str, identity: list[str] | None
) -> None:
    # docs/design.md, difference 26: the config is not used at all (a bad TTL used to fail every reconcile)
    _config(world.client, orphan_ttl, identity)
    eventually(lambda: _config_cached(world, orphan_ttl, identity), what="the invalid config in the cache")
    _new_profile(world.client)
    eventually(lambda: _orphaned_at(world, START), what="the profile to be orphaned")
    world.advance(hours=1000)
    time.sleep(QUIET)
    assert world.profile() is not None

    _config(world.client, "1h")
    eventually(lambda: world.profile() is None, what="the profile deleted once the config is fixed")


def test_deleting_a_legacy_profile_purges_by_its_tuple_hash_and_keeps_other_finalizers(world: World) -> None:
    labels = {"app.kubernetes.io/name": "legacy"}
    legacy = tuple_hash(labels)
    world.store.write_cycle(Cycle("test/legacy", 1_700_000_000_000, [Sample(SeriesKey(legacy, "app", "cpu"), 42)]))
    # Written before measurement hashes existed: only tupleLabels say where the history is.
    _new_profile(world.client, finalizers=[HOLD], measurementHash=None, tupleLabels=labels)
    eventually(lambda: PROFILE_CLEANUP_FINALIZER in _finalizers(world), what="the cleanup finalizer")
    assert _finalizers(world) == [HOLD, PROFILE_CLEANUP_FINALIZER]

    world.client.delete(_ref())
    eventually(lambda: _finalizers(world) == [HOLD], what="the cleanup finalizer to be removed")
    assert world.history(legacy) == ()
    assert world.history(HASH) == (250,)  # the measurement hash it does not carry is not purged
    found = world.profile()
    assert found is not None
    assert found.metadata.deletion_timestamp is not None  # still held by the other finalizer

    world.client.patch(_ref(), {"metadata": {"finalizers": []}})
    eventually(lambda: world.profile() is None, what="the profile to go once released")


def _ref() -> dict[str, Any]:
    return {"apiVersion": API_VERSION, "kind": "WorkloadProfile", "metadata": {"name": NAME}}


def _finalizers(world: World) -> list[str]:
    found = world.profile()
    return list(found.metadata.finalizers or []) if found else []


def _deleted_keeping_history(world: World) -> None:
    _new_profile(world.client)
    eventually(lambda: PROFILE_CLEANUP_FINALIZER in _finalizers(world), what="the cleanup finalizer")
    world.client.delete(_ref())
    eventually(lambda: world.profile() is None, what="the profile to go, its finalizer removed")
    assert world.history(HASH) == (250,)  # waiting for the profile to come back
    assert world.history(OTHER_HASH) == (300,)


def test_a_profile_going_with_its_terminating_crd_keeps_its_history(world: World) -> None:
    world.client.delete({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                         "metadata": {"name": WORKLOAD_PROFILE_CRD}})  # fmt: skip
    _deleted_keeping_history(world)


def test_a_profile_deleted_after_the_crd_is_gone_keeps_its_history(world: World) -> None:
    world.client.patch(
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
         "metadata": {"name": WORKLOAD_PROFILE_CRD}}, {"metadata": {"finalizers": []}}
    )  # fmt: skip
    world.client.delete({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                         "metadata": {"name": WORKLOAD_PROFILE_CRD}})  # fmt: skip
    _deleted_keeping_history(world)


def _mark_uninstalling(world: World, at: datetime.datetime) -> None:
    _config(world.client, "1h")
    world.client.patch(
        {"apiVersion": API_VERSION, "kind": "BallastConfig", "metadata": {"name": "ballast"}},
        {"metadata": {"annotations": {UNINSTALLING_ANNOTATION: at.isoformat()}}},
    )
    eventually(lambda: UNINSTALLING_ANNOTATION in (world.manager.client.get(BallastConfig, "ballast").metadata
               .annotations or {}), what="the mark in the cache")  # fmt: skip


def test_a_profile_deleted_while_ballastd_uninstall_runs_keeps_its_history(world: World) -> None:
    _mark_uninstalling(world, START - datetime.timedelta(minutes=5))
    _deleted_keeping_history(world)


def test_an_uninstall_mark_older_than_an_hour_no_longer_keeps_history(world: World) -> None:
    """A BallastConfig that outlived its uninstall (the CRDs kept, the operator installed again)."""
    _mark_uninstalling(world, START - datetime.timedelta(hours=2))
    _new_profile(world.client)
    eventually(lambda: PROFILE_CLEANUP_FINALIZER in _finalizers(world), what="the cleanup finalizer")
    world.client.delete(_ref())
    eventually(lambda: world.profile() is None, what="the profile to go")
    assert world.history(HASH) == ()  # deleted on its own: a history reset
