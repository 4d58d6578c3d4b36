"""One reconcile of a Balancer with 10 targets and 1,000 pods, against the API round trips it cannot avoid in the
same run, and the controller's memory with 20,000 unrelated pods in the cluster against none.

A real kube-apiserver + etcd (`Environment`, our CRDs; no kube-controller-manager, so the pods stay as created):
in namespace `bench`, 10 Deployments `target-0` … `target-9` (selector `app=target-<i>`) and 100 pods each
(2 containers, labels `app=target-<i>, srv=bench`), Running through the status subresource except 20 Pending
pods on each of the last two targets, late after the 1 s startup timeout; one Balancer `spread` over the 10
Deployments, 1,000 replicas, proportional (weights 1–10, minimum 1, a maximum of 150 on every other target),
fallback after 1 s. Every target's replicas are reset to 0 before each operator process, so that its first
reconcile writes all 10 scales.

The operator runs in a child process (clean heap), wired as `ballastd` wires it (`wiring.new_manager`, the
controller's `setup`), and the benchmark calls the controller's reconcile itself on the main thread, with the
manager's cache running and its workers not started:

- first reconcile: the Balancer and HPA informers synced beforehand; the 10 label-scoped pod informers created
  and listed (1,000 pods as projections), 10 scale GETs and PATCHes, the status applied;
- steady reconcile (median of `--runs`): nothing changed — 10 scale GETs, pods read from the informers, the
  placement, no write;
- baseline, interleaved with the steady reconciles: the 10 scale GETs alone, through the same client — what
  every reconcile must ask the API server.

Memory: the same process, RSS before the manager is built (every module imported), after the first reconcile
and after the steady ones, and its peak; once with no other pod in the cluster, then (a fresh process) after
20,000 unrelated pods are added (half in `bench` with other labels, half in 10 other namespaces). Pod informers
are scoped per (namespace, target selector), so the ratio should be ≈ 1. The contrast, measured last in each
process: one cluster-wide pod informer of the same projection added, what the process would hold without
the scoping.

    .venv/bin/python benchmarks/balancer.py [--runs 30] [--unrelated 20000]
"""

from __future__ import annotations

import argparse
import datetime
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ballast.api.balancer.v1alpha1 import Balancer
from ballast.api.scheme import add_to_scheme
from ballast.controllers import balancer
from ballast.internal.balancer.pods import BalancerPod
from ballast.internal.cmd.wiring import new_manager
from ballast.runtime import CacheScope, Context, Request, RESTConfig, Scheme
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.log import get_logger
from ballast.runtime.rest import Transport

from machine import cpu_model

CRD_DIR = Path(__file__).resolve().parents[1] / "config" / "crd" / "bases"
NAMESPACE = "bench"
NAME = "spread"
TARGETS = 10
PODS_PER_TARGET = 100
PENDING_PER_LATE_TARGET = 20
LATE_TARGETS = (8, 9)
REPLICAS = 1_000
OTHER_NAMESPACES = 10
HPA = "autoscaling/v2/HorizontalPodAutoscaler"


def proc_status(field: str) -> int:
    """A `/proc/self/status` memory figure in bytes (VmRSS: resident now, VmHWM: peak resident)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


# ------------------------------------------------------------------------------------- the cluster side


def pod_body(namespace: str, name: str, app: str, labels: dict[str, str]) -> dict[str, Any]:
    containers = [
        {"name": c, "image": f"registry.example/{c}:1.4.2",
         "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
         "ports": [{"containerPort": 8080 + i, "protocol": "TCP"}],
         "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "APP", "value": app}]}
        for i, c in enumerate(("app", "sidecar"))
    ]  # fmt: skip
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"containers": containers},
    }


def deployment(index: int) -> dict[str, Any]:
    labels = {"app": f"target-{index}", "srv": "bench"}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": f"target-{index}", "namespace": NAMESPACE},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": labels["app"]}},
            "template": {"metadata": {"labels": labels}, "spec": pod_body("", "", labels["app"], labels)["spec"]},
        },
    }


def balancer_body() -> dict[str, Any]:
    targets = [
        {"name": f"target-{i}", "minReplicas": 1, **({"maxReplicas": 150} if i % 2 == 0 else {}),
         "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": f"target-{i}"}}
        for i in range(TARGETS)
    ]  # fmt: skip
    return {
        "apiVersion": "balancer.x-k8s.io/v1alpha1",
        "kind": "Balancer",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "spec": {
            "replicas": REPLICAS,
            "selector": {"matchLabels": {"srv": "bench"}},
            "targets": targets,
            "policy": {
                "policyName": "proportional",
                "proportions": {"targetProportions": {f"target-{i}": i + 1 for i in range(TARGETS)}},
                "fallback": {"startupTimeoutSeconds": 1},
            },
        },
    }


def run_all(call: Callable[[Any], Any], items: Sequence[Any], workers: int = 8) -> float:
    """`call` on every item, `workers` requests in flight; returns the seconds it took."""
    began = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        for _ in pool.map(call, items):
            pass
    return time.perf_counter() - began


def seed(client: APIServerClient) -> None:
    """The namespace, the 10 Deployments, the 1,000 target pods with their phases, the Balancer."""
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
    for index in range(TARGETS):
        client.create(deployment(index))
    pods = []
    for index in range(TARGETS):
        labels = {"app": f"target-{index}", "srv": "bench"}
        pods += [pod_body(NAMESPACE, f"target-{index}-{n:03d}", labels["app"], labels) for n in range(PODS_PER_TARGET)]
    run_all(client.create, pods)

    def phase(pod: dict[str, Any]) -> None:
        index, number = (int(part) for part in pod["metadata"]["name"].split("-")[1:])
        if index in LATE_TARGETS and number < PENDING_PER_LATE_TARGET:
            return  # stays Pending, the phase a pod is created with
        client.status().patch(pod, {"status": {"phase": "Running"}})

    run_all(phase, pods)
    client.create(balancer_body())


def add_unrelated(client: APIServerClient, count: int) -> float:
    """`count` pods no target selects: half in the Balancer's namespace with other labels, half elsewhere."""
    for index in range(OTHER_NAMESPACES):
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"other-{index}"}})
    bodies = []
    for n in range(count):
        namespace = NAMESPACE if n % 2 == 0 else f"other-{n % OTHER_NAMESPACES}"
        app = f"unrelated-{n // 50:04d}"
        bodies.append(pod_body(namespace, f"pod-{n:05d}", app, {"app": app, "srv": "other"}))
    return run_all(client.create, bodies)


