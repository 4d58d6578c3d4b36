"""The OOM watcher on the real kube-apiserver: a pod whose status (written through pods/status, as a kubelet
does) reports an OOMKilled container raises the profile's memory-limit floor, once per kill, with the events
and metrics it claims; the resize lane then raises a running sibling's limit in one step, inside its cooldown."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ballast.api.ballast.v1 import MetricsSource, WorkloadProfile
from ballast.controllers import oom, resize
from ballast.internal.collection import NEW, CollectionMemory, ProfileMemory, RefreshPolicy
from ballast.internal.enrollment import LAST_RESIZE
from ballast.internal.history import HistoryStore, SeriesKey, SQLiteHistoryStore
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.oom import OOM_RAISED_FOR
from ballast.internal.operator import OperatorOptions
from ballast.internal.telemetry import OOM_FLOOR_BYTES, OOM_KILLS, profile_attributes
from ballast.runtime import MERGE, STRATEGIC, Context, Controller, FakeClock, Manager, Request, Result, objects
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.log import get_logger
from tests.integration.controllers.resize.conftest import START, Lane, World, new_client
from tests.unit.controllers.resize.builders import IMAGE, POD, cluster_policy, container, new_manager, resources_of
from tests.unit.internal.runtime.support import running

MI = 2**20
KILLED_AT = START - datetime.timedelta(minutes=5)
MEASUREMENT_HASH = "0123456789abcdef"


class OOMLane:
    """The OOM watcher on a manager whose cache runs; reconciles are called directly on a fake clock."""

    def __init__(self, envtest: Environment, clock: FakeClock, store: HistoryStore | None = None) -> None:
        self.manager: Manager = new_manager(new_client(envtest, "ballastd"))
        self.clock = clock
        self.collection_memory = CollectionMemory()
        """The collector's memory, as the wiring shares it: told of each OOM sample written."""
        self.controller: Controller = oom.setup(
            self.manager, options=OperatorOptions(clock=clock), store=store, collection_memory=self.collection_memory
        )
        self.manager.cache.start()

    def close(self) -> None:
        self.manager.cache.stop()
        self.manager.get_event_recorder(oom.EVENT_COMPONENT).shutdown()
        self.manager.api_reader.close()

    def reconcile(self, world: World) -> Result:
        cache = self.manager.cache
        for live in world.client.list(POD, world.namespace, label_selector="ballast.tightlinesoftware.com/mode"):
            name, version = objects.name(live), objects.resource_version(live)

            def caught_up(name: str = name, version: str = version) -> bool:
                return objects.resource_version(cache.get(POD, name, world.namespace)) == version

            poll_until(caught_up, timeout=10, interval=0.01, what="the cache to catch up on the pod")
        profile_version = str(world.client.get(WorkloadProfile, world.profile).metadata.resource_version)
        poll_until(lambda: objects.resource_version(cache.get(WorkloadProfile, world.profile)) == profile_version,
                   timeout=10, interval=0.01, what="the cache to catch up on the profile")  # fmt: skip
        request = Request("", world.profile)
        ctx = Context(oom.NAME, request, "test", get_logger("ballast.runtime.controller", controller=oom.NAME),
                      self.clock)  # fmt: skip
        return self.controller.reconciler.reconcile(ctx, request) or Result()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[HistoryStore]:
    opened = SQLiteHistoryStore(str(tmp_path / "history.db"))
    yield opened
    opened.close()


@pytest.fixture
def oom_lane(envtest: Environment, crds: list[str], lane: Lane, store: HistoryStore) -> Iterator[OOMLane]:
    created = OOMLane(envtest, lane.clock, store)
    yield created
    created.close()


def kubelet_reports_oom(world: World, pod_name: str, container_name: str, at: datetime.datetime) -> None:
    """The kubelet's status after the container was OOM-killed and restarted (restartCount +1, lastState)."""
    status = {
        "name": container_name, "image": IMAGE, "imageID": IMAGE, "ready": True, "restartCount": 1,
        "state": {"running": {"startedAt": at.strftime("%Y-%m-%dT%H:%M:%SZ")}},
        "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137,
                                     "finishedAt": at.strftime("%Y-%m-%dT%H:%M:%SZ")}},
    }  # fmt: skip
    world.client.status().patch(world.get_pod(pod_name), {"status": {"containerStatuses": [status]}},
                                patch_type=STRATEGIC)  # fmt: skip


def oom_entry(world: World) -> dict[str, Any]:
    profile = world.client.get(WorkloadProfile, world.profile)
    [entry] = (profile.status.oom_kills if profile.status else None) or []
    return entry.model_dump(by_alias=True, exclude_none=True, mode="json")


def profile_events(world: World, reason: str) -> list[dict[str, Any]]:
    return [e for e in world.client.list("v1/Event", "default")
            if e.get("reason") == reason and e["involvedObject"].get("name") == world.profile]  # fmt: skip


