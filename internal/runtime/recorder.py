"""Event recorder: Kubernetes Events about objects, with client-go's correlation (`tools/record`).

`recorder.event(obj, "Normal", "Resized", "cpu 300m → 200m")` returns at once; a background thread writes.
As client-go's EventCorrelator does:
- an identical event (same object, type, reason, message) is not created again: the existing Event's `count`
  and `lastTimestamp` are patched (deduplication, an LRU of 4096 keys);
- more than 10 events that differ only in message within 10 minutes are folded into one
  "(combined from similar events): …" Event (aggregation);
- each (component, object) pair has a token bucket of 25 events refilled one per 5 minutes; events beyond it
  are dropped (spam filter) — a hot loop cannot flood the API server.
"""

from __future__ import annotations

import datetime
import queue
import socket
import threading
import uuid
from dataclasses import dataclass
from typing import Any

from cachetools import LRUCache, TTLCache

from . import objects
from .apierrors import APIStatusError, NotFoundError
from .clock import Clock, RealClock, rfc3339
from .gvk import GroupVersionKind
from .log import get_logger

NORMAL = "Normal"
WARNING = "Warning"
AGGREGATE_THRESHOLD = 10
AGGREGATE_WINDOW = 600.0
SPAM_BURST = 25
SPAM_REFILL_SECONDS = 300.0
_log = get_logger("ballast.runtime.recorder")


@dataclass
class _Bucket:
    tokens: float
    updated: float


@dataclass
class _Recorded:
    name: str
    namespace: str
    count: int


class EventRecorder:
    """Records core/v1 Events for one component (e.g. a controller name); thread-safe, non-blocking."""

    def __init__(
        self,
        client: Any,
        component: str,
        *,
        host: str | None = None,
        clock: Clock | None = None,
        queue_size: int = 1000,
    ) -> None:
        self._client = client
        self.component = component
        self.host = host or socket.gethostname()
        self._clock = clock or RealClock()
        self._queue: queue.Queue[tuple[Any, ...] | None] = queue.Queue(queue_size)
        self._lock = threading.Lock()
        self._buckets: LRUCache[tuple[str, ...], _Bucket] = LRUCache(4096)
        self._similar: TTLCache[tuple[str, ...], set[str]] = TTLCache(
            4096, AGGREGATE_WINDOW, timer=self._clock.monotonic
        )
        self._recorded: LRUCache[tuple[str, ...], _Recorded] = LRUCache(4096)
        self.dropped = 0
        self._thread = threading.Thread(target=self._drain, name=f"events-{component}", daemon=True)
        self._thread.start()

    # -------------------------------------------------------------------------------------------- API

    def event(self, obj: Any, type_: str, reason: str, message: str, *, kind: GroupVersionKind | None = None) -> None:
        """Record an event about `obj` (a dict, view, projection or model); `kind` when `obj` lacks apiVersion/kind."""
        if type_ not in (NORMAL, WARNING):
            raise ValueError(f"event type must be Normal or Warning, not {type_!r}")
        involved = self._involved(obj, kind)
        if not self._allow(involved):
            self.dropped += 1
            return
        try:  # stamped now, as client-go does: a backlog must not make events look later than they were
            self._queue.put_nowait((involved, type_, reason, message, self._clock.now()))
        except queue.Full:
            self.dropped += 1

    def shutdown(self, timeout: float = 5.0) -> None:
        """Write what is queued (up to `timeout` seconds) and stop the writer thread."""
        try:
            self._queue.put(None, timeout=timeout)
        except queue.Full:
            return
        self._thread.join(timeout)

    # ------------------------------------------------------------------------------------- correlation

    @staticmethod
    def _involved(obj: Any, kind: GroupVersionKind | None) -> dict[str, str]:
        if kind is not None:
            api_version, kind_name = kind.api_version, kind.kind
        elif isinstance(obj, dict) or hasattr(obj, "get"):
            api_version, kind_name = str(obj.get("apiVersion", "")), str(obj.get("kind", ""))
        else:
            api_version, kind_name = str(getattr(obj, "api_version", "")), str(getattr(obj, "kind", ""))
        involved = {
            "apiVersion": api_version,
            "kind": kind_name,
            "name": objects.name(obj),
            "namespace": objects.namespace(obj),
            "uid": objects.uid(obj),
            "resourceVersion": objects.resource_version(obj),
        }
        return {key: value for key, value in involved.items() if value}

    def _allow(self, involved: dict[str, str]) -> bool:
        """The spam filter: one token per event from the (component, object) bucket."""
        key = (self.component, involved.get("kind", ""), involved.get("namespace", ""), involved.get("name", ""))
        now = self._clock.monotonic()
        with self._lock:
            bucket = self._buckets.get(key)
            if bucket is None:
                bucket = self._buckets[key] = _Bucket(SPAM_BURST, now)
            bucket.tokens = min(SPAM_BURST, bucket.tokens + (now - bucket.updated) / SPAM_REFILL_SECONDS)
            bucket.updated = now
            if bucket.tokens < 1:
                return False
            bucket.tokens -= 1
            return True

    def _correlate(
        self, involved: dict[str, str], type_: str, reason: str, message: str
    ) -> tuple[tuple[str, ...], str]:
        """(dedup key, message): similar events beyond the threshold share one combined key and message."""
        base = (
            self.component, involved.get("apiVersion", ""), involved.get("kind", ""),
            involved.get("namespace", ""), involved.get("name", ""), involved.get("uid", ""), type_, reason,
        )  # fmt: skip
        with self._lock:
            messages = self._similar.get(base) or set()
            messages.add(message)
            self._similar[base] = messages
            if len(messages) >= AGGREGATE_THRESHOLD:
                return (*base, "\x00combined"), f"(combined from similar events): {message}"
        return (*base, message), message

    # ------------------------------------------------------------------------------------------ writes

    def _drain(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            involved, type_, reason, message, stamp = item
            try:
                self._write(involved, type_, reason, message, stamp)
            except Exception as exc:  # events are best effort: a failure must not stop later ones
                _log.warning("could not record event %s on %s: %s", reason, involved.get("name"), exc)

    def _write(self, involved: dict[str, str], type_: str, reason: str, message: str, stamp: datetime.datetime) -> None:
        key, message = self._correlate(involved, type_, reason, message)
        now = rfc3339(stamp)
        recorded = self._recorded.get(key)
        if recorded is not None:
            try:
                self._client.patch(
                    {
                        "apiVersion": "v1",
                        "kind": "Event",
                        "metadata": {"name": recorded.name, "namespace": recorded.namespace},
                    },
                    {"count": recorded.count + 1, "lastTimestamp": now, "message": message},
                )
                recorded.count += 1
                return
            except NotFoundError:
                del self._recorded[key]  # the Event expired (TTL 1 h by default): create a fresh one
        namespace = involved.get("namespace") or "default"
        name = f"{involved.get('name', 'object')}.{uuid.uuid4().hex[:16]}"
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": involved,
            "reason": reason,
            "message": message,
            "type": type_,
            "source": {"component": self.component, "host": self.host},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "reportingComponent": self.component,
            "reportingInstance": self.host,
        }
        try:
            self._client.create(event)
        except APIStatusError as exc:
            if exc.status == 404:
                return  # the namespace is going away with its object
            raise
        self._recorded[key] = _Recorded(name, namespace, 1)


__all__ = [
    "AGGREGATE_THRESHOLD",
    "AGGREGATE_WINDOW",
    "NORMAL",
    "SPAM_BURST",
    "SPAM_REFILL_SECONDS",
    "WARNING",
    "EventRecorder",
]
