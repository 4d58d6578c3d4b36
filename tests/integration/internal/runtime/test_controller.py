"""Controllers on a manager against the real API server: requeues, backoff, concurrency, shutdown, metrics."""

from __future__ import annotations

import itertools
import threading
import time
from collections import defaultdict
from typing import Any

import pytest
import urllib3

from ballast.runtime import Builder, Client, Context, Manager, Request, RESTConfig, Result, TerminalError
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.objects import namespace as namespace_of
from ballast.runtime.predicate import new_predicate_funcs
from tests.unit.internal.runtime.support import running


def configmap(name: str, namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}


@pytest.fixture
def manager(rest_config: RESTConfig) -> Manager:
    return Manager(rest_config, field_owner="runtime-tests", metrics_bind_address="127.0.0.1:0",
                   health_probe_bind_address="127.0.0.1:0", graceful_shutdown_timeout=10)  # fmt: skip


class Calls:
    """Thread-safe record of reconcile calls per request, with timestamps."""

    def __init__(self) -> None:
        self.times: dict[Request, list[float]] = defaultdict(list)
        self.lock = threading.Lock()

    def record(self, request: Request) -> int:
        with self.lock:
            self.times[request].append(time.monotonic())
            return len(self.times[request])

    def count(self, request: Request) -> int:
        with self.lock:
            return len(self.times[request])


def _namespaced_to(namespace: str) -> Any:
    return new_predicate_funcs(lambda obj: namespace_of(obj) == namespace)


def test_requeue_after_reconciles_again_after_the_delay(
    manager: Manager, client: Client, envtest_namespace: str
) -> None:
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        return Result(requeue_after=0.4) if calls.record(request) < 3 else None

    Builder(manager).for_("v1/ConfigMap").with_event_filter(_namespaced_to(envtest_namespace)).named(
        "requeue"
    ).complete(reconcile)
    with running(manager, stop_timeout=40):
        client.create(configmap("tick", envtest_namespace))
        request = Request(envtest_namespace, "tick")
        poll_until(lambda: calls.count(request) == 3, timeout=10, what="three reconciles")
        time.sleep(0.6)
        assert calls.count(request) == 3  # no fourth: the third returned no requeue
    gaps = [b - a for a, b in itertools.pairwise(calls.times[request])]
    assert all(gap >= 0.39 for gap in gaps), gaps


def test_errors_back_off_exponentially_then_success_forgets(
    manager: Manager, client: Client, envtest_namespace: str
) -> None:
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        if calls.record(request) <= 7:
            raise RuntimeError("transient failure")
        return None

    controller = (
        Builder(manager)
        .for_("v1/ConfigMap")
        .with_event_filter(_namespaced_to(envtest_namespace))
        .named("backoff")
        .complete(reconcile)
    )
    with running(manager, stop_timeout=40):
        client.create(configmap("flaky", envtest_namespace))
        request = Request(envtest_namespace, "flaky")
        poll_until(lambda: calls.count(request) == 8, timeout=15, what="eight reconciles")
        poll_until(lambda: controller.queue.num_requeues(request) == 0, timeout=5, what="the backoff to be forgotten")
    times = calls.times[request]
    gaps = [b - a for a, b in itertools.pairwise(times)]
    # Per-item exponential 5 ms × 2^n: each wait at least the limiter's delay, so the later ones grow with it
    # (a ratio of two measured gaps would measure the machine's stalls instead).
    for failures, gap in enumerate(gaps):
        assert gap >= 0.005 * 2**failures * 0.9, (failures, gaps)


def test_terminal_errors_are_not_retried_and_programming_errors_do_not_kill_workers(
    manager: Manager, client: Client, envtest_namespace: str
) -> None:
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        calls.record(request)
        if request.name == "terminal":
            raise TerminalError("cannot be fixed by retrying")
        if request.name == "buggy" and calls.count(request) == 1:
            raise KeyError("missing")  # stands for a bug in the reconciler
        return None

    Builder(manager).for_("v1/ConfigMap").with_event_filter(_namespaced_to(envtest_namespace)).named(
        "terminal"
    ).complete(reconcile)
    with running(manager, stop_timeout=40):
        for name in ("terminal", "buggy", "fine"):
            client.create(configmap(name, envtest_namespace))
        poll_until(lambda: calls.count(Request(envtest_namespace, "buggy")) == 2, timeout=10, what="the buggy retry")
        poll_until(lambda: calls.count(Request(envtest_namespace, "fine")) == 1, timeout=10, what="the next key")
        time.sleep(0.5)
        assert calls.count(Request(envtest_namespace, "terminal")) == 1
        body = urllib3.request("GET", f"http://127.0.0.1:{manager.metrics_port}/metrics").data.decode()
    assert 'controller_runtime_terminal_reconcile_errors_total{controller="terminal"} 1.0' in body
    assert 'controller_runtime_reconcile_panics_total{controller="terminal"} 1.0' in body
    assert 'controller_runtime_reconcile_errors_total{controller="terminal"} 2.0' in body


