"""Pods for the real node and what the kernel says about them (cgroup files, read on the host)."""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ballast.internal.enrollment import MODE_LABEL
from ballast.internal.quantity import parse_quantity
from ballast.runtime.envtest import MiniCluster
from ballast.runtime.envtest.images import find_node_images
from ballast.runtime.envtest.realnode import DEFAULT_NAME
from ballast.runtime.envtest.wait import poll_until
from tests.integration.internal.cmd.ballastd.conftest import fast_policy

PROFILES = "/apis/ballast.tightlinesoftware.com/v1/workloadprofiles"
CFS_PERIOD_US = 100_000  # the kubelet's default cpu.cfs_period_us


def real_pod(
    name: str,
    *,
    app: str,
    mode: str,
    args: Sequence[str] = (),
    command: Sequence[str] = (),
    image: str = "loadgen",
    requests: Mapping[str, str],
    limits: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A Pod bound to the real node, running one of the locally built images (never pulled)."""
    images = find_node_images(build=False)
    container: dict[str, Any] = {
        "name": "app",
        "image": getattr(images, image).ref,
        "imagePullPolicy": "Never",
        "resources": {"requests": dict(requests), **({"limits": dict(limits)} if limits else {})},
    }
    if args:
        container["args"] = list(args)
    if command:
        container["command"] = list(command)
    labels = {"app.kubernetes.io/name": app, "app.kubernetes.io/component": "api", MODE_LABEL: mode}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"nodeName": DEFAULT_NAME, "containers": [container], "terminationGracePeriodSeconds": 2},
    }


def get_pod(cluster: MiniCluster, namespace: str, name: str) -> dict[str, Any]:
    return cluster.env.rest.get(f"/api/v1/namespaces/{namespace}/pods/{name}")


def container_status(pod: Mapping[str, Any]) -> dict[str, Any]:
    statuses = pod.get("status", {}).get("containerStatuses") or [{}]
    return dict(statuses[0])


def wait_running(cluster: MiniCluster, namespace: str, name: str, timeout: float = 60) -> dict[str, Any]:
    def running() -> dict[str, Any] | None:
        pod = get_pod(cluster, namespace, name)
        return pod if "running" in container_status(pod).get("state", {}) else None

    return poll_until(running, timeout=timeout, interval=0.3, what=f"pod {name} running on the real node")


def cgroup_values(cluster: MiniCluster, pod: Mapping[str, Any]) -> dict[str, int]:
    """The container's limits as the kernel enforces them: memory bytes, CPU shares and CFS quota (v1 files)."""
    node = cluster.real_node
    assert node is not None
    read = node.container_cgroup_file
    return {
        "memory": int(read(dict(pod), "app", "memory", "memory.limit_in_bytes")),
        "shares": int(read(dict(pod), "app", "cpu", "cpu.shares")),
        "quota": int(read(dict(pod), "app", "cpu", "cpu.cfs_quota_us")),
    }


def expected_cgroup_values(resources: Mapping[str, Any]) -> dict[str, int]:
    """What the kubelet writes for `resources` (pkg/kubelet/cm: MilliCPUToShares, MilliCPUToQuota)."""
    request_milli = int(parse_quantity(resources["requests"]["cpu"]) * 1000)
    limit_milli = int(parse_quantity(resources["limits"]["cpu"]) * 1000)
    page = os.sysconf("SC_PAGE_SIZE")  # the kernel keeps a memory limit in whole pages, rounded down
    return {
        "memory": int(parse_quantity(resources["limits"]["memory"])) // page * page,
        "shares": max(2, request_milli * 1024 // 1000),
        "quota": max(1000, limit_milli * CFS_PERIOD_US // 1000),
    }


def profile_of(cluster: MiniCluster, app: str) -> dict[str, Any] | None:
    """The WorkloadProfile measuring `app` (by its tuple labels), or None before the operator made one."""
    for item in cluster.env.rest.get(PROFILES)["items"]:
        if (item.get("status") or {}).get("tupleLabels", {}).get("app.kubernetes.io/name") == app:
            return dict(item)
    return None


def samples(profile: Mapping[str, Any] | None, resource: str, source: str | None = None) -> int:
    """The samples behind `resource`'s statistics in `profile` (0 when none yet)."""
    if not profile:
        return 0
    total = 0
    for container in (profile.get("status") or {}).get("containers") or []:
        for stats in container.get("usageStats") or []:
            if stats.get("resource") == resource and (source is None or stats.get("source") == source):
                total += int(stats.get("samples") or 0)
    return total


def cgroup_counter(cluster: MiniCluster, pod: Mapping[str, Any], controller: str, name: str) -> int:
    """One number the kernel keeps for the container, e.g. ("memory", "memory.usage_in_bytes")."""
    node = cluster.real_node
    assert node is not None
    return int(node.container_cgroup_file(dict(pod), "app", controller, name))


def cgroup_memory_stat(cluster: MiniCluster, pod: Mapping[str, Any]) -> dict[str, int]:
    """The container's `memory.stat` (cgroup v1: `total_inactive_file` and the rest), by key."""
    node = cluster.real_node
    assert node is not None
    text = node.container_cgroup_file(dict(pod), "app", "memory", "memory.stat")
    return {key: int(value) for key, value in (line.split() for line in text.splitlines())}


@dataclass(frozen=True)
class ResizeAttempt:
    """One `pods/<name>/resize` PATCH as the API server's audit log saw it."""

    received: datetime.datetime
    code: int
    user: str


def resize_attempts(cluster: MiniCluster, namespace: str, name: str) -> list[ResizeAttempt]:
    """Every answered PATCH of `pods/<name>/resize` in the API server's audit log (the cluster must run with
    `audit_log=True`), oldest first: what reached the API server, whatever the operator says it sent."""
    attempts = []
    with cluster.env.audit_log_path.open("rb") as lines:
        for line in lines:
            event = orjson.loads(line)
            ref = event.get("objectRef") or {}
            what = (event.get("stage"), event.get("verb"), ref.get("subresource"))
            where = (ref.get("namespace"), ref.get("name"))
            if what != ("ResponseComplete", "patch", "resize") or where != (namespace, name):
                continue
            received = datetime.datetime.fromisoformat(event["requestReceivedTimestamp"].replace("Z", "+00:00"))
            attempts.append(ResizeAttempt(received, int(event["responseStatus"]["code"]), event["user"]["username"]))
    return attempts


def events_of(cluster: MiniCluster, namespace: str, name: str, reason: str) -> list[dict[str, Any]]:
    """The core/v1 Events about pod `name` with `reason`."""
    selector = f"involvedObject.name={name},reason={reason}"
    return list(cluster.env.rest.get(f"/api/v1/namespaces/{namespace}/events", {"fieldSelector": selector})["items"])


def namespaced_policy(namespace: str, metrics: Sequence[Mapping[str, str]], **resize: str) -> dict[str, Any]:
    """The suite's fast policy as a ResourcePolicy of `namespace` only (it wins there over the cluster's), with its
    own `metrics` and `behaviors.resize` settings."""
    policy = fast_policy(namespace, metrics=[dict(m) for m in metrics])
    policy["kind"] = "ResourcePolicy"
    policy["metadata"]["namespace"] = namespace
    policy["spec"]["behaviors"]["resize"].update(resize)
    return policy
