"""The what-if requests: what admission would write, from a profile's ready containers, for the pod's containers."""

from __future__ import annotations

from typing import Any

from ballast.api.ballast.v1 import WorkloadProfileStatus
from ballast.internal.consolidation.inputs import pod_requests, profile_name, profile_requests


def status(meets_threshold: bool, containers: list[dict[str, Any]]) -> WorkloadProfileStatus:
    return WorkloadProfileStatus.model_validate({"meetsThreshold": meets_threshold, "containers": containers})


def test_ready_containers_give_their_cpu_and_memory_requests() -> None:
    profile = status(True, [
        {"name": "app", "recommendations": {"cpu": {"request": "250m", "limit": "1"}, "memory": {"request": "256Mi"},
                                            "ephemeral-storage": {"request": "1Gi"}}},
        {"name": "idle"},
    ])  # fmt: skip
    assert profile_requests(profile) == {"app": {"cpu": "250m", "memory": "256Mi"}}


def test_a_container_still_accruing_is_left_out_and_a_bad_value_skipped() -> None:
    profile = status(False, [
        {"name": "app", "usageStats": [{"resource": "cpu"}], "recommendations": {"cpu": {"request": "300m"}}},
        {"name": "late", "usageStats": [{"resource": "cpu"}, {"resource": "memory"}],
         "recommendations": {"cpu": {"request": "100m"}}},
        {"name": "odd", "usageStats": [{"resource": "cpu"}], "recommendations": {"cpu": {"request": "lots"}}},
    ])  # fmt: skip
    assert profile_requests(profile) == {"app": {"cpu": "300m"}}
    assert profile_requests(None) == {}


def test_only_the_pods_managed_containers_take_requests() -> None:
    pod = {
        "metadata": {"annotations": {"ballast.tightlinesoftware.com/profile-ref": "web"}},
        "spec": {"containers": [{"name": "app"}],
                 "initContainers": [{"name": "proxy", "restartPolicy": "Always"}, {"name": "setup"}]},
    }  # fmt: skip
    profile = {"app": {"cpu": "1"}, "proxy": {"cpu": "2"}, "setup": {"cpu": "3"}, "gone": {"cpu": "4"}}
    assert pod_requests(pod, profile) == {"app": {"cpu": "1"}, "proxy": {"cpu": "2"}}
    assert profile_name(pod) == "web"
    assert profile_name({"metadata": {}}) is None
