"""Informer ingest of 10,000 pods: our decoders against the official `kubernetes` client, in one run.

Recorded part — decoding is measured, not a server. The fixture (`fixtures/pods.json.gz`, generated on first
use by the deterministic `fixtures/make_pods.py`) is a LIST body of 10,000 realistic Deployment pods; from it we
build, in memory, the raw HTTP/1.1 responses a kube-apiserver would send: the LIST (Content-Length body), a
watch of 10,000 MODIFIED events (one chunk per event, chunked transfer encoding) and a streaming list
(`sendInitialEvents`: 10,000 ADDED events, then the initial-events-end bookmark). Both clients get these bytes through a
stand-in for urllib3's PoolManager and parse them with the real http.client + urllib3 code, so everything above
the socket runs as in production:

- official: `CoreV1Api.list_pod_for_all_namespaces()` (ApiClient.response_deserialize → V1PodList) and
  `watch.Watch().stream(list_pod_for_all_namespaces)` (each event: json.loads, json.dumps of the object,
  ApiClient.deserialize → V1Pod), stored in the official `kubernetes.informer.ObjectCache`;
- ours: `Client.lister_watcher` → `DictDecoder` (orjson, managedFields stripped) or `ProjectionDecoder`
  (msgspec, `PodProjection` below) → `Indexer` with the namespace index, as the informer stores them.

Each path runs in its own child process (clean heap, default gc settings; our list decode pauses gc by
design). Three levels: "decode+store" (the calls above, on the main thread), "informer" (the official
`SharedInformer` against our `SharedIndexInformer`, same recorded server, time to sync and to the last
event) and "streaming list" (the official `Watch().stream(send_initial_events=True)` against our informer
with `watch_list=True`, time to sync). Memory per cached pod: tracemalloc of what stays allocated after gc
once the decode+store cache holds the 10,000 pods of the watch (a second pass, untimed), and the RSS growth
of the first timed pass.

Live part: `Environment()` (real etcd + kube-apiserver), pods created from the fixture in one namespace (spec
and metadata, then their status through the status subresource), then per round: the raw read of the LIST
(`resourceVersion=0`) and of a watch with `sendInitialEvents=true` (bytes, newlines counted, no decoding) —
the limit — against our informer reaching sync (LIST, and streaming list) and the official client's
list + watch of the same data.

    .venv/bin/python benchmarks/informer.py [--pods 10000] [--live-pods 10000] [--repeat 3] [--rounds 3]
                                            [--skip-recorded] [--skip-live]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import gc
import gzip
import http.client
import importlib
import importlib.metadata
import io
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple, cast
from urllib.parse import parse_qs, urlsplit

import msgspec
import orjson
import urllib3

from ballast.runtime import GroupVersionKind, Projection, RESTConfig
from ballast.runtime._decode import Decoder, DictDecoder, ProjectionDecoder
from ballast.runtime._store import NAMESPACE_INDEX, Indexer, namespace_index
from ballast.runtime.client import APIServerClient, ListerWatcher
from ballast.runtime.gvk import GroupVersionResource, RESTMapping
from ballast.runtime.informer import FuncHandler, SharedIndexInformer
from ballast.runtime.objects import object_key
from ballast.runtime.rest import Transport
from ballast.runtime.restmapper import RESTMapper

from machine import cpu_model

HERE = Path(__file__).resolve().parent
FIXTURE = HERE / "fixtures" / "pods.json.gz"
GENERATOR = HERE / "fixtures" / "make_pods.py"
POD = GroupVersionKind("", "v1", "Pod")
POD_MAPPING = RESTMapping(POD, GroupVersionResource("", "v1", "pods"), namespaced=True)
INITIAL_EVENTS_END = b'"k8s.io/initial-events-end":"true"'
OFFICIAL = "official"
DICT = "dict"
PROJECTION = "projection"
PATHS = (OFFICIAL, DICT, PROJECTION)
DECODE = "decode+store"
INFORMER = "informer"
STREAMING = "streaming list"
LEVELS = (DECODE, INFORMER, STREAMING)


# ------------------------------------------------------------------------------------------- projection


class Resources(msgspec.Struct, frozen=True, omit_defaults=True):
    requests: dict[str, str] = msgspec.field(default_factory=dict)
    limits: dict[str, str] = msgspec.field(default_factory=dict)


class ContainerProjection(msgspec.Struct, frozen=True, omit_defaults=True):
    name: str = ""
    resources: Resources = Resources()


class PodSpecProjection(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    node_name: str = ""
    restart_policy: str = ""
    # `| None`: the API server writes BOOKMARK pods as `"spec":{"containers":null}` (a Go slice without
    # omitempty); a plain tuple fails to decode them.
    containers: tuple[ContainerProjection, ...] | None = ()


class PodStatusProjection(msgspec.Struct, frozen=True, omit_defaults=True):
    phase: str = ""


class PodProjection(Projection, frozen=True):
    """What a right-sizing controller reads of a pod (metadata with owner references comes from the base)."""

    spec: PodSpecProjection = PodSpecProjection()
    status: PodStatusProjection = PodStatusProjection()


def decoder_for(path: str) -> Decoder:
    return DictDecoder(POD) if path == DICT else ProjectionDecoder(PodProjection)


# ---------------------------------------------------------------------------------------- recorded data


def load_fixture() -> bytes:
    if not FIXTURE.exists():
        print(f"{FIXTURE.name} missing: generating it with {GENERATOR.name}", flush=True)
        subprocess.run([sys.executable, str(GENERATOR)], check=True)
    return gzip.decompress(FIXTURE.read_bytes())


def modified(item: dict[str, Any], version: int) -> dict[str, Any]:
    """The pod after its sidecar was OOM-killed and restarted: what the kubelet would write."""
    pod: dict[str, Any] = {"kind": "Pod", "apiVersion": "v1", **item}
    meta = pod["metadata"]
    meta["resourceVersion"] = str(version)
    status = pod["status"]
    sidecar = status["containerStatuses"][-1]
    started = sidecar["state"]["running"]["startedAt"]
    sidecar["lastState"] = {
        "terminated": {
            "exitCode": 137,
            "reason": "OOMKilled",
            "startedAt": started,
            "finishedAt": "2026-11-29T09:30:00Z",
            "containerID": sidecar["containerID"],
        }
    }
    sidecar["state"] = {"running": {"startedAt": "2026-11-29T09:30:01Z"}}
    sidecar["restartCount"] = 1
    sidecar["containerID"] = "containerd://" + f"{version:064x}"
    meta["managedFields"][-1]["time"] = "2026-11-29T09:30:01Z"
    return pod


def http_body(body: bytes) -> bytes:
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    return head.encode() + body


def http_chunked(lines: list[bytes]) -> bytes:
    """A watch response as the API server writes it: each event flushed as one chunk, newline-terminated."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunks = [b"%x\r\n%s\n\r\n" % (len(line) + 1, line) for line in lines]
    return head + b"".join(chunks) + b"0\r\n\r\n"


