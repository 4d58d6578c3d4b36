"""Scenarios 2 and 3: the framework's informers and workqueue under write load when the watch breaks.

2. kube-apiserver restarted while a writer updates ConfigMaps: the informer relists and re-watches.
3. The informer alone cut off (a proxy between it and the API server) while the writer goes on and etcd is
   compacted, again and again, so its watch resumes from a compacted version (410 Gone) and its relist pages
   expire (410 Expired) — with the watch cache off, so the API server reads etcd's compacted history.

Each asserts the final state, not the absence of an exception: the cache equals a fresh LIST (names and
resourceVersions), the queue is empty, and every object's last version was reconciled.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import urllib3

from ballast.runtime import Builder, CacheScope, Context, Manager, NotFoundError, Request, RESTConfig, Result
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.envtest.wait import poll_until
from tests.e2e.figures import record
from tests.e2e.proxy import CuttableProxy
from tests.unit.internal.runtime.support import running

NAMESPACE = "load"
OBJECTS = 40
CONFIGMAP = "v1/ConfigMap"


class Writer:
    """Updates OBJECTS ConfigMaps round-robin until stopped (bounded by `limit` writes); failures while the API
    server is away are counted, not raised."""

    def __init__(self, env: Environment, limit: int = 20_000) -> None:
        self.env = env
        self.limit = limit
        self.writes = 0
        self.failures = 0
        self.last_write_at = 0.0
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="writer", daemon=True)

    def __enter__(self) -> Writer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        self._thread.join(timeout=30)

    def _run(self) -> None:
        while not self._stopped.is_set() and self.writes < self.limit:
            name = f"cm-{self.writes % OBJECTS}"
            body = {"data": {"n": str(self.writes)}}
            try:
                self.env.rest.request(
                    "PATCH",
                    f"/api/v1/namespaces/{NAMESPACE}/configmaps/{name}",
                    body,
                    content_type="application/merge-patch+json",
                )
                self.writes += 1
                self.last_write_at = time.monotonic()
            except (APIError, urllib3.exceptions.HTTPError):  # the API server is down on purpose: count, go on
                self.failures += 1
                time.sleep(0.05)


class Reconciled:
    """The resourceVersion each reconcile saw in the cache, per object."""

    def __init__(self) -> None:
        self.versions: dict[str, str] = {}
        self.count = 0
        self.controller: Any = None
        self.lock = threading.Lock()

    def reconcile(self, manager: Manager) -> Any:
        def reconcile(ctx: Context, request: Request) -> Result | None:
            with contextlib.suppress(NotFoundError):  # deleted meanwhile: nothing to record
                obj = manager.client.get(CONFIGMAP, request.name, request.namespace)
                with self.lock:
                    self.versions[request.name] = obj["metadata"]["resourceVersion"]
                    self.count += 1
            return None

        return reconcile


def seed(env: Environment) -> None:
    with contextlib.suppress(APIError):
        env.rest.create(
            "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        )
    for index in range(OBJECTS):
        with contextlib.suppress(APIError):
            env.rest.create(
                f"/api/v1/namespaces/{NAMESPACE}/configmaps",
                {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{index}"}, "data": {"n": "0"}},
            )


def fresh_list(env: Environment) -> dict[str, str]:
    items = env.rest.get(f"/api/v1/namespaces/{NAMESPACE}/configmaps")["items"]
    return {item["metadata"]["name"]: item["metadata"]["resourceVersion"] for item in items}


def cached(manager: Manager) -> dict[str, str]:
    items = manager.cache.list(CONFIGMAP, namespace=NAMESPACE)
    return {item["metadata"]["name"]: item["metadata"]["resourceVersion"] for item in items}


def new_manager(config: RESTConfig, reconciled: Reconciled, *, page_size: int | None = None) -> Manager:
    scope = CacheScope(namespace=NAMESPACE, page_size=page_size)
    manager = Manager(config, field_owner="relist-tests", cache_by_kind={CONFIGMAP: scope})
    reconciled.controller = Builder(manager).for_(CONFIGMAP).named("relist").complete(reconciled.reconcile(manager))
    return manager


def newest(versions: dict[str, str]) -> int:
    # resourceVersions are opaque to clients; etcd's are revisions, which is all this test relies on
    return max((int(v) for v in versions.values()), default=0)


def settle(env: Environment, manager: Manager, reconciled: Reconciled) -> None:
    """Wait until the cache equals a fresh LIST, every object's last version was reconciled, the queue is empty."""

    def converged() -> bool:
        listed = fresh_list(env)
        with reconciled.lock:
            done = dict(reconciled.versions)
        return cached(manager) == listed and done == listed and len(reconciled.controller.queue) == 0

    def difference() -> str:
        listed, in_cache = fresh_list(env), cached(manager)
        stale = sorted(name for name in listed if in_cache.get(name) != listed[name])
        with reconciled.lock:
            unreconciled = sorted(name for name in listed if reconciled.versions.get(name) != listed[name])
        return f"stale in cache: {stale}; last version not reconciled: {unreconciled}"

    poll_until(converged, timeout=30, what="cache == LIST and every last version reconciled", last_error=difference)


