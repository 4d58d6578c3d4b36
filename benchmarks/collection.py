"""One collection cycle over 10,000 enrolled pods, against the Go operator's sample-write pattern in the same run, and
the operator's memory with 1,000 enrolled pods among 1,000 vs among 20,000 cluster pods.

Cycle part: a real kube-apiserver + etcd (`Environment`, our CRDs), a test metrics.k8s.io backend behind the
aggregation layer (PodMetrics of every pod: 2 containers, cpu + memory; label selectors honoured as
metrics-server does), a throw-away redis-server, 10,000 enrolled pods in 1,000 WorkloadProfiles (10 pods each)
under one ClusterResourcePolicy (cpu p95 request, memory max request) fed by one MetricsSource. The operator runs
in a child process, wired as `ballastd` wires it (enrolled-pod cache as `PodProjection` with the profile-ref
index, our kinds in the scheme), and the benchmark calls the collector's reconcile for the MetricsSource:

- "ours": the collector as shipped — one LIST of PodMetrics, one EVAL writing the 40,000 samples, reads for the
  statistics of the series that are due (one EVAL per 32 series), a status apply per profile whose status changed;
- "Go-operator write pattern": the same collector and reads, but samples written as the Go operator's AddSample
  does: RPUSH, LTRIM, SETNX per sample, each its own round trip (docs/compatibility.md);

alternating, each measured for: process CPU (every thread: the reconcile, status writers, and the informer
decoding our own status updates until the cache has them), CPU of the reconcile thread alone, wall time, store
round trips (requests put on the wire, write and read counted apart), series read back, statuses written and
resident memory. On fresh history every series is short (under 50 samples, 2 % of it is one sample), so every
cycle recomputes every series.

Then every series is pre-filled to `--depth` samples (history as it looks after a while) and a fresh operator
process runs `--steady` + 1 cycles on a virtual clock advancing by the poll interval (60 s) per cycle: its first
cycle (a fresh leader: every series read back and computed) is reported apart from the steady state that
follows, where a series is recomputed only when the refresh rules of `ballast.internal.collection.refresh` say
so (2 % new samples, 15 minutes at the latest, by default) and a status is written only when it changed — median
and max; `--new-fraction 0.01,0.02` runs the steady state once per refresh fraction.

Scale part: a fresh control plane with 1,000 enrolled pods (100 profiles); the operator process starts (cache
sync) and runs one cycle, its RSS is read; then 19,000 pods without the mode label are added and a fresh operator
process does the same. Memory should follow enrolled pods, not cluster pods (benchmarks/RESULTS.md).

    .venv/bin/python benchmarks/collection.py [--pods 10000] [--pods-per-profile 10] [--runs 2] [--depth 10000]
                                              [--steady 12] [--new-fraction 0.02,0.01]
                                              [--scale-enrolled 1000] [--scale-cluster 20000]
                                              [--skip-cycle] [--skip-scale]

`COLLECTION_PROFILE=/tmp/cycle` writes a cProfile of each reconcile to `/tmp/cycle.<pid>.<n>` (not timed then).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import datetime
import json
import logging
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import parse_qs, urlsplit

import orjson
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from ballast.api.ballast.v1 import ClusterResourcePolicy, MetricsSource, WorkloadProfile
from ballast.api.scheme import add_to_scheme
from ballast.controllers.collector import FIELD_MANAGER, NAME, MetricsCollector
from ballast.internal.collection import RefreshPolicy
from ballast.internal.enrollment import MODE_LABEL, PROFILE_REF, PROFILE_REF_INDEX, PodProjection, profile_ref_index
from ballast.internal.history import Cycle, HistoryStore, RedisHistoryStore, Series, SeriesKey
from ballast.internal.history.keys import first_seen_key, times_key, values_key
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.metricsources import SOURCE_TYPES, FetchResult, FetchTarget, Source, SourceFactory
from ballast.internal.naming import measurement_hash, policy_key
from ballast.internal.operator import OperatorOptions
from ballast.runtime import (
    APPLY,
    CacheScope,
    Context,
    FakeClock,
    Manager,
    Request,
    RESTConfig,
    Scheme,
    objects,
)
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.backends import RecordingHandler
from ballast.runtime.log import get_logger
from ballast.runtime.rest import Transport

from machine import cpu_model, redis_server

CRD_DIR = Path(__file__).resolve().parents[1] / "config" / "crd" / "bases"
GROUP = "ballast.tightlinesoftware.com"
API_VERSION = f"{GROUP}/v1"
SOURCE = "metrics"
POLICY = "default"
CONTAINERS = ("app", "sidecar")
NAMESPACES = 10
RESERVOIR = 10_000
OURS = "ours"
ANCHOR = "Go-operator write pattern"
FIRST = "first cycle of a fresh leader"
STEADY = "steady state"
POLL_SECONDS = 60.0
MEASURED_FOR = 2 * 24 * 3600
"""How long the pre-filled history has been measured (its first_seen): past readiness' default minTimeSpan."""