def bookmark(version: int) -> bytes:
    """The end of a streaming list, byte for byte as kube-apiserver v1.37 writes it for pods."""
    return (
        b'{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"%d",' % version
        + (b'"annotations":{"k8s.io/initial-events-end":"true"}},"spec":{"containers":null},"status":{}}}')
    )


RESPONSES = ("list", "watch", "initial")


@dataclass
class Recorded:
    """Raw HTTP responses, written to a directory for the child processes: the LIST, a watch of MODIFIED
    events, and a streaming list (ADDED events, then the initial-events-end bookmark)."""

    pods: int
    list_bytes: int
    event_bytes: int

    @staticmethod
    def write(items: list[dict[str, Any]], version: int, into: Path, prefix: str = "") -> tuple[int, int]:
        list_body = orjson.dumps(
            {"kind": "PodList", "apiVersion": "v1", "metadata": {"resourceVersion": str(version)}, "items": items}
        )
        modified_lines = [
            orjson.dumps({"type": "MODIFIED", "object": modified(item, version + 1 + i)})
            for i, item in enumerate(items)
        ]
        added_lines = [
            orjson.dumps({"type": "ADDED", "object": {"kind": "Pod", "apiVersion": "v1", **item}}) for item in items
        ]
        (into / f"{prefix}list.http").write_bytes(http_body(list_body))
        (into / f"{prefix}watch.http").write_bytes(http_chunked(modified_lines))
        (into / f"{prefix}initial.http").write_bytes(http_chunked([*added_lines, bookmark(version)]))
        return len(list_body), sum(len(line) + 1 for line in modified_lines)

    @staticmethod
    def build(fixture: bytes, pods: int, into: Path) -> Recorded:
        document = orjson.loads(fixture)
        items: list[dict[str, Any]] = document["items"][:pods]
        if len(items) < pods:
            raise SystemExit(f"the fixture has {len(items)} pods, fewer than --pods {pods}")
        version = int(document["metadata"]["resourceVersion"])
        # A tiny set to warm every path up (lazy validators, decoders) outside the measurement.
        Recorded.write([orjson.loads(orjson.dumps(item)) for item in items[:3]], version, into, "warm-")
        list_bytes, event_bytes = Recorded.write(items, version, into)
        return Recorded(pods, list_bytes, event_bytes)


