"""Scenario 7: the operator down entirely. With the shipped `failurePolicy: Fail`, an enrolled pod is refused
with the API server's message naming our webhook, an unenrolled pod is created as ever (the objectSelector
keeps every other pod away from us), and with `Ignore` the enrolled pod is created unmodified. Pods carry no
finalizer of ours, so deleting them never waits for the operator."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from ballast.internal.enrollment import MODE_LABEL, POLICY_REF
from ballast.internal.manifests.webhooks import MUTATE_POD_WEBHOOK
from ballast.runtime.envtest import MiniCluster
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.figures import record
from tests.e2e.support import Operator, create_namespace
from tests.integration.internal.cmd.ballastd.conftest import pod

MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/ballast"


def set_failure_policy(cluster: MiniCluster, policy: str) -> None:
    config: dict[str, Any] = cluster.env.rest.get(MUTATING)
    for webhook in config["webhooks"]:
        webhook["failurePolicy"] = policy
    cluster.env.rest.request("PUT", MUTATING, config)


@pytest.fixture
def operator_down(cluster: MiniCluster, operator: Operator) -> Iterator[Operator]:
    operator.stop()
    try:
        yield operator
    finally:
        set_failure_policy(cluster, "Fail")
        operator.start()


def test_with_the_operator_down_fail_refuses_enrolled_pods_only_and_ignore_admits_them_untouched(
    cluster: MiniCluster, operator_down: Operator
) -> None:
    env = cluster.env
    namespace = create_namespace(cluster, "operator-down")
    pods = f"/api/v1/namespaces/{namespace}/pods"

    started = time.monotonic()
    with pytest.raises(APIError) as refused:
        env.rest.create(pods, pod("enrolled", namespace, "checkout", "apply"))
    refusal_seconds = time.monotonic() - started
    assert refused.value.status == 500
    assert f'failed calling webhook "{MUTATE_POD_WEBHOOK}"' in refused.value.message
    assert "connection refused" in refused.value.message

    plain = env.rest.create(pods, pod("unenrolled", namespace, "checkout", None))
    assert plain["metadata"]["name"] == "unenrolled"

    set_failure_policy(cluster, "Ignore")

    def admitted_untouched() -> dict[str, Any] | None:
        try:
            made: dict[str, Any] = env.rest.create(pods, pod("ignored", namespace, "checkout", "apply"))
        except APIError:
            return None  # the API server has not reloaded the configuration yet
        return made

    made = poll_until(admitted_untouched, timeout=20, what="the enrolled pod admitted under Ignore")
    assert made["metadata"]["labels"][MODE_LABEL] == "apply"
    assert POLICY_REF not in (made["metadata"].get("annotations") or {})
    assert made["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "128Mi"}

    # Nothing waits for the operator on the way out.
    for name in ("unenrolled", "ignored"):
        assert not env.rest.get(f"{pods}/{name}")["metadata"].get("finalizers")
        env.rest.request("DELETE", f"{pods}/{name}", {"gracePeriodSeconds": 0})
    poll_until(lambda: not env.rest.get(pods)["items"], timeout=30, what="the pods to be gone")
    record("operator_down", {"refusal_seconds": round(refusal_seconds, 3), "stuck_terminating": 0})