# --------------------------------------------------------------------------------------------- machine


def proc_status(field: str) -> int:
    """A `/proc/self/status` memory figure in bytes (VmRSS: resident now, VmHWM: peak resident)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


# ------------------------------------------------------------------------------------------ redis-server


class CountingConnection(redis.Connection):
    """Counts requests put on the wire (one per command, one per pipeline)."""

    sends: ClassVar[int] = 0

    def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        type(self).sends += 1
        super().send_packed_command(command, check_health)  # type: ignore[no-untyped-call]


def counting_client(url: str) -> redis.Redis:
    pool = redis.ConnectionPool.from_url(
        url, connection_class=CountingConnection, retry=Retry(NoBackoff(), 0), socket_timeout=120
    )
    return redis.Redis(connection_pool=pool)


# ------------------------------------------------------------------------------------- the cluster side


def pod_name(index: int) -> tuple[str, str]:
    return f"bench-{index % NAMESPACES}", f"pod-{index:05d}"


def app_of(index: int, pods_per_profile: int) -> str:
    return f"app-{index // pods_per_profile:04d}"


def profile_of(app: str) -> str:
    return f"{app}--{POLICY}"


def pod_body(index: int, pods_per_profile: int, enrolled: bool) -> dict[str, Any]:
    namespace, name = pod_name(index)
    app = app_of(index, pods_per_profile) if enrolled else f"other-{index // 50:04d}"
    labels = {"app": app, "pod-template-hash": "7d9f8c6b5"}
    annotations = {}
    if enrolled:
        labels[MODE_LABEL] = "measure"
        annotations[PROFILE_REF] = profile_of(app)
    containers = [
        {"name": c, "image": f"registry.example/{c}:1.4.2",
         "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
         "ports": [{"containerPort": 8080 + i, "protocol": "TCP"}],
         "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "APP", "value": app}]}
        for i, c in enumerate(CONTAINERS)
    ]  # fmt: skip
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels, "annotations": annotations},
        "spec": {"containers": containers},
    }


def pod_metrics(index: int, pods_per_profile: int, enrolled: bool, rng: random.Random) -> dict[str, Any]:
    body = pod_body(index, pods_per_profile, enrolled)
    meta = body["metadata"]
    return {
        "metadata": {"name": meta["name"], "namespace": meta["namespace"], "labels": meta["labels"],
                     "creationTimestamp": "2026-11-29T12:00:00Z"},
        "timestamp": "2026-11-29T12:00:00Z",
        "window": "15.032s",
        "containers": [
            {"name": c, "usage": {"cpu": f"{rng.randrange(1_000_000, 900_000_000)}n",
                                  "memory": f"{rng.randrange(10_000, 900_000)}Ki"}}
            for c in CONTAINERS
        ],
    }  # fmt: skip


class MetricsBackend:
    """metrics.k8s.io/v1beta1 from pre-encoded PodMetrics lists: the enrolled pods for the mode-label selector,
    every pod otherwise (what metrics-server answers)."""

    DISCOVERY: ClassVar[dict[str, Any]] = {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": "metrics.k8s.io/v1beta1",
        "resources": [{"name": "pods", "namespaced": True, "kind": "PodMetrics", "verbs": ["get", "list"]}],
    }

    def __init__(self) -> None:
        self.enrolled = self.everything = b""
        self.lists: list[str] = []

    def load(self, enrolled: list[dict[str, Any]], others: list[dict[str, Any]]) -> None:
        def body(items: list[dict[str, Any]]) -> bytes:
            return orjson.dumps({"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1",
                                 "metadata": {}, "items": items})  # fmt: skip

        self.enrolled, self.everything = body(enrolled), body(enrolled + others)

    def handler(self) -> type[RecordingHandler]:
        backend = self

        class Handler(RecordingHandler):
            requests: ClassVar[list[tuple[str, str]]] = []

            def do_GET(self) -> None:  # noqa: N802 - BaseHTTPRequestHandler's name
                url = urlsplit(self.path)
                if url.path == "/apis/metrics.k8s.io/v1beta1":
                    body = orjson.dumps(MetricsBackend.DISCOVERY)
                elif url.path == "/apis/metrics.k8s.io/v1beta1/pods":
                    backend.lists.append(self.path)
                    selector = parse_qs(url.query).get("labelSelector", [""])[0]
                    body = backend.enrolled if selector == MODE_LABEL else backend.everything
                else:
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        return Handler


def create_all(client: APIServerClient, bodies: Sequence[dict[str, Any]], workers: int = 8) -> float:
    """Create objects, `workers` requests in flight; returns the seconds it took."""
    began = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        for _ in pool.map(client.create, bodies):
            pass
    return time.perf_counter() - began


def seed_cluster(client: APIServerClient, pods: int, pods_per_profile: int) -> None:
    """BallastConfig, the MetricsSource, the policy, the namespaces, the profiles (status as the enrollment lane
    writes it) and the enrolled pods."""
    client.create({"apiVersion": API_VERSION, "kind": "BallastConfig", "metadata": {"name": "ballast"},
                   "spec": {"identityLabels": ["app"]}})  # fmt: skip
    client.create({"apiVersion": API_VERSION, "kind": "MetricsSource", "metadata": {"name": SOURCE},
                   "spec": {"type": "kubernetesMetrics", "config": {"pollInterval": "60s"}}})  # fmt: skip
    metrics = [
        {"resource": "cpu", "field": "request", "source": SOURCE, "aggregation": "p95"},
        {"resource": "memory", "field": "request", "source": SOURCE, "aggregation": "max"},
    ]
    client.create({"apiVersion": API_VERSION, "kind": "ClusterResourcePolicy", "metadata": {"name": POLICY},
                   "spec": {"metrics": metrics}})  # fmt: skip
    for index in range(NAMESPACES):
        with contextlib.suppress(Exception):
            client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"bench-{index}"}})
    apps = sorted({app_of(i, pods_per_profile) for i in range(pods)})
    create_all(client, [{"apiVersion": API_VERSION, "kind": "WorkloadProfile",
                         "metadata": {"name": profile_of(app)}} for app in apps])  # fmt: skip

    def identity(app: str) -> None:
        body = {"apiVersion": API_VERSION, "kind": "WorkloadProfile", "metadata": {"name": profile_of(app)}}
        status = {
            "tupleLabels": {"app": app},
            "selectorLabels": {"app": app},
            "measurementHash": hash_of(app),
            "policyRef": {"kind": "ClusterResourcePolicy", "name": POLICY},
            "activeWorkloads": pods_per_profile,
        }
        client.status().patch(body, {**body, "status": status}, patch_type="apply",
                              field_manager="ballast-workloadwatcher", force=True)  # fmt: skip

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(identity, apps))
    create_all(client, [pod_body(i, pods_per_profile, enrolled=True) for i in range(pods)])


def hash_of(app: str) -> str:
    return measurement_hash({"app": app}, policy_key("ClusterResourcePolicy", "", POLICY))


def prefill(url: str, apps: Sequence[str], depth: int) -> float:
    """Every series of `apps` filled to `depth` samples (values, times, first_seen), as after two days of measuring
    (first_seen two days ago, past the default 24 h minTimeSpan; the reservoir keeps the newest samples): one template
    list per resource, copied to every series with DUMP/RESTORE (the statistics do not care that they repeat)."""
    client = redis.Redis.from_url(url)
    rng = random.Random(11)
    began = time.perf_counter()
    first_s = int(time.time()) - 6 * depth  # one sample every 6 s up to now: well inside the retention window
    templates: dict[str, bytes] = {}
    for resource, high in (("cpu", 900), ("memory", 900 << 20), ("ts", 0)):
        name = f"bench:template:{resource}"
        values = (
            range(first_s, first_s + 6 * depth, 6)
            if resource == "ts"
            else [rng.randrange(1, high) for _ in range(depth)]
        )
        client.delete(name)
        for start in range(0, depth, 10_000):
            client.rpush(name, *list(values)[start : start + 10_000])
        payload = client.dump(name)
        assert isinstance(payload, bytes)
        templates[resource] = payload
        client.delete(name)
    keys = [SeriesKey(hash_of(app), c, r) for app in apps for c in CONTAINERS for r in ("cpu", "memory")]
    for start in range(0, len(keys), 100):
        pipe = client.pipeline(transaction=False)
        for key in keys[start : start + 100]:
            pipe.restore(values_key(key), 0, templates[key.resource], replace=True)
            pipe.restore(times_key(key), 0, templates["ts"], replace=True)
            pipe.set(first_seen_key(key), (int(time.time()) - MEASURED_FOR) * 1000)
        pipe.execute()
    client.close()
    return time.perf_counter() - began


# ----------------------------------------------------------------------------------- the operator (child)


class AnchorPatternStore:
    """Writes as the Go operator's AddSample does — RPUSH, LTRIM, SETNX per sample, each a round trip; reads as
    ours, so that only the write pattern differs."""

    def __init__(self, client: redis.Redis, reads: HistoryStore) -> None:
        self.client = client
        self.reads = reads

    def write_cycle(self, cycle: Cycle) -> bool:
        for sample in cycle.samples:
            name = values_key(sample.key)
            self.client.rpush(name, sample.value)
            self.client.ltrim(name, -cycle.reservoir_size, -1)
            self.client.setnx(first_seen_key(sample.key), cycle.at_ms)
        return True

    def read_many(self, keys: Sequence[SeriesKey], *, with_times: bool = False) -> list[Series]:
        return self.reads.read_many(keys, with_times=with_times)


class MeasuredStore:
    """Time and round trips of the store calls a cycle makes, writes and reads apart."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.figures: dict[str, float] = {}

    def reset(self) -> None:
        self.figures = {
            "write_s": 0.0, "write_trips": 0, "read_s": 0.0, "read_trips": 0, "read_calls": 0, "series_read": 0
        }  # fmt: skip
        self.written_at = 0.0
        """`time.thread_time()` of the reconcile thread when the cycle's write returned."""

    def _measure(self, what: str, call: Callable[[], Any]) -> Any:
        began, sends = time.perf_counter(), CountingConnection.sends
        try:
            return call()
        finally:
            self.figures[f"{what}_s"] += time.perf_counter() - began
            self.figures[f"{what}_trips"] += CountingConnection.sends - sends

    def write_cycle(self, cycle: Cycle) -> bool:
        result: bool = self._measure("write", lambda: self.inner.write_cycle(cycle))
        self.written_at = time.thread_time()
        return result

    def read_many(self, keys: Sequence[SeriesKey], *, with_times: bool = False) -> list[Series]:
        self.figures["read_calls"] += 1
        self.figures["series_read"] += len(keys)
        result: list[Series] = self._measure("read", lambda: self.inner.read_many(keys, with_times=with_times))
        return result


