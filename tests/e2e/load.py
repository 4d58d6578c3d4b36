"""Admission load through the API server: enrolled pod CREATEs at a steady rate, as `dryRun=All` so every one
goes through the webhooks (they declare `sideEffects: None`) while nothing is stored and nothing is scheduled —
the webhook is measured, not etcd or two cores of kwok.

`AdmissionLoad` sends from Python threads of the test process; `GoAdmissionLoad` runs hack/admission-load, a Go
program outside the GIL, for rates that threads sharing the test's cores cannot offer (200/s in tests/load)."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson
import urllib3

from ballast.internal.enrollment import MODE_LABEL
from ballast.runtime.envtest import Environment
from tests.e2e.support import admin_pool
from tests.tools import installed_tool

ADMISSION_LOAD_BINARY = "BALLAST_ADMISSION_LOAD"
"""The environment variable naming an admission-load binary to use instead of hack/setup-admission-load's."""


class AdmissionLoad:
    """`rate` dry-run pod CREATEs per second in `namespace`, spread over `workers` threads, until stopped.

    Each answer that is not 201 is a failure, kept with its status and message; `latencies` holds every call's
    seconds. Bounded: it stops by itself after `limit` requests.
    """

    def __init__(
        self, env: Environment, namespace: str, *, rate: float = 200.0, workers: int = 8, limit: int = 100_000
    ) -> None:
        self.env = env
        self.namespace = namespace
        self.rate = rate
        self.workers = workers
        self.limit = limit
        self.sent = 0
        self.failures: list[tuple[int, str]] = []
        self.latencies: list[float] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(workers)]
        self.started = 0.0
        self.elapsed = 0.0

    def __enter__(self) -> AdmissionLoad:
        self.started = time.monotonic()
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        for thread in self._threads:
            thread.join(timeout=30)
        self.elapsed = time.monotonic() - self.started

    @property
    def failed(self) -> int:
        return len(self.failures)

    def p99(self) -> float:
        ordered = sorted(self.latencies)
        return ordered[int(0.99 * (len(ordered) - 1))] if ordered else 0.0

    def _body(self) -> bytes:
        pod: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "generateName": "load-",
                "namespace": self.namespace,
                "labels": {"app.kubernetes.io/name": "load", "app.kubernetes.io/component": "api", MODE_LABEL: "apply"},
            },
            "spec": {
                "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10",
                                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}],
            },
        }  # fmt: skip
        return orjson.dumps(pod)

    def _run(self, worker: int) -> None:
        http = admin_pool(self.env)
        url = f"{self.env.server}/api/v1/namespaces/{self.namespace}/pods?dryRun=All"
        interval = self.workers / self.rate
        next_at = time.monotonic() + worker * (interval / self.workers)
        while not self._stopped.is_set():
            with self._lock:
                if self.sent >= self.limit:
                    return
                self.sent += 1
            began = time.monotonic()
            try:
                answer = http.request("POST", url, body=self._body(), headers={"Content-Type": "application/json"})
                status, message = answer.status, answer.data[:300].decode(errors="replace")
            except urllib3.exceptions.HTTPError as exc:  # a refused or cut connection is a failed admission too
                status, message = 0, str(exc)
            took = time.monotonic() - began
            with self._lock:
                self.latencies.append(took)
                if status != 201:
                    self.failures.append((status, message))
            next_at += interval
            delay = next_at - time.monotonic()
            if delay > 0:
                self._stopped.wait(delay)
            else:
                next_at = time.monotonic()  # behind: do not burst to catch up


COMPONENTS = ("kube-apiserver", "etcd", "kwok", "metrics-server", "kube-scheduler", "kube-controller-manager")