class _RecordedSocket:
    """Enough of a socket for http.client: the response is read from memory."""

    def __init__(self, data: bytes) -> None:
        self._file = io.BytesIO(data)

    def makefile(self, mode: str, *args: Any, **kwargs: Any) -> io.BytesIO:
        return self._file


def recorded_response(raw: bytes, preload_content: bool) -> urllib3.HTTPResponse:
    """Parse recorded HTTP bytes with http.client and wrap them as urllib3's connection does."""
    original = http.client.HTTPResponse(cast(socket.socket, _RecordedSocket(raw)), method="GET")
    original.begin()
    return urllib3.HTTPResponse(
        body=original,
        headers=urllib3.HTTPHeaderDict(original.getheaders()),
        status=original.status,
        version=original.version,
        reason=original.reason,
        preload_content=preload_content,
        decode_content=True,
        original_response=original,
        request_method="GET",
    )


class RecordedServer(urllib3.PoolManager):
    """Stands in for the PoolManager of either client: LISTs get the recorded list, the first watch the
    recorded watch (or, with `sendInitialEvents`, the recorded streaming list); later watches wait for
    `release()` and then end at once (no more events)."""

    def __init__(self, data: Path, prefix: str) -> None:
        super().__init__()
        self._raw = {name: (data / f"{prefix}{name}.http").read_bytes() for name in RESPONSES}
        self._released = threading.Event()
        self.watches = 0

    def release(self) -> None:
        self._released.set()

    def request(
        self,
        method: str,
        url: str,
        body: Any = None,
        fields: Any = None,
        headers: Mapping[str, str] | None = None,
        json: Any | None = None,
        **urlopen_kw: Any,
    ) -> urllib3.BaseHTTPResponse:
        preload = bool(urlopen_kw.get("preload_content", True))
        query = parse_qs(urlsplit(url).query)
        if query.get("watch", ["false"])[0].lower() != "true":
            return recorded_response(self._raw["list"], preload)
        self.watches += 1
        if self.watches == 1:
            initial = query.get("sendInitialEvents", ["false"])[0].lower() == "true"
            return recorded_response(self._raw["initial" if initial else "watch"], preload)
        self._released.wait()
        return recorded_response(http_chunked([]), preload)


def kubernetes(module: str) -> Any:
    """A module of the official client, typed Any: it ships py.typed, but most of it is unannotated."""
    return importlib.import_module(f"kubernetes.{module}")


def our_client(server: RecordedServer) -> APIServerClient:
    configuration = kubernetes("client").Configuration(host="https://recorded.invalid")
    transport = Transport(RESTConfig(configuration))
    transport._pool = server
    mapper = RESTMapper(lambda path: {"resources": []})
    mapper.add(POD_MAPPING)
    return APIServerClient(transport, mapper=mapper)


def official_api(server: RecordedServer) -> Any:
    client = kubernetes("client")
    api_client = client.ApiClient(client.Configuration(host="https://recorded.invalid"))
    api_client.rest_client.pool_manager = server
    return client.CoreV1Api(api_client)


# -------------------------------------------------------------------------------------- recorded: paths


class Stamp(NamedTuple):
    wall: float
    cpu: float


def stamp() -> Stamp:
    """Now, as wall time and as this process's CPU time (all threads)."""
    return Stamp(time.perf_counter(), time.process_time())


@dataclass
class Timing:
    """Per phase, CPU seconds of this process (the rates use them: the machine is shared and these paths do
    no I/O, so time-slicing by other processes would otherwise be measured) and wall seconds."""

    list_seconds: float = 0.0
    events_seconds: float = 0.0
    list_wall: float = 0.0
    events_wall: float = 0.0
    gc_collections: int = 0
    gen2_collections: int = 0

    def add(self, phase: str, start: Stamp, end: Stamp) -> None:
        if phase == "list":
            self.list_seconds += end.cpu - start.cpu
            self.list_wall += end.wall - start.wall
        else:
            self.events_seconds += end.cpu - start.cpu
            self.events_wall += end.wall - start.wall