class TimedSource:
    """The real source, with its fetch timed (the LIST and its decoding)."""

    def __init__(self, inner: Source) -> None:
        self.inner = inner
        self.seconds = 0.0
        self.samples = 0

    def fetch(self, target: FetchTarget) -> FetchResult:
        began = time.perf_counter()
        result = self.inner.fetch(target)
        self.seconds = time.perf_counter() - began
        self.samples = len(result.samples)
        return result


def operator(kubeconfig: str) -> Manager:
    """The manager as `ballastd` wires it, with its caches synced."""
    manager = Manager(
        RESTConfig.from_kubeconfig(kubeconfig),
        scheme=add_to_scheme(Scheme()),
        cache_by_kind={"v1/Pod": CacheScope(label_selector=MODE_LABEL, projection=PodProjection)},
    )
    manager.cache.index_field("v1/Pod", PROFILE_REF_INDEX, profile_ref_index)
    manager.cache.start()
    for kind in ("v1/Pod", WorkloadProfile, ClusterResourcePolicy, MetricsSource, f"{API_VERSION}/BallastConfig"):
        manager.client.list(kind)  # creates the informer and waits for its sync
    return manager


class RecordingCollector(MetricsCollector):
    """The collector as shipped, noting the resourceVersion of each status it writes, so that a cycle's CPU can
    include the informer decoding them: the benchmark waits until the cache has every one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.written: dict[str, int] = {}

    def _apply(self, body: dict[str, Any]) -> None:
        updated = self.client.status().patch(body, body, patch_type=APPLY, field_manager=FIELD_MANAGER, force=True)
        self.written[body["metadata"]["name"]] = int(objects.resource_version(updated))


def settled(manager: Manager, written: dict[str, int], timeout: float = 120.0) -> None:
    """Wait until the cache holds every status written (at least the resourceVersion each write returned)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cached = {
            objects.name(profile): int(objects.resource_version(profile))
            for profile in manager.client.list(f"{API_VERSION}/WorkloadProfile")
        }
        if all(cached.get(name, 0) >= version for name, version in written.items()):
            return
        time.sleep(0.25)  # each look costs CPU that is counted in the cycle's process CPU: look rarely
    raise TimeoutError(f"the cache did not see {len(written)} written statuses within {timeout:g}s")


