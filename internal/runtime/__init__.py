"""A controller-runtime for Python: the framework Ballast runs on, usable on its own (it imports nothing from the
rest of the project). This tour follows controller-runtime's `doc.go`; each section names the modules to read.

Managers
    Every controller starts from a `Manager` (`manager`): it owns the shared cache and client, and runs caches,
    controllers, webhook servers and any runnable with the right lifecycle and start order, on the leader only
    when they need it. `manager.client` reads from the cache and writes to the API server; `manager.api_reader`
    reads live. Where the API server is comes from `RESTConfig.load()` (`rest`: kubeconfig or in-cluster).

Controllers and Builders
    A `Controller` (`controller`) reconciles the objects its sources enqueue, on a pool of worker threads fed by
    a rate-limited workqueue (`workqueue`, `priorityqueue`, `ratelimiter`). A `Builder` (`builder`) wires one:
    `Builder(manager).for_(kind).owns(child).watches(kind, handler).complete(reconciler)`. Sources (`source`)
    turn watch events (`event`) into requests through handlers (`handler`: `EnqueueRequestForObject`,
    `EnqueueRequestForOwner`, `EnqueueRequestsFromMapFunc`), filtered by predicates (`predicate`).

Reconcilers
    A `Reconciler` (`reconcile`) takes a `Context` and a `Request` (a namespace and a name, never an event) and
    returns a `Result` (requeue, or requeue after a delay) or raises (retried with backoff; `TerminalError` is
    not). Level-triggered: it reads the current state and converges. Helpers for what reconcilers write:
    `controllerutil` (owner references, finalizers, `create_or_update`), `conditions` (status conditions) and
    `recorder` (events, through `manager.get_event_recorder`).

Clients and Caches
    The `Client` interface (`interfaces`: a `Reader` and a `Writer` with a `StatusWriter` for subresources)
    reads and writes objects by kind: a model type registered in the `Scheme` (`scheme`), a `GroupVersionKind`
    (`gvk`) or `"apps/v1/Deployment"`. `new_client(config)` (`client`) talks to the API server directly; the
    `Cache` (`cache`) holds shared indexed informers (`informer`) and answers reads with read-only views
    (`objects`: `thaw()`, `FrozenDict`), or, for a kind cached as a `Projection` (`CacheScope`), models of
    only the fields you declare. Errors are typed (`apierrors`: `NotFoundError`, `ConflictError`, …); `labels`
    parses selectors, `restmapper` maps kinds to resources. Typed custom resources and their CRDs: `crd` (and
    the `ballast-crdgen` command); RBAC and CRD manifests: `rbacgen`, `crdgen`.

Webhooks
    A `WebhookServer` (`webhook`) serves AdmissionReview handlers over TLS, following certificate rotations
    (`certwatcher`; self-signed certificates and their webhook configurations: `selfsigned`, `certs`). A handler
    takes an `AdmissionRequest` and answers with `allowed`, `denied`, `errored` or `patched` (`admission`); a
    `WebhookBuilder` (`webhookbuilder`) registers a defaulter and a validator for a typed kind.

Leader election
    `Manager(leader_election=True, leader_election_id=...)` runs leader-only work on one replica at a time
    (the Lease in the pod's namespace unless `leader_election_namespace` says); `Manager(leader_elector=...)`
    takes any `LeaderElector` of your own (`manager`). `LeaseLeaderElector` (`leaderelection`) holds a
    coordination.k8s.io Lease with the settings of `LeaderElectionConfig`; `ProcessLeaderElector`
    (`leaderelection_process`, the default) runs the same loop in a child process, so renewals never wait on
    the operator's GIL.

Metrics and health
    The manager serves controller-runtime's metrics on its metrics address (`metrics`: `REGISTRY`, the
    workqueue, reconcile, REST client, webhook and leader-election series) — over HTTPS with each scrape
    authenticated and authorised when `metrics_secure=True` (`metricsserver`, `metricsauth`) — and `/healthz`
    and `/readyz` on its health address (`healthz`: `ping` and your own checks). Logs are structured (`log`;
    logger names `ballast.runtime.*`); time comes from a `Clock` (`clock`: `RealClock`, `FakeClock`).

Testing and envtest
    `FakeAPI` (`fake`) is an in-memory API server the real client, informers, cache, controllers and manager run
    on. `envtest` starts a real kube-apiserver and etcd for a test session (`Environment`, and the `envtest`
    pytest fixture); `testing` runs a manager for the length of a test, waits with `eventually` /
    `consistently`, and calls a reconciler directly (`reconcile`).

Concurrency model: OS threads and synchronous reconcilers, as in client-go — one thread per informer stream,
a pool of worker threads per controller; event handlers only enqueue. A reconcile's timeout is a cooperative
deadline honoured by every client call made inside it (a Python thread cannot be interrupted).

The names a controller-runtime user reaches for first are re-exported here. The import rule (the project keeps
it, tests/unit/internal/runtime/test_import_rule.py checks it): a name this package exports is imported from it
(`from ballast.runtime import Builder, NotFoundError`), never from the module that defines it; every
other name comes from its module (`from ballast.runtime.apierrors import GoneError`, or
`from ballast.runtime import apierrors` and `apierrors.GoneError`). Every module named above is public and
lists its names in `__all__`; modules whose name starts with an underscore are the framework's own.

The re-exports are resolved on first use (PEP 562): importing the package, or one of its modules
(`ballast.runtime.rest`), loads only what that needs, not the manager, the webhook server and the rest —
which is what keeps a command-line tool built on the client quick to start.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._decode import Projection
    from .admission import AdmissionRequest, AdmissionResponse, allowed, denied, errored, patched
    from .apierrors import (
        AlreadyExistsError,
        APIStatusError,
        ConflictError,
        NotFoundError,
    )
    from .builder import Builder
    from .cache import Cache, CacheScope
    from .client import APPLY, JSON_PATCH, MERGE, STRATEGIC, new_client
    from .clock import Clock, FakeClock, RealClock, rfc3339
    from .controller import Controller, ControllerOptions
    from .controllerutil import (
        AlreadyOwnedError,
        get_controller_of,
        get_reference,
        new_controller_ref,
        set_controller_reference,
    )
    from .fake import FakeAPI
    from .gvk import GroupVersionKind
    from .handler import EnqueueRequestForObject, EnqueueRequestForOwner, EnqueueRequestsFromMapFunc
    from .healthz import ping
    from .interfaces import Client, ObjectList, Reader, StatusWriter, Writer
    from .leaderelection import LeaderElectionConfig, LeaseLeaderElector
    from .leaderelection_process import ProcessLeaderElector
    from .manager import LeaderElector, Manager
    from .reconcile import Context, Reconciler, Request, Result, TerminalError
    from .rest import RESTConfig
    from .scheme import Scheme
    from .webhook import WebhookServer
    from .webhookbuilder import WebhookBuilder

_EXPORTS: dict[str, str] = {
    "APPLY": "client",
    "JSON_PATCH": "client",
    "MERGE": "client",
    "STRATEGIC": "client",
    "APIStatusError": "apierrors",
    "AdmissionRequest": "admission",
    "AdmissionResponse": "admission",
    "AlreadyExistsError": "apierrors",
    "AlreadyOwnedError": "controllerutil",
    "Builder": "builder",
    "Cache": "cache",
    "CacheScope": "cache",
    "Client": "interfaces",
    "Clock": "clock",
    "ConflictError": "apierrors",
    "Context": "reconcile",
    "Controller": "controller",
    "ControllerOptions": "controller",
    "EnqueueRequestForObject": "handler",
    "EnqueueRequestForOwner": "handler",
    "EnqueueRequestsFromMapFunc": "handler",
    "FakeAPI": "fake",
    "FakeClock": "clock",
    "GroupVersionKind": "gvk",
    "LeaderElectionConfig": "leaderelection",
    "LeaderElector": "manager",
    "LeaseLeaderElector": "leaderelection",
    "Manager": "manager",
    "NotFoundError": "apierrors",
    "ObjectList": "interfaces",
    "ProcessLeaderElector": "leaderelection_process",
    "Projection": "_decode",
    "RESTConfig": "rest",
    "Reader": "interfaces",
    "RealClock": "clock",
    "Reconciler": "reconcile",
    "Request": "reconcile",
    "Result": "reconcile",
    "Scheme": "scheme",
    "StatusWriter": "interfaces",
    "TerminalError": "reconcile",
    "WebhookBuilder": "webhookbuilder",
    "WebhookServer": "webhook",
    "Writer": "interfaces",
    "allowed": "admission",
    "denied": "admission",
    "errored": "admission",
    "get_controller_of": "controllerutil",
    "get_reference": "controllerutil",
    "new_controller_ref": "controllerutil",
    "patched": "admission",
    "new_client": "client",
    "ping": "healthz",
    "rfc3339": "clock",
    "set_controller_reference": "controllerutil",
}
"""Each exported name and the module (of this package) that defines it."""

__all__ = [
    "APPLY",
    "JSON_PATCH",
    "MERGE",
    "STRATEGIC",
    "APIStatusError",
    "AdmissionRequest",
    "AdmissionResponse",
    "AlreadyExistsError",
    "AlreadyOwnedError",
    "Builder",
    "Cache",
    "CacheScope",
    "Client",
    "Clock",
    "ConflictError",
    "Context",
    "Controller",
    "ControllerOptions",
    "EnqueueRequestForObject",
    "EnqueueRequestForOwner",
    "EnqueueRequestsFromMapFunc",
    "FakeAPI",
    "FakeClock",
    "GroupVersionKind",
    "LeaderElectionConfig",
    "LeaderElector",
    "LeaseLeaderElector",
    "Manager",
    "NotFoundError",
    "ObjectList",
    "ProcessLeaderElector",
    "Projection",
    "RESTConfig",
    "Reader",
    "RealClock",
    "Reconciler",
    "Request",
    "Result",
    "Scheme",
    "StatusWriter",
    "TerminalError",
    "WebhookBuilder",
    "WebhookServer",
    "Writer",
    "allowed",
    "denied",
    "errored",
    "get_controller_of",
    "get_reference",
    "new_client",
    "new_controller_ref",
    "patched",
    "ping",
    "rfc3339",
    "set_controller_reference",
]


if not TYPE_CHECKING:  # hidden from type checkers, which then still see (and check) every name imported above

    def __getattr__(name: str) -> object:
        """Import an exported name's module on first use (PEP 562), so importing one module of the package does
        not import them all."""
        module = _EXPORTS.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", __name__), name)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *_EXPORTS})
