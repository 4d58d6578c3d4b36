"""Admission round trips over loopback TLS: our `WebhookServer` against kopf's admission server, in one run.

Both servers answer the same ~4 KB AdmissionReview (a Pod CREATE as a ReplicaSet controller sends it: the
first pod of `fixtures/pods.json.gz` as it looks before the registry fills in name, uid and status, with the
service-account token volume the built-in admission adds) with a handler that adds one label, over TLS with
keep-alive connections, as kube-apiserver uses them. Each server runs alone on core 0 (`taskset -c 0`); the
load generator, this script and the envtest control plane (which kopf needs for its discovery) run on core 1.

- Load: vegeta (Go, open loop: requests leave at the set rate whatever the answers do; HTTP/1.1 keep-alive,
  at most 64 connections: vegeta's own limit, far below our server's cap of 10,000 open connections), built
  once into `~/.cache/ballast/tools/`. A tiny Go TLS server answering a canned review measures what the client
  itself sustains on its core. Our server runs at its defaults (workers, deadlines, caps).
- kopf from PyPI in its own venv (`~/.cache/ballast/bench-venv`, created when missing; never the project's
  .venv), run as `kopf run --standalone -A` against an envtest kube-apiserver, with a certificate handed in
  (`settings.admission.server = kopf.WebhookServer(certfile=…, pkeyfile=…)`; `settings.admission.managed` unset
  so no webhook configuration is written), an `async` mutating handler (kopf's fastest path), at its defaults
  and with `--quiet`.
- Reference: a bare stdlib `http.server` + `ssl` + `jsonpatch` server (request logging off).

Per server: p50/p99 at a fixed 200 requests/s for 30 s (after 5 s of warm-up at that rate, on the same
connections), then the highest rate it sustains — p99 ≤ 10 ms, ≥ 99.9 % correct answers (200, allowed, the
patch) and the offered rate actually sent — on a ladder of rates (12 s steps, the first 2 s not counted)
refined by bisection. Every answer is checked, not only its status. The server's CPU time per request comes
from /proc.

Our server only, two more measurements (both in the default run):

- Under idle and slow connections: the fixed-rate run again, on the same server process, while a thread of this
  script (core 1, loopback only) holds 1,000 idle TCP connections (no ClientHello) and 40 slowloris clients open:
  20 that complete TLS and send a request one byte every 2 s, 20 that send a ClientHello one byte every 2 s.
  They are opened over 10 s (the server's handshake deadline, so its cuts are spread out); each one the server
  cuts at its handshake or read deadline is reopened at once, so the crowd keeps its size; the thread stops by
  itself after a bounded time. Reported: p50/p99, and that p99 over the unloaded one (target ≤ 2×).
- RSS after a burst: a fresh server process answers 3 rounds of 40 concurrent AdmissionReviews of 4 MiB − 64 KiB
  (the same pod with a large annotation: just under the 4 MiB body cap, so every one is decoded and answered)
  over 40 keep-alive connections (a 30 s client timeout: the longest the API server waits for a webhook); its
  VmRSS (/proc/<pid>/status) before, 1 s after each round, and its peak (VmHWM), next to the memory limit the
  Helm chart ships (resources.limits.memory in values.yaml). The peak counts only if every review was answered.

The machine is shared: the run starts once the 1-minute load average is below 0.8 (polled every 30 s, up to
15 minutes), and every measurement records how much of each core other work took (/proc/stat minus the
server's, vegeta's and this script's CPU). A fixed-rate run disturbed by more than 3 % of the server core (or
15 % of the client core), or a failed ladder step disturbed by more than 15 %, is repeated (up to twice, after
waiting for quiet cores; 4 minutes of such waits per run at most) and the least disturbed attempt is kept.

    .venv/bin/python benchmarks/webhook.py [--servers ours,kopf,kopf-quiet,stdlib] [--fixed-seconds 30]
                                           [--step-seconds 10] [--max-load 0.8] [--json results.json]
                                           [--profile] [--what-if] [--skip-idle] [--skip-burst]
                                           [--skip-ladder] [--skip-calibration]

`--profile` then samples our server with py-spy (GIL-holding stacks) at its sustained rate and times the pieces
of a request in-process; `--what-if` also measures our server with two other handlers: `jsonpatch.make_patch` in
place of `admission.json_patch` (what `patched` used before), and a constant patch (the floor: TLS, HTTP,
decode, encode). The internal subcommands `serve-ours [--handler …]` and `serve-stdlib` are the servers this
script starts on core 0.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import copy
import csv
import datetime
import gzip
import hashlib
import http.client
import http.server
import json
import math
import os
import platform
import resource
import selectors
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonpatch
import orjson
import yaml

from ballast.runtime import AdmissionRequest, AdmissionResponse, WebhookServer, patched
from ballast.runtime.admission import decode_review, encode_review
from ballast.runtime.webhook import MAX_BODY_BYTES

from machine import cpu_model, free_port

if TYPE_CHECKING:
    from ballast.runtime.envtest import Environment

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
FIXTURE = HERE / "fixtures" / "pods.json.gz"
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ballast"
TOOLS = CACHE / "tools"
BENCH_VENV = CACHE / "bench-venv"
VEGETA_MODULE = "github.com/tsenart/vegeta/v12"
LABEL = "bench.ballast.dev/admitted"
HELM_VALUES = REPO / "config" / "helm" / "ballast" / "values.yaml"
SERVER_CORE, CLIENT_CORE = 0, 1
VEGETA_CONNECTIONS = 64  # vegeta's own limit; our server caps open connections at 10,000
PY_SPY_RATE = 250
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
DISTURBED = 0.15  # other work taking more than this share of a core disturbs a ladder step
FIXED_DISTURBED = (0.03, 0.15)  # the fixed-rate p99 is more sensitive: limits for the server and client cores
QUIET_WAIT = 60.0
P99_LIMIT_MS = 10.0
MIN_VALID = 0.999
MIN_RATE_FRACTION = 0.98
CLIENT_RATES = (2000, 3500, 5000)
LADDER = (300, 500, 800, 1200, 1600, 2000, 2500, 3000, 4000, 5000)
IDLE_CLIENTS, SLOW_TLS_CLIENTS, SLOW_HELLO_CLIENTS = 1000, 20, 20
TRICKLE_SECONDS = 2.0  # one byte per slow client this often
CROWD_RAMP_SECONDS = 10.0  # the server's handshake deadline: opened over it, the cuts come spread out
CROWD_P99_RATIO = 2.0  # target: p99 under the crowd ≤ this × the unloaded p99
BURST_ROUNDS, BURST_CONCURRENCY = 3, 40
BURST_BODY_BYTES = MAX_BODY_BYTES - 64 * 1024  # just under the cap: every review is decoded and answered
BURST_SETTLE_SECONDS = 1.0
BURST_TIMEOUT_SECONDS = 30.0  # the longest the API server waits for a webhook (timeoutSeconds ≤ 30)
BLOB_ANNOTATION = "bench.ballast.dev/blob"
PATHS = {
    "ours": "/mutate-v1-pod",
    "kopf": "/add-label",
    "kopf-quiet": "/add-label",
    "stdlib": "/mutate",
    "ours-jsonpatch": "/mutate-v1-pod",
    "ours-constant": "/mutate-v1-pod",
}
WHAT_IF = ("ours-jsonpatch", "ours-constant")
TITLES = {
    "ours": "Ballast `WebhookServer`",
    "ours-jsonpatch": "what-if: ours, `jsonpatch.make_patch` instead of `admission.json_patch`",
    "ours-constant": "what-if: ours, constant patch (no copy, no diff)",
    "kopf": "kopf (defaults)",
    "kopf-quiet": "kopf `--quiet`",
    "stdlib": "stdlib `http.server` + `ssl` + `jsonpatch`",
}

KOPF_OPERATOR = '''\
"""The benchmark's kopf operator: only a mutating admission handler adding one label."""
import os

import kopf

LABEL = os.environ["BENCH_LABEL"]


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    # kopf's own self-signed certificate generation fails on this OpenSSL: hand it ours.
    # settings.admission.managed stays unset: no webhook configuration is written to the cluster.
    settings.admission.server = kopf.WebhookServer(
        addr="127.0.0.1",
        port=int(os.environ["BENCH_PORT"]),
        certfile=os.environ["BENCH_CERT"],
        pkeyfile=os.environ["BENCH_KEY"],
    )


