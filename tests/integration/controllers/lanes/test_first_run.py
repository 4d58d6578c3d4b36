"""What a first run of the core lanes leaves behind, against the real API server: a quiet log (the race between
enrollment and the profile lane on a new profile is not an error) and `ballast_pods_processed_total` counting
each enrolled pod once (issue 13, item 7)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import pytest

from ballast.api.ballast.v1 import WorkloadProfile
from ballast.internal.enrollment import PROFILE_CLEANUP_FINALIZER, PROFILE_REF
from ballast.internal.telemetry import PODS_PROCESSED
from ballast.runtime import Client
from ballast.runtime.envtest.wait import poll_until

from .conftest import Operator, ballast_config, pod

APPS = 6
TOUCHED_PODS = 12


@pytest.fixture
def namespace(new_namespace: Callable[[str], str]) -> str:
    return new_namespace("first")


def _labels(index: int) -> dict[str, str]:
    return {"app.kubernetes.io/name": f"app{index}", "app.kubernetes.io/component": "api"}


def _profile_name(index: int) -> str:
    return f"app{index}--api--default-a9696153"


def _created(namespace: str) -> float:
    return sum(
        sample.value
        for family in PODS_PROCESSED.collect()
        for sample in family.samples
        if sample.labels.get("event") == "created" and sample.labels.get("namespace") == namespace
    )


def _active(client: Client, name: str) -> int | None:
    profile: WorkloadProfile = client.get(WorkloadProfile, name)
    return profile.status.active_workloads if profile.status else None


def _stamped(client: Client, namespace: str, count: int) -> bool:
    pods = client.list("v1/Pod", namespace)
    refs = [(p["metadata"].get("annotations") or {}).get(PROFILE_REF) for p in pods]
    return len(refs) == count and all(refs)


def test_a_first_run_logs_no_error_and_creates_profiles_with_their_finalizer(
    operator: Operator,
    operator_client: Client,
    apply_config: Any,
    default_policy: str,
    namespace: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Each new profile is written by enrollment (status) and the profile lane (finalizer, count) at once; the
    profile is created with its finalizer, and a conflict between the two would be retried, not an error."""
    apply_config(ballast_config())
    with caplog.at_level(logging.INFO):
        for index in range(APPS):
            operator_client.create(pod(f"app{index}-0", namespace, _labels(index)))
        poll_until(lambda: _stamped(operator_client, namespace, APPS), timeout=30, what="every pod enrolled")
        names = [_profile_name(index) for index in range(APPS)]
        poll_until(lambda: all(_active(operator_client, n) == 1 for n in names), timeout=30, what="the counts")
        time.sleep(1.0)  # let retries and late events settle
    problems = [
        f"{record.levelname} {record.name}: {record.getMessage()}"
        for record in caplog.records
        if record.levelno >= logging.ERROR or record.exc_info
    ]
    assert problems == []
    for index in range(APPS):
        profile: WorkloadProfile = operator_client.get(WorkloadProfile, _profile_name(index))
        assert PROFILE_CLEANUP_FINALIZER in (profile.metadata.finalizers or [])


def test_pods_processed_counts_each_created_pod_once(
    operator: Operator,
    operator_client: Client,
    apply_config: Any,
    default_policy: str,
    namespace: str,
) -> None:
    """Pods that change while they are enrolled (here a label touched right after creation, as a kubelet's status
    updates would) bring events from before the lane's own stamp; the cache may not have that stamp yet when the
    pod is reconciled again, and the pod must still count as created once. Their profiles exist already, so
    enrolling them is quick and the touches straddle the stamp."""
    apply_config(ballast_config())
    for index in range(TOUCHED_PODS):  # the profiles exist first: enrolling the touched pods is then quick
        operator_client.create(pod(f"app{index}-first", namespace, _labels(index)))
    poll_until(lambda: _stamped(operator_client, namespace, TOUCHED_PODS), timeout=30, what="the first pods enrolled")
    for index in range(TOUCHED_PODS):
        created = operator_client.create(pod(f"app{index}-0", namespace, _labels(index)))
        for touch in range(4):  # while the lane enrolls it
            operator_client.patch(created, {"metadata": {"labels": {"touched": str(touch)}}})
    poll_until(lambda: _stamped(operator_client, namespace, 2 * TOUCHED_PODS), timeout=30, what="all enrolled")
    time.sleep(1.5)  # late reconciles of the touched pods
    assert _created(namespace) == 2 * TOUCHED_PODS
