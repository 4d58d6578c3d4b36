"""A controller-runtime for Python.

The framework the operator runs on, usable on its own (it imports nothing from the rest of the project):
client and REST mapper, informers with a shared indexed cache, workqueues (with controller-runtime's priority
queue), controllers and a builder, a manager with health and metrics endpoints, Lease leader election, a TLS
admission webhook server that follows certificate rotations, event recording, an in-memory fake API server,
envtest (a real kube-apiserver + etcd for tests), typed CRDs (`crd`: pydantic base classes for kinds, schema
markers, CRDs from the models and the `ballast-crdgen` command) and manifest generators for CRDs (`crdgen`) and
RBAC (`rbacgen`), used by module path.

Concurrency model: OS threads and synchronous reconcilers, as in client-go — one thread per informer stream,
a pool of worker threads per controller; event handlers only enqueue. A reconcile's timeout is a cooperative
deadline honoured by every client call made inside it (a Python thread cannot be interrupted).

The names a controller-runtime user reaches for first are re-exported here. The import rule (the project keeps
it, tests/unit/internal/runtime/test_import_rule.py checks it): a name this package exports is imported from it
(`from ballast.runtime import Builder, NotFoundError`), never from the module that defines it; every
other name comes from its module (`from ballast.runtime.apierrors import GoneError`, or
`from ballast.runtime import apierrors` and `apierrors.GoneError`). Module paths stay public:
`workqueue`, `priorityqueue`, `event`, `apierrors`, `predicate`, `handler`, `source`, `conditions`, … and the
logger names `ballast.runtime.*`.

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