def test_an_oom_killed_pod_raises_the_floor_once_with_events_and_metrics(world: World, oom_lane: OOMLane) -> None:
    world.add_policy()
    world.add_profile({"app": {"memory": ("256Mi", "500Mi")}})
    world.add_pod("web-0", [container("app", {"memory": "256Mi"}, {"memory": "500Mi"})])
    kubelet_reports_oom(world, "web-0", "app", KILLED_AT)
    status = world.client.get(WorkloadProfile, world.profile).status
    labels = {**profile_attributes(world.profile, status.tuple_labels if status else None), "container": "app"}
    kills_before = OOM_KILLS.value(**labels)

    requeue = oom_lane.reconcile(world)

    entry = oom_entry(world)
    assert (entry["count"], entry["lastLimit"], entry["floor"]) == (1, "500Mi", "600Mi")  # max(+100Mi, ×1.2)
    assert entry["floorUntil"] == "2026-03-01T23:55:00Z"
    assert entry["namespaces"] == [world.namespace]
    assert entry["kills"][0]["pod"] == "web-0"
    assert requeue.requeue_after == pytest.approx(24 * 3600 - 300)
    assert OOM_KILLS.value(**labels) == kills_before + 1
    assert OOM_FLOOR_BYTES.value(**labels) == 600 * MI
    [event] = poll_until(lambda: profile_events(world, "OOMKilled"), timeout=10, what="an OOMKilled event")
    assert event["type"] == "Warning"
    assert event["message"] == (f"container app of pod {world.namespace}/web-0 was OOM-killed at memory limit 500Mi; "
                                "memory limit floor 600Mi")  # fmt: skip

    # The same status seen again (the next reconcile, or a restarted operator with a fresh cache) counts nothing.
    oom_lane.clock.advance(60)
    oom_lane.reconcile(world)
    assert oom_entry(world)["count"] == 1
    assert OOM_KILLS.value(**labels) == kills_before + 1