def component_cpu_seconds() -> dict[str, float]:
    """CPU seconds (user + system) spent so far by each mini-cluster component and by every `ballastd`, summed over
    their processes, from /proc: the difference of two readings says where the cores went in between."""
    ticks = os.sysconf("SC_CLK_TCK")
    spent: dict[str, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            program = Path(argv[0].decode(errors="replace")).name
            component = program if program in COMPONENTS else None
            if component is None and b"ballast.internal.cmd.ballastd" in argv:
                component = "ballastd"
            if component is not None:
                spent[component] = spent.get(component, 0.0) + cpu_ticks(int(entry.name)) / ticks
        except OSError:  # exited meanwhile
            continue
    return spent


def cpu_ticks(pid: int) -> int:
    """User + system CPU time of `pid` so far, in clock ticks (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))


def admission_load_binary() -> Path:
    """$BALLAST_ADMISSION_LOAD, else what hack/setup-admission-load cached (`make admission-load`; never built from a
    test): skipped when missing, failed under CI=true."""
    return installed_tool("admission-load", "setup-admission-load", ADMISSION_LOAD_BINARY)


@dataclass(frozen=True)
class LoadResult:
    """hack/admission-load's closing JSON document; latencies in seconds (the program prints milliseconds)."""

    sent: int
    failed: int
    failures: list[tuple[int, str]]  # the first 20, (status, message); status 0 is a connection error
    p50: float
    p90: float
    p99: float
    max: float
    elapsed: float
    rate_per_second: float
    late: int  # slots not sent on time (a late tick, or the concurrency bound reached), skipped
    max_in_flight: int
    protocol: str  # of the answers, "HTTP/2.0" when the API server took HTTP/2

    @classmethod
    def parse(cls, text: str) -> LoadResult:
        document = orjson.loads(text)
        latencies = document["latencies_ms"]
        return cls(
            sent=int(document["sent"]),
            failed=int(document["failed"]),
            failures=[(int(f["status"]), str(f["message"])) for f in document["failures"]],
            p50=latencies["p50"] / 1e3,
            p90=latencies["p90"] / 1e3,
            p99=latencies["p99"] / 1e3,
            max=latencies["max"] / 1e3,
            elapsed=float(document["elapsed_seconds"]),
            rate_per_second=float(document["rate_per_second"]),
            late=int(document["late"]),
            max_in_flight=int(document.get("max_in_flight", 0)),
            protocol=str(document.get("protocol", "")),
        )


class GoAdmissionLoad:
    """`rate` dry-run pod CREATEs per second in `namespace` from hack/admission-load, started on entering.

    Open loop: a request that could not start on time is counted in `late`, never sent in a burst later. It
    stops by itself after `limit` requests or `duration` seconds (`wait()` waits for that), else when the block
    exits; then `sent`, `failed`, `failures` (the first 20), `p99()`, `elapsed` and `rate_per_second` are the
    program's. While it runs, `sent` follows its progress lines (one a second). At most `concurrency` requests are
    in flight; every one goes over one HTTP/2 connection with the admin's client certificate.
    """

    def __init__(
        self,
        env: Environment,
        namespace: str,
        *,
        rate: float = 200.0,
        concurrency: int = 64,
        limit: int | None = None,
        duration: float | None = None,
        binary: Path | None = None,
    ) -> None:
        self.env = env
        self.namespace = namespace
        self.rate = rate
        self.concurrency = concurrency
        self.limit = limit
        self.duration = duration
        self.binary = binary
        self.result: LoadResult | None = None
        self.stderr: list[str] = []  # what the program said that was not a progress line
        self._progress = 0
        self._process: subprocess.Popen[str] | None = None
        self._reader: threading.Thread | None = None

    def argv(self, binary: Path) -> list[str]:
        admin = self.env.admin
        argv = [
            str(binary), f"-server={self.env.server}", f"-namespace={self.namespace}", f"-ca={admin.ca_file}",
            f"-cert={admin.cert_file}", f"-key={admin.key_file}", f"-rate={self.rate}",
            f"-concurrency={self.concurrency}", "-stop-on-stdin-eof",
        ]  # fmt: skip
        if self.limit is not None:
            argv.append(f"-limit={self.limit}")
        if self.duration is not None:
            argv.append(f"-duration={self.duration}s")
        return argv

    def __enter__(self) -> GoAdmissionLoad:
        binary = self.binary or admission_load_binary()
        # stdin stays open while we run: if this process dies, the program sees its end and stops.
        self._process = subprocess.Popen(
            self.argv(binary), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        assert self._process.stderr is not None
        self._reader = threading.Thread(target=self._read_stderr, args=(self._process.stderr,), daemon=True)
        self._reader.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _read_stderr(self, stream: IO[str]) -> None:
        for line in stream:
            if line.startswith('{"sent":'):
                self._progress = int(orjson.loads(line)["sent"])
            else:
                self.stderr.append(line.rstrip("\n"))

    def wait(self, timeout: float | None = None) -> LoadResult:
        """Wait for the program to stop by itself (after `limit` or `duration`) and return its figures."""
        return self._finish(stop=False, timeout=timeout)

    def stop(self, timeout: float = 60.0) -> LoadResult:
        """Stop offering load, wait for the requests in flight, and return the figures."""
        return self._finish(stop=True, timeout=timeout)

    def _finish(self, *, stop: bool, timeout: float | None) -> LoadResult:
        if self.result is not None:
            return self.result
        process = self._process
        assert process is not None, "the load was never started"
        assert process.stdin is not None
        assert process.stdout is not None
        if stop:
            process.stdin.close()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
        finally:
            process.stdin.close()
        out = process.stdout.read()  # one line, written as it exits: the pipe's buffer holds it
        process.stdout.close()
        if self._reader is not None:
            self._reader.join(timeout=10)
        said = "\n".join(self.stderr[-20:])
        if process.returncode != 0 or not out.strip():
            raise RuntimeError(f"admission-load exited {process.returncode}: {said}")
        self.result = LoadResult.parse(out.strip().splitlines()[-1])
        return self.result

    def _done(self) -> LoadResult:
        assert self.result is not None, "the figures are read once the load has stopped (wait, stop or exit)"
        return self.result

    @property
    def sent(self) -> int:
        return self.result.sent if self.result is not None else self._progress

    @property
    def failed(self) -> int:
        return self._done().failed

    @property
    def failures(self) -> list[tuple[int, str]]:
        return self._done().failures

    @property
    def late(self) -> int:
        return self._done().late

    @property
    def elapsed(self) -> float:
        return self._done().elapsed

    @property
    def rate_per_second(self) -> float:
        return self._done().rate_per_second

    def p99(self) -> float:
        return self._done().p99
