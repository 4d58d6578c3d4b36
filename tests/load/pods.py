"""Pods for the load suite: bodies bound to a kwok Node by `nodeName` (the scheduler is not what is measured),
created many at a time, and counted once Running."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import orjson
import urllib3

from ballast.runtime.envtest import Environment
from tests.e2e.support import PAUSE_IMAGE, admin_pool


def pod(name: str, namespace: str, node: str, labels: dict[str, str], cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {
            "nodeName": node,
            "containers": [{"name": "app", "image": PAUSE_IMAGE,
                            "resources": {"requests": {"cpu": cpu, "memory": "16Mi"}}}],
            "tolerations": [{"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}],
        },
    }  # fmt: skip


def create_all(env: Environment, pods: Sequence[dict[str, Any]], workers: int = 16) -> None:
    """CREATE every pod, `workers` at a time; any answer but 201 fails the test with its message."""
    local = threading.local()

    def create(body: dict[str, Any]) -> None:
        if not hasattr(local, "http"):
            local.http = admin_pool(env, timeout=60.0, retries=urllib3.Retry(connect=3, read=0, status=0))
        namespace = body["metadata"]["namespace"]
        answer = local.http.request(
            "POST", f"{env.server}/api/v1/namespaces/{namespace}/pods", body=orjson.dumps(body),
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        assert answer.status == 201, f"{namespace}/{body['metadata']['name']}: {answer.status} {answer.data[:300]!r}"

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(create, pods))


def count_running(env: Environment, namespaces: Sequence[str]) -> int:
    running = 0
    for namespace in namespaces:
        continue_ = ""
        while True:
            params = {"limit": "2000", "fieldSelector": "status.phase=Running"}
            if continue_:
                params["continue"] = continue_
            page = env.rest.get(f"/api/v1/namespaces/{namespace}/pods", params)
            running += len(page["items"])
            continue_ = page["metadata"].get("continue", "")
            if not continue_:
                break
    return running
