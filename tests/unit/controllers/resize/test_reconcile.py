"""The resize lane's reconcile on the in-memory API server: steps, QoS, kubelet outcomes, blocks, timings."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from ballast.controllers.resize import PROFILE_REQUEUE, RESIZED_MESSAGE
from ballast.internal.enrollment import LAST_RESIZE, PROFILE_REF, RESIZE_BLOCKED, RESIZE_BLOCKED_AT
from ballast.internal.operator import DryRun
from ballast.internal.resize import IN_PLACE_RESIZE
from ballast.internal.telemetry import APPLY_LIMIT_SCALED, RESIZE_APPLIED, RESIZE_FAILED, RESIZE_SKIPPED
from ballast.runtime import MERGE, GroupVersionKind
from ballast.runtime.apierrors import UnprocessableEntityError
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.fake import AdmissionHook
from tests.unit.controllers.resize.builders import cluster_policy, container, resources_of
from tests.unit.controllers.resize.conftest import START, Harness, counter, skip_labels

INTERVAL = 15 * 60.0
PROFILE_KIND = "ballast.tightlinesoftware.com/v1/WorkloadProfile"


@pytest.fixture
def name() -> str:
    """A profile name of its own per test, so the process-wide counters start at 0 for it."""
    return f"app-{uuid.uuid4().hex[:8]}"


def _with_policy(harness: Harness, **resize: str) -> Harness:
    harness.add_policy(cluster_policy("default", **resize))
    return harness


def _cpu(harness: Harness, pod_name: str, container_name: str = "app", group: str = "containers") -> dict[str, str]:
    resources = resources_of(harness.get_pod(pod_name), container_name, group)
    return {"request": resources.get("requests", {}).get("cpu"), "limit": resources.get("limits", {}).get("cpu")}


# ---------------------------------------------------------------------------------------------- stepping


def test_a_drifting_pod_converges_in_capped_steps_one_interval_apart(harness: Harness, name: str) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": ("288m", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "1", "memory": "64Mi"})])
    seen = []
    for _ in range(5):
        assert harness.reconcile(name).requeue_after == INTERVAL
        seen.append(_cpu(harness, "web-0")["request"])
        harness.advance(INTERVAL)
    assert seen == ["644m", "466m", "377m", "332m", "288m"]
    harness.reconcile(name)
    assert len(harness.api.resize_patches()) == 5
    assert counter(RESIZE_APPLIED, profile=name, name="app", policy="default", namespace="shop") == 5
    assert counter(RESIZE_SKIPPED, **skip_labels(name, "no_drift")) == 1


def test_the_patch_is_a_strategic_merge_of_changed_containers_and_fields_only(harness: Harness, name: str) -> None:
    _with_policy(harness)
    recs = {"app": {"cpu": ("500m", None), "memory": ("64Mi", None)}, "idle": {"cpu": ("100m", None)}}
    harness.add_profile(name, recs)
    harness.add_pod("web-0", name, [container("app", {"cpu": "1", "memory": "64Mi"}, {"memory": "1Gi"}),
                                    container("idle", {"cpu": "100m"})])  # fmt: skip
    harness.reconcile(name)
    [(path, content_type, body)] = harness.api.resize_patches()
    assert path == "/api/v1/namespaces/shop/pods/web-0/resize"
    assert content_type == "application/strategic-merge-patch+json"
    assert body == {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "750m"}}}]}}
    assert resources_of(harness.get_pod("web-0"), "app") == {"requests": {"cpu": "750m", "memory": "64Mi"},
                                                            "limits": {"memory": "1Gi"}}  # fmt: skip


def test_a_restartable_init_sidecar_is_resized_in_init_containers_and_a_plain_init_is_not(
    harness: Harness, name: str
) -> None:
    _with_policy(harness)
    recs = {"app": {"cpu": ("100m", None)}, "proxy": {"cpu": ("200m", None)}, "setup": {"cpu": ("300m", None)}}
    harness.add_profile(name, recs)
    harness.add_pod("web-0", name, [container("app", {"cpu": "100m"})], init_containers=[
        container("setup", {"cpu": "1"}), container("proxy", {"cpu": "1"}, restartPolicy="Always")])  # fmt: skip
    harness.reconcile(name)
    [(_, _, body)] = harness.api.resize_patches()
    assert body == {"spec": {"initContainers": [{"name": "proxy", "resources": {"requests": {"cpu": "600m"}}}]}}
    assert _cpu(harness, "web-0", "setup", "initContainers")["request"] == "1"


def test_a_step_that_rounds_to_the_current_value_is_no_drift_not_a_patch(harness: Harness, name: str) -> None:
    _with_policy(harness, maxChangePerCycle="10%")
    harness.add_profile(name, {"app": {"cpu": ("3m", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "2m"})])
    harness.reconcile(name)
    assert harness.api.resize_patches() == []
    assert counter(RESIZE_SKIPPED, **skip_labels(name, "no_drift")) == 1


def test_a_request_above_an_unmanaged_limit_scales_the_limit_keeping_the_ratio(harness: Harness, name: str) -> None:
    _with_policy(harness, maxChangePerCycle="100%")
    harness.add_profile(name, {"app": {"cpu": ("600m", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "100m"}, {"cpu": "500m"})])
    harness.reconcile(name)
    assert _cpu(harness, "web-0") == {"request": "600m", "limit": "3"}
    scaled = {"profile": name, "name": "app", "policy": "default", "namespace": "shop", "resource": "cpu"}
    assert counter(APPLY_LIMIT_SCALED, **scaled) == 1


def test_a_managed_limit_stepping_below_the_request_is_left_alone(harness: Harness, name: str) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": (None, "100m")}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "400m"}, {"cpu": "500m"})])
    harness.reconcile(name)  # 500m → 300m would go below the 400m request
    assert harness.api.resize_patches() == []
    assert _cpu(harness, "web-0") == {"request": "400m", "limit": "500m"}


# ------------------------------------------------------------------------------------ resources and QoS


def test_only_cpu_and_memory_are_resized_other_drift_is_not_resizable(harness: Harness, name: str) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"ephemeral-storage": ("2Gi", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "100m", "ephemeral-storage": "1Gi"})])
    harness.reconcile(name)
    assert harness.api.resize_patches() == []
    assert counter(RESIZE_SKIPPED, **skip_labels(name, "not_resizable")) == 1


def test_other_resources_are_left_out_when_cpu_changes(harness: Harness, name: str) -> None:
    _with_policy(harness, maxChangePerCycle="100%")
    harness.add_profile(name, {"app": {"cpu": ("200m", None), "ephemeral-storage": ("2Gi", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "100m", "ephemeral-storage": "1Gi"})])
    harness.reconcile(name)
    [(_, _, body)] = harness.api.resize_patches()
    assert body == {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "200m"}}}]}}


def test_a_guaranteed_pod_moves_request_and_limit_together(harness: Harness, name: str) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": ("500m", None), "memory": ("1Gi", None)}})
    both = {"cpu": "2", "memory": "1Gi"}
    harness.add_pod("web-0", name, [container("app", dict(both), dict(both))])
    harness.reconcile(name)
    assert resources_of(harness.get_pod("web-0"), "app") == {"requests": {"cpu": "1250m", "memory": "1Gi"},
                                                            "limits": {"cpu": "1250m", "memory": "1Gi"}}  # fmt: skip


def test_a_burstable_change_that_would_become_guaranteed_is_qos_pinned(harness: Harness, name: str) -> None:
    _with_policy(harness, maxChangePerCycle="100%")
    harness.add_profile(name, {"app": {"cpu": ("1", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "500m", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})])
    harness.reconcile(name)
    assert harness.api.resize_patches() == []
    assert counter(RESIZE_SKIPPED, **skip_labels(name, "qos_pinned")) == 1
    assert LAST_RESIZE not in harness.get_pod("web-0")["metadata"]["annotations"]


def test_a_best_effort_pod_is_qos_pinned(harness: Harness, name: str) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": ("100m", None)}})
    harness.add_pod("web-0", name, [container("app")])
    harness.reconcile(name)
    assert harness.api.resize_patches() == []
    assert counter(RESIZE_SKIPPED, **skip_labels(name, "qos_pinned")) == 1


# ------------------------------------------------------------------------------------- outcome of a resize


def test_success_annotates_the_pod_records_an_event_and_clears_an_old_block(harness: Harness, name: str) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": ("500m", None)}})
    old = {RESIZE_BLOCKED: "earlier failure", RESIZE_BLOCKED_AT: "2026-01-01T00:00:00Z"}
    harness.add_pod("web-0", name, [container("app", {"cpu": "1"})], annotations=old)
    harness.reconcile(name)
    annotations = harness.get_pod("web-0")["metadata"]["annotations"]
    assert annotations[LAST_RESIZE] == "2026-03-01T00:00:00Z"
    assert RESIZE_BLOCKED not in annotations
    assert RESIZE_BLOCKED_AT not in annotations
    [event] = _eventually_events(harness, "Resized")
    assert (event["type"], event["message"], event["involvedObject"]["name"]) == ("Normal", RESIZED_MESSAGE, "web-0")


def test_the_cooldown_is_written_before_the_step_so_a_crash_between_them_cannot_repeat_it(
    harness: Harness, name: str
) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": ("500m", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "1"})])
    harness.api.patches.clear()
    harness.reconcile(name)
    pod_writes = [(path, body) for path, _, body in harness.api.patches if "/pods/web-0" in path]
    first_path, first_body = pod_writes[0]
    assert not first_path.endswith("/resize")
    assert first_body["metadata"]["annotations"][LAST_RESIZE] == "2026-03-01T00:00:00Z"
    assert pod_writes[1][0].endswith("/pods/web-0/resize")
    assert len(pod_writes) == 2


def test_a_rejected_patch_puts_back_the_cooldown_it_replaced(harness: Harness, name: str) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": ("500m", None)}})
    earlier = {LAST_RESIZE: "2026-02-01T00:00:00Z"}
    harness.add_pod("web-0", name, [container("app", {"cpu": "1"})], annotations=earlier)
    harness.add_pod("web-1", name, [container("app", {"cpu": "1"})])
    harness.api.admission(_refuse_resources("no"))
    harness.reconcile(name)
    assert harness.get_pod("web-0")["metadata"]["annotations"][LAST_RESIZE] == "2026-02-01T00:00:00Z"
    assert LAST_RESIZE not in harness.get_pod("web-1")["metadata"]["annotations"]
    assert harness.get_pod("web-1")["metadata"]["annotations"][RESIZE_BLOCKED_AT] == "2026-03-01T00:00:00Z"


def test_a_rejected_patch_blocks_the_pod_and_backs_off_for_the_interval(harness: Harness, name: str) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": ("500m", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "1"})])
    harness.api.admission(_refuse_resources("é" * 300))
    harness.reconcile(name)
    annotations = harness.get_pod("web-0")["metadata"]["annotations"]
    assert annotations[RESIZE_BLOCKED_AT] == "2026-03-01T00:00:00Z"
    assert annotations[RESIZE_BLOCKED].startswith('Pod "web-0" is invalid: éé')
    assert len(annotations[RESIZE_BLOCKED].encode()) <= 256
    assert counter(RESIZE_FAILED, profile=name, name="app", policy="default", namespace="shop") == 1
    [event] = _eventually_events(harness, "ResizeBlocked")
    assert event["type"] == "Warning"
    assert event["message"].startswith('in-place resize failed: Pod "web-0" is invalid')
    harness.advance(INTERVAL - 1)
    harness.reconcile(name)
    assert counter(RESIZE_SKIPPED, **skip_labels(name, "blocked")) == 1
    harness.advance(1)
    harness.reconcile(name)
    assert counter(RESIZE_FAILED, profile=name, name="app", policy="default", namespace="shop") == 2


def test_in_progress_is_never_stacked_on(harness: Harness, name: str) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": ("288m", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "1"})])
    harness.reconcile(name)
    harness.set_pod_condition("web-0", "PodResizeInProgress")
    harness.advance(2 * INTERVAL)
    harness.reconcile(name)
    assert len(harness.api.resize_patches()) == 1
    assert counter(RESIZE_SKIPPED, **skip_labels(name, "in_progress")) == 1


def test_deferred_waits_out_the_interval_then_retries_without_blocking(harness: Harness, name: str) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": ("288m", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "1"})])
    harness.reconcile(name)
    harness.set_pod_condition("web-0", "PodResizePending", "Deferred")
    harness.advance(60)
    harness.reconcile(name)
    assert counter(RESIZE_SKIPPED, **skip_labels(name, "deferred")) == 1
    assert RESIZE_BLOCKED not in harness.get_pod("web-0")["metadata"]["annotations"]
    harness.advance(INTERVAL)
    harness.reconcile(name)
    assert _cpu(harness, "web-0")["request"] == "466m"


def test_infeasible_blocks_at_once_then_retries_after_the_interval(harness: Harness, name: str) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": ("288m", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "1"})])
    harness.reconcile(name)
    harness.set_pod_condition("web-0", "PodResizePending", "Infeasible", message="Node didn't have enough capacity")
    harness.advance(60)
    harness.reconcile(name)
    annotations = harness.get_pod("web-0")["metadata"]["annotations"]
    assert annotations[RESIZE_BLOCKED] == "Node didn't have enough capacity"
    assert annotations[RESIZE_BLOCKED_AT] == "2026-03-01T00:01:00Z"
    assert counter(RESIZE_FAILED, profile=name, name="app", policy="default", namespace="shop") == 1
    [event] = _eventually_events(harness, "ResizeBlocked")
    assert event["message"] == "in-place resize infeasible: Node didn't have enough capacity"
    harness.advance(60)
    harness.reconcile(name)
    assert counter(RESIZE_SKIPPED, **skip_labels(name, "blocked")) == 1
    harness.advance(INTERVAL)
    harness.reconcile(name)
    assert len(harness.api.resize_patches()) == 2
    assert RESIZE_BLOCKED not in harness.get_pod("web-0")["metadata"]["annotations"]


def test_a_failed_actuation_blocks_once_and_a_later_recommendation_replaces_it(harness: Harness, name: str) -> None:
    """The kubelet's `PodResizeInProgress`/`Error` (a memory limit below usage) is reported, not taken for a resize
    in progress forever, and never retried in a loop (docs/design.md, difference 74)."""
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": ("288m", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "340m"})])
    harness.reconcile(name)
    assert _cpu(harness, "web-0")["request"] == "288m"  # one step: the spec holds the recommendation
    generation = harness.get_pod("web-0")["metadata"]["generation"]
    message = 'cannot decrease memory limits: attempting to set container "app" memory limit below current usage'
    harness.set_pod_condition("web-0", "PodResizeInProgress", "Error", message=message, observedGeneration=generation)
    harness.advance(60)
    harness.reconcile(name)
    annotations = harness.get_pod("web-0")["metadata"]["annotations"]
    assert annotations[RESIZE_BLOCKED] == message
    [event] = _eventually_events(harness, "ResizeBlocked")
    assert event["message"] == f"in-place resize failed on the node: {message}"
    # The kubelet keeps failing on the same spec; the operator reported it once and sends nothing more.
    for _ in range(3):
        harness.advance(INTERVAL)
        harness.reconcile(name)
    assert len(harness.api.resize_patches()) == 1
    assert counter(RESIZE_FAILED, profile=name, name="app", policy="default", namespace="shop") == 1
    assert counter(RESIZE_SKIPPED, **skip_labels(name, "in_progress")) == 0
    assert counter(RESIZE_SKIPPED, **skip_labels(name, "no_drift")) == 3
    # A new recommendation replaces the failing spec (the kubelet actuates the newest), which it could not while
    # the failure counted as a resize in progress.
    harness.set_profile_status(name, {"app": {"cpu": ("400m", None)}})
    harness.advance(INTERVAL)
    harness.reconcile(name)
    assert _cpu(harness, "web-0")["request"] == "344m"  # one capped step toward 400m
    assert RESIZE_BLOCKED not in harness.get_pod("web-0")["metadata"]["annotations"]


def test_a_verdict_on_an_older_generation_is_ignored(harness: Harness, name: str) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": ("288m", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "1"})])
    harness.reconcile(name)
    generation = harness.get_pod("web-0")["metadata"]["generation"]
    harness.set_pod_condition("web-0", "PodResizePending", "Infeasible", observedGeneration=generation - 1)
    harness.advance(INTERVAL)
    harness.reconcile(name)
    assert _cpu(harness, "web-0")["request"] == "466m"
    assert RESIZE_BLOCKED not in harness.get_pod("web-0")["metadata"]["annotations"]
    current = harness.get_pod("web-0")["metadata"]["generation"]
    harness.set_pod_condition("web-0", "PodResizePending", "Infeasible", observedGeneration=current)
    harness.reconcile(name)
    assert RESIZE_BLOCKED in harness.get_pod("web-0")["metadata"]["annotations"]


def test_cooldown_after_a_resize(harness: Harness, name: str) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": ("288m", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "1"})])
    harness.reconcile(name)
    harness.advance(INTERVAL - 1)
    harness.reconcile(name)
    assert len(harness.api.resize_patches()) == 1
    assert counter(RESIZE_SKIPPED, **skip_labels(name, "cooldown")) == 1


# ------------------------------------------------------------------------------------ profile-level gates


def test_kill_switch_skips_the_profile_for_15_minutes(harness: Harness, name: str) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": ("288m", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "1"})])
    harness.kill_switch.update(configmap=True, suspended=False)
    assert harness.reconcile(name).requeue_after == PROFILE_REQUEUE
    assert harness.api.resize_patches() == []
    assert counter(RESIZE_SKIPPED, **skip_labels(name, "kill_switch", policy="", namespace="")) == 1


def test_a_profile_not_meeting_its_threshold_is_not_ready(harness: Harness, name: str) -> None:
    _with_policy(harness)
    measured = {"app": ["cpu", "memory"]}  # memory still accrues: no recommendation yet
    harness.add_profile(name, {"app": {"cpu": ("288m", None)}}, meets_threshold=False, measured=measured)
    harness.add_pod("web-0", name, [container("app", {"cpu": "1"})])
    assert harness.reconcile(name).requeue_after == PROFILE_REQUEUE
    assert harness.api.resize_patches() == []
    assert counter(RESIZE_SKIPPED, **skip_labels(name, "not_ready", policy="", namespace="")) == 1


def test_ready_containers_are_resized_while_a_sibling_still_accrues(harness: Harness, name: str) -> None:
    _with_policy(harness, maxChangePerCycle="100%")
    recs = {"app": {"cpu": ("200m", None)}, "sidecar": {"cpu": ("200m", None)}}
    measured = {"app": ["cpu"], "sidecar": ["cpu", "memory"]}  # sidecar memory has no recommendation yet
    harness.add_profile(name, recs, meets_threshold=False, measured=measured)
    harness.add_pod("web-0", name, [container("app", {"cpu": "1"}), container("sidecar", {"cpu": "1"})])
    assert harness.reconcile(name).requeue_after == INTERVAL
    assert (_cpu(harness, "web-0")["request"], _cpu(harness, "web-0", "sidecar")["request"]) == ("200m", "1")


def test_no_policy_ref_or_a_deleted_policy_is_no_policy(harness: Harness, name: str) -> None:
    harness.add_profile(name, {"app": {"cpu": ("288m", None)}}, policy=None)
    harness.add_profile(name + "-gone", {"app": {"cpu": ("288m", None)}})
    assert harness.reconcile(name).requeue_after == PROFILE_REQUEUE
    assert harness.reconcile(name + "-gone").requeue_after == PROFILE_REQUEUE
    assert counter(RESIZE_SKIPPED, **skip_labels(name, "no_policy", policy="", namespace="")) == 1


def test_a_resource_policy_in_the_pods_namespace_is_loaded(harness: Harness, name: str) -> None:
    body = cluster_policy("local", interval="5m")
    body.update(kind="ResourcePolicy", metadata={"name": "local", "namespace": "shop"})
    harness.add_policy(body)
    harness.add_profile(name, {"app": {"cpu": ("288m", None)}}, policy=("ResourcePolicy", "shop", "local"))
    harness.add_pod("web-0", name, [container("app", {"cpu": "1"})])
    assert harness.reconcile(name).requeue_after == 300
    assert _cpu(harness, "web-0")["request"] == "644m"


@pytest.mark.parametrize(("interval", "seconds"), [("5m", 300), ("90s", 90), ("soon", INTERVAL), ("0s", INTERVAL)])
def test_requeue_follows_the_policy_interval(harness: Harness, name: str, interval: str, seconds: float) -> None:
    _with_policy(harness, interval=interval)
    harness.add_profile(name, {"app": {"cpu": ("288m", None)}})
    assert harness.reconcile(name).requeue_after == seconds


def test_an_edited_policy_is_read_again_by_the_next_reconcile(harness: Harness, name: str) -> None:
    _with_policy(harness, interval="5m")
    harness.add_profile(name, {"app": {"cpu": ("288m", None)}})
    assert harness.reconcile(name).requeue_after == 300
    kind = "ballast.tightlinesoftware.com/v1/ClusterResourcePolicy"
    policy = harness.client.get(kind, "default")
    edited = harness.client.patch(policy, {"spec": {"behaviors": {"resize": {"interval": "90s"}}}}, patch_type=MERGE)
    assert edited["metadata"]["generation"] == policy["metadata"]["generation"] + 1
    poll_until(lambda: harness.manager.cache.get(kind, "default")["metadata"]["generation"] == 2, timeout=5,
               what="the cache to hold the edited policy")  # fmt: skip
    assert harness.reconcile(name).requeue_after == 90  # a new generation: its settings, not the remembered ones


def test_a_missing_profile_is_done(harness: Harness, name: str) -> None:
    assert harness.reconcile(name).requeue_after == 0


# ---------------------------------------------------------------------------------------- modes and dry-run


def test_apply_and_measure_pods_are_never_resized(harness: Harness, name: str) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": ("288m", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "1"})], mode="apply")
    harness.add_pod("web-1", name, [container("app", {"cpu": "1"})], mode="measure")
    harness.reconcile(name)
    assert [path for path, _, _ in harness.api.patches if "/pods/" in path] == []


def test_dry_run_patches_nothing_and_counts_dry_run() -> None:
    harness = Harness(dry_run=DryRun.cascade(measure=True))
    try:
        name = f"app-{uuid.uuid4().hex[:8]}"
        _with_policy(harness)
        harness.add_profile(name, {"app": {"cpu": ("288m", None)}})
        harness.add_pod("web-0", name, [container("app", {"cpu": "1"})])
        harness.add_pod("web-1", name, [container("app", {"cpu": "1"})])
        harness.set_pod_condition("web-1", "PodResizePending", "Infeasible")
        before = len(harness.api.patches)
        harness.reconcile(name)
        assert harness.api.patches[before:] == []
        assert counter(RESIZE_SKIPPED, **skip_labels(name, "dry_run")) == 2
    finally:
        harness.close()


# ------------------------------------------------------------------------------------ unsupported servers


def test_an_old_api_server_gets_a_condition_instead_of_patches() -> None:
    harness = Harness(version="v1.34.3-eks-1")
    try:
        name = f"app-{uuid.uuid4().hex[:8]}"
        _with_policy(harness)
        harness.add_profile(name, {"app": {"cpu": ("288m", None)}})
        harness.add_pod("web-0", name, [container("app", {"cpu": "1"})])
        assert harness.reconcile(name).requeue_after == PROFILE_REQUEUE
        assert harness.reconcile(name).requeue_after == PROFILE_REQUEUE
        assert harness.api.resize_patches() == []
        [condition] = harness.client.get(PROFILE_KIND, name)["status"]["conditions"]
        assert condition["type"] == IN_PLACE_RESIZE
        assert (condition["status"], condition["reason"]) == ("False", "Unsupported")
        assert "v1.34.3-eks-1" in condition["message"]
        assert condition["lastTransitionTime"] == START.strftime("%Y-%m-%dT%H:%M:%SZ")
        status_writes = [p for p in harness.api.patches if p[0].endswith("/status") and "apply" in p[1]]
        assert len(status_writes) == 1  # the second reconcile found the condition in place
        assert harness.version_reads == 1
    finally:
        harness.close()


def _refuse_resources(detail: str) -> AdmissionHook:
    """An admission hook refusing any pod update that changes container resources (a rejected resize)."""

    def hook(operation: str, gvk: GroupVersionKind, obj: dict[str, Any], old: dict[str, Any] | None) -> None:
        if operation == "UPDATE" and gvk.kind == "Pod" and old is not None and obj["spec"] != old["spec"]:
            raise UnprocessableEntityError(422, "Invalid", f'Pod "{obj["metadata"]["name"]}" is invalid: {detail}')

    return hook


def _eventually_events(harness: Harness, reason: str) -> list[dict[str, Any]]:
    return poll_until(lambda: harness.events(reason), timeout=5, interval=0.005, what=f"a {reason} event")


def test_an_old_api_server_leaves_profiles_without_resize_pods_alone() -> None:
    harness = Harness(version="v1.30.0")
    try:
        name = f"app-{uuid.uuid4().hex[:8]}"
        _with_policy(harness)
        harness.add_profile(name, {"app": {"cpu": ("288m", None)}})
        harness.add_pod("web-0", name, [container("app", {"cpu": "1"})], mode="apply")
        harness.reconcile(name)
        assert "conditions" not in harness.client.get(PROFILE_KIND, name)["status"]
    finally:
        harness.close()


def test_a_pod_that_moved_to_another_profile_since_the_cache_saw_it_is_left_alone(harness: Harness, name: str) -> None:
    _with_policy(harness)
    harness.add_profile(name, {"app": {"cpu": ("288m", None)}})
    harness.add_pod("web-0", name, [container("app", {"cpu": "1"})])
    reconciler: Any = harness.controller.reconciler
    live_reader = reconciler.api_reader

    class MovedOn:
        """The live read sees the pod under another profile already (the cache has not caught up)."""

        def get(self, *args: Any) -> Any:
            pod = live_reader.get(*args)
            pod["metadata"]["annotations"][PROFILE_REF] = "someone-else"
            return pod

    reconciler.api_reader = MovedOn()
    harness.reconcile(name)
    assert harness.api.resize_patches() == []
