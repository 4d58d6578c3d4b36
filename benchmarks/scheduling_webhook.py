"""Admission round trips of the scheduling-policy (kupid) webhook against the pod webhook, in one run.

`benchmarks/webhook.py`'s method (read its docstring): the same 4,646-byte Pod CREATE AdmissionReview, over TLS
with keep-alive connections, vegeta (open loop, ≤ 64 connections) on core 1, each server on core 0 at its
defaults; every answer checked (200, allowed, the exact patch); p50/p99 at 200 requests/s for 30 s after 5 s of
warm-up, then the highest rate with p99 ≤ 10 ms, ≥ 99.9 % correct answers and the offered rate sent (the ladder,
refined by bisection). Two servers, both running for the whole run:

- pod webhook: webhook.py's "ours" (`WebhookServer` at `/mutate-v1-pod`, a handler that adds one label) — the
  baseline the ratios are taken against;
- scheduling webhook: `WebhookServer` with `ballast.webhook.scheduling.register` (`/mutate-kupid`,
  `SchedulingMutator`) reading through what ballastd reads through: a `DelegatingClient` over a real `Cache`
  (the policy kinds as models, the Namespace as a `Projection`, as `internal/cmd/wiring.new_manager` sets it
  up), its informers listing and watching an in-memory API server (`FakeAPI`) in the server process. The cache
  holds the review's Namespace and 50 scheduling policies, all candidates for the pod (25
  ClusterPodSchedulingPolicies, 25 PodSchedulingPolicies in the pod's namespace); 3 match it: a cluster policy
  (namespaceSelector + podSelector) adding a nodeSelector, a cluster policy adding a toleration, a namespaced
  policy adding a required node-affinity term. The 47 others carry the same kinds of fields behind selectors
  that do not match (the namespace's, the pod's, or both). Each answer must be the 4-operation patch (those
  three fields and the `ballast.tightlinesoftware.com/scheduling-policies` annotation) computed in this process
  by the same handler over the same cache.

The fixed-rate runs alternate the two servers (A B, B A, …; `--rounds`), each repeated when other work on the
machine disturbed it (webhook.py's rules); the medians are reported, with every round. The ladders follow, one
per server. Before the load, in this process (core 1): CPU µs per call of both handlers and of the pieces of
the scheduling one (median of rounds), and with `--cprofile` where its time goes.

    .venv/bin/python benchmarks/scheduling_webhook.py [--rounds 3] [--fixed-seconds 30] [--skip-ladder]
                                                      [--cprofile] [--what-if-tree DIR] [--max-load 0.8]
                                                      [--json results.json]

`--what-if-tree DIR` measures a third server, interleaved with the two: the scheduling webhook imported from
another copy of the package (DIR holds a `ballast/` package, e.g. a copy of the tree with a proposed patch
applied; it goes first on the server's PYTHONPATH), and its in-process figures in a process of its own. The
internal subcommands `serve-scheduling` (the scheduling server this script starts on core 0) and `in-process`
(the in-process figures as JSON) serve this script.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import cProfile
import datetime
import gc
import io
import json
import logging
import os
import platform
import pstats
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

import webhook
from ballast.api.kupid.v1alpha1 import ClusterPodSchedulingPolicy, PodSchedulingPolicy
from ballast.api.scheme import KINDS, add_to_scheme
from ballast.internal.scheduling import (
    SCHEDULING_FIELDS,
    merge_detailed,
    pod_template,
    select_compiled,
    sharing_pod_spec,
    target_for,
)
from ballast.runtime import (
    AdmissionRequest,
    Cache,
    CacheScope,
    FakeAPI,
    GroupVersionKind,
    Projection,
    Scheme,
    WebhookServer,
    patched,
)
from ballast.runtime.admission import decode_review, encode_review
from ballast.runtime.cache import DelegatingClient
from ballast.runtime.log import setup_logging
from ballast.webhook import scheduling
from ballast.webhook.scheduling import MUTATE_PATH, SchedulingMutator
from webhook import Bench, Server, Step, find_sustained, measured

from machine import cpu_model, free_port

POD, SCHEDULING, WHAT_IF = "pod", "scheduling", "scheduling-what-if"
TITLES = {
    POD: "pod webhook (`/mutate-v1-pod`, adds a label)",
    SCHEDULING: "scheduling webhook (`/mutate-kupid`, 50 policies, 3 match)",
    WHAT_IF: "what-if: the scheduling webhook from `--what-if-tree`",
}
KUPID = "kupid.gardener.cloud/v1alpha1"
APP = "app.kubernetes.io/name"  # the review's pod: checkout, in namespace shop-0
MODE = "ballast.tightlinesoftware.com/mode"
ZONE = "topology.kubernetes.io/zone"
REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
CLUSTER_POLICIES, NAMESPACED_POLICIES = 25, 25
P99_TARGET_MS = 3.0
IN_PROCESS_ROUNDS, IN_PROCESS_CALLS = 9, 200


# ------------------------------------------------------------------------------------- the cache's contents


def _required(*requirements: dict[str, Any]) -> dict[str, Any]:
    return {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": [{"matchExpressions": list(requirements)}]}}}


def _cluster(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": KUPID, "kind": "ClusterPodSchedulingPolicy", "metadata": {"name": name}, "spec": spec}


def _namespaced(namespace: str, name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": KUPID,
        "kind": "PodSchedulingPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def namespace_object(namespace: str) -> dict[str, Any]:
    labels = {"kubernetes.io/metadata.name": namespace, "env": "prod", "team": "shop"}
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": labels}}


def policies(namespace: str) -> list[dict[str, Any]]:
    """50 policies that are all candidates for the review's pod (cluster-wide, or in its namespace); 3 match."""
    matching = [
        _cluster(
            "general-pool",
            namespaceSelector={"matchLabels": {"env": "prod"}},
            podSelector={"matchExpressions": [{"key": APP, "operator": "In", "values": ["checkout", "cart"]}]},
            nodeSelector={"pool": "general"},
        ),
        _cluster(
            "spot-tolerant",
            namespaceSelector={"matchExpressions": [{"key": "team", "operator": "Exists"}]},
            podSelector={"matchLabels": {MODE: "apply"}},
            tolerations=[{"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}],
        ),
        _namespaced(
            namespace,
            "zones-a-b",
            podSelector={"matchLabels": {APP: "checkout"}},
            affinity=_required({"key": ZONE, "operator": "In", "values": ["a", "b"]}),
        ),
    ]
    others = []
    for i in range(CLUSTER_POLICIES - 2):
        # a third miss on the namespace, a third on the pod, a third on both
        namespaces = {"matchLabels": {"env": "prod"}} if i % 3 == 1 else {"matchLabels": {"env": f"stage-{i}"}}
        pods: dict[str, Any] = {"matchLabels": {APP: "checkout"}} if i % 3 == 0 else {
            "matchExpressions": [{"key": APP, "operator": "NotIn", "values": ["checkout"]}]
        }  # fmt: skip
        others.append(
            _cluster(
                f"cluster-{i:02d}",
                namespaceSelector=namespaces,
                podSelector=pods,
                nodeSelector={"pool": f"pool-{i}"},
                tolerations=[{"key": f"dedicated-{i}", "operator": "Exists", "effect": "NoSchedule"}],
                affinity=_required({"key": ZONE, "operator": "In", "values": [f"z{i}"]}),
            )
        )
    for i in range(NAMESPACED_POLICIES - 1):
        pods = {"matchLabels": {APP: f"svc-{i}"}} if i % 2 else {
            "matchExpressions": [{"key": APP, "operator": "In", "values": [f"svc-{i}", f"job-{i}"]},
                                 {"key": "tier", "operator": "Exists"}]
        }  # fmt: skip
        others.append(
            _namespaced(
                namespace,
                f"team-{i:02d}",
                podSelector=pods,
                nodeSelector={"pool": f"team-{i}"},
                tolerations=[{"key": f"team-{i}", "operator": "Equal", "value": "yes", "effect": "NoExecute"}],
                affinity=_required({"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["m5"]}),
            )
        )
    return matching + others


@dataclass
class World:
    """The in-memory API server, the cache over it and the manager-style client reading from the cache."""

    api: FakeAPI
    cache: Cache
    reader: DelegatingClient

    def close(self) -> None:
        self.cache.stop()
        self.api.close()


def world(namespace: str) -> World:
    """A FakeAPI serving our kinds with the Namespace and the 50 policies, read through a started, synced cache."""
    api = FakeAPI()
    for kind in KINDS:  # as tests/unit/support.register_our_kinds: our CRDs' kinds
        gvk = GroupVersionKind(kind.GROUP, kind.VERSION, kind.KIND)
        api.register(gvk, kind.PLURAL, namespaced=kind.SCOPE == "Namespaced", status=kind.STATUS_SUBRESOURCE)
    client = api.client(scheme=add_to_scheme(Scheme()))
    client.create(namespace_object(namespace))
    for policy in policies(namespace):
        client.create(policy)
    cache = Cache(client, by_kind={"v1/Namespace": CacheScope(projection=Projection)})  # as new_manager
    kinds: tuple[Any, ...] = ("v1/Namespace", ClusterPodSchedulingPolicy, PodSchedulingPolicy)
    for kind in kinds:
        cache.get_informer(kind)
    cache.start()
    if not cache.wait_for_sync(30):
        raise RuntimeError("the cache did not sync")
    return World(api, cache, DelegatingClient(cache, client))


def review_namespace(body: bytes) -> str:
    return str(orjson.loads(body)["request"]["namespace"])


# ------------------------------------------------------------------------------------------- the answer


def expected_patch(body: bytes, reader: DelegatingClient) -> list[dict[str, Any]]:
    """The scheduling handler's patch for the review, computed here; it must hold the three fields and the
    annotation (one operation each)."""
    _, request = decode_review(body)
    response = SchedulingMutator(reader, cache=reader.cache)(request)
    if not response.allowed or not response.patch:
        raise RuntimeError(f"the scheduling handler did not mutate the review: {response.message}")
    paths = sorted(str(op["path"]) for op in response.patch)
    wanted = ["/metadata/annotations/", "/spec/affinity", "/spec/nodeSelector", "/spec/tolerations/"]
    if len(paths) != len(wanted) or not all(p.startswith(w) for p, w in zip(paths, wanted, strict=True)):
        raise RuntimeError(f"unexpected scheduling patch: {paths}")
    return list(response.patch)


def answer_check(patch: Sequence[Mapping[str, Any]]) -> Callable[[bytes], bool]:
    """A check of an AdmissionReview answer: allowed, with exactly `patch`."""

    def check(body: bytes) -> bool:
        try:
            response = orjson.loads(body)["response"]
            if response.get("allowed") is not True or response.get("patchType") != "JSONPatch":
                return False
            return bool(orjson.loads(base64.b64decode(response["patch"])) == patch)
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return False

    return check


# ------------------------------------------------------------------------------------------------ server


def serve_scheduling(port: int, cert_dir: Path, review: Path) -> None:
    """Our WebhookServer at its defaults with the scheduling webhook registered as ballastd registers it."""
    built = world(review_namespace(review.read_bytes()))
    server = WebhookServer(host="127.0.0.1", port=port, cert_dir=cert_dir)
    scheduling.register(server, reader=built.reader, cache=built.cache)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        server.start(stop)
    finally:
        built.close()


# -------------------------------------------------------------------------------------------- in process


def cpu_micros(call: Callable[[], object], rounds: int = IN_PROCESS_ROUNDS, calls: int = IN_PROCESS_CALLS) -> float:
    """Median over `rounds` of the CPU µs per call of `calls` calls (this thread's CPU time)."""
    call()  # warm: memos, caches
    per_round = []
    for _ in range(rounds):
        began = time.thread_time()
        for _ in range(calls):
            call()
        per_round.append((time.thread_time() - began) / calls)
    return statistics.median(per_round) * 1e6


def in_process(body: bytes, reader: DelegatingClient) -> list[tuple[str, float]]:
    """CPU µs per call: both handlers, alone and with decode + encode, and the pieces of the scheduling one."""
    api_version, request = decode_review(body)
    mutator = SchedulingMutator(reader, cache=reader.cache)
    namespace = request.namespace
    target = target_for("", "Pod")
    assert target is not None
    assert request.object is not None
    policy_set = mutator._policies(namespace)[0]  # as the handler holds them (rebuilt when a policy changes)
    listed = [
        *reader.list(f"{KUPID}/ClusterPodSchedulingPolicy"),
        *reader.list(f"{KUPID}/PodSchedulingPolicy", namespace=namespace),
    ]
    compiled = [*policy_set.policies, *policy_set.invalid]
    labels, spec = pod_template(request.object, target)
    namespace_labels = {"kubernetes.io/metadata.name": namespace, "env": "prod", "team": "shop"}
    matched = select_compiled(compiled, namespace_labels, labels).matched
    fields = {k: spec[k] for k in SCHEDULING_FIELDS if k in spec}
    merged = merge_detailed(fields, matched).spec
    selection = policy_set.select(namespace_labels, labels)
    mutated = sharing_pod_spec(request.object, target, merged)
    response = mutator(request)

    def whole(handler: Callable[[AdmissionRequest], Any]) -> Callable[[], object]:
        def call() -> bytes:
            version, decoded = decode_review(body)
            return encode_review(version, decoded.uid, handler(decoded))

        return call

    pieces: list[tuple[str, Callable[[], object]]] = [
        (f"{TITLES[POD]}: handler call", lambda: webhook.add_label(request)),
        (f"{TITLES[SCHEDULING]}: handler call", lambda: mutator(request)),
        (f"{TITLES[POD]}: decode + handler + encode", whole(webhook.add_label)),
        (f"{TITLES[SCHEDULING]}: decode + handler + encode", whole(mutator)),
        (f"  cache list: {CLUSTER_POLICIES} ClusterPodSchedulingPolicy models",
         lambda: reader.list(ClusterPodSchedulingPolicy)),
        (f"  cache list: {NAMESPACED_POLICIES} PodSchedulingPolicy models (the namespace's)",
         lambda: reader.list(PodSchedulingPolicy, namespace=namespace)),
        ("  the same two lists by GroupVersionKind (read-only views, no model)",
         lambda: (reader.list(f"{KUPID}/ClusterPodSchedulingPolicy"),
                  reader.list(f"{KUPID}/PodSchedulingPolicy", namespace=namespace))),
        ("  cache get: the Namespace (projection)", lambda: reader.get("v1/Namespace", namespace)),
        ("  `_policies`: the namespace's policy set (not listed while the informers saw no change) + the Namespace",
         lambda: mutator._policies(namespace)),
        ("  `PolicySets.get` over a fresh listing of the same objects (what a reader without a cache pays)",
         lambda: mutator._sets.get(namespace, listed)),
        ("  `PolicySet.select`: the matches of a label set judged before",
         lambda: policy_set.select(namespace_labels, labels)),
        ("  `select_compiled` over the 50 compiled policies (a label set never judged)",
         lambda: select_compiled(compiled, namespace_labels, labels)),
        ("  `PolicySet.merge`: the merge of scheduling fields and matches merged before",
         lambda: policy_set.merge(fields, selection)),
        ("  `merge_detailed` of the 3 matches into the pod spec's scheduling fields (never merged before)",
         lambda: merge_detailed(fields, matched)),
        ("  `sharing_pod_spec` (the pod with the merged fields, sharing the rest)",
         lambda: sharing_pod_spec(request.object, target, merged)),  # type: ignore[arg-type]
        ("  `patched`: admission.json_patch of the mutated pod", lambda: patched(request, mutated)),
        ("  encode_review of the answer", lambda: encode_review(api_version, request.uid, response)),
    ]  # fmt: skip
    results = [(name, cpu_micros(call)) for name, call in pieces]
    # ballastd logs each mutated request at info (JSON on stderr); the benchmark servers, like webhook.py's, do not
    # configure logging, so that line is dropped there. Its cost:
    root = logging.getLogger()
    saved = list(root.handlers), root.level
    with open(os.devnull, "w") as devnull:
        setup_logging("json", "info", stream=devnull)
        try:
            results.insert(2, (f"{TITLES[SCHEDULING]}: handler call, ballastd's JSON logging at info (to /dev/null)",
                               cpu_micros(lambda: mutator(request))))  # fmt: skip
        finally:
            root.handlers[:] = saved[0]
            root.setLevel(saved[1])
    return results


def gc_pressure(body: bytes, reader: DelegatingClient, calls: int = 2000) -> dict[str, float]:
    """The garbage collector over `calls` scheduling handler calls: collections per generation, its time per
    call and its longest pause (gc.callbacks), next to the calls' median, p99 and longest wall time."""
    _, request = decode_review(body)
    mutator = SchedulingMutator(reader, cache=reader.cache)
    mutator(request)
    collections, spent, longest, began = [0, 0, 0], [0.0], [0.0], [0.0]

    def callback(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            began[0] = time.perf_counter()
            return
        pause = time.perf_counter() - began[0]
        collections[info["generation"]] += 1
        spent[0] += pause
        longest[0] = max(longest[0], pause)

    walls = []
    gc.callbacks.append(callback)
    try:
        for _ in range(calls):
            start = time.perf_counter()
            mutator(request)
            walls.append(time.perf_counter() - start)
    finally:
        gc.callbacks.remove(callback)
    walls.sort()
    return {
        "calls": calls,
        "gen0": collections[0],
        "gen1": collections[1],
        "gen2": collections[2],
        "gc_us_per_call": spent[0] / calls * 1e6,
        "longest_gc_ms": longest[0] * 1e3,
        "median_us": walls[calls // 2] * 1e6,
        "p99_us": walls[int(calls * 0.99)] * 1e6,
        "max_ms": walls[-1] * 1e3,
    }


def gc_line(figures: Mapping[str, float]) -> str:
    return (
        f"{figures['calls']:.0f} scheduling handler calls: {figures['gen0']:.0f} / {figures['gen1']:.0f} / "
        f"{figures['gen2']:.0f} collections of generations 0/1/2, {figures['gc_us_per_call']:.0f} µs of GC per call, "
        f"longest pause {figures['longest_gc_ms']:.1f} ms; calls median {figures['median_us']:.0f} µs, "
        f"p99 {figures['p99_us']:.0f} µs, max {figures['max_ms']:.1f} ms"
    )


def profile_handler(body: bytes, reader: DelegatingClient, calls: int = 500, top: int = 22) -> str:
    """cProfile of `calls` scheduling handler calls: the functions by own time and by inclusive time."""
    _, request = decode_review(body)
    mutator = SchedulingMutator(reader, cache=reader.cache)
    mutator(request)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(calls):
        mutator(request)
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).strip_dirs()
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top + 8)
    return out.getvalue()


# ------------------------------------------------------------------------------------------------- the run


@dataclass
class Result:
    name: str
    fixed: list[Step] = field(default_factory=list)  # one per round
    steps: list[Step] = field(default_factory=list)  # the ladder

    def median(self, attribute: str) -> float:
        return float(statistics.median(getattr(step, attribute) for step in self.fixed))

    @property
    def sustained_rate(self) -> int:
        return max((step.rate for step in self.steps if step.sustained), default=0)

    @property
    def sustained_text(self) -> str:
        if not self.steps:
            return "–"
        return f"{'≥ ' if self.sustained_rate == webhook.LADDER[-1] else ''}{self.sustained_rate}/s"


class SchedulingBench(Bench):
    """webhook.py's Bench with the scheduling server."""

    def scheduling_server(self, name: str, check: Callable[[bytes], bool], tree: Path | None = None) -> Server:
        """The scheduling server (`tree`: its `ballast` package imported from there)."""
        port = free_port()
        python = str(webhook.REPO / ".venv" / "bin" / "python")
        python = python if Path(python).exists() else sys.executable
        argv = [
            python, str(Path(__file__).resolve()), "serve-scheduling", "--port", str(port),
            "--cert-dir", str(self.cert_dir), "--review", str(self.body_file),
        ]  # fmt: skip
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if tree is not None:
            env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(tree), os.environ.get("PYTHONPATH"))))
        return Server(name, argv, env, self.log_path(name), port, path=MUTATE_PATH, check=check)


def run(args: argparse.Namespace) -> int:
    if (os.cpu_count() or 1) < 2:
        raise SystemExit("needs two cores: one for the server, one for the load generator")
    webhook._WaitBudget.seconds = args.quiet_budget
    os.sched_setaffinity(0, {webhook.CLIENT_CORE})
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    vegeta_binary, vegeta_version = webhook.ensure_vegeta()
    meta: dict[str, Any] = {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "vegeta": vegeta_version,
        "date": datetime.date.today().isoformat(),
    }
    with tempfile.TemporaryDirectory(prefix="ballast-bench-scheduling-") as tmp:
        bench = SchedulingBench(args, Path(tmp), vegeta_binary, webhook.BENCH_VENV)
        meta["body_bytes"] = len(bench.body)
        patch = in_process_phase(bench, meta, args)
        began = time.monotonic()
        results = load_phase(bench, answer_check(patch), meta, args)
        meta["seconds"] = round(time.monotonic() - began)
    print("\n" + markdown(results, meta, args))
    if args.json:
        servers = [{**asdict(r), "sustained_rate": r.sustained_rate} for r in results]
        args.json.write_text(json.dumps({"meta": meta, "servers": servers}, indent=2))
    return 0


def in_process_phase(bench: Bench, meta: dict[str, Any], args: argparse.Namespace) -> list[dict[str, Any]]:
    """The expected patch, the wait for a quiet machine, then the in-process figures (and the profile); returns
    the patch."""
    local = world(review_namespace(bench.body))
    try:
        patch = expected_patch(bench.body, local.reader)
        meta["patch_operations"] = [op["path"] for op in patch]
        print(
            f"{meta['cpu']} × {meta['cores']}, Python {meta['python']}, vegeta {meta['vegeta']}; AdmissionReview "
            f"{len(bench.body)} bytes; scheduling patch {meta['patch_operations']}",
            flush=True,
        )
        print(f"waiting for a 1-minute load average below {args.max_load} …", flush=True)
        meta["load_before"], meta["waited"] = webhook.wait_for_quiet_machine(args.max_load, args.max_wait)
        print(f"  load {meta['load_before']:.2f} after {meta['waited']:.0f} s", flush=True)
        print("\nin-process CPU per call (core 1):", flush=True)
        meta["in_process"] = in_process(bench.body, local.reader)
        for name, micros in meta["in_process"]:
            print(f"  {micros:8.1f} µs  {name}", flush=True)
        meta["gc"] = gc_pressure(bench.body, local.reader)
        print(f"  GC: {gc_line(meta['gc'])}", flush=True)
        if args.what_if_tree:
            meta["in_process_what_if"], meta["gc_what_if"] = in_process_elsewhere(bench.body_file, args.what_if_tree)
            print(f"\nthe same, importing ballast from {args.what_if_tree}:", flush=True)
            for name, micros in meta["in_process_what_if"]:
                print(f"  {micros:8.1f} µs  {name}", flush=True)
            print(f"  GC: {gc_line(meta['gc_what_if'])}", flush=True)
        if args.cprofile:
            meta["cprofile"] = profile_handler(bench.body, local.reader)
            print(meta["cprofile"], flush=True)
    finally:
        local.close()
    return patch


def in_process_elsewhere(review: Path, tree: Path) -> tuple[list[tuple[str, float]], dict[str, float]]:
    """`in_process` and `gc_pressure` in a process of its own, its `ballast` package imported from `tree`."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(tree), os.environ.get("PYTHONPATH"))))}
    argv = [sys.executable, str(Path(__file__).resolve()), "in-process", "--review", str(review)]
    out = subprocess.run(argv, env=env, check=True, capture_output=True).stdout
    figures = json.loads(out)
    return [(str(name), float(micros)) for name, micros in figures["costs"]], dict(figures["gc"])


def load_phase(
    bench: SchedulingBench, check: Callable[[bytes], bool], meta: dict[str, Any], args: argparse.Namespace
) -> list[Result]:
    """Both servers on core 0: alternating fixed-rate rounds, then a ladder each."""
    names = [POD, SCHEDULING] + ([WHAT_IF] if args.what_if_tree else [])
    results = {name: Result(name) for name in names}
    servers = {POD: bench.server("ours"), SCHEDULING: bench.scheduling_server(SCHEDULING, check)}
    if args.what_if_tree:
        servers[WHAT_IF] = bench.scheduling_server(WHAT_IF, check, args.what_if_tree)
    checks = dict.fromkeys(names, check) | {POD: webhook.check_answer}
    targets = {name: bench.targets(name, s.port, s.path) for name, s in servers.items()}
    with contextlib.ExitStack() as running:
        for server in servers.values():
            running.enter_context(server.running(bench.body, bench.ca_file))

        def attacker(name: str) -> Callable[[int, float, float], Step]:
            process = servers[name].process
            assert process is not None
            pid = process.pid

            def attack(rate: int, seconds: float, warmup: float) -> Step:
                return bench.vegeta.attack(targets[name], rate, seconds, warmup, pid, check=checks[name])

            return attack

        for number in range(args.rounds):
            for name in names if number % 2 == 0 else names[::-1]:
                print(f"\nround {number + 1}, {TITLES[name]}: fixed rate, {args.fixed_seconds:.0f} s", flush=True)
                step = measured(
                    attacker(name), args.fixed_rate, args.fixed_seconds, args.fixed_warmup, args.retries, fixed=True
                )
                results[name].fixed.append(step)
        if not args.skip_ladder:
            for name in names[::-1]:
                print(f"\n{TITLES[name]}: ladder", flush=True)
                results[name].steps = find_sustained(attacker(name), args)
                print(f"  sustained: {results[name].sustained_text}", flush=True)
    logs = {name: bench.log_path("ours" if name == POD else name) for name in names}
    meta["log_lines"] = {name: len(log.read_bytes().splitlines()) for name, log in logs.items()}
    return list(results.values())


def markdown(results: list[Result], meta: dict[str, Any], args: argparse.Namespace) -> str:
    by_name = {r.name: r for r in results}
    lines = [
        f"{meta['cpu']} ({meta['cores']} cores), Python {meta['python']}, vegeta {meta['vegeta']}, {meta['date']}; "
        f"1-min load average {meta['load_before']:.2f} when the run began (after waiting {meta['waited']:.0f} s). "
        f"Request body {meta['body_bytes']} bytes; {args.rounds} alternating fixed-rate rounds of "
        f"{args.fixed_seconds:.0f} s at {args.fixed_rate}/s (medians; every round in brackets).",
        "",
        f"| server (core 0) | p50 @{args.fixed_rate}/s | p99 @{args.fixed_rate}/s | max @{args.fixed_rate}/s "
        "| server CPU per request | sustained (p99 ≤ 10 ms) | p99 there |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        rounds = " / ".join(f"{s.p99_ms:.2f}" for s in r.fixed)
        best = next((s for s in r.steps if s.rate == r.sustained_rate and s.sustained), None)
        lines.append(
            f"| {TITLES[r.name]} | {r.median('p50_ms'):.2f} ms | {r.median('p99_ms'):.2f} ms ({rounds}) "
            f"| {r.median('max_ms'):.1f} ms | {r.median('server_cpu_ms_per_request'):.2f} ms | {r.sustained_text} "
            f"| {f'{best.p99_ms:.2f} ms' if best else '–'} |"
        )
    pod = by_name[POD]
    lines.append("")
    for sched in (r for r in results if r.name != POD):
        p99, cpu = sched.median("p99_ms"), sched.median("server_cpu_ms_per_request")
        lines += [
            f"- {sched.name} p99 @{args.fixed_rate}/s: {p99:.2f} ms = {p99 / pod.median('p99_ms'):.2f}× the pod "
            f"webhook's (target ≤ {P99_TARGET_MS:.0f} ms: {'met' if p99 <= P99_TARGET_MS else 'MISSED'})",
            f"- server CPU per request, {sched.name} / pod: {cpu:.2f} / {pod.median('server_cpu_ms_per_request'):.2f}"
            f" ms = {cpu / pod.median('server_cpu_ms_per_request'):.1f}×",
        ]
        if pod.sustained_rate and sched.sustained_rate:
            at_most = "≤ " if pod.sustained_rate == webhook.LADDER[-1] else ""
            ratio = sched.sustained_rate / pod.sustained_rate
            lines.append(f"- sustained rate, {sched.name} / pod: {at_most}{ratio:.2f}×")
    disturbed = [f"{r.name} at {s.rate}/s" for r in results for s in r.steps if s.disturbed]
    if disturbed:
        lines.append(f"- ladder steps still disturbed by other work: {', '.join(disturbed)}")
    lines.append(f"- log lines written by the servers: {meta['log_lines']}")
    what_if = dict(meta.get("in_process_what_if") or [])
    lines += [
        "",
        "| in-process CPU per call (median) | µs |" + (" what-if tree, µs |" if what_if else ""),
        "|---|---|" + ("---|" if what_if else ""),
    ]
    for name, micros in meta["in_process"]:
        other = f" {what_if[name]:,.1f} |" if name in what_if else (" – |" if what_if else "")
        lines.append(f"| {name.strip()} | {micros:,.1f} |{other}")
    lines += ["", f"- garbage collector in-process, {gc_line(meta['gc'])}"]
    if "gc_what_if" in meta:
        lines.append(f"- the same from the what-if tree, {gc_line(meta['gc_what_if'])}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser("serve-scheduling")
    serve.add_argument("--port", type=int, required=True)
    serve.add_argument("--cert-dir", type=Path, required=True)
    serve.add_argument("--review", type=Path, required=True, help="the review whose namespace the cache holds")
    costs = sub.add_parser("in-process")
    costs.add_argument("--review", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3, help="alternating fixed-rate rounds of both servers")
    webhook.add_load_flags(parser)
    parser.add_argument("--skip-ladder", action="store_true", help="no sustained-rate ladders (a quick run)")
    parser.add_argument("--cprofile", action="store_true", help="also cProfile the scheduling handler in-process")
    parser.add_argument("--what-if-tree", type=Path, help="also the scheduling webhook with ballast from DIR")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.command == "serve-scheduling":
        serve_scheduling(args.port, args.cert_dir, args.review)
        return 0
    if args.command == "in-process":
        body = args.review.read_bytes()
        local = world(review_namespace(body))
        try:
            print(json.dumps({"costs": in_process(body, local.reader), "gc": gc_pressure(body, local.reader)}))
        finally:
            local.close()
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
