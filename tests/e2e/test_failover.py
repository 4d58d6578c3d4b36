"""Scenario 1: the leader dies mid-resize. Two replicas with leader election (lease 4 s, renew deadline 3 s,
retry 1 s) run `tests.e2e.crash_after_resize`: the leader's first `pods/resize` patch is accepted by the API
server and the process exits at once (os._exit, as a SIGKILL would), before anything else of that step.

Asserted: the standby leads within `lease + 2 × retry × (1 + jitter)`; never two leaders at one sample; the
new leader goes on resizing; and no double resize — no two `pods/resize` patches for the same pod with the same
body, and none sooner than the resize interval (20 s, longer than a handover) after the previous one: the
cooldown written before the step survives the crash (docs/design.md, difference 47).
"""

from __future__ import annotations

import itertools
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from ballast.internal.enrollment import MODE_LABEL
from ballast.runtime.envtest import MiniCluster, usage_annotation
from ballast.runtime.envtest.kubelet import ResizeActuator
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.crash_after_resize import MARKER_VARIABLE, PATCH_LINE
from tests.e2e.figures import record
from tests.e2e.support import Operator, Replicas, create_namespace, deployment, running_pods
from tests.integration.internal.cmd.ballastd.conftest import fast_policy
from tests.integration.redis_server import RedisServer

LEASE, RETRY, JITTER = 4.0, 1.0, 1.2
pytestmark = pytest.mark.alone  # a handover bound in seconds: a busy neighbour would stretch it
HANDOVER_BOUND = LEASE + 2 * RETRY * (1 + JITTER)
RESIZE_INTERVAL = 20.0
IDENTITY = {"app.kubernetes.io/name": "failover", "app.kubernetes.io/component": "api"}


class LeaderSamples:
    """Who leads, sampled every 0.1 s from each replica's `leader_election_master_status`."""

    def __init__(self, replicas: Replicas) -> None:
        self.replicas = replicas
        self.samples: list[tuple[float, list[int]]] = []
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> LeaderSamples:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stopped.wait(0.1):
            self.samples.append((time.monotonic(), self.replicas.leaders()))


def resize_patches(replicas: Replicas, pod: str) -> list[tuple[float, str]]:
    """(unix time, body) of every resize patch any replica sent for `pod`, from their logs, in time order."""
    patches = []
    for replica in replicas.operator.replica_runs:
        for line in replica.log_path.read_text(errors="replace").splitlines():
            if line.startswith(PATCH_LINE + " "):
                _, when, name, body = line.split(" ", 3)
                if name == pod:
                    patches.append((float(when), body))
    return sorted(patches)


def slow_resize_policy(namespace: str) -> dict[str, Any]:
    """The suite's fast policy for this namespace only, but resizing every RESIZE_INTERVAL seconds — longer
    than a handover, so a successor that ignored the crashed step's cooldown would show."""
    policy = fast_policy("slow-resize")
    policy["kind"] = "ResourcePolicy"
    policy["metadata"]["namespace"] = namespace
    policy["spec"]["behaviors"]["resize"]["interval"] = f"{RESIZE_INTERVAL:g}s"
    return policy


def profile_state(cluster: MiniCluster) -> str | None:
    profiles = cluster.env.rest.get("/apis/ballast.tightlinesoftware.com/v1/workloadprofiles")["items"]
    for profile in profiles:
        if profile["metadata"]["name"].startswith("failover--api--slow-resize-"):
            return str(profile.get("status", {}).get("state"))
    return None


def test_a_leader_killed_right_after_a_resize_patch_hands_over_in_time_and_no_step_repeats(
    cluster: MiniCluster, operator: Operator, redis: RedisServer, tmp_path: Path
) -> None:
    env = cluster.env
    namespace = create_namespace(cluster, "failover")
    env.rest.create(f"/apis/ballast.tightlinesoftware.com/v1/namespaces/{namespace}/resourcepolicies",
                    slow_resize_policy(namespace))  # fmt: skip
    usage = {usage_annotation("cpu", "app"): "200m", usage_annotation("memory", "app"): "100Mi"}
    labels = {**IDENTITY, MODE_LABEL: "measure"}
    body = deployment("failover", replicas=2, cpu="1", memory="100Mi", labels=labels, annotations=usage)
    env.rest.create(f"/apis/apps/v1/namespaces/{namespace}/deployments", body)
    marker = tmp_path / "crashed"
    environ = {MARKER_VARIABLE: str(marker)}
    with (
        ResizeActuator(env, MODE_LABEL).start(),
        Replicas(cluster, operator, redis.url, module="tests.e2e.crash_after_resize", environ=environ) as replicas,
        LeaderSamples(replicas) as leaders,
    ):
        poll_until(lambda: len(replicas.leaders()) == 1, timeout=30, what="one leader")
        (leader_index,) = replicas.leaders()
        poll_until(lambda: profile_state(cluster) == "Sufficient", timeout=240, interval=2.0,
                   what="a Sufficient profile", last_error=replicas.output)  # fmt: skip
        target = running_pods(cluster, namespace, "app=failover")[0]["metadata"]["name"]
        pod = f"{namespace}/{target}"
        env.rest.request(
            "PATCH",
            f"/api/v1/namespaces/{namespace}/pods/{target}",
            {"metadata": {"labels": {MODE_LABEL: "resize"}}},
            content_type="application/merge-patch+json",
        )
        leader = replicas.replicas[leader_index]
        assert leader is not None
        poll_until(lambda: leader.process.poll() is not None, timeout=60, interval=0.05, what="the leader's crash")
        crashed_at = time.monotonic()
        assert leader.process.returncode == 137
        poll_until(lambda: replicas.leaders() == [1 - leader_index], timeout=30, interval=0.05, what="a new leader")
        handover = time.monotonic() - crashed_at
        # The successor's first step, which must wait out the crashed step's cooldown.
        poll_until(lambda: len(resize_patches(replicas, pod)) >= 2, timeout=RESIZE_INTERVAL + 30, interval=0.5,
                   what="the new leader's first resize step")  # fmt: skip
    assert marker.exists()
    assert handover <= HANDOVER_BOUND, f"handover took {handover:.1f}s, bound {HANDOVER_BOUND:.1f}s"
    assert max(len(sample) for _, sample in leaders.samples) == 1, "two leaders at once"
    patches = resize_patches(replicas, pod)
    bodies = [body for _, body in patches]
    assert len(set(bodies)) == len(bodies), f"a step was sent twice: {bodies}"
    gaps = [later - earlier for (earlier, _), (later, _) in itertools.pairwise(patches)]
    assert min(gaps) >= RESIZE_INTERVAL - 0.5, f"a step inside the cooldown: gaps {gaps}"
    record("leader_failover", {"handover_seconds": round(handover, 2), "bound_seconds": round(HANDOVER_BOUND, 2),
                               "resize_patches": len(patches), "repeated_steps": 0,
                               "first_gap_seconds": round(gaps[0], 2), "cooldown_seconds": RESIZE_INTERVAL,
                               "leader_samples": len(leaders.samples)})  # fmt: skip
