"""The manager: runs caches, controllers, servers and any runnable, with leader election (controller-runtime's
`manager`).

    manager = Manager(RESTConfig.load(), health_probe_bind_address=":8081")
    Builder(manager).for_("v1/ConfigMap").complete(ConfigMapCounter(manager.client))
    manager.start()          # blocks until SIGTERM / manager.stop(); raises if a runnable failed

Start order (as controller-runtime): HTTP servers (metrics, health) → webhook servers → caches (wait for sync)
→ runnables that do not need leadership → leader election → leader-only runnables once elected (at once when
election is off). Stop order is the reverse, bounded by `graceful_shutdown_timeout`. A runnable is an object
with `start(stop: threading.Event)` that blocks until `stop` is set; it runs on every replica when its
`need_leader_election()` returns False, otherwise only on the leader.

Leadership lost (as controller-runtime): leader-only runnables run inside `rest.cancellable(...)`, which is set
at once, so their client calls raise `CanceledError` from that moment (controllers carry it into their
workers); the manager then stops without waiting for leader-only work — only the webhook and health servers
drain — and `start()` raises `ManagerError("leader election lost")`.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Protocol

from .apierrors import said_in_full
from .cache import Cache, CacheScope, DelegatingClient
from .client import APIServerClient, KindRef
from .clock import Clock, RealClock
from .healthz import Check, Checks, handler_for, ping
from .httpserver import QuietHTTPServer
from .leaderelection import SERVICE_ACCOUNT_NAMESPACE_FILE, LeaderElectionConfig, LeaseLeaderElector, namespace_in_pod
from .log import Logger, get_logger
from .metricsserver import MetricsServer, MetricsServerOptions
from .recorder import EventRecorder
from .rest import RESTConfig, Transport, cancellable
from .scheme import Scheme

DEFAULT_GRACEFUL_SHUTDOWN = 30.0


class Runnable(Protocol):
    def start(self, stop: threading.Event) -> None: ...


def needs_leader_election(runnable: object) -> bool:
    """controller-runtime's rule: runnables that don't say otherwise run only on the leader."""
    method = getattr(runnable, "need_leader_election", None)
    return bool(method()) if callable(method) else True


class LeaderElector(Protocol):
    """What the manager needs from leader election: `LeaseLeaderElector` (a Lease, renewed from a thread) and
    `ProcessLeaderElector` (the same, renewed from a child process) implement it."""

    def run(
        self, stop: threading.Event, on_started_leading: Callable[[], None], on_stopped_leading: Callable[[], None]
    ) -> None: ...


class ManagerError(RuntimeError):
    """A runnable failed (or the lease was lost); the manager stopped."""


@dataclass
class _Group:
    """Runnables that start and stop together, each on its own thread."""

    name: str
    stop: threading.Event = field(default_factory=threading.Event)
    # Set only when the group's work must stop acting at once (leadership lost), not on a graceful stop.
    cancel: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)


def _split_address(address: str) -> tuple[str, int] | None:
    """`:8080` / `127.0.0.1:0` / `0` → (host, port); "0" or "" disables the server."""
    if address in ("", "0"):
        return None
    host, _, port = address.rpartition(":")
    return host, int(port)


class _Server:
    """A threaded HTTP server as a runnable (health probes, metrics)."""

    def __init__(self, name: str, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        self.name = name
        self._server = QuietHTTPServer(address, handler)
        self.port: int = self._server.server_address[1]

    def need_leader_election(self) -> bool:
        return False

    def start(self, stop: threading.Event) -> None:
        thread = threading.Thread(target=self._server.serve_forever, name=f"{self.name}-server", daemon=True)
        thread.start()
        stop.wait()
        self._server.shutdown()
        self._server.server_close()
        thread.join(5)


def _required_id(leader_election_id: str) -> str:
    if not leader_election_id:
        raise ValueError("leader_election=True needs a leader_election_id: the name of the Lease the replicas share")
    return leader_election_id


def _elector(
    config: RESTConfig | None,
    client: APIServerClient,
    settings: LeaderElectionConfig,
    *,
    in_process: bool,
    clock: Clock | None,
) -> LeaderElector:
    if in_process:
        return LeaseLeaderElector(client, settings, clock=clock)
    if config is None:
        raise ValueError(
            "the child-process leader elector connects on its own and needs a RESTConfig: pass the manager a config, "
            "or leader_election_in_process=True"
        )
    # Imported on use: the child-process elector loads multiprocessing plumbing few tools need.
    from .leaderelection_process import ProcessLeaderElector  # noqa: PLC0415

    return ProcessLeaderElector(config, settings)


class Manager:
    """Owns the shared cache and client and runs every runnable with the right lifecycle (controller-runtime's
    `manager.Manager`; its `GetClient()`, `GetCache()`, `GetAPIReader()`, `GetScheme()` are attributes here).

    Attributes:
        client: what reconcilers use (`GetClient()`): reads from the shared cache (`get`, `list` with indexes),
            writes straight to the API server; kinds in `uncached` are read live. An `interfaces.Client`.
        cache: the shared informer cache (`GetCache()`): `get_informer`, `index_field` (add indexes before
            `start()`), `get`/`list` (`interfaces.Reader`), `wait_for_sync`.
        api_reader: the API server client itself (`GetAPIReader()`, an `APIServerClient`): uncached,
            consistent reads — paging with `limit`/`continue_`, no indexes — and the writes behind `client`.
        scheme: the registry of model types and their GroupVersionKinds (`GetScheme()`), shared by every client.
        clock: the clock of the cache, the controllers and the leader election (a `FakeClock` in tests).
        logger: the manager's `log.Logger` (`GetLogger()`).
        healthz, readyz: the `/healthz` and `/readyz` checks (`ping` and `cache-sync` are added).
        elected: set once this replica leads (or at once when leader election is off).
    """

    def __init__(
        self,
        config: RESTConfig | None = None,
        *,
        client: APIServerClient | None = None,
        scheme: Scheme | None = None,
        field_owner: str | None = None,
        cache_by_kind: Mapping[KindRef, CacheScope] | None = None,
        uncached: Iterable[KindRef] = (),
        metrics_bind_address: str = "0",
        metrics_secure: bool = False,
        metrics_server_options: MetricsServerOptions | None = None,
        health_probe_bind_address: str = "0",
        leader_elector: LeaderElector | None = None,
        leader_election: bool = False,
        leader_election_id: str = "",
        leader_election_namespace: str | None = None,
        leader_election_release_on_cancel: bool = False,
        leader_election_in_process: bool = False,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        service_account_namespace_file: str | Path = SERVICE_ACCOUNT_NAMESPACE_FILE,
        graceful_shutdown_timeout: float = DEFAULT_GRACEFUL_SHUTDOWN,
        clock: Clock | None = None,
        logger: Logger | None = None,
    ) -> None:
        """Leader election, as controller-runtime's `manager.Options`: `leader_election=True` with a
        `leader_election_id` (the Lease's name) holds that Lease in `leader_election_namespace` — by default the
        namespace of the pod, read from `service_account_namespace_file`; outside a pod without the option,
        start-up fails naming the file. `lease_duration`, `renew_deadline`, `retry_period` and
        `leader_election_release_on_cancel` are client-go's settings. The election runs in a child interpreter
        (`ProcessLeaderElector`), so renewals never wait on this process's GIL (a busy informer decoding a large
        list held an in-process renewal up to 2.4 s); `leader_election_in_process=True` runs it on a thread here
        (`LeaseLeaderElector`) instead. `leader_elector=` takes any elector of your own; not with
        `leader_election`."""
        if client is None:
            if config is None:
                config = RESTConfig.load()
            client = APIServerClient(Transport(config), scheme=scheme, field_owner=field_owner)
        if leader_election:
            if leader_elector is not None:
                raise ValueError("pass leader_election=True or a leader_elector of your own, not both")
            leader_elector = _elector(
                config or getattr(client.transport, "config", None),
                client,
                LeaderElectionConfig(
                    name=_required_id(leader_election_id),
                    namespace=leader_election_namespace or namespace_in_pod(service_account_namespace_file),
                    lease_duration=lease_duration,
                    renew_deadline=renew_deadline,
                    retry_period=retry_period,
                    release_on_cancel=leader_election_release_on_cancel,
                ),
                in_process=leader_election_in_process,
                clock=clock,
            )
        self.api_reader = client
        self.scheme = client.scheme
        self.clock = clock or RealClock()
        self.logger = logger or get_logger("ballast.runtime.manager")
        self.cache = Cache(client, by_kind=cache_by_kind, clock=self.clock)
        self.client = DelegatingClient(self.cache, client, uncached)
        self.graceful_shutdown_timeout = graceful_shutdown_timeout
        self._leader_elector = leader_elector
        self._runnables: list[Runnable] = []
        self._webhooks: list[Runnable] = []
        self.healthz = Checks()
        self.readyz = Checks()
        self.healthz.add("ping", ping)
        self.readyz.add("cache-sync", self._cache_synced)
        self._servers: list[_Server | MetricsServer] = []
        self._metrics_address = _split_address(metrics_bind_address)
        self._metrics_options = metrics_server_options or MetricsServerOptions()
        if metrics_secure:
            self._metrics_options = replace(self._metrics_options, secure=True)
        self._health_address = _split_address(health_probe_bind_address)
        self._stop = threading.Event()
        self._errors: list[BaseException] = []
        self._errors_lock = threading.Lock()
        self.elected = threading.Event()
        self._recorders: dict[str, EventRecorder] = {}
        self.controller_names: set[str] = set()
        self._started = False
        self._others: _Group | None = None  # set once runnables that need no leader are running
        self._runnables_lock = threading.Lock()

    # ----------------------------------------------------------------------------------- registration

    def add(self, runnable: Runnable) -> None:
        """Add a runnable (controllers, servers, your own objects with `start(stop)`)."""
        with self._runnables_lock:
            if self._started and needs_leader_election(runnable):
                raise RuntimeError("leader-only runnables must be added before the manager starts")
            self._runnables.append(runnable)
            if self._others is not None and not self._others.stop.is_set():
                self._launch(self._others, runnable)  # added while running: start it now

    def add_webhook_server(self, server: Runnable) -> None:
        """Add a webhook server: started before caches (conversion webhooks must answer first), on every replica.

        Its `ready()` (certificate loaded, port listening) becomes the `webhook` readiness check.
        """
        self._webhooks.append(server)
        ready = getattr(server, "ready", None)
        if callable(ready):
            self.add_readyz_check(getattr(server, "name", "webhook"), ready)

    @property
    def webhook_servers(self) -> tuple[Runnable, ...]:
        """The webhook servers added, in order (the webhook builder registers on the first `WebhookServer`)."""
        return tuple(self._webhooks)

    def add_healthz_check(self, name: str, check: Check) -> None:
        self.healthz.add(name, check)

    def add_readyz_check(self, name: str, check: Check) -> None:
        self.readyz.add(name, check)

    def get_event_recorder(self, component: str) -> EventRecorder:
        """An event recorder reporting as `component` (one per name, shared)."""
        recorder = self._recorders.get(component)
        if recorder is None:
            recorder = self._recorders[component] = EventRecorder(self.api_reader, component, clock=self.clock)
        return recorder

    def _cache_synced(self) -> None:
        if not self.cache.has_synced():
            raise RuntimeError("informers have not synced yet")

    @property
    def metrics_port(self) -> int | None:
        return next((s.port for s in self._servers if s.name == "metrics"), None)

    @property
    def health_port(self) -> int | None:
        return next((s.port for s in self._servers if s.name == "health"), None)

    # ---------------------------------------------------------------------------------------- running

    def _launch(self, group: _Group, runnable: Runnable) -> None:
        name = getattr(runnable, "name", type(runnable).__name__)

        def run() -> None:
            try:
                with cancellable(group.cancel):
                    runnable.start(group.stop)
            except BaseException as exc:  # any failing runnable stops the whole manager
                self.logger.error("runnable %s failed: %s", name, exc, exc_info=None if said_in_full(exc) else exc)
                self._fail(exc)

        thread = threading.Thread(target=run, name=f"runnable-{name}", daemon=True)
        thread.start()
        group.threads.append(thread)

    def _fail(self, error: BaseException) -> None:
        with self._errors_lock:
            self._errors.append(error)
        self._stop.set()

    def stop(self) -> None:
        """Ask the manager to stop (as SIGTERM does)."""
        self._stop.set()

    def _forward_stop(self, stop: threading.Event) -> None:
        while not stop.wait(0.5):
            if self._stop.is_set():
                return
        self._stop.set()

    def start(self, stop: threading.Event | None = None, *, handle_signals: bool = False) -> None:
        """Run until `stop` (or `manager.stop()`, or SIGINT/SIGTERM with `handle_signals`); then shut down.

        Raises ManagerError when a runnable failed or the lease was lost.
        """
        if self._started:
            raise RuntimeError("the manager was already started")
        self._started = True
        if stop is not None:
            threading.Thread(target=self._forward_stop, args=(stop,), daemon=True).start()
        if handle_signals:
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, lambda *_: self._stop.set())
        servers, webhooks, others, leaders = (_Group(n) for n in ("servers", "webhooks", "others", "leader"))
        election = _Group("election")
        try:
            self._start_servers(servers)
            for webhook in self._webhooks:
                self._launch(webhooks, webhook)
            self.cache.start()
            if not self._stop.is_set() and not self.cache.wait_for_sync(self.cache.sync_timeout):
                self._fail(TimeoutError("caches did not sync"))
            if not self._stop.is_set():  # nothing more to start once stopping (a failed sync, a signal)
                with self._runnables_lock:
                    for runnable in self._runnables:
                        if not needs_leader_election(runnable):
                            self._launch(others, runnable)
                    self._others = others
                self._start_leader_runnables(election, leaders)
            self._stop.wait()
        finally:
            self._shutdown(servers, webhooks, others, election, leaders)
        with self._errors_lock:
            errors = list(self._errors)
        if errors:
            raise ManagerError(f"manager stopped: {errors[0]}") from errors[0]

    def _start_servers(self, group: _Group) -> None:
        if self._metrics_address is not None:
            self._servers.append(
                MetricsServer(self._metrics_address, self._metrics_options, review_client=self.api_reader)
            )
        if self._health_address is not None:
            handler = handler_for({"/healthz": self.healthz, "/readyz": self.readyz})
            self._servers.append(_Server("health", self._health_address, handler))
        for server in self._servers:
            self._launch(group, server)

    def _start_leader_runnables(self, election: _Group, leaders: _Group) -> None:
        def on_started_leading() -> None:
            self.logger.info("became leader; starting leader-only runnables")
            self.elected.set()
            for runnable in self._runnables:
                if needs_leader_election(runnable):
                    self._launch(leaders, runnable)

        def on_stopped_leading() -> None:
            if not self._stop.is_set():
                # controller-runtime exits on a lost lease: another replica may already be acting as leader.
                leaders.cancel.set()
                leaders.stop.set()
                self._fail(ManagerError("leader election lost"))

        if self._leader_elector is None:
            on_started_leading()
            return
        elector = self._leader_elector
        self._launch(election, _ElectionRunnable(elector, on_started_leading, on_stopped_leading))

    def _shutdown(self, *groups: _Group) -> None:
        servers, webhooks, others, election, leaders = groups
        deadline = self.clock.monotonic() + self.graceful_shutdown_timeout
        lost_lease = any(isinstance(e, ManagerError) for e in self._errors)
        # Leader-only work stops before the lease is released, so no two replicas ever act at once.
        for group in (others, leaders, election):
            group.stop.set()
            self._join(group, 0 if lost_lease else deadline)
            # What outlived the graceful wait writes nothing more once the lease may pass to a standby.
            group.cancel.set()
        self.cache.stop()
        for recorder in self._recorders.values():
            recorder.shutdown()
        for group in (webhooks, servers):
            group.stop.set()
            self._join(group, deadline)

    def _join(self, group: _Group, deadline: float) -> None:
        for thread in group.threads:
            remaining = max(0.0, deadline - self.clock.monotonic()) if deadline else 0.0
            thread.join(remaining)
            if deadline and thread.is_alive():
                self.logger.warning("runnable %s did not stop within the graceful shutdown timeout", thread.name)


class _ElectionRunnable:
    name = "leader-election"

    def __init__(self, elector: LeaderElector, started: Callable[[], None], stopped: Callable[[], None]) -> None:
        self._elector = elector
        self._started = started
        self._stopped = stopped

    def start(self, stop: threading.Event) -> None:
        self._elector.run(stop, self._started, self._stopped)


__all__ = [
    "DEFAULT_GRACEFUL_SHUTDOWN",
    "LeaderElector",
    "Manager",
    "ManagerError",
    "Runnable",
    "needs_leader_election",
]