def test_concurrent_workers_never_reconcile_one_key_twice_at_once(
    manager: Manager, client: Client, envtest_namespace: str
) -> None:
    in_flight: set[Request] = set()
    overlap: list[Request] = []
    peak = [0]
    lock = threading.Lock()
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        with lock:
            if request in in_flight:
                overlap.append(request)
            in_flight.add(request)
            peak[0] = max(peak[0], len(in_flight))
        time.sleep(0.05)  # long enough for updates of the same key to arrive meanwhile
        calls.record(request)
        with lock:
            in_flight.discard(request)
        return None

    Builder(manager).for_("v1/ConfigMap").with_event_filter(_namespaced_to(envtest_namespace)).named(
        "concurrent"
    ).with_options(max_concurrent_reconciles=4).complete(reconcile)
    with running(manager, stop_timeout=40):
        made = [client.create(configmap(f"k{i}", envtest_namespace)) for i in range(6)]
        for round_ in range(5):
            for obj in made:
                client.patch(obj, {"data": {"round": str(round_)}})
        poll_until(
            lambda: all(calls.count(Request(envtest_namespace, f"k{i}")) >= 2 for i in range(6)),
            timeout=20,
            what="every key reconciled after its updates",
        )
    assert overlap == []
    assert peak[0] > 1  # the workers really ran side by side


def test_graceful_shutdown_waits_for_in_flight_work(manager: Manager, client: Client, envtest_namespace: str) -> None:
    started, finished = threading.Event(), threading.Event()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        started.set()
        time.sleep(1.0)
        finished.set()
        return None

    Builder(manager).for_("v1/ConfigMap").with_event_filter(_namespaced_to(envtest_namespace)).named(
        "graceful"
    ).complete(reconcile)
    with running(manager, stop_timeout=40):
        client.create(configmap("slow", envtest_namespace))
        assert started.wait(10)
        # leaving the block stops the manager while the reconcile is still sleeping
    assert finished.is_set()


def test_owned_objects_enqueue_their_controller_owner(manager: Manager, client: Client, envtest_namespace: str) -> None:
    calls = Calls()

    def reconcile(ctx: Context, request: Request) -> Result | None:
        calls.record(request)
        return None

    Builder(manager).for_("apps/v1/Deployment").owns("apps/v1/ReplicaSet").named("owner").complete(reconcile)
    with running(manager, stop_timeout=40):
        deployment: dict[str, Any] = client.create({
            "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": envtest_namespace},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                "metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}},
        })  # fmt: skip
        request = Request(envtest_namespace, "web")
        poll_until(lambda: calls.count(request) >= 1, timeout=10, what="the deployment's own reconcile")
        before = calls.count(request)
        client.create({
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {"name": "web-1", "namespace": envtest_namespace, "ownerReferences": [{
                "apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": deployment["metadata"]["uid"],
                "controller": True}]},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                "metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}},
        })  # fmt: skip
        poll_until(lambda: calls.count(request) > before, timeout=10, what="a reconcile caused by the owned ReplicaSet")


def test_metrics_endpoint_exposes_controller_runtime_names(
    manager: Manager, client: Client, envtest_namespace: str
) -> None:
    Builder(manager).for_("v1/ConfigMap").with_event_filter(_namespaced_to(envtest_namespace)).named(
        "metrics"
    ).complete(lambda ctx, request: None)
    with running(manager, stop_timeout=40):
        client.create(configmap("m", envtest_namespace))
        poll_until(
            lambda: (
                'controller_runtime_reconcile_total{controller="metrics",result="success"} 1.0'
                in urllib3.request("GET", f"http://127.0.0.1:{manager.metrics_port}/metrics").data.decode()
            ),
            timeout=10,
            what="a counted reconcile",
        )
        body = urllib3.request("GET", f"http://127.0.0.1:{manager.metrics_port}/metrics").data.decode()
        ready = urllib3.request("GET", f"http://127.0.0.1:{manager.health_port}/readyz")
    for name in (
        "controller_runtime_reconcile_total", "controller_runtime_reconcile_errors_total",
        "controller_runtime_reconcile_time_seconds_bucket", "controller_runtime_max_concurrent_reconciles",
        "controller_runtime_active_workers", "workqueue_depth", "workqueue_adds_total",
        "workqueue_queue_duration_seconds_bucket", "workqueue_work_duration_seconds_bucket",
        "workqueue_unfinished_work_seconds", "workqueue_longest_running_processor_seconds", "workqueue_retries_total",
        "rest_client_requests_total", "process_resident_memory_bytes",
    ):  # fmt: skip
        assert f"\n{name}" in body, name
    assert 'controller_runtime_max_concurrent_reconciles{controller="metrics"} 1.0' in body
    assert (ready.status, ready.data) == (200, b"ok")
