"""Admission load through the API server: enrolled pod CREATEs at a steady rate, as `dryRun=All` so every one
goes through the webhooks (they declare `sideEffects: None`) while nothing is stored and nothing is scheduled —
the webhook is measured, not etcd or two cores of kwok."""

from __future__ import annotations

import threading
import time
from typing import Any

import orjson
import urllib3

from ballast.internal.enrollment import MODE_LABEL
from ballast.internal.runtime.envtest import Environment
from tests.e2e.support import admin_pool


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
