"""Leader election on a `coordination.k8s.io/v1` Lease, with client-go's algorithm (`tools/leaderelection`).

    config = LeaderElectionConfig(name="910c37cf.tightlinesoftware.com", namespace="ballast-system")
    elector = LeaseLeaderElector(client, config)
    manager = Manager(config, leader_elector=elector)   # controllers run only while this replica leads

- Optimistic concurrency on the Lease's resourceVersion: a conflict means another replica wrote first.
- Expiry is judged on the local monotonic clock from the moment this replica last *observed a change* of the
  lease record, never from the timestamps in it — tolerant of clock offsets between nodes.
- Defaults: lease 15 s, renew deadline 10 s, retry 2 s; acquire attempts are jittered (× [1, 2.2)).
- The guarantee: a leader stops leading no later than `retry_period + renew_deadline` after the start of its
  last successful renewal (`leading_until`), whatever its requests do — a watchdog keeps that deadline while
  another thread renews, every renewal request is bounded by it (and by max(renew deadline / 2, 1 s), so one
  hung request cannot eat the whole cycle), and `is_leader()` turns False the moment it passes. Others judge
  the lease expired no earlier than `lease_duration` after that renewal was stored, so the configuration
  refuses `retry_period + renew_deadline > lease_duration`: two replicas never lead at once, given bounded
  clock drift between them (client-go accepts any timings; docs/design.md lists the difference).
- The manager then cancels in-flight leader-only work and exits; `release_on_cancel` clears the holder on
  graceful shutdown so a standby takes over at its next retry instead of waiting out the lease.
- Metric `leader_election_master_status{name}`; logs on acquire, renew failure, loss and leader transitions.
"""

from __future__ import annotations

import datetime
import random
import socket
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from . import metrics
from .apierrors import AlreadyExistsError, APIStatusError, ConflictError, NotFoundError
from .clock import Clock, RealClock
from .interfaces import Client
from .log import get_logger
from .rest import deadline

JITTER_FACTOR = 1.2
LEASE = "coordination.k8s.io/v1/Lease"
_log = get_logger("ballast.runtime.leaderelection")