def reset(client: APIServerClient) -> None:
    """Every target back to 0 replicas and the Balancer's status cleared: the next process's first reconcile
    writes as much as the first one did."""
    for index in range(TARGETS):
        ref = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": f"target-{index}",
                                                                           "namespace": NAMESPACE}}  # fmt: skip
        client.patch(ref, {"spec": {"replicas": 0}})
    client.status().patch(balancer_body(), {"status": None})


# ----------------------------------------------------------------------------------- the operator (child)


def child(kubeconfig: str, runs: int) -> dict[str, Any]:
    """Build the operator as ballastd does, reconcile once cold, then `runs` steady reconciles interleaved with
    the baseline; memory along the way."""
    logging.basicConfig(level=logging.WARNING)
    rss_imported = proc_status("VmRSS")
    client = APIServerClient(Transport(RESTConfig.from_kubeconfig(kubeconfig)), scheme=add_to_scheme(Scheme()))
    manager = new_manager(client, namespace="ballast-system", scheduling=False)
    controller = balancer.setup(manager, reprocess_period=3600.0)
    reconciler = controller.reconciler
    assert isinstance(reconciler, balancer.BalancerReconciler)
    manager.cache.start()
    for kind in (Balancer, HPA):
        manager.client.list(kind)  # the informers the controller watches, synced
    request = Request(NAMESPACE, NAME)
    logger = get_logger("bench")

    def reconcile() -> tuple[float, float, float]:
        ctx = Context(balancer.NAME, request, "bench", logger, manager.clock)
        wall, cpu, thread = time.perf_counter(), time.process_time(), time.thread_time()
        reconciler.reconcile(ctx, request)
        return time.perf_counter() - wall, time.thread_time() - thread, time.process_time() - cpu

    scales = manager.api_reader.subresource("scale")
    refs = [t.scale_target_ref for t in manager.client.get(Balancer, NAME, NAMESPACE).spec.targets]

    def baseline() -> tuple[float, float, float]:
        wall, cpu, thread = time.perf_counter(), time.process_time(), time.thread_time()
        for ref in refs:
            scales.get(f"{ref.api_version}/{ref.kind}", name=ref.name, namespace=NAMESPACE)
        return time.perf_counter() - wall, time.thread_time() - thread, time.process_time() - cpu

    first = reconcile()
    rss_first = proc_status("VmRSS")
    stored = manager.api_reader.get(Balancer, NAME, NAMESPACE)
    status = stored.status
    assert status is not None
    assert status.replicas == TARGETS * PODS_PER_TARGET, status
    balancing = next(c for c in status.conditions or () if c.type == "Balancing")
    assert balancing.status == "True", balancing
    placed = {t.name: t.desired for t in status.targets or ()}
    steady, floor = [], []
    for _ in range(runs):
        steady.append(reconcile())
        floor.append(baseline())
    after = manager.api_reader.get(Balancer, NAME, NAMESPACE)
    assert after.metadata.resource_version == stored.metadata.resource_version, "a steady reconcile wrote the status"
    cached = 0
    for namespace, selector in reconciler.pods.selectors():
        informer = manager.cache.get_informer("v1/Pod", reconciler.pods.scope(namespace, selector))
        cached += len(informer.store.values())
    result = {
        "first": first, "steady": steady, "baseline": floor, "placed": placed,
        "informers": len(reconciler.pods.selectors()), "cached_pods": cached,
        "rss_imported": rss_imported, "rss_first": rss_first, "rss": proc_status("VmRSS"), "hwm": proc_status("VmHWM"),
    }  # fmt: skip
    # The contrast, after everything above was measured: one cluster-wide pod informer of the same projection,
    # what a controller without per-selector informers would hold.
    everything = manager.cache.get_informer("v1/Pod", CacheScope(projection=BalancerPod))
    if not everything.wait_for_sync(300):
        raise TimeoutError("the cluster-wide pod informer did not sync")
    result |= {"cluster_wide_pods": len(everything.store.values()), "rss_cluster_wide": proc_status("VmRSS")}
    manager.cache.stop()
    return result


