"""A controller-runtime for Python.

The framework the operator runs on, usable on its own (it imports nothing from the rest of the project):
client and REST mapper, informers with a shared indexed cache, workqueues (with controller-runtime's priority
queue), controllers and a builder, a manager with health and metrics endpoints, Lease leader election, a TLS
admission webhook server that follows certificate rotations, event recording, an in-memory fake API server,
envtest (a real kube-apiserver + etcd for tests), and manifest generators for CRDs (`crdgen`) and RBAC
(`rbacgen`), used by module path.

Concurrency model: OS threads and synchronous reconcilers, as in client-go — one thread per informer stream,
a pool of worker threads per controller; event handlers only enqueue. A reconcile's timeout is a cooperative
deadline honoured by every client call made inside it (a Python thread cannot be interrupted).

The names a controller-runtime user reaches for first are re-exported here. The import rule (the project keeps
it, tests/unit/internal/runtime/test_import_rule.py checks it): a name this package exports is imported from it
(`from ballast.internal.runtime import Builder, NotFoundError`), never from the module that defines it; every
other name comes from its module (`from ballast.internal.runtime.apierrors import GoneError`, or
`from ballast.internal.runtime import apierrors` and `apierrors.GoneError`). Module paths stay public:
`workqueue`, `priorityqueue`, `event`, `apierrors`, `predicate`, `handler`, `source`, `conditions`, … and the
logger names `ballast.runtime.*`.
"""

from .admission import AdmissionRequest, AdmissionResponse, allowed, denied, errored, patched
from .apierrors import (
    AlreadyExistsError,
    APIStatusError,
    ConflictError,
    NotFoundError,
)
from .builder import Builder
from .cache import Cache, CacheScope
from .client import APPLY, JSON_PATCH, MERGE, STRATEGIC, Client
from .clock import Clock, FakeClock, RealClock, rfc3339
from .controller import Controller, ControllerOptions
from .decode import Projection
from .fake import FakeAPI
from .gvk import GroupVersionKind
from .handler import EnqueueRequestForObject, EnqueueRequestForOwner, EnqueueRequestsFromMapFunc
from .interfaces import Reader, StatusWriter, Writer
from .leaderelection import LeaderElectionConfig, LeaderElector
from .leaderelection_process import ProcessLeaderElector
from .manager import Manager
from .reconcile import Context, Reconciler, Request, Result, TerminalError
from .rest import RESTConfig
from .scheme import Scheme
from .webhook import WebhookServer

__all__ = [
    "APPLY",
    "JSON_PATCH",
    "MERGE",
    "STRATEGIC",
    "APIStatusError",
    "AdmissionRequest",
    "AdmissionResponse",
    "AlreadyExistsError",
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
    "Manager",
    "NotFoundError",
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
    "WebhookServer",
    "Writer",
    "allowed",
    "denied",
    "errored",
    "patched",
    "rfc3339",
]