def run_cycle(manager: Manager, collector: RecordingCollector, store: MeasuredStore,
              source: TimedSource) -> dict[str, float]:  # fmt: skip
    request = Request("", SOURCE)
    ctx = Context(NAME, request, "bench", get_logger("bench"), manager.clock)
    store.reset()
    collector.written = {}
    profile_to = os.environ.get("COLLECTION_PROFILE")
    profiler = cProfile.Profile() if profile_to else None
    wall, cpu, thread = time.perf_counter(), time.process_time(), time.thread_time()
    if profiler is not None:
        profiler.runcall(collector.reconcile, ctx, request)
        profiler.dump_stats(f"{profile_to}.{os.getpid()}.{time.monotonic_ns()}")
    else:
        collector.reconcile(ctx, request)
    reconcile_wall, reconcile_thread = time.perf_counter() - wall, time.thread_time() - thread
    settled(manager, collector.written)
    return {
        "cpu": time.process_time() - cpu,
        "thread_cpu": reconcile_thread,
        "collect_cpu": store.written_at - thread,
        "wall": reconcile_wall,
        "settled_wall": time.perf_counter() - wall,
        "fetch_s": source.seconds,
        "samples": source.samples,
        "statuses_written": len(collector.written),
        **store.figures,
        "rss": proc_status("VmRSS"),
        "hwm": proc_status("VmHWM"),
    }