@pytest.fixture
def plane(request: pytest.FixtureRequest) -> Iterator[Environment]:
    with Environment(apiserver_args=list(getattr(request, "param", ()))) as env:
        seed(env)
        yield env


def test_an_apiserver_restart_under_write_load_loses_no_update(plane: Environment) -> None:
    reconciled = Reconciled()
    manager = new_manager(RESTConfig(plane.client_configuration()), reconciled)
    with running(manager, stop_timeout=30):
        informer = manager.cache.get_informer(CONFIGMAP)
        with Writer(plane) as writer:
            poll_until(lambda: writer.writes >= 200, timeout=30, what="200 writes before the restart")
            breaks_before = informer.watch_restarts + informer.relists
            down = plane.restart_apiserver(down_seconds=2.0)
            back = time.monotonic()
            poll_until(lambda: writer.last_write_at > back, timeout=30, what="a write after the restart")
            mark = newest(fresh_list(plane))
            poll_until(lambda: newest(cached(manager)) >= mark, timeout=30, what="the cache to follow writes again")
            recovery = time.monotonic() - back
            target = writer.writes + 200
            poll_until(lambda: writer.writes >= target, timeout=30, what="200 writes after the restart")
        settle(plane, manager, reconciled)
    assert informer.watch_restarts + informer.relists > breaks_before
    assert writer.failures > 0  # the restart really interrupted the writer
    figures = {"apiserver_ready_seconds": round(down, 2), "relist_recovery_seconds": round(recovery, 2)}
    record("apiserver_restart", {**figures, "writes": writer.writes, "reconciles": reconciled.count})


@pytest.mark.parametrize("plane", [["--watch-cache=false"]], indirect=True)
def test_watch_expiry_from_etcd_compaction_under_write_load_loses_no_update(plane: Environment) -> None:
    proxy = CuttableProxy((plane.host, plane.apiserver_port))
    configuration = plane.client_configuration()
    configuration.host = f"https://{proxy.address}"
    reconciled = Reconciled()
    manager = new_manager(RESTConfig(configuration), reconciled, page_size=5)
    cuts = 3
    try:
        with running(manager, stop_timeout=30):
            informer = manager.cache.get_informer(CONFIGMAP)
            with Writer(plane) as writer:
                poll_until(lambda: writer.writes >= 200, timeout=30, what="200 writes first")
                for _ in range(cuts):
                    proxy.cut()
                    mark = writer.writes
                    poll_until(lambda: writer.writes >= mark + 100, timeout=30, what="100 writes while cut off")  # noqa: B023
                    plane.compact_etcd()  # the informer's version is history now
                    proxy.resume()
                    # Keep compacting while it comes back, so relists from an old version are refused too.
                    for _ in range(20):
                        plane.compact_etcd()
                        time.sleep(0.05)
                    poll_until(lambda: newest(cached(manager)) >= newest(fresh_list(plane)) - 50, timeout=60,
                               what="the informer to follow again")  # fmt: skip
            settle(plane, manager, reconciled)
    finally:
        proxy.stop()
    # Each cut left the informer's version compacted, so each cost a relist. Most announce themselves with a 410;
    # a watch opened while etcd compacts its previous revision can get a 500 ("etcd event received with
    # PrevKv=nil") from the API server instead, and the informer relists just the same.
    assert informer.relists >= cuts, (informer.expired, informer.relists)
    assert informer.expired >= 1, (informer.expired, informer.relists)
    record("watch_expiry", {"cuts": cuts, "expired_410": informer.expired, "relists": informer.relists,
                            "writes": writer.writes, "reconciles": reconciled.count})  # fmt: skip