def _collections() -> tuple[int, int]:
    stats = gc.get_stats()
    return sum(s["collections"] for s in stats), stats[2]["collections"]


def decode_official(server: RecordedServer, events: int, timing: Timing) -> Any:
    """What the official informer does: list_* into the ObjectCache, then Watch().stream() puts."""
    object_cache, watch = kubernetes("informer").ObjectCache, kubernetes("watch").Watch
    core = official_api(server)
    began = stamp()
    pods = core.list_pod_for_all_namespaces(resource_version="0")
    cache = object_cache()
    cache._replace_all(pods.items)
    listed = stamp()
    version = pods.metadata.resource_version
    del pods
    seen = 0
    stream = watch().stream(core.list_pod_for_all_namespaces, resource_version=version, allow_watch_bookmarks=True)
    for event in stream:
        if event["type"] in ("ADDED", "MODIFIED"):
            cache._put(event["object"])
            seen += 1
            if seen == events:
                break
    stream.close()
    timing.add("list", began, listed)
    timing.add("events", listed, stamp())
    return cache


def decode_ours(server: RecordedServer, path: str, events: int, timing: Timing) -> Any:
    """What our informer does, without its thread: LIST → decoder → Indexer.replace, watch → decode → upsert."""
    lister_watcher = our_client(server).lister_watcher(POD)
    decoder = decoder_for(path)
    store = Indexer({NAMESPACE_INDEX: namespace_index})
    began = stamp()
    page = decoder.decode_list(lister_watcher.list(resource_version="0", limit=None, continue_=None))
    store.replace({object_key(obj): obj for obj in page.items})
    listed = stamp()
    version = page.resource_version
    del page
    seen = 0
    stream = lister_watcher.watch(
        resource_version=version, timeout_seconds=300, allow_bookmarks=True, send_initial_events=False, read_timeout=70
    )
    for line in stream:
        event = decoder.decode_event(line)
        if event.type in ("ADDED", "MODIFIED"):
            store.upsert(event.object)
            seen += 1
            if seen == events:
                break
    stream.close()
    timing.add("list", began, listed)
    timing.add("events", listed, stamp())
    return store