def child_cycles(kubeconfig: str, url: str, plan: Sequence[str]) -> dict[str, Any]:
    logging.basicConfig(level=logging.WARNING)
    began = time.perf_counter()
    manager = operator(kubeconfig)
    synced = {"sync_wall": time.perf_counter() - began, "rss_synced": proc_status("VmRSS")}
    client = counting_client(url)
    client.ping()  # connection set-up (HELLO, CLIENT SETINFO) is not a cycle's round trip
    ours = RedisHistoryStore(client)
    source = TimedSource(SOURCE_TYPES["kubernetesMetrics"](manager.api_reader))
    plugins: dict[str, SourceFactory] = {"kubernetesMetrics": lambda _: source}
    stores = {OURS: MeasuredStore(ours), ANCHOR: MeasuredStore(AnchorPatternStore(client, ours))}
    collectors = {
        label: RecordingCollector(manager, store, KillSwitchState(), OperatorOptions(), plugins=plugins)
        for label, store in stores.items()
    }
    runs = []
    for label in plan:
        figures = run_cycle(manager, collectors[label], stores[label], source)
        runs.append({"label": label, **figures})
        time.sleep(1.0)  # the next cycle gets a later second, so its statuses are told apart
    manager.cache.stop()
    return {**synced, "runs": runs}