@kopf.on.mutate("pods", id="add-label")
async def add_label(patch: kopf.Patch, **_):
    patch.metadata.labels[LABEL] = "true"
'''

ECHO_SERVER_GO = """\
// A TLS HTTP/1.1 server answering every request with a canned body: the client's own ceiling.
package main

import (
	"crypto/tls"
	"io"
	"net/http"
	"os"
)

func main() {
	answer, err := os.ReadFile(os.Args[4])
	if err != nil {
		panic(err)
	}
	server := &http.Server{
		Addr:         os.Args[1],
		TLSNextProto: map[string]func(*http.Server, *tls.Conn, http.Handler){}, // HTTP/1.1 only
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.Write(answer)
		}),
	}
	panic(server.ListenAndServeTLS(os.Args[2], os.Args[3]))
}
"""


# ------------------------------------------------------------------------------------------- the request


def admission_review() -> bytes:
    """A Pod CREATE AdmissionReview as kube-apiserver sends it for a ReplicaSet's pod (compact JSON)."""
    if not FIXTURE.exists():  # generated, not committed: deterministic, like the informer benchmark's
        subprocess.run([sys.executable, str(HERE / "fixtures" / "make_pods.py")], check=True)
    with gzip.open(FIXTURE) as stream:
        pod: dict[str, Any] = orjson.loads(stream.read())["items"][0]
    metadata = pod["metadata"]
    for key in ("name", "uid", "resourceVersion", "creationTimestamp"):  # set by the registry, after admission
        metadata.pop(key, None)
    metadata["managedFields"] = [m for m in metadata["managedFields"] if m["manager"] == "kube-controller-manager"]
    spec = pod["spec"]
    spec.pop("nodeName", None)
    sa_volume = "kube-api-access-7xq2d"  # added by the ServiceAccount admission plugin, before webhooks
    spec["volumes"].append(
        {
            "name": sa_volume,
            "projected": {
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {
                        "downwardAPI": {
                            "items": [
                                {
                                    "path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                }
                            ]
                        }
                    },
                ],
                "defaultMode": 420,
            },
        }
    )
    for container in spec["containers"]:
        container["volumeMounts"].append(
            {"name": sa_volume, "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}
        )
    pod["status"] = {}
    kind = {"group": "", "version": "v1", "kind": "Pod"}
    resource = {"group": "", "version": "v1", "resource": "pods"}
    review = {
        "kind": "AdmissionReview",
        "apiVersion": "admission.k8s.io/v1",
        "request": {
            "uid": "5c1a7e4e-0f0b-4f53-9d8e-3d1f7b2a9c61",
            "kind": kind,
            "resource": resource,
            "requestKind": kind,
            "requestResource": resource,
            "namespace": metadata["namespace"],
            "operation": "CREATE",
            "userInfo": {
                "username": "system:serviceaccount:kube-system:replicaset-controller",
                "uid": "0d2c6a61-6d0f-4a4e-8a4c-61f0cb0f8f5e",
                "groups": ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"],
            },
            "object": pod,
            "oldObject": None,
            "dryRun": False,
            "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"},
        },
    }
    return orjson.dumps(review)


def check_answer(body: bytes) -> bool:
    """A correct answer: allowed, with a JSON patch that adds our label."""
    try:
        response = orjson.loads(body)["response"]
        if response.get("allowed") is not True or response.get("patchType") != "JSONPatch":
            return False
        operations = orjson.loads(base64.b64decode(response["patch"]))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return False
    return bool(operations == LABEL_PATCH)


def large_review(size: int) -> bytes:
    """The same review, `size` bytes long: the pod carries a large annotation, as big objects do."""
    review = orjson.loads(admission_review())
    annotations = review["request"]["object"]["metadata"].setdefault("annotations", {})
    annotations[BLOB_ANNOTATION] = ""
    annotations[BLOB_ANNOTATION] = "x" * (size - len(orjson.dumps(review)))
    body = orjson.dumps(review)
    assert len(body) == size, (len(body), size)
    return body


# -------------------------------------------------------------------------------------- server subcommands


def add_label(request: AdmissionRequest) -> AdmissionResponse:
    """The handler under test, written as the admission module's docstring shows."""
    pod = request.object_copy()
    pod["metadata"].setdefault("labels", {})[LABEL] = "true"
    return patched(request, pod)


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


LABEL_PATCH = [{"op": "add", "path": "/metadata/labels/" + _escape(LABEL), "value": "true"}]


def add_label_jsonpatch(request: AdmissionRequest) -> AdmissionResponse:
    """What-if: `add_label` with `jsonpatch.make_patch` (the full serializing diff) in place of `json_patch`."""
    pod = request.object_copy()
    pod["metadata"].setdefault("labels", {})[LABEL] = "true"
    return AdmissionResponse(True, 200, patch=jsonpatch.make_patch(request.object, pod).patch or None)


def add_label_constant(request: AdmissionRequest) -> AdmissionResponse:
    """What-if floor: the same answer without copying or diffing (transport, decode and encode only)."""
    return AdmissionResponse(True, 200, patch=LABEL_PATCH)


HANDLERS: dict[str, Callable[[AdmissionRequest], AdmissionResponse]] = {
    "ours": add_label,
    "ours-jsonpatch": add_label_jsonpatch,
    "ours-constant": add_label_constant,
}


def serve_ours(port: int, cert_dir: Path, handler: str) -> None:
    """Our WebhookServer with `add_label` (or a what-if handler)."""
    server = WebhookServer(host="127.0.0.1", port=port, cert_dir=cert_dir)  # its defaults: caps, deadlines, workers
    server.register(PATHS["ours"], HANDLERS[handler])
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    server.start(stop)


class _StdlibHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive
    disable_nagle_algorithm = True  # headers and body go out in two writes: without this, 40 ms delayed ACKs

    def do_POST(self) -> None:
        review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        request = review["request"]
        pod = copy.deepcopy(request["object"])
        pod["metadata"].setdefault("labels", {})[LABEL] = "true"
        patch = jsonpatch.make_patch(request["object"], pod).patch
        answer = {
            "uid": request["uid"],
            "allowed": True,
            "patchType": "JSONPatch",
            "patch": base64.b64encode(json.dumps(patch).encode()).decode(),
        }
        body = json.dumps({"apiVersion": review["apiVersion"], "kind": "AdmissionReview", "response": answer}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve_stdlib(port: int, cert_dir: Path) -> None:
    """The bare baseline: ThreadingHTTPServer, ssl, json, copy.deepcopy and jsonpatch."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert_dir / "tls.crt", cert_dir / "tls.key")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _StdlibHandler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    server.serve_forever()


# ------------------------------------------------------------------------------------------------ tools


def run(argv: Sequence[str], **kwargs: Any) -> str:
    return str(subprocess.run(argv, check=True, capture_output=True, text=True, **kwargs).stdout)


def go_env() -> dict[str, str]:
    return {**os.environ, "GOTOOLCHAIN": "local", "GOBIN": str(TOOLS), "CGO_ENABLED": "0"}


def ensure_vegeta() -> tuple[Path, str]:
    """vegeta from the Go module proxy, built once into the tools cache; returns (binary, module version)."""
    binary = TOOLS / "vegeta"
    if not binary.exists():
        TOOLS.mkdir(parents=True, exist_ok=True)
        print(f"building vegeta into {TOOLS} …", flush=True)
        run(["go", "install", f"{VEGETA_MODULE}@latest"], env=go_env(), cwd=TOOLS)
    version = "unknown"
    for line in run(["go", "version", "-m", str(binary)]).splitlines():
        parts = line.split()
        if parts[:2] == ["mod", VEGETA_MODULE]:
            version = parts[2]
    return binary, version


def ensure_echo_server() -> Path:
    """The client-ceiling server (Go stdlib only), rebuilt when its source changes."""
    source_dir = TOOLS / "src" / "bench-echo"
    binary = TOOLS / "bench-echo"
    digest = hashlib.sha256(ECHO_SERVER_GO.encode()).hexdigest()
    stamp = source_dir / "source.sha256"
    if binary.exists() and stamp.exists() and stamp.read_text() == digest:
        return binary
    source_dir.mkdir(parents=True, exist_ok=True)
    (source_dir / "main.go").write_text(ECHO_SERVER_GO)
    (source_dir / "go.mod").write_text("module benchecho\n\ngo 1.26\n")
    run(["go", "build", "-o", str(binary), "."], env=go_env(), cwd=source_dir)
    stamp.write_text(digest)
    return binary


def ensure_bench_venv() -> tuple[Path, str]:
    """kopf (and py-spy) in a benchmark-only venv outside the repository; returns (venv, kopf version)."""
    python = BENCH_VENV / "bin" / "python"
    if not (BENCH_VENV / "bin" / "kopf").exists() or not (BENCH_VENV / "bin" / "py-spy").exists():
        print(f"installing kopf and py-spy into {BENCH_VENV} …", flush=True)
        run([sys.executable, "-m", "venv", str(BENCH_VENV)])
        run([str(python), "-m", "pip", "install", "--quiet", "kopf", "py-spy"])
    version = run([str(python), "-c", "import importlib.metadata as m; print(m.version('kopf'))"]).strip()
    return BENCH_VENV, version


def load1() -> float:
    return os.getloadavg()[0]


def wait_for_quiet_machine(max_load: float, max_wait: float) -> tuple[float, float]:
    """Poll the 1-minute load every 30 s until it is below `max_load`; returns (load, seconds waited)."""
    began = time.monotonic()
    while (load := load1()) >= max_load and time.monotonic() - began < max_wait:
        print(f"  load average {load:.2f} ≥ {max_load}: waiting …", flush=True)
        time.sleep(30)
    return load, time.monotonic() - began


def process_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime + stime, all threads


def vm_mib(pid: int, name: str) -> float:
    """A `Vm…` figure of /proc/<pid>/status (VmRSS: resident now; VmHWM: the most it ever was), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return int(line.split()[1]) / 1024  # kB
    raise RuntimeError(f"no {name} in /proc/{pid}/status")


def shipped_memory_limit() -> int:
    """The Helm chart's resources.limits.memory, in bytes."""
    quantity = str(yaml.safe_load(HELM_VALUES.read_text())["resources"]["limits"]["memory"])
    for suffix, factor in (("Ki", 2**10), ("Mi", 2**20), ("Gi", 2**30)):
        if quantity.endswith(suffix):
            return int(quantity.removesuffix(suffix)) * factor
    raise ValueError(f"unexpected memory quantity {quantity!r} in {HELM_VALUES}")


def ensure_descriptors(needed: int) -> None:
    """Raise the open-file limit of this process (and so of the servers it starts) to `needed` if lower."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= needed:
        return
    if hard != resource.RLIM_INFINITY and hard < needed:
        raise SystemExit(f"the idle-connection run needs {needed} open files, the hard limit is {hard} (--skip-idle)")
    resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))


def cores_busy_seconds() -> dict[int, float]:
    """CPU seconds each core spent busy (user, nice, system, and steal: time the hypervisor took away)."""
    busy = {}
    for line in Path("/proc/stat").read_text().splitlines():
        name, *values = line.split()
        if name.startswith("cpu") and name[3:].isdigit():
            user, nice, system, _idle, _iowait, _irq, _softirq, steal = (int(v) for v in values[:8])
            busy[int(name[3:])] = (user + nice + system + steal) / CLOCK_TICKS
    return busy


def children_cpu_seconds() -> float:
    """CPU seconds of this process and its reaped children (vegeta runs to completion as one)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


class Disturbance:
    """The share of each core's time taken by work other than the benchmark's, over a window.

    The machine is shared: on the server core, anything but the server; on the client core, anything but
    vegeta and this script (the idle envtest control plane counts as other work).
    """

    def __init__(self, server_pid: int | None) -> None:
        self.server_pid = server_pid
        self.began = time.monotonic()
        self.busy = cores_busy_seconds()
        self.server = process_cpu_seconds(server_pid) if server_pid else 0.0
        self.ours = children_cpu_seconds()

    def end(self) -> tuple[float, float, float]:
        """(server CPU seconds, other share of the server core, other share of the client core)."""
        wall = time.monotonic() - self.began
        busy = cores_busy_seconds()
        server = (process_cpu_seconds(self.server_pid) - self.server) if self.server_pid else 0.0
        ours = children_cpu_seconds() - self.ours
        other_server = (busy[SERVER_CORE] - self.busy[SERVER_CORE] - server) / wall
        other_client = (busy[CLIENT_CORE] - self.busy[CLIENT_CORE] - ours) / wall
        return server, max(0.0, other_server), max(0.0, other_client)


class _WaitBudget:
    """All waits for quiet cores in one run share this many seconds, so a busy machine cannot stretch it."""

    seconds = 240.0


def wait_for_quiet_cores(limit: float, max_wait: float) -> float:
    """Between measurements: sample both cores for 2 s until neither is busier than `limit`; returns the wait."""
    began = time.monotonic()
    max_wait = min(max_wait, _WaitBudget.seconds)
    while time.monotonic() - began < max_wait:
        before = cores_busy_seconds()
        time.sleep(2)
        after = cores_busy_seconds()
        if all((after[core] - before[core]) / 2 < limit for core in (SERVER_CORE, CLIENT_CORE)):
            break
    waited = time.monotonic() - began
    _WaitBudget.seconds = max(0.0, _WaitBudget.seconds - waited)
    return waited


# ------------------------------------------------------------------------------------------ measurement


@dataclass
class Step:
    """One vegeta run at a fixed offered rate (the warm-up seconds are excluded from every figure)."""

    rate: int
    seconds: float
    requests: int
    sent_rate: float
    valid: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    server_cpu_ms_per_request: float
    other_on_server_core: float = 0.0
    other_on_client_core: float = 0.0
    sent_in_all: int = 0  # with the warm-up
    errors: dict[str, int] = field(default_factory=dict)

    @property
    def sustained(self) -> bool:
        return (
            self.p99_ms <= P99_LIMIT_MS and self.valid >= MIN_VALID and self.sent_rate >= MIN_RATE_FRACTION * self.rate
        )

    @property
    def disturbed(self) -> bool:
        return self.disturbed_beyond(DISTURBED, DISTURBED)

    def disturbed_beyond(self, server_limit: float, client_limit: float) -> bool:
        return self.other_on_server_core > server_limit or self.other_on_client_core > client_limit

    def line(self) -> str:
        verdict = "ok" if self.sustained else "FAIL"
        verdict += f"  (other work: {self.other_on_server_core:.0%} / {self.other_on_client_core:.0%} of cores 0/1)"
        errors = f" errors={dict(self.errors)}" if self.errors else ""
        return (
            f"  {self.rate:>5}/s: sent {self.sent_rate:7.1f}/s valid {self.valid:7.2%} p50 {self.p50_ms:6.2f} ms "
            f"p90 {self.p90_ms:6.2f} ms p99 {self.p99_ms:7.2f} ms max {self.max_ms:7.1f} ms "
            f"cpu {self.server_cpu_ms_per_request:5.2f} ms/req  {verdict}{errors}"
        )


def percentile(ordered: Sequence[int], q: float) -> float:
    """Nearest-rank percentile of sorted nanoseconds, in milliseconds."""
    if not ordered:
        return math.inf
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] / 1e6


class Vegeta:
    def __init__(self, binary: Path, work: Path, ca_file: Path) -> None:
        self.binary = binary
        self.work = work
        self.ca_file = ca_file

    def attack(
        self,
        targets: Path,
        rate: int,
        seconds: float,
        warmup: float,
        server_pid: int | None,
        check: Callable[[bytes], bool] = check_answer,
    ) -> Step:
        """vegeta at `rate` for `warmup` + `seconds`; every answer judged by `check` (default: the label patch)."""
        results = self.work / "results.bin"
        disturbance = Disturbance(server_pid)
        argv = [
            "taskset", "-c", str(CLIENT_CORE), str(self.binary), "attack",
            f"-targets={targets}", f"-rate={rate}/1s", f"-duration={seconds + warmup}s",
            "-keepalive=true", "-http2=false", f"-root-certs={self.ca_file}", "-timeout=10s",
            f"-max-connections={VEGETA_CONNECTIONS}", "-max-body=4096", "-redirects=0", f"-output={results}",
        ]  # fmt: skip
        subprocess.run(argv, check=True, stderr=subprocess.PIPE)
        cpu, other_server, other_client = disturbance.end()
        encoded = subprocess.run(
            [str(self.binary), "encode", "--to", "csv", str(results)], check=True, capture_output=True
        ).stdout.decode()
        rows = list(csv.reader(encoded.splitlines()))
        total = len(rows)
        if not rows:
            raise RuntimeError("vegeta recorded no result")
        first = min(int(row[0]) for row in rows)
        kept = [row for row in rows if int(row[0]) >= first + warmup * 1e9]
        latencies = sorted(int(row[2]) for row in kept)
        stamps = sorted(int(row[0]) for row in kept)
        span = (stamps[-1] - stamps[0]) / 1e9 if len(stamps) > 1 else 0.0
        valid = 0
        errors: Counter[str] = Counter()
        for row in kept:
            if row[1] == "200" and check(base64.b64decode(row[6])):
                valid += 1
            else:
                errors[(row[5] or f"HTTP {row[1]}")[:80]] += 1
        return Step(
            rate=rate,
            seconds=seconds,
            requests=len(kept),
            sent_rate=(len(stamps) - 1) / span if span else 0.0,
            valid=valid / len(kept) if kept else 0.0,
            p50_ms=percentile(latencies, 0.50),
            p90_ms=percentile(latencies, 0.90),
            p99_ms=percentile(latencies, 0.99),
            max_ms=latencies[-1] / 1e6,
            server_cpu_ms_per_request=cpu * 1e3 / total,
            other_on_server_core=other_server,
            other_on_client_core=other_client,
            sent_in_all=total,
            errors=dict(errors.most_common(3)),
        )


@dataclass
class ServerResult:
    name: str
    fixed: Step | None = None
    steps: list[Step] = field(default_factory=list)
    load_before: float = 0.0
    startup_seconds: float = 0.0
    log_lines_per_request: float = 0.0
    crowded: Step | None = None  # ours: the fixed-rate run under idle and slow connections
    crowd: CrowdCounts | None = None
    burst: Burst | None = None  # ours: RSS over rounds of large reviews

    @property
    def sustained_rate(self) -> int:
        return max((step.rate for step in self.steps if step.sustained), default=0)

    @property
    def sustained_text(self) -> str:
        """The rate, with `≥` when even the top of the ladder passed (the limit is then not the server's)."""
        if not self.steps:
            return "–"  # no ladder (--skip-ladder)
        return f"{'≥ ' if self.sustained_rate == LADDER[-1] else ''}{self.sustained_rate}/s"


class Server:
    """One server under test, started on the server core; stopped on exit. It is ready once it answers a review
    at `path` (default: PATHS[name]) so that `check` accepts the answer (default: the label patch)."""

    def __init__(
        self,
        name: str,
        argv: Sequence[str],
        env: dict[str, str],
        log: Path,
        port: int,
        *,
        path: str | None = None,
        check: Callable[[bytes], bool] = check_answer,
    ) -> None:
        self.name = name
        self.path = path or PATHS[name]
        self.check = check
        self.port = port
        self.log = log
        self.argv = ["taskset", "-c", str(SERVER_CORE), *argv]
        self.env = env
        self.process: subprocess.Popen[bytes] | None = None

    @contextlib.contextmanager
    def running(self, body: bytes, ca_file: Path) -> Iterator[float]:
        began = time.monotonic()
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(self.argv, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        try:
            self.wait_ready(body, ca_file, timeout=90)
            yield time.monotonic() - began
        finally:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def wait_ready(self, body: bytes, ca_file: Path, timeout: float) -> None:
        """Until one review is answered correctly (kopf first needs the cluster's discovery)."""
        assert self.process is not None
        context = ssl.create_default_context(cafile=str(ca_file))
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.name} exited ({self.process.returncode}); log: {self.log}")
            connection = http.client.HTTPSConnection("127.0.0.1", self.port, context=context, timeout=5)
            try:
                connection.request("POST", self.path, body, {"Content-Type": "application/json"})
                answer = connection.getresponse()
                data = answer.read()
                if answer.status == 200 and self.check(data):
                    return
                last = f"HTTP {answer.status}: {data[:300]!r}"
            except OSError as exc:
                last = str(exc)
            finally:
                connection.close()
            time.sleep(0.5)
        raise RuntimeError(f"{self.name} never answered a review correctly: {last}; log: {self.log}")


def measured(
    attack: Callable[[int, float, float], Step],
    rate: int,
    seconds: float,
    warmup: float,
    retries: int,
    *,
    fixed: bool,
) -> Step:
    """A measurement, repeated (up to `retries` times) when other work on the machine disturbed it.

    Ladder steps are repeated only when they failed while disturbed (> DISTURBED of either core); the
    fixed-rate run whenever disturbed beyond FIXED_DISTURBED, and it starts on quiet cores. The least
    disturbed attempt is kept (the server core weighs double: that is where a stolen slice delays answers).
    """
    limits = FIXED_DISTURBED if fixed else (DISTURBED, DISTURBED)
    attempts = []
    for attempt in range(retries + 1):
        if fixed:
            wait_for_quiet_cores(0.10, QUIET_WAIT / 3)
        result = attack(rate, seconds, warmup)
        print(result.line() + (f"  [attempt {attempt + 1}]" if attempt else ""), flush=True)
        attempts.append(result)
        time.sleep(2)  # let a server that fell behind drain
        if not result.disturbed_beyond(*limits) or (result.sustained and not fixed):
            break
        if attempt < retries:
            waited = wait_for_quiet_cores(0.10, QUIET_WAIT)
            print(f"    disturbed by other work: again (after waiting {waited:.0f} s for quiet cores)", flush=True)
    return min(attempts, key=lambda step: 2 * step.other_on_server_core + step.other_on_client_core)


def find_sustained(attack: Callable[[int, float, float], Step], args: argparse.Namespace) -> list[Step]:
    """Climb the ladder until a rate fails, then bisect (twice) between the last success and the failure."""
    steps: list[Step] = []

    def step(rate: int) -> Step:
        result = measured(attack, rate, args.step_seconds, args.step_warmup, args.retries, fixed=False)
        steps.append(result)
        return result

    good, bad = 0, 0
    for rate in LADDER:
        if step(rate).sustained:
            good = rate
        else:
            bad = rate
            break
    for _ in range(args.bisect):
        if not bad:
            break
        middle = int(round((good + bad) / 2 / 25) * 25)
        if middle in (good, bad):
            break
        if step(middle).sustained:
            good = middle
        else:
            bad = middle
    return steps


# ------------------------------------------------------------------------- idle and slow clients, big reviews


LOOPBACK = "127.0.0.1"  # the crowd's only target
CROWD = {"idle": IDLE_CLIENTS, "slow-tls": SLOW_TLS_CLIENTS, "slow-hello": SLOW_HELLO_CLIENTS}
SLOW_REQUEST = (
    f"POST {PATHS['ours']} HTTP/1.1\r\nHost: {LOOPBACK}\r\nContent-Type: application/json\r\n"
    "Content-Length: 4646\r\n\r\n"
).encode()
CROWD_OPENS_PER_PASS = 200


def client_hello(context: ssl.SSLContext) -> bytes:
    """A real ClientHello from `context`, produced on memory BIOs (no socket), for a client to trickle."""
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname=LOOPBACK)
    with contextlib.suppress(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


@dataclass
class _Client:
    kind: str  # a key of CROWD
    sock: socket.socket
    trickle: bytes = b""  # sent one byte per tick, from the start again if ever exhausted
    sent: int = 0


@dataclass
class CrowdCounts:
    """What the crowd saw from the moment it was complete until it was closed."""

    size: dict[str, int]
    fewest_open: dict[str, int]
    cut_and_reopened: dict[str, int]
    failed_opens: int = 0
    seconds: float = 0.0

    @property
    def cuts_per_second(self) -> float:
        return sum(self.cut_and_reopened.values()) / self.seconds if self.seconds else 0.0


class Crowd:
    """Idle and slow clients held open against a loopback port by one thread of this process (on core 1).

    `idle` clients open TCP and send nothing; `slow-tls` ones complete TLS, then send a request one byte every
    TRICKLE_SECONDS; `slow-hello` ones send a ClientHello at that pace. They are opened over `ramp` seconds;
    whichever the server closes (its handshake and read deadlines) is reopened at once, so the crowd keeps its
    size. The thread stops by itself after `lifetime` seconds; `held` closes everything on the way out.
    """

    def __init__(self, port: int, context: ssl.SSLContext, size: dict[str, int], ramp: float, lifetime: float) -> None:
        self.address = (LOOPBACK, port)
        self.context = context
        self.ramp = ramp
        self.lifetime = lifetime
        self.full = threading.Event()  # set once every client has been opened
        self.expired = False  # the lifetime ran out before `close`
        self.counts = CrowdCounts(dict(size), dict(size), dict.fromkeys(size, 0))
        self._clients: dict[int, _Client] = {}
        self._open: Counter[str] = Counter()
        self._pending: deque[str] = deque()
        self._selector = selectors.DefaultSelector()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="crowd", daemon=True)

    @classmethod
    @contextlib.contextmanager
    def held(
        cls, port: int, context: ssl.SSLContext, size: dict[str, int], ramp: float, lifetime: float
    ) -> Iterator[Crowd]:
        crowd = cls(port, context, size, ramp, lifetime)
        crowd._thread.start()
        try:
            yield crowd
        finally:
            crowd._done.set()
            crowd._thread.join(30)

    def _run(self) -> None:
        began = time.monotonic()
        ramp = self._ramp(began)
        next_tick = began + TRICKLE_SECONDS
        full_since = 0.0
        try:
            while not self._done.is_set():
                now = time.monotonic()
                if now >= began + self.lifetime:
                    self.expired = True
                    break
                while ramp and ramp[0][0] <= now:
                    self._pending.append(ramp.popleft()[1])
                if now >= next_tick:
                    self._trickle()
                    next_tick += TRICKLE_SECONDS
                for key, _ in self._selector.select(0.05):
                    self._readable(key.data)
                self._open_pending()
                if full_since:
                    self._note_fewest()
                elif not ramp and not self._pending:
                    full_since = time.monotonic()
                    size = self.counts.size  # counted from here on
                    self.counts = CrowdCounts(size, {k: self._open[k] for k in size}, dict.fromkeys(size, 0))
                    self.full.set()
        finally:
            self.counts.seconds = time.monotonic() - full_since if full_since else 0.0
            for client in self._clients.values():
                client.sock.close()
            self._selector.close()

    def _ramp(self, began: float) -> deque[tuple[float, str]]:
        """When each client is first opened: every kind spread evenly over the ramp."""
        due = [(began + self.ramp * (i + 0.5) / n, kind) for kind, n in self.counts.size.items() for i in range(n)]
        return deque(sorted(due))

    def _open_pending(self) -> None:
        for _ in range(min(len(self._pending), CROWD_OPENS_PER_PASS)):
            kind = self._pending.popleft()
            try:
                client = self._connect(kind)
            except OSError:
                self.counts.failed_opens += 1
                self._pending.appendleft(kind)
                return  # again on the next pass
            self._clients[client.sock.fileno()] = client
            self._open[kind] += 1
            self._selector.register(client.sock, selectors.EVENT_READ, client)

    def _connect(self, kind: str) -> _Client:
        raw = socket.create_connection(self.address, timeout=5)
        try:
            if kind == "slow-tls":
                sock: socket.socket = self.context.wrap_socket(raw, server_hostname=LOOPBACK)
                client = _Client(kind, sock, SLOW_REQUEST)
            else:
                client = _Client(kind, raw, client_hello(self.context) if kind == "slow-hello" else b"")
        except OSError:
            raw.close()
            raise
        client.sock.setblocking(False)
        return client

    def _trickle(self) -> None:
        for client in list(self._clients.values()):
            if client.trickle:
                at = client.sent % len(client.trickle)
                with contextlib.suppress(OSError):  # closed by the server: the read side notices
                    client.sock.send(client.trickle[at : at + 1])
                    client.sent += 1

    def _readable(self, client: _Client) -> None:
        """The server wrote (TLS session tickets, an answer) or closed: a closed client is replaced."""
        try:
            data = client.sock.recv(4096)
        except (ssl.SSLWantReadError, ssl.SSLWantWriteError, BlockingIOError):
            return
        except OSError:
            data = b""
        if data:
            return
        self._selector.unregister(client.sock)
        self._clients.pop(client.sock.fileno(), None)
        client.sock.close()
        self._open[client.kind] -= 1
        self.counts.cut_and_reopened[client.kind] += 1
        self._pending.append(client.kind)

    def _note_fewest(self) -> None:
        fewest = self.counts.fewest_open
        for kind in fewest:
            fewest[kind] = min(fewest[kind], self._open[kind])


@dataclass
class Burst:
    """Our server's memory over rounds of concurrent large reviews (MiB; the peak is VmHWM)."""

    body_bytes: int
    concurrency: int
    before_mib: float
    limit_mib: float
    after_rounds_mib: list[float] = field(default_factory=list)
    round_seconds: list[float] = field(default_factory=list)
    correct: list[int] = field(default_factory=list)  # per round, of `concurrency`
    errors: dict[str, int] = field(default_factory=dict)
    peak_mib: float = 0.0

    @property
    def all_correct(self) -> bool:
        return all(correct == self.concurrency for correct in self.correct)


def post_review(connection: http.client.HTTPSConnection, body: bytes) -> str:
    """One review on a keep-alive connection: "ok", or what went wrong (a failed connection reopens next time)."""
    try:
        connection.request("POST", PATHS["ours"], body, {"Content-Type": "application/json"})
        answer = connection.getresponse()
        data = answer.read()
    except (OSError, http.client.HTTPException) as exc:
        connection.close()
        return f"{type(exc).__name__}: {exc}"[:80]
    if answer.status != 200:
        return f"HTTP {answer.status}"
    return "ok" if check_answer(data) else "wrong answer"


def burst_round(
    clients: ThreadPoolExecutor, connections: list[http.client.HTTPSConnection], body: bytes
) -> Counter[str]:
    """Every connection posts `body` at once; the outcomes."""
    return Counter(clients.map(lambda connection: post_review(connection, body), connections))


# ----------------------------------------------------------------------------------------------- profile


def breakdown(body: bytes, rounds: int = 5, calls: int = 300) -> list[tuple[str, float]]:
    """CPU µs per call of the pieces of one request above HTTP, in this process (best of `rounds`)."""
    api_version, request = decode_review(body)
    mutated = request.object_copy()
    mutated["metadata"]["labels"][LABEL] = "true"
    response = patched(request, mutated)
    pieces: list[tuple[str, Callable[[], object]]] = [
        ("decode_review (orjson.loads + checks)", lambda: decode_review(body)),
        ("AdmissionRequest.object_copy (orjson round trip)", request.object_copy),
        ("patched: admission.json_patch of the 4.6 KB pod", lambda: patched(request, mutated)),
        ("what-if: jsonpatch.make_patch of the same", lambda: jsonpatch.make_patch(request.object, mutated)),
        ("encode_review", lambda: encode_review(api_version, request.uid, response)),
        ("all of it: decode, add_label, encode", lambda: encode_review(api_version, "u", add_label(request))),
    ]
    results = []
    for name, call in pieces:
        best = math.inf
        for _ in range(rounds):
            began = time.thread_time()
            for _ in range(calls):
                call()
            best = min(best, (time.thread_time() - began) / calls)
        results.append((name, best * 1e6))
    return results


def summarize_profile(raw: Path, possible: int, top: int = 22) -> str:
    """Self and inclusive shares of the sampled stacks (threads holding the GIL), by function."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        frames = [shorten(frame) for frame in stack.split(";")]
        frames = [frame for frame in frames if frame]
        if not frames:
            continue
        total += count
        own[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
    if not total:
        return "  py-spy recorded no sample"
    lines = [f"  {total} samples holding the GIL ({total / possible:.0%} of the wall time); self time:"]
    lines += [f"    {n / total:6.1%}  {frame}" for frame, n in own.most_common(top)]
    lines.append("  inclusive:")
    lines += [f"    {n / total:6.1%}  {frame}" for frame, n in inclusive.most_common(top + 10)]
    return "\n".join(lines)


def shorten(frame: str) -> str:
    """`function (path/to/module.py:12)` → `function (module.py)`, thread roots dropped."""
    frame = frame.strip()
    if frame.startswith(("process ", "thread ")):
        return ""
    name, _, where = frame.partition(" (")
    file = where.rstrip(")").rsplit(":", 1)[0]
    parts = Path(file).parts
    short = "/".join(parts[-2:]) if parts and parts[-2:-1] == ("runtime",) else (parts[-1] if parts else "?")
    return f"{name} ({short})"


# -------------------------------------------------------------------------------------------------- main


class Bench:
    """One benchmark run: tools, certificates, the request, and the servers measured in turn."""

    def __init__(self, args: argparse.Namespace, work: Path, vegeta_binary: Path, venv: Path) -> None:
        self.args = args
        self.work = work
        self.venv = venv
        # Imported here: the server processes started from this file load only what a webhook process needs.
        from ballast.runtime.certs import CertificateAuthority  # noqa: PLC0415

        ca = CertificateAuthority("bench-webhook-ca")
        self.cert_dir = work / "certs"
        ca.issue("bench-webhook", hosts=("127.0.0.1", "localhost"), server=True).write(self.cert_dir)
        self.ca_file = work / "ca.crt"
        self.ca_file.write_bytes(ca.cert_pem)
        self.body = admission_review()
        self.body_file = work / "review.json"
        self.body_file.write_bytes(self.body)
        (work / "operator.py").write_text(KOPF_OPERATOR)
        self.vegeta = Vegeta(vegeta_binary, work, self.ca_file)
        self.env: Environment | None = None

    def server(self, name: str, log_name: str = "") -> Server:
        port = free_port()
        python = str(REPO / ".venv" / "bin" / "python") if (REPO / ".venv").exists() else sys.executable
        base_env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        log = self.log_path(log_name or name)
        if name.startswith("ours") or name == "stdlib":
            script = str(Path(__file__).resolve())
            command = "serve-stdlib" if name == "stdlib" else "serve-ours"
            argv = [python, script, command, "--port", str(port), "--cert-dir", str(self.cert_dir)]
            if name != "stdlib":
                argv += ["--handler", name]
            return Server(name, argv, base_env, log, port)
        assert self.env is not None, "kopf needs the envtest API server"
        kopf_env = {
            **base_env,
            "KUBECONFIG": str(self.env.kubeconfig_path),
            "BENCH_PORT": str(port),
            "BENCH_CERT": str(self.cert_dir / "tls.crt"),
            "BENCH_KEY": str(self.cert_dir / "tls.key"),
            "BENCH_LABEL": LABEL,
        }
        argv = [str(self.venv / "bin" / "kopf"), "run", "--standalone", "-A", str(self.work / "operator.py")]
        if name == "kopf-quiet":
            argv.insert(2, "--quiet")
        return Server(name, argv, kopf_env, log, port)

    def targets(self, tag: str, port: int, path: str) -> Path:
        """vegeta's http targets format: the request line, a header, the body file."""
        targets = self.work / f"targets-{tag}.txt"
        targets.write_text(f"POST https://127.0.0.1:{port}{path}\nContent-Type: application/json\n@{self.body_file}\n")
        return targets

    def measure(self, name: str) -> ServerResult:
        args = self.args
        server = self.server(name)
        targets = self.targets(name, server.port, PATHS[name])
        result = ServerResult(name, load_before=load1())
        print(f"\n{TITLES[name]} (load {result.load_before:.2f}):", flush=True)
        with server.running(self.body, self.ca_file) as startup:
            assert server.process is not None
            pid = server.process.pid
            result.startup_seconds = startup

            sent = 0

            def attack(rate: int, seconds: float, warmup: float) -> Step:
                nonlocal sent
                step = self.vegeta.attack(targets, rate, seconds, warmup, pid)
                sent += step.sent_in_all
                return step

            print(f"  fixed rate, {args.fixed_seconds:.0f} s:", flush=True)
            result.fixed = measured(
                attack, args.fixed_rate, args.fixed_seconds, args.fixed_warmup, args.retries, fixed=True
            )
            if name == "ours" and not args.skip_idle:
                result.crowded, result.crowd = self.crowded(attack, server.port)
            if not args.skip_ladder:
                print("  ladder:", flush=True)
                result.steps = find_sustained(attack, args)
        with self.log_path(name).open("rb") as log:
            result.log_lines_per_request = sum(1 for _ in log) / sent  # start-up lines included: a few
        print(
            f"  sustained: {result.sustained_text}; it logged {result.log_lines_per_request:.2f} lines per request",
            flush=True,
        )
        if name == "ours" and not args.skip_burst:
            result.burst = self.burst()
        return result

    def crowded(self, attack: Callable[[int, float, float], Step], port: int) -> tuple[Step, CrowdCounts]:
        """The fixed-rate run again while the crowd of idle and slow clients is held open against `port`."""
        args = self.args
        attempt = QUIET_WAIT * 4 / 3 + args.fixed_warmup + args.fixed_seconds + 10 + 2  # waits, run, timeout, drain
        lifetime = CROWD_RAMP_SECONDS + (args.retries + 1) * attempt + 60
        context = ssl.create_default_context(cafile=str(self.ca_file))
        print(
            f"  fixed rate under {IDLE_CLIENTS:,} idle, {SLOW_TLS_CLIENTS} slow-TLS and {SLOW_HELLO_CLIENTS} "
            f"slow-ClientHello connections (opened over {CROWD_RAMP_SECONDS:.0f} s), {args.fixed_seconds:.0f} s:",
            flush=True,
        )
        with Crowd.held(port, context, CROWD, CROWD_RAMP_SECONDS, lifetime) as crowd:
            if not crowd.full.wait(CROWD_RAMP_SECONDS + 30):
                raise RuntimeError("the idle and slow connections were not all opened")
            step = measured(attack, args.fixed_rate, args.fixed_seconds, args.fixed_warmup, args.retries, fixed=True)
            if crowd.expired:
                raise RuntimeError("the crowd's lifetime ran out before the measurement ended")
        counts = crowd.counts
        print(
            f"    held (fewest open): {counts.fewest_open}; cut by the server and reopened: "
            f"{counts.cut_and_reopened} ({counts.cuts_per_second:.0f}/s); failed opens {counts.failed_opens}",
            flush=True,
        )
        return step, counts

    def burst(self) -> Burst:
        """A fresh server of ours answers rounds of concurrent large reviews; its RSS before, after each, peak."""
        body = large_review(BURST_BODY_BYTES)
        server = self.server("ours", log_name="ours-burst")
        print(
            f"\nRSS of our server over {BURST_ROUNDS} rounds of {BURST_CONCURRENCY} concurrent "
            f"{len(body):,}-byte reviews:",
            flush=True,
        )
        context = ssl.create_default_context(cafile=str(self.ca_file))
        connections = [
            http.client.HTTPSConnection(LOOPBACK, server.port, context=context, timeout=BURST_TIMEOUT_SECONDS)
            for _ in range(BURST_CONCURRENCY)
        ]
        with server.running(self.body, self.ca_file), ThreadPoolExecutor(BURST_CONCURRENCY) as clients:
            assert server.process is not None
            pid = server.process.pid
            result = Burst(len(body), len(connections), vm_mib(pid, "VmRSS"), shipped_memory_limit() / 2**20)
            print(f"  before: {result.before_mib:.1f} MiB", flush=True)
            errors: Counter[str] = Counter()
            for round_number in range(1, BURST_ROUNDS + 1):
                began = time.monotonic()
                outcomes = burst_round(clients, connections, body)
                result.round_seconds.append(time.monotonic() - began)
                result.correct.append(outcomes.pop("ok", 0))
                errors += outcomes
                time.sleep(BURST_SETTLE_SECONDS)
                result.after_rounds_mib.append(vm_mib(pid, "VmRSS"))
                print(
                    f"  after round {round_number} ({result.round_seconds[-1]:.1f} s, {result.correct[-1]}/"
                    f"{len(connections)} correct): {result.after_rounds_mib[-1]:.1f} MiB"
                    + (f" errors={dict(outcomes)}" if outcomes else ""),
                    flush=True,
                )
            result.peak_mib = vm_mib(pid, "VmHWM")
            result.errors = dict(errors.most_common(3))
            for connection in connections:
                connection.close()
        print(f"  peak (VmHWM) {result.peak_mib:.1f} MiB of the shipped {result.limit_mib:.0f} MiB", flush=True)
        return result

    def log_path(self, name: str) -> Path:
        return self.work / f"{name}.log"

    def calibrate(self, echo: Path) -> list[Step]:
        """What vegeta on its core sustains against a Go server on the other (the client's ceiling)."""
        port = free_port()
        answer = self.work / "answer.json"
        patch = base64.b64encode(orjson.dumps(LABEL_PATCH)).decode()
        uid = orjson.loads(self.body)["request"]["uid"]
        response = {"uid": uid, "allowed": True, "patchType": "JSONPatch", "patch": patch}
        answer.write_bytes(
            orjson.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
        )
        cert, key = self.cert_dir / "tls.crt", self.cert_dir / "tls.key"
        argv = ["taskset", "-c", str(SERVER_CORE), str(echo), f"127.0.0.1:{port}", str(cert), str(key), str(answer)]
        print("\nclient ceiling (vegeta against a Go TLS server answering a canned review):", flush=True)
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        targets = self.targets("echo", port, "/")
        steps = []
        try:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
                time.sleep(0.1)
            for rate in CLIENT_RATES:
                step = self.vegeta.attack(targets, rate, 8.0, 2.0, process.pid)
                print(step.line(), flush=True)
                steps.append(step)
        finally:
            process.terminate()
            process.wait(10)
        return steps

    def profile(self, rate: int, seconds: float = 15.0) -> str:
        """py-spy (on the client core, non-blocking) samples our server while vegeta offers `rate`."""
        server = self.server("ours")
        targets = self.targets("ours-profile", server.port, PATHS["ours"])
        out = self.work / "profile.txt"
        print(f"\nprofiling our server at {rate}/s …", flush=True)
        with server.running(self.body, self.ca_file):
            assert server.process is not None
            pid = server.process.pid
            self.vegeta.attack(targets, rate, 3.0, 0.0, pid)  # warm-up
            spy = subprocess.Popen(
                [
                    "taskset", "-c", str(CLIENT_CORE), str(self.venv / "bin" / "py-spy"), "record",
                    "--pid", str(pid), "--format", "raw", "--output", str(out), "--rate", str(PY_SPY_RATE),
                    "--nonblocking", "--gil", "--duration", str(int(seconds)),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )  # fmt: skip
            time.sleep(0.5)
            cpu_before, began = process_cpu_seconds(pid), time.monotonic()
            step = self.vegeta.attack(targets, rate, seconds, 0.0, pid)
            busy = (process_cpu_seconds(pid) - cpu_before) / (time.monotonic() - began)
            _, error = spy.communicate(timeout=60)
        if not out.exists():
            return f"  py-spy failed: {error.decode(errors='replace').strip()}"
        lines = [
            f"  during: {step.line().strip()}",
            f"  server process CPU: {busy:.0%} of its core",
            summarize_profile(out, int(PY_SPY_RATE * seconds)),
            "  in-process cost of the pieces above HTTP (CPU µs per call, best of 5):",
        ]
        lines += [f"    {micros:7.1f} µs  {name}" for name, micros in breakdown(self.body)]
        return "\n".join(lines)


def markdown(results: list[ServerResult], meta: dict[str, Any]) -> str:
    by_name = {r.name: r for r in results}
    lines = [
        f"{meta['cpu']} ({meta['cores']} cores), Python {meta['python']}, kopf {meta['kopf']}, vegeta "
        f"{meta['vegeta']}, {meta['date']}; 1-min load average {meta['load_before']:.2f} when the run began"
        f" (after waiting {meta['waited']:.0f} s). Request body {meta['body_bytes']} bytes.",
        "",
        "| server (core 0) | p50 @200/s | p99 @200/s | max @200/s | server CPU per request "
        "| sustained (p99 ≤ 10 ms) | p99 there | log lines per request | other work on cores 0/1 @200/s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        best = next((s for s in r.steps if s.rate == r.sustained_rate and s.sustained), None)
        fixed = r.fixed
        cells = [f"{fixed.p50_ms:.2f} ms", f"{fixed.p99_ms:.2f} ms", f"{fixed.max_ms:.1f} ms"] if fixed else ["–"] * 3
        cpu = f"{fixed.server_cpu_ms_per_request:.2f} ms" if fixed else "–"
        there = f"{best.p99_ms:.2f} ms" if best else "–"
        other = f"{fixed.other_on_server_core:.0%} / {fixed.other_on_client_core:.0%}" if fixed else "–"
        lines.append(
            f"| {TITLES.get(r.name, r.name)} | {' | '.join(cells)} | {cpu} | {r.sustained_text} | {there} "
            f"| {r.log_lines_per_request:.2f} | {other} |"
        )
    disturbed = [f"{r.name} at {s.rate}/s" for r in results for s in r.steps if s.disturbed]
    if disturbed:
        lines.append(
            f"\nLadder steps still disturbed by other work (> {DISTURBED:.0%} of a core): {', '.join(disturbed)}."
        )
    for step in meta.get("client_ceiling", []):
        lines.append(
            f"\nClient ceiling: vegeta (core 1) against a Go TLS server (core 0) at {step['rate']}/s: "
            f"p50 {step['p50_ms']:.2f} ms, p99 {step['p99_ms']:.2f} ms, sent {step['sent_rate']:.0f}/s."
        )
    ours = by_name.get("ours")
    if ours:
        lines.append("")
        if ours.fixed:
            verdict = "met" if ours.fixed.p99_ms <= 3.0 else "MISSED"
            lines.append(f"- target p99 ≤ 3 ms at 200/s: {ours.fixed.p99_ms:.2f} ms — {verdict}")
        for mine in ("ours", *WHAT_IF):
            if mine not in by_name:
                continue
            for other, target in (("kopf", 3.0), ("kopf-quiet", 1.5), ("stdlib", None)):
                if other in by_name and by_name[other].sustained_rate:
                    ratio = by_name[mine].sustained_rate / by_name[other].sustained_rate
                    goal = f" (target ≥ {target}×: {'met' if ratio >= target else 'MISSED'})" if target else ""
                    goal = goal if mine == "ours" else ""
                    at_least = "≥ " if by_name[mine].sustained_rate == LADDER[-1] else ""
                    lines.append(f"- sustained rate, {TITLES[mine]} / {TITLES[other]}: {at_least}{ratio:.2f}×{goal}")
        if ours.fixed and ours.crowded and ours.crowd:
            lines += crowd_lines(ours.fixed, ours.crowded, ours.crowd)
        if ours.burst:
            lines += burst_lines(ours.burst)
    return "\n".join(lines)


def crowd_lines(unloaded: Step, crowded: Step, crowd: CrowdCounts) -> list[str]:
    """Our server at the fixed rate, alone and under idle and slow connections, with the ratio of the p99s."""
    size = crowd.size
    lines = [
        "",
        f"| {TITLES['ours']} (core 0) @{unloaded.rate}/s | p50 | p99 | max | server CPU per request "
        "| other work on cores 0/1 |",
        "|---|---|---|---|---|---|",
    ]
    for title, step in (
        ("unloaded", unloaded),
        (f"under {size['idle']:,} idle + {size['slow-tls']} slow-TLS + {size['slow-hello']} slow-ClientHello", crowded),
    ):
        lines.append(
            f"| {title} | {step.p50_ms:.2f} ms | {step.p99_ms:.2f} ms | {step.max_ms:.1f} ms "
            f"| {step.server_cpu_ms_per_request:.2f} ms | {step.other_on_server_core:.0%} / "
            f"{step.other_on_client_core:.0%} |"
        )
    ratio = crowded.p99_ms / unloaded.p99_ms
    verdict = "met" if ratio <= CROWD_P99_RATIO else "MISSED"
    fewest = " / ".join(f"{crowd.fewest_open[kind]:,}" for kind in size)
    cuts = sum(crowd.cut_and_reopened.values())
    lines += [
        "",
        f"- held open from core 1, loopback (fewest open at once, idle / slow-TLS / slow-ClientHello: {fewest}; "
        f"slow ones send a byte every {TRICKLE_SECONDS:.0f} s); the server cut {cuts:,} at its deadlines over "
        f"{crowd.seconds:.0f} s, each reopened at once ({crowd.cuts_per_second:.0f}/s); {crowd.failed_opens} "
        f"failed opens; {crowded.valid:.2%} of the reviews answered correctly",
        f"- p99 under idle and slow connections / unloaded p99: {ratio:.2f}× "
        f"(target ≤ {CROWD_P99_RATIO:.0f}×: {verdict})",
    ]
    return lines


def burst_lines(burst: Burst) -> list[str]:
    """Our server's VmRSS over the rounds of large reviews, next to the chart's memory limit."""
    rounds = len(burst.after_rounds_mib)
    after = " | ".join(f"{mib:.1f} MiB" for mib in burst.after_rounds_mib)
    if not burst.all_correct:
        verdict = "NOT SHOWN: not every review was answered"
    else:
        verdict = "met" if burst.peak_mib < burst.limit_mib else "MISSED"
    correct = " / ".join(f"{n}/{burst.concurrency}" for n in burst.correct)
    errors = f" (errors: {burst.errors})" if burst.errors else ""
    return [
        "",
        f"| {TITLES['ours']}: VmRSS, {rounds} rounds × {burst.concurrency} concurrent {burst.body_bytes:,}-byte "
        "reviews "
        f"| before | {' | '.join(f'after round {n}' for n in range(1, rounds + 1))} | peak (VmHWM) "
        "| shipped limit (values.yaml) |",
        "|---" * (rounds + 4) + "|",
        f"| fresh server process | {burst.before_mib:.1f} MiB | {after} | {burst.peak_mib:.1f} MiB "
        f"({burst.peak_mib / burst.limit_mib:.0%}) | {burst.limit_mib:.0f} MiB |",
        "",
        f"- answers correct per round: {correct}{errors}; rounds took "
        f"{' / '.join(f'{seconds:.1f}' for seconds in burst.round_seconds)} s (client timeout "
        f"{BURST_TIMEOUT_SECONDS:.0f} s); RSS read {BURST_SETTLE_SECONDS:.0f} s after each round's last answer",
        f"- peak RSS below the shipped memory limit: {verdict}",
    ]


def add_load_flags(parser: argparse.ArgumentParser) -> None:
    """The load and quiet-machine flags of every admission benchmark built on this file's method."""
    parser.add_argument("--fixed-rate", type=int, default=200)
    parser.add_argument("--fixed-seconds", type=float, default=30.0)
    parser.add_argument("--fixed-warmup", type=float, default=5.0)
    parser.add_argument("--step-seconds", type=float, default=10.0)
    parser.add_argument("--step-warmup", type=float, default=2.0)
    parser.add_argument("--bisect", type=int, default=2)
    parser.add_argument("--max-load", type=float, default=0.8)
    parser.add_argument("--max-wait", type=float, default=900.0)
    parser.add_argument("--retries", type=int, default=2, help="repeats of a measurement disturbed by other work")
    parser.add_argument("--quiet-budget", type=float, default=240.0, help="seconds, in all, to wait for quiet cores")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command")
    for command in ("serve-ours", "serve-stdlib"):
        serve = sub.add_parser(command)
        serve.add_argument("--port", type=int, required=True)
        serve.add_argument("--cert-dir", type=Path, required=True)
        serve.add_argument("--handler", choices=sorted(HANDLERS), default="ours")
    parser.add_argument("--servers", default="ours,kopf,kopf-quiet,stdlib")
    add_load_flags(parser)
    parser.add_argument("--skip-calibration", action="store_true")
    parser.add_argument("--skip-ladder", action="store_true", help="no sustained-rate ladder (a quick run)")
    parser.add_argument("--skip-idle", action="store_true", help="ours: no run under idle and slow connections")
    parser.add_argument("--skip-burst", action="store_true", help="ours: no RSS over bursts of large reviews")
    parser.add_argument("--profile", action="store_true", help="py-spy our server under load afterwards")
    parser.add_argument("--what-if", action="store_true", help=f"also measure our server with {', '.join(WHAT_IF)}")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    if args.command == "serve-ours":
        serve_ours(args.port, args.cert_dir, args.handler)
        return 0
    if args.command == "serve-stdlib":
        serve_stdlib(args.port, args.cert_dir)
        return 0
    return benchmark(args)


def benchmark(args: argparse.Namespace) -> int:
    names = [name.strip() for name in args.servers.split(",") if name.strip()]
    if args.what_if:
        names += [name for name in WHAT_IF if name not in names]
    if unknown := set(names) - set(PATHS):
        raise SystemExit(f"unknown servers: {sorted(unknown)}")
    if (os.cpu_count() or 1) < 2:
        raise SystemExit("needs two cores: one for the server, one for the load generator")
    _WaitBudget.seconds = args.quiet_budget
    os.sched_setaffinity(0, {CLIENT_CORE})  # this script and what it spawns (envtest) stay off the server core
    # Stopped by a signal (even when started in the background, where SIGINT is ignored): clean up on the way out.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    if "ours" in names and not args.skip_idle:
        ensure_descriptors(IDLE_CLIENTS + SLOW_TLS_CLIENTS + SLOW_HELLO_CLIENTS + VEGETA_CONNECTIONS + 1024)
    vegeta_binary, vegeta_version = ensure_vegeta()
    echo_binary = ensure_echo_server()
    venv, kopf_version = BENCH_VENV, "–"  # the bench venv only when kopf or py-spy is needed
    if args.profile or any(name.startswith("kopf") for name in names):
        venv, kopf_version = ensure_bench_venv()
    meta: dict[str, Any] = {
        "cpu": cpu_model(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "kopf": kopf_version,
        "vegeta": vegeta_version,
        "date": datetime.date.today().isoformat(),
    }
    profile = ""
    with tempfile.TemporaryDirectory(prefix="ballast-bench-webhook-") as tmp:
        bench = Bench(args, Path(tmp), vegeta_binary, venv)
        meta["body_bytes"] = len(bench.body)
        print(
            f"{meta['cpu']} × {meta['cores']}, Python {meta['python']}, kopf {kopf_version}, "
            f"vegeta {vegeta_version}; AdmissionReview {len(bench.body)} bytes",
            flush=True,
        )
        if any(name.startswith("kopf") for name in names):
            print("starting envtest (kopf needs an API server for its discovery) …", flush=True)
            from ballast.runtime.envtest import Environment  # noqa: PLC0415 - not in the servers

            bench.env = Environment(network_mode="loopback")
            bench.env.start()
        try:
            print(f"waiting for a 1-minute load average below {args.max_load} …", flush=True)
            meta["load_before"], meta["waited"] = wait_for_quiet_machine(args.max_load, args.max_wait)
            print(f"  load {meta['load_before']:.2f} after {meta['waited']:.0f} s", flush=True)
            began = time.monotonic()
            if not args.skip_calibration:
                meta["client_ceiling"] = [asdict(step) for step in bench.calibrate(echo_binary)]
            results = [bench.measure(name) for name in names]
            meta["seconds"] = round(time.monotonic() - began)
            if args.profile and "ours" in names:
                profile = bench.profile(max(next(r for r in results if r.name == "ours").sustained_rate, 200))
        finally:
            if bench.env is not None:
                bench.env.stop()
    report(args, meta, results, profile)
    return 0


def report(args: argparse.Namespace, meta: dict[str, Any], results: list[ServerResult], profile: str) -> None:
    print("\n" + markdown(results, meta))
    if profile:
        print("\nProfile of our server (py-spy):\n" + profile)
    print(f"\nmeasured in {meta['seconds']} s (not counting the wait for a quiet machine)")
    if args.json:
        servers = [{**asdict(r), "sustained_rate": r.sustained_rate} for r in results]
        args.json.write_text(json.dumps({"meta": meta, "servers": servers, "profile": profile}, indent=2))


if __name__ == "__main__":
    sys.exit(main())
