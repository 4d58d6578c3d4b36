"""The resize actuator's status patch: what a kubelet reports once an in-place resize is done."""

from __future__ import annotations

from typing import Any

from ballast.runtime.envtest.kubelet import actuated_status


def _pod(
    spec_cpu: str, reported: dict[str, Any] | None, *, conditions: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    status: dict[str, Any] = {"conditions": conditions or [{"type": "Ready", "status": "True"}]}
    if reported is not None:
        status["containerStatuses"] = [{"name": "app", "ready": True, **reported}]
    return {
        "metadata": {"name": "p", "namespace": "n", "resourceVersion": "42", "generation": 3},
        "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": spec_cpu}}}]},
        "status": status,
    }


def test_a_pending_resize_is_reported_done_with_the_generation_and_without_resize_conditions() -> None:
    pending = [{"type": "Ready", "status": "True"}, {"type": "PodResizeInProgress", "status": "True"}]
    old = {"resources": {"requests": {"cpu": "1"}}, "allocatedResources": {"cpu": "1"}}
    patch = actuated_status(_pod("500m", old, conditions=pending))
    assert patch == {
        "metadata": {"resourceVersion": "42"},
        "status": {
            "containerStatuses": [
                {"name": "app", "ready": True, "resources": {"requests": {"cpu": "500m"}},
                 "allocatedResources": {"cpu": "500m"}}
            ],
            "conditions": [{"type": "Ready", "status": "True"}],
            "observedGeneration": 3,
        },
    }  # fmt: skip


def test_nothing_to_do_when_the_status_matches_or_the_pod_has_not_started() -> None:
    done = {"resources": {"requests": {"cpu": "500m"}}, "allocatedResources": {"cpu": "500m"}}
    assert actuated_status(_pod("500m", done)) is None
    assert actuated_status(_pod("500m", None)) is None