def run_child(kubeconfig: str, runs: int) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", kubeconfig, "--runs", str(runs)]
    answer = subprocess.run(command, capture_output=True, text=True, check=False)
    if answer.returncode != 0:
        raise SystemExit(f"child failed:\n{answer.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(answer.stdout.strip().splitlines()[-1])
    return result


# ---------------------------------------------------------------------------------------------- reports


def ms(seconds: float) -> str:
    return f"{seconds * 1000:,.1f} ms"


def mib(value: float) -> str:
    return f"{value / 2**20:,.0f} MiB"


def reconcile_table(results: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| call | wall (median) | min | max | thread CPU | process CPU | × baseline (wall) |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, result in results.items():
        base = statistics.median(w for w, _, _ in result["baseline"])
        rows = [
            (f"10 scale GETs alone (baseline), median of {len(result['baseline'])}", result["baseline"]),
            (f"steady reconcile, median of {len(result['steady'])}", result["steady"]),
            ("first reconcile (pod informers created and listed, 10 scales and the status written)", [result["first"]]),
        ]  # fmt: skip
        for name, samples in rows:
            walls = [w for w, _, _ in samples]
            wall = statistics.median(walls)
            thread = statistics.median(t for _, t, _ in samples)
            process = statistics.median(p for _, _, p in samples)
            lines.append(
                f"| {name}, {label} | {ms(wall)} | {ms(min(walls))} | {ms(max(walls))} | {ms(thread)} | "
                f"{ms(process)} | {wall / base:.2f} |"
            )
    return lines


def memory_table(results: dict[str, dict[str, Any]]) -> list[str]:
    lines = [
        "| operator process | pod informers, pods cached | RSS imported | after the first reconcile | after the "
        "steady ones | peak | contrast: one cluster-wide pod informer added (pods, RSS) |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, r in results.items():
        lines.append(
            f"| {label} | {r['informers']}, {r['cached_pods']:,} | {mib(r['rss_imported'])} | {mib(r['rss_first'])} | "
            f"{mib(r['rss'])} | {mib(r['hwm'])} | {r['cluster_wide_pods']:,}, {mib(r['rss_cluster_wide'])} |"
        )
    none, many = results.values()
    grown = (many["rss"] - many["rss_imported"]) / max(1, none["rss"] - none["rss_imported"])
    lines.append(
        f"\nRSS ratio (with / without the unrelated pods) after the steady reconciles: "
        f"{many['rss'] / none['rss']:.3f}; growth over the imported interpreter, with / without: {grown:.2f}."
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=30, help="steady reconciles (and baselines) per process")
    parser.add_argument("--unrelated", type=int, default=20_000, help="pods no target selects, second process")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.runs)))
        return

    print(f"machine: {cpu_model()}, {os.cpu_count()} cores ({len(os.sched_getaffinity(0))} usable)")
    print(f"python: {platform.python_implementation()} {platform.python_version()} ({platform.platform()})")
    print(f"date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC, load average {os.getloadavg()}")
    results: dict[str, dict[str, Any]] = {}
    with Environment(crd_paths=[CRD_DIR], network_mode="loopback") as env:
        client = APIServerClient(Transport(RESTConfig(env.client_configuration())))
        began = time.perf_counter()
        seed(client)
        print(
            f"  seeded {TARGETS} Deployments, {TARGETS * PODS_PER_TARGET:,} pods in {time.perf_counter() - began:.0f} s"
        )
        time.sleep(1.5)  # the Pending pods are now late (startupTimeoutSeconds 1)
        results["no other pod"] = run_child(str(env.kubeconfig_path), args.runs)
        seconds = add_unrelated(client, args.unrelated)
        print(f"  added {args.unrelated:,} unrelated pods in {seconds:.0f} s")
        reset(client)
        results[f"{args.unrelated:,} unrelated pods"] = run_child(str(env.kubeconfig_path), args.runs)
        client.close()
    print(f"\nplacement: {results['no other pod']['placed']}")
    print()
    print("\n".join(reconcile_table(results)))
    print()
    print("\n".join(memory_table(results)))


if __name__ == "__main__":
    main()