def default_identity() -> str:
    """controller-runtime's identity: `<hostname>_<uuid>`, unique per process start."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


SERVICE_ACCOUNT_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
"""Where a pod reads its own namespace (the service-account token's mount): the leader election's namespace when
none is given, as controller-runtime's `LeaderElectionNamespace` default."""


def namespace_in_pod(path: str | Path = SERVICE_ACCOUNT_NAMESPACE_FILE) -> str:
    """The namespace this pod runs in, from the service-account file at `path`. Outside a pod there is none:
    ValueError naming the file and the option to set instead (controller-runtime fails start-up the same way)."""
    try:
        namespace = Path(path).read_text().strip()
    except OSError as error:
        raise ValueError(
            f"leader election needs a namespace: none was given (leader_election_namespace) and {path} cannot be "
            f"read ({error.strerror or error}): not running in a pod"
        ) from None
    if not namespace:
        raise ValueError(f"leader election needs a namespace: {path} is empty; set leader_election_namespace")
    return namespace


@dataclass
class LeaderElectionConfig:
    """Which Lease, who we are, and the timings (validated as client-go does)."""

    name: str
    namespace: str
    identity: str = field(default_factory=default_identity)
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = False

    def __post_init__(self) -> None:
        if not self.name or not self.namespace:
            raise ValueError("leader election needs a lease name and namespace")
        if not self.identity:
            raise ValueError("leader election needs a non-empty identity")
        if min(self.lease_duration, self.renew_deadline, self.retry_period) <= 0:
            raise ValueError("lease duration, renew deadline and retry period must all be > 0")
        if self.lease_duration <= self.renew_deadline:
            raise ValueError(
                f"lease duration ({self.lease_duration}s) must be greater than the renew deadline "
                f"({self.renew_deadline}s)"
            )
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError(
                f"renew deadline ({self.renew_deadline}s) must be greater than {JITTER_FACTOR} × retry period "
                f"({self.retry_period}s)"
            )
        if self.retry_period + self.renew_deadline > self.lease_duration:
            # A leader may act until retry + renew deadline after its last renewal; past the lease, a standby
            # could already lead.
            raise ValueError(
                f"retry period ({self.retry_period}s) + renew deadline ({self.renew_deadline}s) must not exceed "
                f"the lease duration ({self.lease_duration}s): a leader that cannot renew would still act after "
                "another replica may have taken over"
            )

    @property
    def request_timeout(self) -> float:
        return max(self.renew_deadline / 2, 1.0)

    @property
    def leading_grace(self) -> float:
        """How long after the start of its last successful renewal a leader may still act."""
        return self.retry_period + self.renew_deadline


def _micro_time(now: datetime.datetime) -> str:
    """metav1.MicroTime on the wire: RFC 3339 with microseconds."""
    return now.astimezone(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaseLeaderElector:
    """Runs the acquire/renew loop for one identity; `run()` blocks (the manager runs it on a thread)."""

    def __init__(self, client: Client, config: LeaderElectionConfig, *, clock: Clock | None = None) -> None:
        self.client = client
        self.config = config
        self.clock = clock or RealClock()
        self._observed_spec: dict[str, Any] | None = None
        self._observed_raw = b""
        self._observed_version = ""
        self._observed_time = 0.0
        self._leading = threading.Event()
        # Monotonic time at which leadership ends unless a renewal moves it; guarded by _lock with _halted, so
        # a renewal that returns after the watchdog gave up can never revive it.
        self._leading_until = 0.0
        self._halted = threading.Event()
        self._lock = threading.Lock()
        self._reported_leader = ""
        self._status = metrics.LEADER_ELECTION_MASTER_STATUS.labels(config.name)
        self._slowpath = metrics.LEADER_ELECTION_SLOWPATH.labels(config.name)
        self._status.set(0)
        self.renewals = 0
        self.log = _log.with_values(lease=f"{config.namespace}/{config.name}", identity=config.identity)

    # ------------------------------------------------------------------------------------------ state

    def is_leader(self) -> bool:
        """True while leading; False from the instant `leading_until` passes, even before the watchdog wakes."""
        return self._leading.is_set() and self.clock.monotonic() < self._leading_until

    @property
    def leading_until(self) -> float:
        """Monotonic time (this clock's) by which this replica stops leading unless it renews first."""
        return self._leading_until

    @property
    def observed_leader(self) -> str:
        """The holder this replica last saw in the lease ("" when none)."""
        return str((self._observed_spec or {}).get("holderIdentity") or "")

    def _observe(self, spec: dict[str, Any], version: str) -> None:
        raw = orjson.dumps(spec, option=orjson.OPT_SORT_KEYS)
        if raw != self._observed_raw:
            self._observed_raw = raw
            self._observed_time = self.clock.monotonic()
        self._observed_spec = spec
        self._observed_version = version
        holder = str(spec.get("holderIdentity") or "")
        if holder and holder != self._reported_leader:
            self._reported_leader = holder
            self.log.info("new leader observed", extra={"leader": holder})

    def _expired(self, spec: dict[str, Any]) -> bool:
        duration = float(spec.get("leaseDurationSeconds") or self.config.lease_duration)
        return self._observed_time + duration <= self.clock.monotonic()

    # ------------------------------------------------------------------------------------- lease I/O

    def _path_object(self) -> dict[str, Any]:
        return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": self.config.name, "namespace": self.config.namespace}}  # fmt: skip

    def _write(self, spec: dict[str, Any], version: str) -> bool:
        lease = self._path_object()
        lease["metadata"]["resourceVersion"] = version
        lease["spec"] = spec
        try:
            with deadline(self.config.request_timeout):
                stored = self.client.update(lease)
        except ConflictError:
            return False
        self._observe(stored["spec"], stored["metadata"]["resourceVersion"])
        return True

    def try_acquire_or_renew(self) -> bool:
        """One attempt (client-go's tryAcquireOrRenew); True when we hold the lease afterwards."""
        now = _micro_time(self.clock.now())
        duration = int(self.config.lease_duration)
        desired = {"holderIdentity": self.config.identity, "leaseDurationSeconds": duration,
                   "acquireTime": now, "renewTime": now, "leaseTransitions": 0}  # fmt: skip
        # Fast path: we lead and our view is fresh; renew with the version we hold.
        if self.is_leader() and self._observed_spec is not None and not self._expired(self._observed_spec):
            renewed = {**self._observed_spec, "renewTime": now, "holderIdentity": self.config.identity,
                       "leaseDurationSeconds": duration}  # fmt: skip
            if self._write(renewed, self._observed_version):
                return True
            self._slowpath.inc()
        try:
            with deadline(self.config.request_timeout):
                lease = self.client.get(LEASE, self.config.name, self.config.namespace)
        except NotFoundError:
            try:
                with deadline(self.config.request_timeout):
                    stored = self.client.create({**self._path_object(), "spec": desired})
            except AlreadyExistsError:
                return False
            self._observe(stored["spec"], stored["metadata"]["resourceVersion"])
            return True
        spec = dict(lease.get("spec") or {})
        self._observe(spec, lease["metadata"]["resourceVersion"])
        holder = str(spec.get("holderIdentity") or "")
        if holder and holder != self.config.identity and not self._expired(spec):
            return False  # someone else holds a lease that is still valid by our clock
        if holder == self.config.identity:
            desired["acquireTime"] = spec.get("acquireTime") or now
            desired["leaseTransitions"] = int(spec.get("leaseTransitions") or 0)
        else:
            desired["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        return self._write(desired, lease["metadata"]["resourceVersion"])

    def _attempt(self) -> bool:
        try:
            return self.try_acquire_or_renew()
        except (APIStatusError, ConnectionError, TimeoutError) as exc:
            self.log.warning("lease request failed: %s", exc)
            return False
        except Exception as exc:  # a malformed Lease or discovery answer: a failed attempt (client-go), not a crash
            self.log.error("lease attempt failed: %s", exc, exc_info=exc)
            return False

    # ----------------------------------------------------------------------------------------- loops

    def run(
        self, stop: threading.Event, on_started_leading: Callable[[], None], on_stopped_leading: Callable[[], None]
    ) -> None:
        """Acquire, lead, renew until `stop` or loss. `on_stopped_leading` is always called at the end."""
        try:
            acquired_at = self._acquire(stop)
            if acquired_at is None:
                return
            self._halted.clear()
            self._leading_until = acquired_at + self.config.leading_grace
            self._leading.set()
            self._status.set(1)
            self.log.info("acquired lease")
            on_started_leading()
            self._lead(stop)
        finally:
            was_leading = self._leading.is_set()
            self._leading.clear()
            self._status.set(0)
            if was_leading and stop.is_set() and self.config.release_on_cancel:
                self.release()
            on_stopped_leading()

    def _acquire(self, stop: threading.Event) -> float | None:
        """Retry until the lease is ours; the monotonic start of the winning attempt, or None on stop."""
        self.log.info("attempting to acquire leader lease")
        while not stop.is_set():
            began = self.clock.monotonic()
            if self._attempt():
                return began
            wait = self.config.retry_period * (1 + JITTER_FACTOR * random.random())  # noqa: S311 - jitter
            self.clock.wait_event(stop, wait)
        return None

    def _lead(self, stop: threading.Event) -> None:
        """The watchdog: renewals run on another thread; leadership ends when `leading_until` passes."""
        renewer = threading.Thread(target=self._renew, args=(stop,), name="leader-election-renew", daemon=True)
        renewer.start()
        try:
            while not stop.is_set():
                with self._lock:
                    remaining = self._leading_until - self.clock.monotonic()
                    if remaining <= 0:
                        self._halted.set()
                        self._leading.clear()
                        break
                # Renewals only move the deadline later: waking at the current one and re-checking is exact.
                self.clock.wait_event(stop, remaining)
            if not stop.is_set():
                self.log.error(
                    "failed to renew lease within %.1fs of the last renewal: leadership lost",
                    self.config.leading_grace,
                )
        finally:
            self._halted.set()
            if stop.is_set():  # let an in-flight renewal (bounded by the grace) finish before a release writes
                renewer.join(self.config.leading_grace)

    def _renew(self, stop: threading.Event) -> None:
        """Renew every retry period; each attempt is bounded by the leadership deadline it could extend."""
        while not (stop.is_set() or self._halted.is_set()):
            self.clock.wait_event(stop, self.config.retry_period)
            while not (stop.is_set() or self._halted.is_set()):
                began = self.clock.monotonic()
                remaining = self._leading_until - began
                if remaining <= 0:
                    return
                with deadline(remaining):
                    renewed = self._attempt()
                if renewed and self._extend(began):
                    break
                if self._halted.is_set():
                    return
                self.log.warning("failed to renew lease, retrying")
                self.clock.wait_event(stop, self.config.retry_period)

    def _extend(self, began: float) -> bool:
        """A renewal that started at `began` succeeded: lead until `began + leading_grace`, unless already halted."""
        with self._lock:
            if self._halted.is_set():
                return False
            self._leading_until = max(self._leading_until, began + self.config.leading_grace)
            self.renewals += 1
        self._renewed(self.clock.monotonic() - began)  # outside the lock: a hook may block (a full pipe)
        return True

    def _renewed(self, seconds: float) -> None:
        """Hook: a renewal that took `seconds` extended leadership (`leading_until` is already moved)."""

    def release(self) -> bool:
        """Clear the holder (lease duration 1 s) so a standby acquires at its next retry; True on success."""
        if self._observed_spec is None or self._observed_spec.get("holderIdentity") != self.config.identity:
            return False
        now = _micro_time(self.clock.now())
        released = {"holderIdentity": "", "leaseDurationSeconds": 1, "acquireTime": now, "renewTime": now,
                    "leaseTransitions": int(self._observed_spec.get("leaseTransitions") or 0)}  # fmt: skip
        try:
            ok = self._write(released, self._observed_version)
        except (APIStatusError, ConnectionError, TimeoutError) as exc:
            self.log.warning("could not release the lease: %s", exc)
            return False
        if ok:
            self.log.info("released lease")
        return ok


__all__ = [
    "JITTER_FACTOR",
    "LEASE",
    "SERVICE_ACCOUNT_NAMESPACE_FILE",
    "LeaderElectionConfig",
    "LeaseLeaderElector",
    "default_identity",
    "namespace_in_pod",
]