def test_a_running_sibling_is_raised_in_one_step_inside_its_cooldown(
    world: World, oom_lane: OOMLane, lane: Lane
) -> None:
    world.add_policy()
    world.add_profile({"app": {"memory": ("256Mi", "500Mi")}})
    world.add_pod("web-0", [container("app", {"memory": "256Mi"}, {"memory": "500Mi"})])
    # The sibling was resized a minute ago: its cooldown (15 m) is active.
    just_now = (START - datetime.timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    world.add_pod("web-1", [container("app", {"memory": "256Mi"}, {"memory": "500Mi"})],
                  annotations={LAST_RESIZE: just_now})  # fmt: skip
    kubelet_reports_oom(world, "web-0", "app", KILLED_AT)
    oom_lane.reconcile(world)

    lane.reconcile(world.profile)

    sibling = world.get_pod("web-1")
    # One step to the floor: maxChangePerCycle (50 %) would have stopped at 550Mi, the cooldown at nothing.
    assert resources_of(sibling, "app") == {"requests": {"memory": "256Mi"}, "limits": {"memory": "600Mi"}}
    assert sibling["metadata"]["annotations"][OOM_RAISED_FOR] == f"app=600Mi after OOM kills in {world.namespace}"
    assert sibling["metadata"]["annotations"][LAST_RESIZE] == "2026-03-01T00:00:00Z"
    # At most once per kill: the limit is at the floor, so the next reconcile inside the cooldown does nothing.
    generation = sibling["metadata"]["generation"]
    lane.clock.advance(60)
    lane.reconcile(world.profile)
    assert world.get_pod("web-1")["metadata"]["generation"] == generation


def test_disabled_removes_the_floor(world: World, oom_lane: OOMLane) -> None:
    world.add_policy()
    world.add_profile({"app": {"memory": ("256Mi", "500Mi")}})
    world.add_pod("web-0", [container("app", {"memory": "256Mi"}, {"memory": "500Mi"})])
    kubelet_reports_oom(world, "web-0", "app", KILLED_AT)
    oom_lane.reconcile(world)
    assert oom_entry(world)["floor"] == "600Mi"
    policy = world.client.get(f"{WorkloadProfile.API_VERSION}/ClusterResourcePolicy", world.policy)
    world.client.patch(policy, {"spec": {"behaviors": {"oom": {"enabled": False}}}}, patch_type=MERGE)
    kind = f"{WorkloadProfile.API_VERSION}/ClusterResourcePolicy"
    poll_until(lambda: oom_lane.manager.cache.get(kind, world.policy)["spec"].get("behaviors"), timeout=10,
               what="the cache to see the policy change")  # fmt: skip

    oom_lane.reconcile(world)

    status = world.client.get(WorkloadProfile, world.profile).status
    assert status is not None
    assert not status.oom_kills
    assert status.containers  # the collector's fields are untouched


def test_on_a_running_manager_a_kill_reaches_the_sibling_through_the_watches(
    envtest: Environment, world: World
) -> None:
    world.add_policy()
    world.add_profile({"app": {"memory": ("256Mi", "500Mi")}})
    world.add_pod("web-0", [container("app", {"memory": "256Mi"}, {"memory": "500Mi"})])
    world.add_pod("web-1", [container("app", {"memory": "256Mi"}, {"memory": "500Mi"})])
    manager = new_manager(new_client(envtest, "ballastd"))
    oom.setup(manager, options=OperatorOptions())
    resize.setup(manager, kill_switch=KillSwitchState(), options=OperatorOptions())
    with running(manager, stop_timeout=30):
        # The resize lane's first pass finds nothing to do (the pods match the recommendation).
        poll_until(lambda: LAST_RESIZE not in world.get_pod("web-1")["metadata"].get("annotations", {}) and
                   manager.cache.get(WorkloadProfile, world.profile) is not None, timeout=30,
                   what="the lanes to start")  # fmt: skip
        kubelet_reports_oom(world, "web-0", "app", datetime.datetime.now(datetime.UTC).replace(microsecond=0))
        poll_until(lambda: resources_of(world.get_pod("web-1"), "app").get("limits") == {"memory": "600Mi"},
                   timeout=60, interval=0.2, what="the sibling's limit to be raised to the floor")  # fmt: skip
    assert oom_entry(world)["floor"] == "600Mi"
    assert world.get_pod("web-1")["metadata"]["annotations"][OOM_RAISED_FOR].startswith("app=600Mi")


def test_each_kill_is_one_memory_sample_of_the_floor_in_the_history(
    world: World, oom_lane: OOMLane, store: HistoryStore
) -> None:
    source = f"memory-{world.profile}"
    world.client.create({"apiVersion": WorkloadProfile.API_VERSION, "kind": "MetricsSource",
                         "metadata": {"name": source}, "spec": {"type": "kubernetesMetrics"}})  # fmt: skip
    try:
        policy = cluster_policy(world.policy)
        policy["spec"]["metrics"] = [{"resource": "memory", "field": "request", "source": source}]
        world.client.create(policy)
        world.add_profile({"app": {"memory": ("256Mi", "500Mi")}})
        profile = world.client.get(WorkloadProfile, world.profile)
        world.client.status().patch(profile, {"status": {"measurementHash": MEASUREMENT_HASH}}, patch_type=MERGE)
        poll_until(lambda: oom_lane.manager.client.list(MetricsSource), timeout=10, what="the cache to list sources")
        world.add_pod("web-0", [container("app", {"memory": "256Mi"}, {"memory": "500Mi"})])
        kubelet_reports_oom(world, "web-0", "app", KILLED_AT)
        # the collector computed this series before: its memo counts the samples written since
        computed_ms = int(START.timestamp() * 1000) - 60_000
        memo = RefreshPolicy().memo(SeriesKey(MEASUREMENT_HASH, "app", "memory"), count=10, accruing=True,
                                    stamp=(), now_ms=computed_ms, reason=NEW, first_seen_ms=computed_ms)  # fmt: skip
        uid = str(profile.metadata.uid)
        oom_lane.collection_memory.remember(world.profile, ProfileMemory(uid, {}, {("app", "memory"): memo}, False),
                                     cached_meets_threshold=False)  # fmt: skip

        oom_lane.reconcile(world)
        oom_lane.clock.advance(60)
        oom_lane.reconcile(world)  # the same kill again: no second sample

        series = store.read(SeriesKey(MEASUREMENT_HASH, "app", "memory"))
        assert list(series.values) == [600 * MI]
        assert memo.written == 1  # counted once, towards the series' refresh and readiness gates
    finally:
        world.client.delete(f"{WorkloadProfile.API_VERSION}/MetricsSource", name=source)


def test_kills_past_max_kills_at_the_raised_limit_stop_raising_with_oom_kills_repeated(
    world: World, oom_lane: OOMLane
) -> None:
    policy = cluster_policy(world.policy)
    policy["spec"]["behaviors"] = {"oom": {"maxKills": 1}}
    world.client.create(policy)
    world.add_profile({"app": {"memory": ("256Mi", "500Mi")}})
    world.add_pod("web-0", [container("app", {"memory": "256Mi"}, {"memory": "500Mi"})])
    kubelet_reports_oom(world, "web-0", "app", KILLED_AT)
    oom_lane.reconcile(world)
    assert oom_entry(world)["floor"] == "600Mi"
    # A pod admitted with the raised limit is killed there too: memory keeps growing.
    world.add_pod("web-1", [container("app", {"memory": "256Mi"}, {"memory": "600Mi"})])
    kubelet_reports_oom(world, "web-1", "app", KILLED_AT + datetime.timedelta(minutes=3))

    oom_lane.reconcile(world)

    entry = oom_entry(world)
    assert (entry["count"], entry["floor"], entry["repeated"]) == (2, "600Mi", True)  # not raised again
    status = world.client.get(WorkloadProfile, world.profile).status
    assert status is not None
    [repeated] = [c for c in status.conditions or () if c.type == "OOMKillsRepeated"]
    assert repeated.status == "True"
    assert repeated.message == (f"OOM-killed again at the raised memory limit, raising stopped: app (2 kills in "
                                f"{world.namespace}; limit held at 600Mi)")  # fmt: skip
    [event] = poll_until(
        lambda: profile_events(world, "OOMKillsRepeated"), timeout=10, what="an OOMKillsRepeated event"
    )
    assert event["type"] == "Warning"
    assert world.namespace in event["message"]
