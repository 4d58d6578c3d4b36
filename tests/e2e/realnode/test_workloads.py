"""The operator against a real kubelet: real OOM kills, real in-place resizes, the real Summary API.

Every assertion on what happened to a container reads what the kernel or the kubelet reports — cgroup files on
the host, the container's exit code and reason — never a value the harness wrote. Usage reaches the operator
through metrics-server scraping the real kubelet, and through the kubelet's own `/stats/summary`.
"""

from __future__ import annotations

import datetime
import itertools
import threading
import time
from typing import Any

import pytest

from ballast.internal.enrollment import MODE_LABEL, RESIZE_BLOCKED
from ballast.internal.quantity import parse_quantity
from ballast.internal.stats import parse_duration
from ballast.runtime.envtest import APIError, MiniCluster
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.figures import record
from tests.e2e.realnode.conftest import KUBELET_SUMMARY
from tests.e2e.realnode.support import (
    cgroup_counter,
    cgroup_memory_stat,
    cgroup_values,
    container_status,
    expected_cgroup_values,
    get_pod,
    profile_of,
    real_pod,
    samples,
    wait_running,
)
from tests.e2e.support import Operator, create_namespace

MIB = 2**20
STEADY_SECONDS = 21  # the leaky app's steady phase before its leak


def _time(stamp: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def test_a_container_leaking_past_its_limit_is_oom_killed_and_the_collector_keeps_measuring(
    real_cluster: MiniCluster, real_operator: Operator
) -> None:
    env = real_cluster.env
    namespace = create_namespace(real_cluster, "real-leak")
    # Steady at 16 MiB long enough to be measured, then a leak far past the 48 MiB limit, in PID 1 (cgroup v1's
    # OOM killer picks the largest process of the memory cgroup).
    body = real_pod("leaky", app="leaky", mode="measure", args=["mem:16:1", f"sleep:{STEADY_SECONDS - 1}", "mem:96:6"],
                    requests={"cpu": "50m", "memory": "48Mi"}, limits={"cpu": "200m", "memory": "48Mi"})  # fmt: skip
    env.rest.create(f"/api/v1/namespaces/{namespace}/pods", body)
    first = wait_running(real_cluster, namespace, "leaky")
    assert cgroup_values(real_cluster, first)["memory"] == 48 * MIB
    measured = poll_until(
        lambda: samples(profile_of(real_cluster, "leaky"), "memory") or None,
        timeout=120, interval=1.0, what="memory samples of the leaky app", last_error=real_operator.output,
    )  # fmt: skip

    def killed() -> dict[str, Any] | None:
        pod = get_pod(real_cluster, namespace, "leaky")
        return pod if container_status(pod).get("lastState", {}).get("terminated") else None

    pod = poll_until(killed, timeout=120, interval=0.5, what="the leaky container to be killed")
    status = container_status(pod)
    terminated = status["lastState"]["terminated"]
    assert (terminated["reason"], terminated["exitCode"]) == ("OOMKilled", 137)
    assert status["restartCount"] >= 1
    # The kubelet restarted it with the same limit: a kill is not a resize.
    restarted = wait_running(real_cluster, namespace, "leaky", timeout=60)
    assert container_status(restarted)["containerID"] != terminated["containerID"]
    assert cgroup_values(real_cluster, restarted)["memory"] == 48 * MIB
    assert restarted["spec"]["containers"][0]["resources"]["limits"]["memory"] == "48Mi"
    # The collector stays healthy through the kill: samples keep arriving, nothing failed in the operator.
    at_kill = samples(profile_of(real_cluster, "leaky"), "memory")
    after = poll_until(
        lambda: (n := samples(profile_of(real_cluster, "leaky"), "memory")) > max(measured, at_kill) and n,
        timeout=60, interval=1.0, what="memory samples after the OOM kill", last_error=real_operator.output,
    )  # fmt: skip
    assert "Traceback" not in real_operator.output()
    record("real_node_oom", {
        "leak_to_kill_seconds": (_time(terminated["finishedAt"]) - _time(terminated["startedAt"])).total_seconds()
        - STEADY_SECONDS,
        "exit_code": terminated["exitCode"], "reason": terminated["reason"], "restarts": status["restartCount"],
        "memory_limit_bytes_after": cgroup_values(real_cluster, restarted)["memory"],
        "samples_at_kill": at_kill, "samples_after": after,
    })  # fmt: skip


SHAPES = {
    # (requests, limits, the cgroup before any resize)
    "Burstable": ({"cpu": "500m", "memory": "128Mi"}, {"cpu": "1", "memory": "256Mi"},
                  {"memory": 256 * MIB, "shares": 512, "quota": 100_000}),
    "Guaranteed": ({"cpu": "500m", "memory": "128Mi"}, {"cpu": "500m", "memory": "128Mi"},
                   {"memory": 128 * MIB, "shares": 512, "quota": 50_000}),
}  # fmt: skip


@pytest.mark.parametrize("qos", sorted(SHAPES))
def test_the_operator_resizes_a_running_container_in_place_and_the_kernel_enforces_it(
    real_cluster: MiniCluster, real_operator: Operator, qos: str
) -> None:
    env = real_cluster.env
    namespace = create_namespace(real_cluster, f"real-resize-{qos.lower()}")
    requests, limits, initial = SHAPES[qos]
    # ~25 MiB and ~60m of real usage, far under what the pod asks for: every value shrinks.
    body = real_pod("steady", app=f"steady-{qos.lower()}", mode="resize", args=["mem:24:2", "cpu:60:100000"],
                    requests=requests, limits=limits)  # fmt: skip
    env.rest.create(f"/api/v1/namespaces/{namespace}/pods", body)
    started = wait_running(real_cluster, namespace, "steady")
    assert started["status"]["qosClass"] == qos
    container_id = container_status(started)["containerID"]
    assert cgroup_values(real_cluster, started) == initial
    seen_cpu: list[str] = []
    patched_at: dict[str, float] = {}  # cpu request → when the spec was first seen asking for it
    enforced_at: dict[str, float] = {}  # cpu request → when the cgroup first held its shares

    def resized_and_settled() -> tuple[dict[str, Any], dict[str, int]] | None:
        before = get_pod(real_cluster, namespace, "steady")
        spec = before["spec"]["containers"][0]["resources"]
        cpu = spec["requests"]["cpu"]
        if not seen_cpu or seen_cpu[-1] != cpu:
            seen_cpu.append(cpu)
            patched_at.setdefault(cpu, time.monotonic())
        values = cgroup_values(real_cluster, before)
        if values["shares"] == expected_cgroup_values(spec)["shares"]:
            enforced_at.setdefault(cpu, time.monotonic())
        if cpu == "500m" or container_status(before).get("resources") != spec:
            return None  # not resized yet, or the kubelet has not finished the last step
        after = get_pod(real_cluster, namespace, "steady")
        same = after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
        return (after, values) if same and len(seen_cpu) >= 3 else None

    began = time.monotonic()
    pod, enforced = poll_until(resized_and_settled, timeout=240, interval=0.2, what="two in-place resize steps",
                               last_error=real_operator.output)  # fmt: skip
    status = container_status(pod)
    assert enforced == expected_cgroup_values(status["resources"])
    assert enforced["memory"] < initial["memory"]
    assert enforced["quota"] < initial["quota"]
    assert pod["status"]["qosClass"] == qos  # resized within its QoS class
    if qos == "Guaranteed":  # request and limit moved together
        assert status["resources"]["requests"] == status["resources"]["limits"]
    assert (status["restartCount"], status["containerID"]) == (0, container_id)  # in place: never restarted
    steps = [float(parse_quantity(cpu)) for cpu in seen_cpu]
    assert steps == sorted(steps, reverse=True), seen_cpu  # stepped down, never up and down
    latencies = [enforced_at[cpu] - patched_at[cpu] for cpu in seen_cpu[1:] if cpu in enforced_at]
    if qos == "Burstable":  # RELIABILITY.md's row
        record("real_node_resize", {
            "steps": len(seen_cpu) - 1, "cpu_requests": seen_cpu,
            "settled_after_seconds": round(time.monotonic() - began, 1),
            "max_patch_to_cgroup_seconds": round(max(latencies), 2), "cgroup": enforced,
            "restarts": status["restartCount"],
        })  # fmt: skip


def test_the_kubelet_summary_source_reads_real_ephemeral_storage(
    real_cluster: MiniCluster, real_operator: Operator
) -> None:
    env = real_cluster.env
    node = real_cluster.real_node
    assert node is not None
    namespace = create_namespace(real_cluster, "real-summary")
    write = "dd if=/dev/zero of=/tmp/blob bs=1048576 count=12 && exec sleep 3600"
    body = real_pod("writer", app="writer", mode="measure", image="busybox", command=["/bin/sh", "-c", write],
                    requests={"cpu": "20m", "memory": "16Mi", "ephemeral-storage": "1Mi"})  # fmt: skip
    env.rest.create(f"/api/v1/namespaces/{namespace}/pods", body)
    wait_running(real_cluster, namespace, "writer")

    def summary_entry() -> dict[str, Any] | None:
        summary = env.rest.get(f"/api/v1/nodes/{node.name}/proxy/stats/summary")
        for pod in summary.get("pods", []):
            used = pod.get("ephemeral-storage", {}).get("usedBytes", 0)
            if pod["podRef"]["name"] == "writer" and used >= 12 * MIB:
                return dict(pod)
        return None

    entry = poll_until(summary_entry, timeout=90, interval=1.0, what="the writer's 12 MiB in /stats/summary")
    (container,) = entry["containers"]
    assert container["memory"]["workingSetBytes"] > 0

    # The operator's kubeletSummary source reads the same endpoint and records ephemeral-storage samples; the
    # first may predate the write, so wait for the statistics to hold it.
    def storage_stats() -> dict[str, Any] | None:
        profile = profile_of(real_cluster, "writer")
        if not samples(profile, "ephemeral-storage", KUBELET_SUMMARY):
            return None
        assert profile is not None
        (stats,) = [s for c in profile["status"]["containers"] for s in c["usageStats"]
                    if s["resource"] == "ephemeral-storage"]  # fmt: skip
        return dict(stats) if parse_quantity(stats["p99"]) >= 12 * MIB else None

    stats = poll_until(storage_stats, timeout=120, interval=1.0, what="12 MiB of ephemeral storage in the profile",
                       last_error=real_operator.output)  # fmt: skip
    assert stats["source"] == KUBELET_SUMMARY
    assert parse_quantity(stats["p99"]) <= 64 * MIB  # the writer's file and its logs, not the node's disk


def test_a_resize_the_node_has_no_room_for_is_deferred_unblocked_and_done_by_the_kubelet_when_room_frees(
    real_cluster: MiniCluster, real_operator: Operator
) -> None:
    env = real_cluster.env
    node = real_cluster.real_node
    assert node is not None
    namespace = create_namespace(real_cluster, "real-deferred")
    # ~100 MiB used under a 32Mi request: the operator raises the request (and lowers the 512Mi limit).
    body = real_pod("grower", app="grower", mode="resize", args=["mem:100:2"],
                    requests={"cpu": "50m", "memory": "32Mi"}, limits={"cpu": "500m", "memory": "512Mi"})  # fmt: skip
    env.rest.create(f"/api/v1/namespaces/{namespace}/pods", body)
    wait_running(real_cluster, namespace, "grower")
    # Fill the node's allocatable memory but 8Mi with a pod that asks and uses nothing: no room for any upsize.
    allocatable = int(parse_quantity(env.rest.get(f"/api/v1/nodes/{node.name}")["status"]["allocatable"]["memory"]))
    pods = env.rest.get("/api/v1/pods", {"fieldSelector": f"spec.nodeName={node.name}"})["items"]
    requested = sum(int(parse_quantity(c["resources"].get("requests", {}).get("memory", "0")))
                    for p in pods for c in p["spec"]["containers"])  # fmt: skip
    filler = real_pod("filler", app="filler", mode="off", image="pause",
                      requests={"cpu": "10m", "memory": str(allocatable - requested - 8 * MIB)})  # fmt: skip
    del filler["metadata"]["labels"][MODE_LABEL]
    env.rest.create(f"/api/v1/namespaces/{namespace}/pods", filler)
    wait_running(real_cluster, namespace, "filler")

    def deferred() -> dict[str, Any] | None:
        pod = get_pod(real_cluster, namespace, "grower")
        pending = [c for c in pod["status"].get("conditions", []) if c["type"] == "PodResizePending"]
        return pod if pending and pending[0].get("reason") == "Deferred" else None

    pod = poll_until(deferred, timeout=180, interval=0.5, what="the kubelet to defer the upsize",
                     last_error=real_operator.output)  # fmt: skip
    assert cgroup_values(real_cluster, pod)["memory"] == 512 * MIB  # nothing of it applied yet
    time.sleep(8)  # a few resize intervals: Deferred is waited out, never marked blocked
    annotations = get_pod(real_cluster, namespace, "grower")["metadata"].get("annotations", {})
    assert RESIZE_BLOCKED not in annotations
    env.rest.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/filler", params={"gracePeriodSeconds": "0"})

    def actuated() -> tuple[dict[str, Any], dict[str, int]] | None:
        pod = get_pod(real_cluster, namespace, "grower")
        spec = pod["spec"]["containers"][0]["resources"]
        if container_status(pod).get("resources") != spec:
            return None
        return pod, cgroup_values(real_cluster, pod)

    pod, enforced = poll_until(actuated, timeout=120, interval=0.5, what="the deferred resize done once room freed",
                               last_error=real_operator.output)  # fmt: skip
    status = container_status(pod)
    assert parse_quantity(status["resources"]["requests"]["memory"]) > 32 * MIB
    assert enforced == expected_cgroup_values(status["resources"])
    assert enforced["memory"] < 512 * MIB
    assert status["restartCount"] == 0


class CpuCounter:
    """The container's cpuacct.usage (ns), read every 0.2 s in a thread: what the kernel counted at any moment
    since the start, interpolated — to compare with a rate over another reader's window."""

    def __init__(self, cluster: MiniCluster, pod: dict[str, Any]) -> None:
        self.cluster, self.pod = cluster, pod
        self.samples: list[tuple[float, int]] = []
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopping.is_set():
            self.samples.append((time.time(), cgroup_counter(self.cluster, self.pod, "cpuacct", "cpuacct.usage")))
            self.stopping.wait(0.2)

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join()

    def at(self, moment: datetime.datetime) -> float:
        when = moment.timestamp()
        for (t0, u0), (t1, u1) in itertools.pairwise(self.samples):
            if t0 <= when <= t1:
                return u0 + (u1 - u0) * (when - t0) / (t1 - t0)
        raise AssertionError(f"no cpuacct.usage samples around {moment}")

    def cores(self, start: datetime.datetime, end: datetime.datetime) -> float:
        return (self.at(end) - self.at(start)) / 1e9 / (end - start).total_seconds()


def test_metrics_server_reads_the_real_kubelet_within_the_cgroups_own_counters(real_cluster: MiniCluster) -> None:
    """metrics-server v0.8.0 scraping the real kubelet's /metrics/resource, on its own (the profile tests consume
    it): a running container's PodMetrics agree with what the kernel counts for that container."""
    env = real_cluster.env
    namespace = create_namespace(real_cluster, "real-metrics")
    # 40 MiB resident and 300m burned, steady once the first second is over.
    body = real_pod("burner", app="burner", mode="measure", args=["mem:40:1", "cpu:300:100000"],
                    requests={"cpu": "100m", "memory": "64Mi"}, limits={"cpu": "1", "memory": "128Mi"})  # fmt: skip
    del body["metadata"]["labels"][MODE_LABEL]  # metrics-server alone: no operator in the way
    env.rest.create(f"/api/v1/namespaces/{namespace}/pods", body)
    pod = wait_running(real_cluster, namespace, "burner")
    counter = CpuCounter(real_cluster, pod)
    steady_from = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=2)

    def steady_metrics() -> dict[str, Any] | None:
        try:
            metrics = env.rest.get(f"/apis/metrics.k8s.io/v1beta1/namespaces/{namespace}/pods/burner")
        except APIError:
            return None  # not scraped yet
        # A window that began after the growth: both scrapes of the rate saw the steady container.
        window = datetime.timedelta(seconds=parse_duration(metrics["window"]) / 1e9)
        return dict(metrics) if _time(metrics["timestamp"]) - window >= steady_from else None

    try:
        metrics = poll_until(steady_metrics, timeout=120, interval=1.0, what="PodMetrics of the burner, steady")
    finally:
        counter.stop()
    (container,) = metrics["containers"]
    assert container["name"] == "app"
    reported_memory = int(parse_quantity(container["usage"]["memory"]))
    reported_cpu = float(parse_quantity(container["usage"]["cpu"]))
    # The kernel's figures now: the working set as the kubelet computes it on cgroup v1, and the CPU rate.
    working_set = (
        cgroup_counter(real_cluster, pod, "memory", "memory.usage_in_bytes")
        - cgroup_memory_stat(real_cluster, pod)["total_inactive_file"]
    )
    # The kernel's CPU count over the same window as metrics-server's rate (the kubelet's two readings).
    end = _time(metrics["timestamp"])
    window = datetime.timedelta(seconds=parse_duration(metrics["window"]) / 1e9)
    counted_cpu = counter.cores(end - window, end)
    assert 40 * MIB <= reported_memory <= 48 * MIB, reported_memory
    assert abs(reported_memory - working_set) <= max(0.1 * working_set, 4 * MIB), (reported_memory, working_set)
    assert reported_cpu > 0
    assert counted_cpu > 0.02, counted_cpu  # the burner is burning (asked 300m; it gets what a busy machine leaves)
    assert abs(reported_cpu - counted_cpu) <= 0.2 * counted_cpu, (reported_cpu, counted_cpu)
    record("real_node_metrics_server", {
        "memory_reported_mib": round(reported_memory / MIB, 1), "memory_cgroup_mib": round(working_set / MIB, 1),
        "cpu_reported_millicores": round(reported_cpu * 1000), "cpu_cgroup_millicores": round(counted_cpu * 1000),
        "window": metrics["window"],
    })  # fmt: skip