class Countdown:
    """Set `done` once `count` calls have been made; the time of the last call is kept."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.calls = 0
        self.done = threading.Event()
        self.at = Stamp(0.0, 0.0)

    def __call__(self, *args: Any) -> None:
        self.calls += 1
        if self.calls == self.count:
            self.at = stamp()
            self.done.set()


def informer_official(server: RecordedServer, events: int, timing: Timing) -> Any:
    """The official SharedInformer on the recorded LIST then watch: time to the last add, then the last update."""
    informer = kubernetes("informer").SharedInformer(official_api(server).list_pod_for_all_namespaces)
    adds, updates = Countdown(events), Countdown(events)
    informer.add_event_handler("ADDED", adds)
    informer.add_event_handler("MODIFIED", updates)
    began = stamp()
    informer.start()
    if not (adds.done.wait(600) and updates.done.wait(600)):
        raise RuntimeError(f"official informer: {adds.calls} adds, {updates.calls} updates after 10 min")
    server.release()
    informer.stop()
    timing.add("list", began, adds.at)
    timing.add("events", adds.at, updates.at)
    return informer.cache


def informer_ours(server: RecordedServer, path: str, events: int, timing: Timing) -> Any:
    """Our informer on the recorded LIST then watch: time to sync, then to the last update."""
    informer = SharedIndexInformer(our_client(server).lister_watcher(POD), decoder_for(path), name="bench")
    adds, updates = Countdown(events), Countdown(events)
    informer.add_event_handler(FuncHandler(add=adds, update=updates))
    began = stamp()
    informer.start()
    if not (informer.wait_for_sync(600) and updates.done.wait(600)):
        raise RuntimeError(f"our informer: {adds.calls} adds, {updates.calls} updates after 10 min")
    synced = adds.at
    server.release()
    informer.stop()
    timing.add("list", began, synced)
    timing.add("events", synced, updates.at)
    return informer.store


def streaming_official(server: RecordedServer, events: int, timing: Timing) -> Any:
    core = official_api(server)
    began = stamp()
    cache = official_streaming_list(core.list_pod_for_all_namespaces)
    timing.add("events", began, stamp())
    return cache


def streaming_ours(server: RecordedServer, path: str, events: int, timing: Timing) -> Any:
    began, synced, store = sync_ours(our_client(server).lister_watcher(POD), path, True, events, server)
    timing.add("events", began, synced)
    return store


def run_path(path: str, level: str, data: Path, warm: bool, events: int, timing: Timing) -> Any:
    server = RecordedServer(data, "warm-" if warm else "")
    if level == DECODE:
        if path == OFFICIAL:
            return decode_official(server, events, timing)
        return decode_ours(server, path, events, timing)
    if level == INFORMER:
        if path == OFFICIAL:
            return informer_official(server, events, timing)
        return informer_ours(server, path, events, timing)
    if path == OFFICIAL:
        return streaming_official(server, events, timing)
    return streaming_ours(server, path, events, timing)


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def child(path: str, level: str, data: Path, pods: int, repeat: int, memory: bool) -> dict[str, Any]:
    """One path in this (fresh) process: `repeat` timed passes, then one tracemalloc pass."""
    run_path(path, level, data, warm=True, events=3, timing=Timing())
    gc.collect()
    result: dict[str, Any] = {"path": path, "level": level, "pods": pods, "runs": []}
    rss_growth: list[int] = []
    for _ in range(repeat):
        timing = Timing()
        gc.collect()
        rss_before = rss_bytes()
        total_before, gen2_before = _collections()
        cache = run_path(path, level, data, warm=False, events=pods, timing=timing)
        total_after, gen2_after = _collections()
        timing.gc_collections, timing.gen2_collections = total_after - total_before, gen2_after - gen2_before
        gc.collect()
        rss_growth.append(rss_bytes() - rss_before)
        if len(cache.list() if path == OFFICIAL else cache.keys()) != pods:
            raise RuntimeError(f"{path}/{level}: the cache holds the wrong number of pods")
        result["runs"].append(asdict(timing))
        del cache
        gc.collect()
    result["rss_growth_per_pod"] = rss_growth[0] / pods  # the first pass starts from the smallest heap
    if memory:
        tracemalloc.start()
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        cache = run_path(path, level, data, warm=False, events=pods, timing=Timing())
        gc.collect()
        result["traced_per_pod"] = (tracemalloc.get_traced_memory()[0] - before) / pods
        tracemalloc.stop()
        del cache
    return result


def run_child(path: str, level: str, data: Path, pods: int, repeat: int, memory: bool) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--child", path, level, "--data", str(data), "--pods", str(pods)]
    argv += ["--repeat", str(repeat)] + (["--memory"] if memory else [])
    began = time.perf_counter()
    done = subprocess.run(argv, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"  {level:12} {path:10} {time.perf_counter() - began:6.1f} s wall", flush=True)
    return result


# ------------------------------------------------------------------------------------------------- live


def settle() -> None:
    """Between live measurements: collect our garbage and give the API server a moment (its Go GC)."""
    gc.collect()
    time.sleep(0.5)


def live_pod(item: dict[str, Any], namespace: str) -> dict[str, Any]:
    meta = item["metadata"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": meta["name"],
            "namespace": namespace,
            "labels": meta["labels"],
            "annotations": meta["annotations"],
            "ownerReferences": meta["ownerReferences"],
        },
        "spec": item["spec"],
    }


def create_pods(client: APIServerClient, namespace: str, items: list[dict[str, Any]]) -> float:
    """Create the pods and write their status, 8 requests in flight; returns the seconds it took."""

    def one(item: dict[str, Any]) -> None:
        pod = client.create(live_pod(item, namespace))
        client.patch(pod, {"status": item["status"]}, subresource="status")

    began = time.perf_counter()
    with ThreadPoolExecutor(8) as pool:
        for _ in pool.map(one, items):
            pass
    return time.perf_counter() - began


def raw_list(client: APIServerClient, path: str) -> tuple[float, bytes]:
    began = time.perf_counter()
    body = client.transport.request("GET", path, params={"resourceVersion": "0"}).data
    return time.perf_counter() - began, body


WATCH_LIST_PARAMS = {
    "watch": "true",
    "sendInitialEvents": "true",
    "resourceVersionMatch": "NotOlderThan",
    "allowWatchBookmarks": "true",
    "timeoutSeconds": "600",
}


def raw_watch(client: APIServerClient, path: str) -> tuple[float, int, int]:
    """Read a streaming list as bytes until its initial-events-end bookmark: (seconds, events, bytes)."""
    began = time.perf_counter()
    response = client.transport.stream("GET", path, params=WATCH_LIST_PARAMS, read_timeout=60)
    lines = size = 0
    tail = b""
    try:
        for chunk in response.stream(65536):
            lines += chunk.count(b"\n")
            size += len(chunk)
            if INITIAL_EVENTS_END in tail + chunk:
                break
            tail = chunk[-64:]
    finally:
        elapsed = time.perf_counter() - began
        with contextlib.suppress(Exception):
            response.shutdown()
        with contextlib.suppress(Exception):
            response.release_conn()
            response.close()
    return elapsed, lines - 1, size  # the last line is the bookmark


def sync_ours(
    lister_watcher: ListerWatcher, path: str, watch_list: bool, pods: int, server: RecordedServer | None = None
) -> tuple[Stamp, Stamp, Indexer]:
    """Start our informer and wait until it has synced: (when it started, when it synced, its store)."""
    informer = SharedIndexInformer(lister_watcher, decoder_for(path), name="bench", watch_list=watch_list)
    adds = Countdown(pods)
    informer.add_event_handler(FuncHandler(add=adds))
    began = stamp()
    informer.start()
    synced = informer.wait_for_sync(600)
    ended = stamp()
    if server is not None:
        server.release()
    informer.stop()
    if not synced or len(informer.store) != pods or adds.calls != pods:
        raise RuntimeError(f"our informer ({path}, watch_list={watch_list}): {len(informer.store)} pods")
    if watch_list and (informer.relists or not informer._watch_list):
        raise RuntimeError(f"our informer ({path}): the streaming list fell back to LIST")
    return began, ended, informer.store


def live_official_list(core: Any, namespace: str, pods: int) -> float:
    began = time.perf_counter()
    listed = core.list_namespaced_pod(namespace, resource_version="0")
    cache = kubernetes("informer").ObjectCache()
    cache._replace_all(listed.items)
    elapsed = time.perf_counter() - began
    if len(cache.list_keys()) != pods:
        raise RuntimeError("official list: wrong number of pods")
    return elapsed


def official_streaming_list(list_func: Any, *args: Any) -> Any:
    """The official client's watch with `sendInitialEvents`, into its ObjectCache until the initial-events-end
    bookmark (its SharedInformer has no streaming list)."""
    cache = kubernetes("informer").ObjectCache()
    stream = (
        kubernetes("watch")
        .Watch()
        .stream(
            list_func,
            *args,
            send_initial_events=True,
            resource_version_match="NotOlderThan",
            allow_watch_bookmarks=True,
            timeout_seconds=600,
        )
    )
    for event in stream:
        if event["type"] == "ADDED":
            cache._put(event["object"])
        elif event["type"] == "BOOKMARK":
            annotations = event["raw_object"].get("metadata", {}).get("annotations") or {}
            if annotations.get("k8s.io/initial-events-end") == "true":
                break
    stream.close()
    return cache


def live_official_watch(core: Any, namespace: str, pods: int) -> float:
    began = time.perf_counter()
    cache = official_streaming_list(core.list_namespaced_pod, namespace)
    elapsed = time.perf_counter() - began
    if len(cache.list_keys()) != pods:
        raise RuntimeError("official watch: wrong number of pods")
    return elapsed


LIVE_READERS = [
    ("ours: informer + DictDecoder", DICT),
    ("ours: informer + ProjectionDecoder", PROJECTION),
    ("official: list_namespaced_pod / Watch().stream → V1Pod", OFFICIAL),
]


def live(fixture: bytes, pods: int, rounds: int) -> dict[str, Any]:
    from ballast.runtime.envtest import Environment  # noqa: PLC0415

    items: list[dict[str, Any]] = orjson.loads(fixture)["items"][:pods]
    namespace = "bench-informer"
    path = POD_MAPPING.collection_path(namespace)
    began = time.perf_counter()
    with Environment(network_mode="loopback") as env:
        started = time.perf_counter() - began
        client = APIServerClient(Transport(RESTConfig(env.client_configuration())), field_owner="bench")
        official = kubernetes("client")
        core = official.CoreV1Api(official.ApiClient(env.client_configuration()))
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        created = create_pods(client, namespace, items)
        print(f"  envtest started in {started:.1f} s; {pods} pods created in {created:.1f} s", flush=True)
        version = orjson.loads(client.transport.request("GET", "/version").data)["gitVersion"]
        result: dict[str, Any] = {"pods": pods, "create_seconds": created, "server": version, "samples": []}
        for index in range(rounds):
            for label, reader in LIVE_READERS:
                for mode in ("list", "watch"):
                    settle()
                    if mode == "list":
                        raw_seconds, body = raw_list(client, path)
                        result["list_bytes_per_pod"] = len(body) / pods
                        del body
                    else:
                        raw_seconds, events, size = raw_watch(client, path)
                        if events != pods:
                            raise RuntimeError(f"the raw streaming list had {events} events, expected {pods}")
                        result["watch_bytes_per_event"] = size / pods
                    settle()
                    if reader == OFFICIAL:
                        read = live_official_list if mode == "list" else live_official_watch
                        seconds = read(core, namespace, pods)
                    else:
                        lister_watcher = client.lister_watcher(POD, namespace)
                        start, synced, _ = sync_ours(lister_watcher, reader, mode == "watch", pods)
                        seconds = synced.wall - start.wall
                    result["samples"].append({"reader": label, "mode": mode, "raw": raw_seconds, "seconds": seconds})
            print(f"  live round {index + 1}/{rounds} done", flush=True)
        client.close()
    return result


# ----------------------------------------------------------------------------------------------- report


def version_of(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def median(values: list[float]) -> float:
    return statistics.median(values)


def rate(count: int, seconds: float) -> str:
    return f"{count / seconds:,.0f}" if seconds > 0 else "—"


def phase(run: dict[str, float], key: str) -> float:
    if key == "both":
        return run["list_seconds"] + run["events_seconds"]
    if key == "wall":
        return run["list_wall"] + run["events_wall"]
    return run[f"{key}_seconds"]


LABELS = {
    (DECODE, OFFICIAL): "official: `list_pod_for_all_namespaces` + `Watch().stream()` → `ObjectCache`",
    (DECODE, DICT): "ours: `DictDecoder` → `Indexer`",
    (DECODE, PROJECTION): "ours: `ProjectionDecoder(PodProjection)` → `Indexer`",
    (INFORMER, OFFICIAL): "official: `kubernetes.informer.SharedInformer`",
    (INFORMER, DICT): "ours: `SharedIndexInformer` + `DictDecoder`",
    (INFORMER, PROJECTION): "ours: `SharedIndexInformer` + `ProjectionDecoder`",
    (STREAMING, OFFICIAL): "official: `Watch().stream(send_initial_events=True)` → `ObjectCache`",
    (STREAMING, DICT): "ours: `SharedIndexInformer(watch_list=True)` + `DictDecoder`",
    (STREAMING, PROJECTION): "ours: `SharedIndexInformer(watch_list=True)` + `ProjectionDecoder`",
}


def recorded_table(results: list[dict[str, Any]], pods: int) -> list[str]:
    by_key = {(r["level"], r["path"]): r for r in results}
    lines = [
        "| level | path | LIST pods/s | × | watch events/s | × | list + events /s | × | same, wall clock /s "
        "| gc runs (gen 2) | tracemalloc / cached pod | × | RSS growth / pod |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (level, path), label in LABELS.items():
        result, base = by_key.get((level, path)), by_key.get((level, OFFICIAL))
        if result is None:
            continue
        runs = result["runs"]
        collections = median([run["gc_collections"] for run in runs])
        cells = [level, label]
        phases = [("events", pods)] if level == STREAMING else [("list", pods), ("events", pods), ("both", 2 * pods)]
        if level == STREAMING:
            cells += ["—", "—"]
        for key, count in phases:
            seconds = median([phase(run, key) for run in runs])
            base_seconds = median([phase(run, key) for run in base["runs"]]) if base else 0.0
            cells += [rate(count, seconds), f"{base_seconds / seconds:.1f}×" if base else "—"]
        if level == STREAMING:
            cells += ["—", "—"]
        cells.append(rate(pods if level == STREAMING else 2 * pods, median([phase(run, "wall") for run in runs])))
        cells.append(f"{collections:.0f} ({median([run['gen2_collections'] for run in runs]):.0f})")
        traced = result.get("traced_per_pod")
        base_traced = base.get("traced_per_pod") if base else None
        cells.append(f"{traced / 1024:.1f} KiB" if traced else "—")
        cells.append(f"{traced / base_traced:.2f}" if traced and base_traced else "—")
        cells.append(f"{result['rss_growth_per_pod'] / 1024:.1f} KiB")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def live_table(result: dict[str, Any]) -> list[str]:
    pods, samples = result["pods"], result["samples"]
    raw = {mode: median([x["raw"] for x in samples if x["mode"] == mode]) for mode in ("list", "watch")}
    lines = [
        "| reader | LIST (`resourceVersion=0`) pods/s | fraction of raw | streaming list (`sendInitialEvents`) "
        "events/s | fraction of raw |",
        "|---|---|---|---|---|",
        f"| raw read: bytes, newlines counted, no decoding (the limit) | {rate(pods, raw['list'])} | 1.00 "
        f"| {rate(pods, raw['watch'])} | 1.00 |",
    ]
    for label, _ in LIVE_READERS:
        cells = [label]
        for mode in ("list", "watch"):
            mine = [x for x in samples if x["reader"] == label and x["mode"] == mode]
            cells += [
                rate(pods, median([x["seconds"] for x in mine])),
                f"{median([x['raw'] / x['seconds'] for x in mine]):.2f}",
            ]
        lines.append("| " + " | ".join(cells) + " |")
    spread = {mode: [pods / x["raw"] for x in samples if x["mode"] == mode] for mode in ("list", "watch")}
    lines += [
        "",
        f"Raw reads over the run ({len(spread['watch'])} each): LIST {min(spread['list']):,.0f}–"
        f"{max(spread['list']):,.0f} pods/s, streaming list {min(spread['watch']):,.0f}–{max(spread['watch']):,.0f} "
        "events/s.",
    ]
    return lines


def machine() -> list[str]:
    return [
        f"- machine: {cpu_model()}, {os.cpu_count()} cores; {platform.platform()}",
        f"- Python {platform.python_version()}; kubernetes {version_of('kubernetes')}, pydantic "
        f"{version_of('pydantic')}, orjson {version_of('orjson')}, msgspec {version_of('msgspec')}, urllib3 "
        f"{version_of('urllib3')}",
        f"- date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC",
    ]


# ------------------------------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pods", type=int, default=10_000, help="pods in the recorded list and watch events")
    parser.add_argument("--live-pods", type=int, default=10_000, help="pods created on the live API server")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes per recorded path (median)")
    parser.add_argument("--rounds", type=int, default=3, help="live rounds (median)")
    parser.add_argument("--skip-recorded", action="store_true")
    parser.add_argument("--skip-live", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("PATH", "LEVEL"), help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--memory", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        path, level = args.child
        print(json.dumps(child(path, level, args.data, args.pods, args.repeat, args.memory)))
        return

    began = time.perf_counter()
    load_before = load_average()
    fixture = load_fixture()
    out: list[str] = ["", *machine()]
    if not args.skip_recorded:
        with tempfile.TemporaryDirectory(prefix="bench-informer-") as work:
            data = Path(work)
            recorded = Recorded.build(fixture, args.pods, data)
            print(
                f"recorded: {recorded.pods} pods, LIST {recorded.list_bytes / recorded.pods:,.0f} B/pod, "
                f"watch {recorded.event_bytes / recorded.pods:,.0f} B/event",
                flush=True,
            )
            results = [
                run_child(path, level, data, args.pods, args.repeat, memory=level == DECODE)
                for level in LEVELS
                for path in PATHS
            ]
        out += [
            "",
            f"Recorded ({recorded.pods:,} pods: LIST of {recorded.list_bytes / recorded.pods:,.0f} B/pod, then "
            f"{recorded.pods:,} MODIFIED events of {recorded.event_bytes / recorded.pods:,.0f} B; median of "
            f"{args.repeat} passes, each path in its own process; rates per second of process CPU time (the "
            "machine is shared; wall clock in its own column); × = against the official client, memory × = "
            "ours / official):",
            "",
            *recorded_table(results, args.pods),
        ]
    if not args.skip_live:
        result = live(fixture, args.live_pods, args.rounds)
        out += [
            "",
            f"Live ({result['server']} envtest, {result['pods']:,} pods in one namespace: LIST "
            f"{result['list_bytes_per_pod']:,.0f} B/pod, watch {result['watch_bytes_per_event']:,.0f} B/event; "
            f"created with status in {result['create_seconds']:.0f} s; median of {args.rounds} rounds, time until "
            "the cache is synced; each reading paired with a raw read just before it, fraction = median of the "
            "pairs):",
            "",
            *live_table(result),
        ]
    out += ["", f"- load average: {load_before} before, {load_average()} after; {time.perf_counter() - began:.0f} s"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
