"""Resizes the real node's control plane or kubelet will not carry out, and what `ballastd` then does.

An upsize above the node's allocatable is refused by the 1.37 API server (403) before the kubelet sees it; a memory
limit below what the container uses is accepted and then failed by the kubelet (`PodResizeInProgress`/`Error`,
retried by the kubelet on its own). Either way the pod is marked blocked, the container keeps running with its
cgroup as it was, and the operator does not hammer the API server: the attempts are counted from the API
server's audit log, not from what the operator says it sent.
"""

from __future__ import annotations

import copy
import datetime
import itertools
import math
import time
from collections.abc import Iterator
from typing import Any

import pytest

from ballast.internal.enrollment import RESIZE_BLOCKED
from ballast.internal.quantity import parse_quantity
from ballast.runtime.envtest import MiniCluster
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.figures import record
from tests.e2e.realnode.conftest import start_real_cluster
from tests.e2e.realnode.support import (
    cgroup_counter,
    cgroup_values,
    container_status,
    events_of,
    expected_cgroup_values,
    get_pod,
    namespaced_policy,
    real_pod,
    resize_attempts,
    wait_running,
)
from tests.e2e.support import ALLOCATABLE_REFUSAL, Operator, create_namespace

MIB = 2**20
INTERVAL_SECONDS = 3  # the suite's fast policy: resize.interval 3s, also the backoff after a block
WINDOW_SECONDS = 10 * INTERVAL_SECONDS  # how long the operator is watched once the pod is blocked
RESIZE_BLOCKED_EVENT = "ResizeBlocked"
POLICIES = "/apis/ballast.tightlinesoftware.com/v1/namespaces/{}/resourcepolicies"


@pytest.fixture(scope="module")
def real_cluster() -> Iterator[MiniCluster]:
    """The real-node cluster, with the API server's audit log (every resize PATCH it answered)."""
    cluster = start_real_cluster(audit_log=True)
    yield cluster
    cluster.stop()


def _blocked(cluster: MiniCluster, namespace: str, name: str) -> dict[str, Any] | None:
    pod = get_pod(cluster, namespace, name)
    return pod if RESIZE_BLOCKED in pod["metadata"].get("annotations", {}) else None


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


