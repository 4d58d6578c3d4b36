"""Right-sizing on the mini-cluster, with no test double in the path: `ballastd` as a process under its generated
RBAC, its webhook registered, collecting from the real metrics-server, which scrapes kwok's Nodes, which report
what each container's usage annotation says. Deployments roll out through kube-controller-manager and
kube-scheduler; the harness's resize actuator plays the kubelet's part of an in-place resize.

The default preset's ephemeral-storage source (the kubelet Summary API) is off here: kwok serves no Summary API.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from ballast.internal.enrollment import MODE_LABEL
from ballast.internal.quantity import parse_quantity
from ballast.runtime.envtest import MiniCluster, usage_annotation
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.kubelet import ResizeActuator
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.support import Operator, create_namespace, deployment, running_pods

PROFILE = "checkout--api--default-a9696153"
PROFILES = "/apis/ballast.tightlinesoftware.com/v1/workloadprofiles"
IDENTITY = {"app.kubernetes.io/name": "checkout", "app.kubernetes.io/component": "api"}
USAGE = {
    usage_annotation("cpu", "app"): "200m",
    usage_annotation("memory", "app"): "100Mi",
}


@pytest.fixture(scope="module")
def actuator(cluster: MiniCluster) -> Iterator[ResizeActuator]:
    running = ResizeActuator(cluster.env, MODE_LABEL).start()
    yield running
    running.stop()


def profile_status(cluster: MiniCluster) -> dict[str, Any]:
    try:
        return dict(cluster.env.rest.get(f"{PROFILES}/{PROFILE}").get("status") or {})
    except APIError:
        return {}


def cpu_request(pod: dict[str, Any]) -> float:
    return float(parse_quantity(pod["spec"]["containers"][0]["resources"]["requests"]["cpu"]))


def test_usage_from_metrics_server_sizes_a_new_namespace_at_admission_and_resizes_in_place(
    cluster: MiniCluster, operator: Operator, actuator: ResizeActuator
) -> None:
    env = cluster.env
    first, second, third = (create_namespace(cluster, f"shop-{suffix}") for suffix in "abc")
    labels = {**IDENTITY, MODE_LABEL: "measure"}
    for namespace in (first, second):
        body = deployment("checkout", replicas=2, cpu="1", memory="512Mi", labels=labels, annotations=USAGE)
        env.rest.create(f"/apis/apps/v1/namespaces/{namespace}/deployments", body)

    # Four pods in two namespaces, one identity: one profile, fed by metrics-server's scrapes of kwok.
    poll_until(
        lambda: profile_status(cluster).get("state") == "Sufficient",
        timeout=240,
        interval=2.0,
        what="a Sufficient profile from metrics-server's samples",
        last_error=operator.output,
    )
    status = profile_status(cluster)
    assert status["activeWorkloads"] == 4
    (app,) = status["containers"]
    # avg CPU × 1.25 headroom; metrics-server's CPU is a rate between scrapes, so close to 200m, not exact.
    assert 0.24 <= float(parse_quantity(app["recommendations"]["cpu"]["request"])) <= 0.26
    assert app["recommendations"]["memory"]["request"] == "100Mi"
    recommended_cpu = app["recommendations"]["cpu"]["request"]

    # Cold start: the same app's first pod in a third namespace is sized at its CREATE, through the ReplicaSet.
    applied = {**IDENTITY, MODE_LABEL: "apply"}
    body = deployment("checkout", replicas=1, cpu="1", memory="512Mi", labels=applied, annotations=USAGE)
    env.rest.create(f"/apis/apps/v1/namespaces/{third}/deployments", body)
    (admitted,) = poll_until(
        lambda: running_pods(cluster, third, "app=checkout") or None, timeout=60, what="the admitted pod Running"
    )
    assert admitted["spec"]["containers"][0]["resources"]["requests"] == {
        "cpu": recommended_cpu,
        "memory": "100Mi",
    }

    # In place: a running pod switched to `resize` converges through pods/resize, the actuator completing each
    # step as a kubelet would (kwok leaves the status untouched).
    target = running_pods(cluster, first, "app=checkout")[0]
    name = target["metadata"]["name"]
    env.rest.request(
        "PATCH",
        f"/api/v1/namespaces/{first}/pods/{name}",
        {"metadata": {"labels": {MODE_LABEL: "resize"}}},
        content_type="application/merge-patch+json",
    )
    seen = [cpu_request(target)]

    def converged() -> bool:
        pod = env.rest.get(f"/api/v1/namespaces/{first}/pods/{name}")
        cpu = cpu_request(pod)
        if seen[-1] != cpu:
            seen.append(cpu)
        statuses = pod["status"].get("containerStatuses") or [{}]
        reported = statuses[0].get("resources", {}).get("requests", {}).get("cpu")
        # The recommendation moves a little with every scrape (CPU is a rate): converged is "within the band
        # the recommendation lives in, and the status reports what the spec asks".
        return 0.24 <= cpu <= 0.26 and reported is not None and float(parse_quantity(reported)) == cpu

    poll_until(converged, timeout=90, interval=0.5, what="the resize pod to converge", last_error=operator.output)
    assert seen[0] == 1.0
    assert len(seen) >= 3, seen  # stepped down, 50 % of the gap at a time
    assert seen == sorted(seen, reverse=True)
    assert env.rest.get(f"/api/v1/namespaces/{first}/pods/{name}")["status"]["phase"] == "Running"
