"""`ballast explain` and `ballast profiles` on what the real operator wrote: `ballastd` runs against the API
server with a metrics.k8s.io backend, a Deployment's profile becomes Sufficient, the same app in another
namespace is admitted with the recommended requests, and the CLI explains that pod — profile, policy, samples,
statistics, formulas — and lists the profile as `kubectl get workloadprofiles` does."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import urllib3

from ballast.internal.cmd import ballast as cli
from ballast.internal.enrollment import MODE_LABEL, PROFILE_REF, managed_container_bodies
from ballast.internal.manifests.webhooks import webhook_configurations
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment, json_handler
from ballast.runtime.envtest.ports import suggest_port
from ballast.runtime.envtest.wait import poll_until

from .conftest import create, wait_settled, workload

GROUP_VERSION = "ballast.tightlinesoftware.com/v1"
BASE = "/apis/ballast.tightlinesoftware.com/v1"
OPERATOR_NAMESPACE = "ballast-system"
PROFILE = "checkout--api--default-a9696153"
TUPLE = {"app.kubernetes.io/name": "checkout", "app.kubernetes.io/component": "api"}
USAGE = {"cpu": "230m", "memory": "100Mi"}


def install_operator_objects(env: Environment) -> None:
    """BallastConfig, a 1 s MetricsSource and a policy that is ready after 3 samples over 5 s."""
    env.rest.create(
        "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": OPERATOR_NAMESPACE}}
    )
    identity = list(TUPLE)
    env.rest.apply(
        f"{BASE}/ballastconfigs/ballast",
        {"apiVersion": GROUP_VERSION, "kind": "BallastConfig", "metadata": {"name": "ballast"},
         "spec": {"identityLabels": identity}},
    )  # fmt: skip
    env.rest.apply(
        f"{BASE}/metricssources/kubernetes-metrics",
        {"apiVersion": GROUP_VERSION, "kind": "MetricsSource", "metadata": {"name": "kubernetes-metrics"},
         "spec": {"type": "kubernetesMetrics", "config": {"pollInterval": "1s", "reservoirSize": 1000}}},
    )  # fmt: skip
    source = "kubernetes-metrics"
    metrics = [
        {"resource": "cpu", "field": "request", "source": source, "aggregation": "avg", "headroom": "1.25"},
        {"resource": "memory", "field": "request", "source": source, "aggregation": "p75", "headroom": "1.0"},
    ]
    env.rest.apply(
        f"{BASE}/clusterresourcepolicies/default",
        {"apiVersion": GROUP_VERSION, "kind": "ClusterResourcePolicy", "metadata": {"name": "default"},
         "spec": {"metrics": metrics, "readiness": {"minDataPoints": 3, "minTimeSpan": "5s", "maxCV": "2.0"}}},
    )  # fmt: skip


def serve_metrics(env: Environment) -> Any:
    """metrics.k8s.io PodMetrics of every enrolled pod: the same usage for each of its containers."""

    def pod_metrics() -> dict[str, Any]:
        pods = env.rest.get("/api/v1/pods", params={"labelSelector": MODE_LABEL})["items"]
        items = [
            {
                "metadata": {"name": p["metadata"]["name"], "namespace": p["metadata"]["namespace"]},
                "timestamp": "2026-11-29T12:00:00Z",
                "window": "15s",
                "containers": [{"name": c["name"], "usage": USAGE} for _, c in managed_container_bodies(p)],
            }
            for p in pods
            if not p["metadata"].get("deletionTimestamp")
        ]
        return {"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {}, "items": items}

    discovery = {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": "metrics.k8s.io/v1beta1",
        "resources": [
            {"name": "pods", "singularName": "", "namespaced": True, "kind": "PodMetrics", "verbs": ["get", "list"]}
        ],
    }
    handler = json_handler(
        {"/apis/metrics.k8s.io/v1beta1": discovery, "/apis/metrics.k8s.io/v1beta1/pods": pod_metrics}
    )
    return env.serve_api_service("metrics.k8s.io", "v1beta1", handler, service="cli-test-metrics")


@pytest.fixture(scope="module")
def operator(cluster: Environment, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """`ballastd` (embedded SQLite store, webhook registered) with its objects and a metrics backend; yields its
    log file."""
    work = tmp_path_factory.mktemp("ballastd")
    install_operator_objects(cluster)
    backend = serve_metrics(cluster)
    health, webhook = suggest_port(), suggest_port()
    log = work / "ballastd.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                sys.executable, "-m", "ballast.internal.cmd.ballastd",
                f"--kubeconfig={cluster.kubeconfig_path}", f"--operator-namespace={OPERATOR_NAMESPACE}",
                f"--health-probe-bind-address=127.0.0.1:{health}", "--metrics-bind-address=0", "--log-format=text",
                f"--store=sqlite:///{work / 'history.db'}", f"--webhook-bind-address=127.0.0.1:{webhook}",
                f"--webhook-cert-path={cluster.webhook_cert_dir()}",
            ],
            stdout=output, stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    http = urllib3.PoolManager(retries=False, timeout=2.0)

    def ready() -> bool:
        if process.poll() is not None:
            raise AssertionError(f"ballastd exited:\n{log.read_text()[-4000:]}")
        return http.request("GET", f"http://127.0.0.1:{health}/readyz").status == 200

    try:
        poll_until(ready, timeout=60, what="ballastd /readyz", last_error=lambda: log.read_text()[-2000:])
        configurations = webhook_configurations(service_name="ballast-webhook", service_namespace=OPERATOR_NAMESPACE)
        cluster.install_webhooks(configurations, port=webhook, ca_bundle=cluster.ca.cert_pem)
        yield log
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
        backend.stop()


def checkout(namespace: str, env: Environment, client: APIServerClient) -> dict[str, Any]:
    """The `checkout` Deployment (1 replica, mode apply, cpu 100m request and limit 1) and its settled pod."""
    create(env, namespace, workload("deployment", "checkout", labels=TUPLE, mode="apply"))
    wait_settled(client, namespace, ("deployment", "checkout"), pods=1)
    [pod] = client.list("v1/Pod", namespace, label_selector="app=checkout").items
    return dict(pod)


def profile_status(env: Environment) -> dict[str, Any]:
    with contextlib.suppress(Exception):
        return dict(env.rest.get(f"{BASE}/workloadprofiles/{PROFILE}").get("status") or {})
    return {}


def run_cli(capsys: pytest.CaptureFixture[str], env: Environment, *argv: str) -> tuple[int, str, str]:
    code = cli.main([argv[0], "--kubeconfig", str(env.kubeconfig_path), *argv[1:]])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def admitted_pod(cluster: Environment, client: APIServerClient, operator: Path) -> dict[str, Any]:
    """A pod admitted with the recommended requests: `checkout` runs in a first namespace until its profile is
    Sufficient, then the same app starts in a second namespace."""
    namespaces = ["cli-explain-a", "cli-explain-b"]
    for name in namespaces:
        cluster.rest.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    checkout(namespaces[0], cluster, client)
    poll_until(
        lambda: profile_status(cluster).get("state") == "Sufficient",
        timeout=90,
        what="a Sufficient profile",
        last_error=lambda: operator.read_text()[-3000:],
    )
    pod = checkout(namespaces[1], cluster, client)

    def stamped() -> dict[str, Any] | None:
        current = client.get("v1/Pod", pod["metadata"]["name"], namespaces[1])
        annotations = current["metadata"].get("annotations") or {}
        return (
            dict(current)
            if PROFILE_REF in annotations and profile_status(cluster).get("activeWorkloads") == 2
            else None
        )

    return poll_until(stamped, timeout=60, what="the second pod stamped and counted")


def test_explain_shows_profile_policy_samples_statistics_and_formulas(
    cluster: Environment, admitted_pod: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    namespace, name = admitted_pod["metadata"]["namespace"], admitted_pod["metadata"]["name"]
    requests = admitted_pod["spec"]["containers"][0]["resources"]["requests"]
    assert requests == {"cpu": "287m", "memory": "100Mi"}  # admitted with the recommendation
    code, out, _ = run_cli(capsys, cluster, "explain", f"pod/{namespace}/{name}")
    assert code == 0
    lines = out.splitlines()
    expected = [
        f"Pod {namespace}/{name}",
        f"  profile-ref: {PROFILE}",
        "  policy-ref:  default",
        "  tuple:        app.kubernetes.io/name=checkout, app.kubernetes.io/component=api",
        f"  profile name: {PROFILE} (tuple values, then policy discriminator default-a9696153)",
        "Policy: ClusterResourcePolicy default (priority 0; policy-ref default)",
        f"Profile: {PROFILE}",
        "  state:           Sufficient (meetsThreshold true), 2 active pod(s)",
        "  measured under:  ClusterResourcePolicy default",
        "Container app",
        "    p50 230m  p75 230m  p90 230m  p95 230m  p99 230m  mean 230m  stdDev 0  cv 0.000",
        "    cpu request = avg (230m) × 1.25 = 287m",
        "    cpu limit: 1 from the pod template, kept (request 287m ≤ limit)",
        "    admission wrote request 287m (annotations applied-cpu-request)",
        "    pod spec now: request 287m, limit 1",
        "    memory request = p75 (100.00Mi) × 1.0 = 100Mi",
        "    memory limit: none (the policy manages none and the pod template sets none)",
        "    admission wrote request 100Mi (annotations applied-memory-request)",
    ]
    missing = [line for line in expected if line not in lines]
    assert not missing, f"missing {missing} in:\n{out}"
    samples = [
        re.fullmatch(r"  cpu: (\d+) samples over \S+ from kubernetes-metrics \(updated \S+\)", line) for line in lines
    ]
    assert any(match and int(match.group(1)) >= 3 for match in samples), out
    assert any(line.startswith("    ready: ") and "(needs 3)" in line for line in lines), out


def test_profiles_lists_like_kubectl_get_workloadprofiles(
    cluster: Environment, admitted_pod: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run_cli(capsys, cluster, "profiles")
    assert code == 0
    ours = [line.rsplit(None, 1)[0] for line in out.splitlines()]  # AGE may tick between the two commands
    theirs = [line.rsplit(None, 1)[0] for line in cluster.kubectl("get", "workloadprofiles").splitlines()]
    assert ours == theirs
    assert any(line.split()[:4] == [PROFILE, "2", "default", "Sufficient"] for line in out.splitlines()), out
    code, out, _ = run_cli(capsys, cluster, "profiles", PROFILE, "-o", "wide")
    assert code == 0
    header, row = out.splitlines()
    assert header.split() == ["NAME", "ACTIVEWORKLOADS", "POLICY", "STATE", "ORPHANED", "AGE", "READY", "CONTAINERS",
                              "SAMPLES", "TUPLE"]  # fmt: skip
    cells = row.split()
    assert cells[:4] == [PROFILE, "2", "default", "Sufficient"]
    assert cells[-4:-2] == ["True", "1"]
    assert int(cells[-2]) >= 3
    assert cells[-1] == "app.kubernetes.io/component=api,app.kubernetes.io/name=checkout"


def test_missing_objects_exit_1_with_the_reason(cluster: Environment, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run_cli(capsys, cluster, "explain", "pod/nowhere/nothing")
    assert (code, err.strip()) == (1, 'ballast: pod "nothing" not found in namespace "nowhere"')
    code, _, err = run_cli(capsys, cluster, "profiles", "no-such-profile")
    assert code == 1
    assert (
        err.strip()
        == 'Error from server (NotFound): workloadprofiles.ballast.tightlinesoftware.com "no-such-profile" not found'
    )