def test_an_upsize_above_the_nodes_allocatable_is_refused_blocked_and_tried_at_most_once_per_interval(
    real_cluster: MiniCluster, real_operator: Operator
) -> None:
    env = real_cluster.env
    node = real_cluster.real_node
    assert node is not None
    namespace = create_namespace(real_cluster, "real-refused")
    # Two containers holding R MiB each, recommended at 0.75 × the node's allocatable memory apiece: each value
    # fits the node (so the collector keeps it, docs/design.md, difference 70), the pod's sum does not. 100 % per
    # cycle, so the first step already asks for it all. Memory, not CPU: what a container holds does not depend on
    # how busy the machine is.
    allocatable = int(parse_quantity(env.rest.get(f"/api/v1/nodes/{node.name}")["status"]["allocatable"]["memory"]))
    resident = max(256, math.ceil(0.75 * allocatable / MIB / 90))
    headroom = 0.75 * allocatable / (resident * MIB)
    metrics = [{"resource": "memory", "field": "request", "source": "kubernetes-metrics", "aggregation": "p75",
                "headroom": f"{headroom:.3f}"}]  # fmt: skip
    env.rest.create(POLICIES.format(namespace), namespaced_policy(namespace, metrics, maxChangePerCycle="100%"))
    # With a memory limit, which the resize would raise with the request (keeping their ratio, difference 4): what
    # the kernel enforces shows whether anything of it was applied.
    body = real_pod("hungry", app="hungry", mode="resize", args=[f"mem:{resident}:2"],
                    requests={"cpu": "50m", "memory": f"{resident + 32}Mi"},
                    limits={"memory": f"{resident + 64}Mi"})  # fmt: skip
    sidecar = copy.deepcopy(body["spec"]["containers"][0]) | {"name": "sidecar"}
    body["spec"]["containers"].append(sidecar)
    env.rest.create(f"/api/v1/namespaces/{namespace}/pods", body)
    started = wait_running(real_cluster, namespace, "hungry")
    container_id = container_status(started)["containerID"]
    initial = cgroup_values(real_cluster, started)
    assert initial["memory"] == (resident + 64) * MIB

    pod = poll_until(lambda: _blocked(real_cluster, namespace, "hungry"), timeout=180, interval=0.5,
                     what="the refused upsize to block the pod", last_error=real_operator.output)  # fmt: skip
    message = pod["metadata"]["annotations"][RESIZE_BLOCKED]
    assert ALLOCATABLE_REFUSAL in message, message
    assert "memory" in message, message
    (first,) = resize_attempts(real_cluster, namespace, "hungry")[:1]
    assert first.code == 403
    time.sleep(WINDOW_SECONDS)  # the operator is left alone with the blocked pod

    watched_until = _now()
    attempts = [a for a in resize_attempts(real_cluster, namespace, "hungry") if a.received <= watched_until]
    assert {a.code for a in attempts} == {403}  # the API server refused every one: the kubelet saw none
    assert {a.user for a in attempts} == {"system:serviceaccount:ballast-system:ballast"}
    gaps = [(b.received - a.received).total_seconds() for a, b in itertools.pairwise(attempts)]
    # At most one attempt per interval (the backoff's stamp is whole seconds, so one may come up to 1 s early).
    assert all(gap >= INTERVAL_SECONDS - 1 for gap in gaps), gaps
    span = (watched_until - first.received).total_seconds()
    assert len(attempts) <= span // (INTERVAL_SECONDS - 1) + 1, (len(attempts), span)
    assert events_of(real_cluster, namespace, "hungry", RESIZE_BLOCKED_EVENT)

    # Nothing reached the container: spec, status and the kernel's cgroup as the pod was created.
    after = get_pod(real_cluster, namespace, "hungry")
    asked = f"{resident + 32}Mi"
    assert [c["resources"]["requests"]["memory"] for c in after["spec"]["containers"]] == [asked, asked]
    status = container_status(after)
    assert status["resources"]["requests"]["memory"] == asked
    assert cgroup_values(real_cluster, after) == initial
    assert (status["restartCount"], status["containerID"]) == (0, container_id)
    assert real_operator.process.process.poll() is None
    record("real_node_refused_upsize", {
        "code": first.code, "attempts": len(attempts), "window_seconds": round(span, 1),
        "interval_seconds": INTERVAL_SECONDS, "min_gap_seconds": round(min(gaps), 2) if gaps else None,
        "restarts": status["restartCount"],
    })  # fmt: skip


def _kubelet_error(pod: dict[str, Any]) -> dict[str, Any] | None:
    for condition in pod["status"].get("conditions", []):
        if condition["type"] == "PodResizeInProgress" and condition.get("reason") == "Error":
            return dict(condition)
    return None