def child_steady(kubeconfig: str, url: str, cycles: int, new_fraction: float | None) -> dict[str, Any]:
    """A fresh operator over full series: its first cycle, then `cycles` more, one poll interval apart (virtual
    time: the refresh rules see the minutes pass); `new_fraction` replaces the default refresh fraction."""
    logging.basicConfig(level=logging.WARNING)
    manager = operator(kubeconfig)
    client = counting_client(url)
    client.ping()
    store = MeasuredStore(RedisHistoryStore(client))
    source = TimedSource(SOURCE_TYPES["kubernetesMetrics"](manager.api_reader))
    clock = FakeClock(datetime.datetime.now(datetime.UTC))
    refresh = RefreshPolicy() if new_fraction is None else RefreshPolicy(min_new_fraction=new_fraction)
    collector = RecordingCollector(manager, store, KillSwitchState(), OperatorOptions(clock=clock),
                                   plugins={"kubernetesMetrics": lambda _: source}, refresh=refresh)  # fmt: skip
    fraction = refresh.min_new_fraction
    runs = []
    for index in range(cycles + 1):
        if index:
            clock.advance(POLL_SECONDS)
        figures = run_cycle(manager, collector, store, source)
        runs.append({"label": STEADY if index else FIRST, "fraction": fraction, **figures})
    manager.cache.stop()
    return {"runs": runs}


def child_scale(kubeconfig: str, url: str) -> dict[str, Any]:
    logging.basicConfig(level=logging.WARNING)
    baseline = proc_status("VmRSS")  # the interpreter with every module imported
    began, cpu = time.perf_counter(), time.process_time()
    manager = operator(kubeconfig)
    synced = {"sync_wall": time.perf_counter() - began, "sync_cpu": time.process_time() - cpu}
    rss_synced = proc_status("VmRSS")
    client = counting_client(url)
    client.ping()
    store = MeasuredStore(RedisHistoryStore(client))
    source = TimedSource(SOURCE_TYPES["kubernetesMetrics"](manager.api_reader))
    collector = RecordingCollector(manager, store, KillSwitchState(), OperatorOptions(),
                                   plugins={"kubernetesMetrics": lambda _: source})  # fmt: skip
    figures = run_cycle(manager, collector, store, source)
    cached = len(manager.client.list("v1/Pod"))
    manager.cache.stop()
    return {"baseline": baseline, "rss_synced": rss_synced, "cached_pods": cached, **synced, **figures}


def run_child(*args: str) -> dict[str, Any]:
    command = [sys.executable, __file__, "--child", *args]
    answer = subprocess.run(command, capture_output=True, text=True, check=False)
    if answer.returncode != 0:
        raise SystemExit(f"child {' '.join(args[:1])} failed:\n{answer.stderr[-4000:]}")
    result: dict[str, Any] = json.loads(answer.stdout.strip().splitlines()[-1])
    return result


# ---------------------------------------------------------------------------------------------- reports


def mib(value: float) -> str:
    return f"{value / 2**20:,.0f} MiB"


def cycle_row(label: str, run: dict[str, float]) -> str:
    return (
        f"| {label} | {run['cpu']:.2f} s | {run['thread_cpu']:.2f} s ({run['collect_cpu']:.2f} s, "
        f"{run['thread_cpu'] - run['collect_cpu']:.2f} s) | {run['wall']:.2f} s | {run['fetch_s']:.2f} s | "
        f"{run['write_trips']:,.0f}, {run['write_s']:.2f} s | {run['read_trips']:,.0f}, {run['read_s']:.2f} s | "
        f"{run['series_read']:,.0f}, {run['statuses_written']:,.0f} | {mib(run['rss'])} |"
    )


