"""The resize lane on the real kube-apiserver: pods resized through the real `pods/resize` subresource, the
kubelet's verdicts followed, the profile condition on old servers, and the lane running on its manager."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from ballast.api.ballast.v1 import WorkloadProfile
from ballast.api.meta import Condition
from ballast.controllers.resize import PROFILE_REQUEUE, RESIZED_MESSAGE, setup
from ballast.internal.enrollment import LAST_RESIZE, RESIZE_BLOCKED, RESIZE_BLOCKED_AT
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.operator import DryRun, OperatorOptions
from ballast.internal.resize import IN_PLACE_RESIZE
from ballast.runtime import APPLY
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until
from tests.integration.controllers.resize.conftest import Lane, World, new_client
from tests.unit.controllers.resize.builders import container, new_manager, resources_of
from tests.unit.internal.runtime.support import running

INTERVAL = 15 * 60.0


def _requests(world: World, pod_name: str, name: str = "app", group: str = "containers") -> dict[str, str]:
    return dict(resources_of(world.get_pod(pod_name), name, group).get("requests") or {})


def _generation(world: World, pod_name: str) -> int:
    return int(world.get_pod(pod_name)["metadata"]["generation"])


def _conditions(world: World) -> dict[str, Condition]:
    status = world.client.get(WorkloadProfile, world.profile).status
    return {c.type: c for c in (status.conditions if status else None) or ()}


@contextlib.contextmanager
def _separate(envtest: Environment, namespace: str, **options: Any) -> Iterator[Lane]:
    lane = Lane(envtest, namespace, **options)
    try:
        yield lane
    finally:
        lane.close()


def test_a_resize_pod_converges_in_steps_through_pods_resize(world: World, lane: Lane) -> None:
    world.add_policy()
    world.add_profile({"app": {"cpu": ("288m", None)}, "proxy": {"memory": ("96Mi", None)}})
    world.add_pod("web-0", [container("app", {"cpu": "1", "memory": "64Mi"}), container("log", {"cpu": "50m"})],
                  init_containers=[container("proxy", {"memory": "64Mi"}, restartPolicy="Always")])  # fmt: skip
    steps = []
    for _ in range(6):
        assert lane.reconcile(world.profile).requeue_after == INTERVAL
        steps.append(_requests(world, "web-0")["cpu"])
        lane.clock.advance(INTERVAL)
    assert steps == ["644m", "466m", "377m", "332m", "288m", "288m"]
    assert _requests(world, "web-0") == {"cpu": "288m", "memory": "64Mi"}
    assert _requests(world, "web-0", "log") == {"cpu": "50m"}
    assert _requests(world, "web-0", "proxy", "initContainers") == {"memory": "96Mi"}
    assert world.get_pod("web-0")["metadata"]["annotations"][LAST_RESIZE] == "2026-03-01T01:00:00Z"
    events = poll_until(lambda: world.events("Resized"), timeout=10, what="a Resized event")
    assert events[0]["message"] == RESIZED_MESSAGE
    assert events[0]["involvedObject"]["name"] == "web-0"


def test_a_guaranteed_pod_keeps_its_class(world: World, lane: Lane) -> None:
    world.add_policy()
    world.add_profile({"app": {"cpu": ("500m", None), "memory": ("256Mi", None)}})
    both = {"cpu": "1", "memory": "512Mi"}
    world.add_pod("web-0", [container("app", dict(both), dict(both))])
    lane.reconcile(world.profile)
    resized = world.get_pod("web-0")
    assert resources_of(resized, "app") == {"requests": {"cpu": "750m", "memory": "384Mi"},
                                            "limits": {"cpu": "750m", "memory": "384Mi"}}  # fmt: skip
    assert resized["status"]["qosClass"] == "Guaranteed"


def test_infeasible_blocks_the_pod_with_an_event(world: World, lane: Lane) -> None:
    world.add_policy()
    world.add_profile({"app": {"cpu": ("4", None)}})
    world.add_pod("web-0", [container("app", {"cpu": "1"})])
    lane.reconcile(world.profile)
    generation = _generation(world, "web-0")
    world.kubelet_reports("web-0", "PodResizePending", "Infeasible", "Node didn't have enough capacity: cpu")
    lane.clock.advance(30)
    lane.reconcile(world.profile)
    annotations = world.get_pod("web-0")["metadata"]["annotations"]
    assert annotations[RESIZE_BLOCKED] == "Node didn't have enough capacity: cpu"
    assert annotations[RESIZE_BLOCKED_AT] == "2026-03-01T00:00:30Z"
    [event] = poll_until(lambda: world.events("ResizeBlocked"), timeout=10, what="a ResizeBlocked event")
    assert event["type"] == "Warning"
    assert event["message"] == "in-place resize infeasible: Node didn't have enough capacity: cpu"
    assert _generation(world, "web-0") == generation


def test_deferred_is_retried_after_the_interval(world: World, lane: Lane) -> None:
    world.add_policy()
    world.add_profile({"app": {"cpu": ("288m", None)}})
    world.add_pod("web-0", [container("app", {"cpu": "1"})])
    lane.reconcile(world.profile)
    world.kubelet_reports("web-0", "PodResizePending", "Deferred", "Node didn't have enough resources: cpu")
    lane.clock.advance(60)
    lane.reconcile(world.profile)
    assert _requests(world, "web-0")["cpu"] == "644m"
    assert RESIZE_BLOCKED not in world.get_pod("web-0")["metadata"]["annotations"]
    lane.clock.advance(INTERVAL)
    lane.reconcile(world.profile)
    assert _requests(world, "web-0")["cpu"] == "466m"


def test_in_progress_gets_no_second_patch(world: World, lane: Lane) -> None:
    world.add_policy()
    world.add_profile({"app": {"cpu": ("288m", None)}})
    world.add_pod("web-0", [container("app", {"cpu": "1"})])
    lane.reconcile(world.profile)
    generation = _generation(world, "web-0")
    world.kubelet_reports("web-0", "PodResizeInProgress")
    lane.clock.advance(2 * INTERVAL)
    lane.reconcile(world.profile)
    assert _generation(world, "web-0") == generation
    assert _requests(world, "web-0")["cpu"] == "644m"


def test_dry_run_patches_nothing(envtest: Environment, world: World, envtest_namespace: str) -> None:
    world.add_policy()
    world.add_profile({"app": {"cpu": ("288m", None)}})
    world.add_pod("web-0", [container("app", {"cpu": "1"})])
    world.add_pod("web-1", [container("app", {"cpu": "1"})])
    world.kubelet_reports("web-1", "PodResizePending", "Infeasible", "no room")
    with _separate(envtest, envtest_namespace, dry_run=DryRun.cascade(apply=True)) as lane:
        lane.reconcile(world.profile)
    for name in ("web-0", "web-1"):
        resized = world.get_pod(name)
        assert resized["metadata"]["generation"] == 1
        assert _requests(world, name)["cpu"] == "1"
        assert set(resized["metadata"]["annotations"]) == {"ballast.tightlinesoftware.com/profile-ref"}


def test_apply_mode_pods_are_untouched(world: World, lane: Lane) -> None:
    world.add_policy()
    world.add_profile({"app": {"cpu": ("288m", None)}})
    before = world.add_pod("web-0", [container("app", {"cpu": "1"})], mode="apply")
    lane.reconcile(world.profile)
    assert world.get_pod("web-0")["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


def test_an_old_server_gets_a_condition_of_its_own_and_it_leaves_on_upgrade(
    envtest: Environment, world: World, envtest_namespace: str
) -> None:
    world.add_policy()
    world.add_profile({"app": {"cpu": ("288m", None)}})
    world.add_pod("web-0", [container("app", {"cpu": "1"})])
    ready = {"type": "Ready", "status": "True", "reason": "SamplesCollected", "message": "ok",
             "lastTransitionTime": "2026-01-01T00:00:00Z"}  # fmt: skip
    body = {"apiVersion": WorkloadProfile.API_VERSION, "kind": "WorkloadProfile",
            "metadata": {"name": world.profile}, "status": {"conditions": [ready]}}  # fmt: skip
    world.client.status().patch(body, body, patch_type=APPLY, field_manager="ballast-collector", force=True)
    with _separate(envtest, envtest_namespace, version="v1.34.2") as lane:
        assert lane.reconcile(world.profile).requeue_after == PROFILE_REQUEUE
    conditions = _conditions(world)
    assert set(conditions) == {"Ready", IN_PLACE_RESIZE}
    unsupported = conditions[IN_PLACE_RESIZE]
    assert (unsupported.status, unsupported.reason) == ("False", "Unsupported")
    assert "v1.34.2" in unsupported.message
    assert world.get_pod("web-0")["metadata"]["generation"] == 1
    with _separate(envtest, envtest_namespace) as lane:
        lane.reconcile(world.profile)
    assert set(_conditions(world)) == {"Ready"}
    assert _requests(world, "web-0")["cpu"] == "644m"


@pytest.mark.timeout(120)
def test_the_running_controller_paces_itself_by_the_policy_interval(
    envtest: Environment, world: World, envtest_namespace: str
) -> None:
    """The whole lane on its manager with the real clock: a 1 s interval walks the pod to its target."""
    world.add_policy(interval="1s")
    world.add_profile({"app": {"cpu": ("288m", None)}})
    world.add_pod("web-0", [container("app", {"cpu": "1"})])
    manager = new_manager(new_client(envtest, "ballastd"))
    setup(manager, kill_switch=KillSwitchState(), options=OperatorOptions())
    with running(manager, stop_timeout=30):
        poll_until(lambda: _requests(world, "web-0")["cpu"] == "288m", timeout=60, interval=0.2,
                   what="the pod to reach its recommendation")  # fmt: skip
    assert _generation(world, "web-0") == 6