def test_a_memory_limit_below_usage_is_reported_once_not_looped_and_replaced_by_a_later_recommendation(
    real_cluster: MiniCluster, real_operator: Operator
) -> None:
    env = real_cluster.env
    namespace = create_namespace(real_cluster, "real-below-usage")
    # ~80 MiB resident in PID 1, measured and recommended at half of it: a memory limit the kernel could only meet
    # by killing the container, which the kubelet refuses to set (docs/design.md, difference 74).
    below = [
        {"resource": "memory", "field": "request", "source": "kubernetes-metrics", "aggregation": "p75",
         "headroom": "0.25"},
        {"resource": "memory", "field": "limit", "source": "kubernetes-metrics", "aggregation": "max",
         "headroom": "0.5"},
    ]  # fmt: skip
    policy = namespaced_policy(namespace, below, maxChangePerCycle="100%")
    env.rest.create(POLICIES.format(namespace), policy)
    body = real_pod("holder", app="holder", mode="resize", args=["mem:80:2"],
                    requests={"cpu": "50m", "memory": "64Mi"}, limits={"cpu": "200m", "memory": "256Mi"})  # fmt: skip
    env.rest.create(f"/api/v1/namespaces/{namespace}/pods", body)
    started = wait_running(real_cluster, namespace, "holder")
    container_id = container_status(started)["containerID"]
    assert cgroup_values(real_cluster, started)["memory"] == 256 * MIB

    def failed_and_blocked() -> dict[str, Any] | None:
        pod = get_pod(real_cluster, namespace, "holder")
        return pod if _kubelet_error(pod) and RESIZE_BLOCKED in pod["metadata"].get("annotations", {}) else None

    pod = poll_until(failed_and_blocked, timeout=180, interval=0.5, what="the kubelet's Error, reported on the pod",
                     last_error=real_operator.output)  # fmt: skip
    error = _kubelet_error(pod)
    assert error is not None
    assert "below current usage" in error["message"], error
    assert pod["metadata"]["annotations"][RESIZE_BLOCKED] == error["message"][:256]
    (event,) = events_of(real_cluster, namespace, "holder", RESIZE_BLOCKED_EVENT)
    assert event["message"].startswith("in-place resize failed on the node: cannot decrease memory limits")
    wanted = parse_quantity(pod["spec"]["containers"][0]["resources"]["limits"]["memory"])
    blocked_at = _now()
    time.sleep(WINDOW_SECONDS)  # the kubelet keeps failing; the operator must not keep sending

    attempts = resize_attempts(real_cluster, namespace, "holder")
    in_window = [a for a in attempts if a.received >= blocked_at]
    assert in_window == [], in_window  # reported once, nothing sent on top while the spec holds the recommendation
    assert [a.code for a in attempts] == [200], attempts  # one patch, accepted by the API server
    assert len(events_of(real_cluster, namespace, "holder", RESIZE_BLOCKED_EVENT)) == 1
    pod = get_pod(real_cluster, namespace, "holder")
    status = container_status(pod)
    # The kernel kept the old limit, above what the container uses; the container never restarted.
    usage = cgroup_counter(real_cluster, pod, "memory", "memory.usage_in_bytes")
    kept = cgroup_values(real_cluster, pod)["memory"]
    assert kept == 256 * MIB
    assert status["resources"]["limits"]["memory"] == "256Mi"
    assert wanted < usage < kept, (wanted, usage, kept)
    assert (status["restartCount"], status["containerID"]) == (0, container_id)
    assert "running" in status["state"]

    # A recommendation above usage replaces the failing spec: the operator sends it (it would not while the
    # failure counted as a resize in progress), and the kubelet applies it.
    above = [dict(m, headroom=h) for m, h in zip(below, ("1.2", "2"), strict=True)]
    env.rest.request("PATCH", f"{POLICIES.format(namespace)}/{namespace}", {"spec": {"metrics": above}},
                     content_type="application/merge-patch+json")  # fmt: skip
    replaced_from = time.monotonic()

    def applied() -> tuple[dict[str, Any], dict[str, int]] | None:
        pod = get_pod(real_cluster, namespace, "holder")
        spec = pod["spec"]["containers"][0]["resources"]
        if _kubelet_error(pod) or container_status(pod).get("resources") != spec:
            return None
        return pod, cgroup_values(real_cluster, pod)

    pod, enforced = poll_until(applied, timeout=180, interval=0.5, what="the replacing resize applied",
                               last_error=real_operator.output)  # fmt: skip
    replaced_after = time.monotonic() - replaced_from
    status = container_status(pod)
    assert enforced == expected_cgroup_values(status["resources"])
    assert enforced["memory"] > usage
    assert RESIZE_BLOCKED not in pod["metadata"].get("annotations", {})
    assert (status["restartCount"], status["containerID"]) == (0, container_id)
    record("real_node_below_usage", {
        "attempts_before_block": len(attempts), "attempts_in_window": len(in_window),
        "window_seconds": WINDOW_SECONDS, "wanted_limit_bytes": int(wanted), "usage_bytes": usage,
        "kept_limit_bytes": kept, "replaced_after_seconds": round(replaced_after, 1),
        "limit_after_bytes": enforced["memory"], "restarts": status["restartCount"],
    })  # fmt: skip