def cycle_table(result: dict[str, Any], pods: int, profiles: int, depth: int) -> list[str]:
    runs = result["runs"]
    notes: list[str] = []
    lines = [
        f"Operator process: caches synced in {result['sync_wall']:.1f} s, RSS {mib(result['rss_synced'])} before the "
        "first cycle.",
        "",
        f"| one cycle, {pods:,} pods × 2 containers × cpu+memory, {profiles:,} profiles | process CPU | reconcile "
        "thread CPU: all (fetch → write, statistics → status) | wall (reconcile) | fetch: LIST + decode | "
        "store write: round trips, time | store reads: round trips, time | series read, statuses written | "
        "RSS after |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label in (OURS, ANCHOR):
        mine = [r for r in runs if r["label"] == label]
        if mine:
            median = {key: statistics.median(r[key] for r in mine) for key in mine[0] if key != "label"}
            lines.append(cycle_row(f"{label}, fresh history (median of {len(mine)})", median))
    for fraction in sorted({r["fraction"] for r in runs if "fraction" in r}, reverse=True):
        refresh = f"refresh at {fraction:.0%} new samples or 15 min"
        for run in runs:
            if run["label"] == FIRST and run["fraction"] == fraction:
                lines.append(cycle_row(f"ours, every series at {depth:,} samples: {FIRST} ({refresh})", run))
        steady = [r for r in runs if r["label"] == STEADY and r["fraction"] == fraction]
        if not steady:
            continue
        keys = [key for key in steady[0] if key not in ("label", "fraction")]
        for name, pick in (("median", statistics.median), ("max per column", max)):
            row = {key: pick(r[key] for r in steady) for key in keys}
            lines.append(cycle_row(f"ours, full series: {STEADY} ({refresh}), {name} of {len(steady)}", row))
        cpus = ", ".join(f"{r['cpu']:.2f}" for r in steady)
        notes.append(f"- {refresh}: process CPU of the steady-state cycles in order: {cpus} s.")
    if notes:
        lines += ["", f"Steady-state cycles one poll interval ({POLL_SECONDS:g} s of virtual time) apart:", *notes]
    lines.append(f"\nPeak RSS of the operator process: {mib(max(r['hwm'] for r in runs))}.")
    return lines


def scale_table(small: dict[str, Any], large: dict[str, Any], enrolled: int, cluster: int) -> list[str]:
    rows = [(f"{enrolled:,} enrolled among {enrolled:,} pods", small),
            (f"{enrolled:,} enrolled among {cluster:,} pods", large)]  # fmt: skip
    lines = [
        "| operator process | pods cached | cache sync (wall, CPU) | RSS after sync | RSS after a cycle | peak RSS |",
        "|---|---|---|---|---|---|",
    ]
    for label, run in rows:
        lines.append(
            f"| {label} | {run['cached_pods']:,} | {run['sync_wall']:.2f} s, {run['sync_cpu']:.2f} s | "
            f"{mib(run['rss_synced'])} | {mib(run['rss'])} | {mib(run['hwm'])} |"
        )
    lines.append(
        f"\nRSS ratio (among {cluster:,} / among {enrolled:,}) after a cycle: {large['rss'] / small['rss']:.3f}; "
        f"interpreter with every module imported: {mib(small['baseline'])}."
    )
    return lines


# ------------------------------------------------------------------------------------------------- parts


def cycle_part(args: argparse.Namespace, url: str) -> list[str]:
    profiles = args.pods // args.pods_per_profile
    backend = MetricsBackend()
    rng = random.Random(5)
    backend.load([pod_metrics(i, args.pods_per_profile, True, rng) for i in range(args.pods)], [])
    with Environment(crd_paths=[CRD_DIR], network_mode="loopback") as env:
        client = APIServerClient(Transport(RESTConfig(env.client_configuration())), scheme=add_to_scheme(Scheme()))
        began = time.perf_counter()
        seed_cluster(client, args.pods, args.pods_per_profile)
        print(f"  seeded {args.pods:,} pods and {profiles:,} profiles in {time.perf_counter() - began:.0f} s")
        with env.serve_api_service("metrics.k8s.io", "v1beta1", backend.handler()):
            plan = [OURS, ANCHOR] * args.runs
            result = run_child("cycles", str(env.kubeconfig_path), url, ",".join(plan), "")
            apps = sorted({app_of(i, args.pods_per_profile) for i in range(args.pods)})
            filled = prefill(url, apps, args.depth)
            print(f"  pre-filled {len(apps) * 4:,} series to {args.depth:,} samples in {filled:.0f} s")
            for fraction in args.new_fraction.split(",") if args.new_fraction else [""]:
                deep = run_child("steady", str(env.kubeconfig_path), url, str(args.steady), fraction)
                result["runs"] += deep["runs"]
        client.close()
    return cycle_table(result, args.pods, profiles, args.depth)


def scale_part(args: argparse.Namespace, url: str) -> list[str]:
    enrolled, cluster, per_profile = args.scale_enrolled, args.scale_cluster, 10
    backend = MetricsBackend()
    rng = random.Random(6)
    enrolled_metrics = [pod_metrics(i, per_profile, True, rng) for i in range(enrolled)]
    others = [pod_metrics(i, per_profile, False, rng) for i in range(enrolled, cluster)]
    redis.Redis.from_url(url).flushall()
    with Environment(crd_paths=[CRD_DIR], network_mode="loopback") as env:
        client = APIServerClient(Transport(RESTConfig(env.client_configuration())), scheme=add_to_scheme(Scheme()))
        seed_cluster(client, enrolled, per_profile)
        with env.serve_api_service("metrics.k8s.io", "v1beta1", backend.handler()):
            backend.load(enrolled_metrics, [])
            small = run_child("scale", str(env.kubeconfig_path), url, "", "")
            began = time.perf_counter()
            create_all(client, [pod_body(i, per_profile, enrolled=False) for i in range(enrolled, cluster)])
            print(f"  added {cluster - enrolled:,} pods without the mode label in {time.perf_counter() - began:.0f} s")
            backend.load(enrolled_metrics, others)
            large = run_child("scale", str(env.kubeconfig_path), url, "", "")
            listed = set(backend.lists)
        client.close()
    lines = scale_table(small, large, enrolled, cluster)
    lines.append(f"PodMetrics LIST requests seen by the backend: {sorted(listed)}.")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pods", type=int, default=10_000)
    parser.add_argument("--pods-per-profile", type=int, default=10)
    parser.add_argument("--runs", type=int, default=2, help="cycles of each pattern (median)")
    parser.add_argument("--depth", type=int, default=RESERVOIR, help="samples per series, history-depth cycles")
    parser.add_argument("--steady", type=int, default=12, help="steady-state cycles after a fresh leader's first")
    parser.add_argument("--new-fraction", default="", help="refresh fractions to run the steady state with (a,b)")
    parser.add_argument("--scale-enrolled", type=int, default=1_000)
    parser.add_argument("--scale-cluster", type=int, default=20_000)
    parser.add_argument("--skip-cycle", action="store_true")
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, kubeconfig, url, plan, extra = args.child
        if mode == "cycles":
            print(json.dumps(child_cycles(kubeconfig, url, plan.split(","))))
        elif mode == "steady":
            print(json.dumps(child_steady(kubeconfig, url, int(plan), float(extra) if extra else None)))
        else:
            print(json.dumps(child_scale(kubeconfig, url)))
        return

    began = time.perf_counter()
    load = os.getloadavg()
    out = [
        f"- machine: {cpu_model()}, {os.cpu_count()} cores; Python {platform.python_version()}; redis-py "
        f"{redis.__version__}",
        f"- date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; load average at start "
        f"{load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}",
    ]
    with redis_server() as url:
        info: dict[str, Any] = redis.Redis.from_url(url).info("server")
        out.append(f"- redis-server {info['redis_version']} (no persistence), Kubernetes envtest control plane")
        if not args.skip_cycle:
            print("collection cycle …")
            out += ["", *cycle_part(args, url)]
        if not args.skip_scale:
            print("memory with enrolled pods among cluster pods …")
            out += ["", *scale_part(args, url)]
    out.append(f"\nTotal benchmark time: {time.perf_counter() - began:.0f} s")
    print("\n".join(out))


if __name__ == "__main__":
    main()
