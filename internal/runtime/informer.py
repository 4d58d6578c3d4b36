"""Shared informers: one list+watch per scope, an indexed store, and handlers told about every change.

Reflector semantics follow client-go (docs/compatibility.md, controller-runtime and client-go):
- LIST first (`resourceVersion=0` the first time, served from the watch cache; the last synced version on
  relists; `""` — a quorum read — if the server says that version is gone), then WATCH from the list's
  version with bookmarks on and a server timeout drawn from [5, 10) minutes; a stream that ends is re-watched
  from the last version seen.
- `410 Gone`/`Expired` on the watch → relist (from the last version); the diff against the store is delivered
  as adds, updates and deletes (deletes carry the last known state).
- A watch that cannot be re-opened because the server is unreachable or throttling (429) is retried from the
  same version after a backoff, not replaced by a relist: a cluster of clients coming back from an API server
  restart or a partition costs watches, not LISTs. Should that version be compacted meanwhile, the server
  answers 410 and the informer relists then.
- A stream silent for longer than `inactivity_timeout` (70 s; bookmarks arrive every minute) is treated as
  dead and re-opened — the "zombie watch" failure of several Python clients.
- Failures back off exponentially from 0.8 s to 30 s (factor 2, full jitter), reset after 2 minutes of health.
- Optional streaming list (`watch_list=True`: `sendInitialEvents` + the `initial-events-end` bookmark), with
  fallback to LIST on any error.
- `absent_as_empty=True`: a LIST answered 404 (the resource type is not served: a CRD not installed, or
  deleted) empties the store, counts as synced and is retried with backoff; `served` says which it was. Without
  it the informer never syncs until the type is served (client-go's behaviour).
- `relist()` cuts a backoff or a watch short and lists at once — for when the caller knows the type is served
  again (its CRD came back) and the reflector may be sleeping for up to 30 s; `wait_for_list(ticket)` waits
  for that list.

Handlers run on the informer's thread and must only enqueue work (controllers do). One thread per informer.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from urllib3.exceptions import ProtocolError, ReadTimeoutError

from ._decode import Decoder, gc_paused
from ._store import NAMESPACE_INDEX, Indexer, IndexFunc, namespace_index
from .apierrors import APIStatusError, GoneError, NotFoundError, TooManyRequestsError, error_from_response
from .client import ListerWatcher, WatchStream
from .clock import Clock, RealClock
from .objects import object_key, resource_version

log = logging.getLogger("ballast.runtime.informer")

MIN_WATCH_TIMEOUT = 300
INACTIVITY_TIMEOUT = 70.0
BACKOFF_INITIAL = 0.8
BACKOFF_MAX = 30.0
BACKOFF_RESET_AFTER = 120.0


class ResourceEventHandler(Protocol):
    """Receives changes from an informer (client-go's ResourceEventHandler)."""

    def on_add(self, obj: Any, is_initial_list: bool) -> None: ...

    def on_update(self, old: Any, new: Any) -> None: ...

    def on_delete(self, obj: Any) -> None: ...


@dataclass
class FuncHandler:
    """A ResourceEventHandler from up to three functions."""

    add: Callable[[Any, bool], None] | None = None
    update: Callable[[Any, Any], None] | None = None
    delete: Callable[[Any], None] | None = None

    def on_add(self, obj: Any, is_initial_list: bool) -> None:
        if self.add:
            self.add(obj, is_initial_list)

    def on_update(self, old: Any, new: Any) -> None:
        if self.update:
            self.update(old, new)

    def on_delete(self, obj: Any) -> None:
        if self.delete:
            self.delete(obj)


class Registration:
    """Handle of a registered handler: `remove()` unregisters it; `has_synced()` as client-go's."""

    def __init__(self, informer: SharedIndexInformer, handler: ResourceEventHandler) -> None:
        self._informer = informer
        self.handler = handler

    def remove(self) -> None:
        self._informer.remove_event_handler(self)

    def has_synced(self) -> bool:
        return self._informer.has_synced()


class _Backoff:
    """Exponential backoff with full jitter that resets after a healthy period."""

    def __init__(self, clock: Clock) -> None:
        self._clock = clock
        self._delay = BACKOFF_INITIAL
        self._last_failure = -1e18

    def next(self) -> float:
        now = self._clock.monotonic()
        if now - self._last_failure > BACKOFF_RESET_AFTER:
            self._delay = BACKOFF_INITIAL
        self._last_failure = now
        delay = self._delay * (1 + random.random())  # noqa: S311 - jitter factor 1.0
        self._delay = min(BACKOFF_MAX, self._delay * 2)
        return min(delay, BACKOFF_MAX)


class _RelistRequested(Exception):  # noqa: N818 - a signal inside the reflector, not an error
    """`relist()` was called: the reflector leaves its watch or backoff and lists."""


class SharedIndexInformer:
    """List+watch of one scope into an indexed store, fanning changes out to handlers."""

    def __init__(
        self,
        lister_watcher: ListerWatcher,
        decoder: Decoder,
        *,
        name: str = "informer",
        resync_period: float = 0.0,
        page_size: int | None = None,
        watch_list: bool = False,
        inactivity_timeout: float = INACTIVITY_TIMEOUT,
        indexers: Mapping[str, IndexFunc] | None = None,
        clock: Clock | None = None,
        absent_as_empty: bool = False,
    ) -> None:
        self.name = name
        self._lw = lister_watcher
        self._decoder = decoder
        self._resync_period = resync_period
        self._page_size = page_size
        self._watch_list = watch_list
        self._inactivity_timeout = inactivity_timeout
        self._absent_as_empty = absent_as_empty
        self._clock = clock or RealClock()
        self.store = Indexer({NAMESPACE_INDEX: namespace_index, **(indexers or {})})
        self._handlers: list[Registration] = []
        self._dispatch = threading.RLock()  # store mutation + fan-out, and handler registration
        self._synced = threading.Event()
        self._stop = threading.Event()
        self._wake = threading.Event()  # set by stop() and relist(): ends a backoff early
        self._relist_requested = False
        self._lists = threading.Condition()  # guards completed_lists
        self.completed_lists = 0
        """LISTs stored so far (a 404 under `absent_as_empty` included): `relist()` tickets count these."""
        self.served = True
        """False after a LIST answered 404 under `absent_as_empty` (the type is not served), until one succeeds."""
        self._stream: WatchStream | None = None
        self._stream_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._resync_thread: threading.Thread | None = None
        self.last_sync_resource_version = ""
        self._version_unavailable = False
        self._listed_once = False
        self.relists = 0
        self.expired = 0  # 410 Gone/Expired answers (watch or list) that forced a relist
        self.watch_restarts = 0

    # -------------------------------------------------------------------------------------- handlers

    def add_event_handler(self, handler: ResourceEventHandler) -> Registration:
        """Register `handler`; if the informer already has objects, it first gets them as initial adds."""
        registration = Registration(self, handler)
        with self._dispatch:
            for obj in self.store.values():
                self._call(handler.on_add, obj, True)
            self._handlers.append(registration)
        return registration

    def remove_event_handler(self, registration: Registration) -> None:
        with self._dispatch:
            if registration in self._handlers:
                self._handlers.remove(registration)

    def add_indexers(self, indexers: Mapping[str, IndexFunc]) -> None:
        self.store.add_indexers(indexers)

    def _call(self, method: Callable[..., None], *args: Any) -> None:
        try:
            method(*args)
        except Exception:
            # One failing handler must not stop the informer or starve the other handlers.
            log.exception("event handler failed", extra={"informer": self.name})

    def _fan_out(self, event: str, *args: Any) -> None:
        for registration in self._handlers:
            handler = registration.handler
            if event == "add":
                self._call(handler.on_add, *args)
            elif event == "update":
                self._call(handler.on_update, *args)
            else:
                self._call(handler.on_delete, *args)

    # ---------------------------------------------------------------------------------------- syncing

    def has_synced(self) -> bool:
        """True once the first full list has been stored and delivered to the handlers."""
        return self._synced.is_set()

    def wait_for_sync(self, timeout: float | None = None) -> bool:
        """Wait until `has_synced`. Called from this informer's own thread (a handler reading the cache while
        the first list is delivered — a map function listing its own kind), it returns True at once: the store
        already holds that list, and waiting would block the very delivery that sets the flag."""
        if self._synced.is_set() or (self._thread is not None and threading.current_thread() is self._thread):
            return True
        return self._clock.wait_event(self._synced, timeout)

    # -------------------------------------------------------------------------------------- lifecycle

    def start(self) -> None:
        """Run the informer on its own thread (and a resync thread when a resync period is set)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self.run, name=f"informer-{self.name}", daemon=True)
        self._thread.start()
        if self._resync_period > 0:
            self._resync_thread = threading.Thread(target=self._resync_loop, name=f"resync-{self.name}", daemon=True)
            self._resync_thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the reflector, closing its open watch, and join the threads."""
        self._stop.set()
        self._wake.set()
        with self._stream_lock:
            if self._stream is not None:
                self._stream.close()
        for thread in (self._thread, self._resync_thread):
            if thread is not None and thread is not threading.current_thread():
                thread.join(timeout)

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def relist(self) -> int:
        """List again now: a backoff is cut short, an open watch closed. Returns a ticket for `wait_for_list`:
        the count of completed lists at which one has started after this call."""
        with self._lists:
            ticket = self.completed_lists + 1
            self._relist_requested = True
        self._wake.set()
        with self._stream_lock:
            if self._stream is not None:
                self._stream.close()
        return ticket

    def wait_for_list(self, ticket: int, timeout: float | None = None) -> bool:
        """Wait until the list `ticket` (from `relist()`) names has been stored; returns whether it has. The
        timeout is in real seconds (an admission waiting for it waits in real time, whatever the clock)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lists:
            while self.completed_lists < ticket and not self._stop.is_set():
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._lists.wait(0.05 if remaining is None else min(remaining, 0.05))
            return self.completed_lists >= ticket

    def _sleep(self, delay: float) -> None:
        """Back off for `delay` seconds, or less if stopped or asked to relist."""
        self._clock.wait_event(self._wake, delay)
        if not self._stop.is_set():
            self._wake.clear()

    def run(self) -> None:
        """The reflector loop: list, then watch until told to stop; backs off on failures."""
        backoff = _Backoff(self._clock)
        while not self._stop.is_set():
            try:
                if self._watch_list and not self._listed_once:
                    try:
                        self._watch(initial_events=True, backoff=backoff)
                        continue
                    except (APIStatusError, ConnectionError, ProtocolError, ValueError) as exc:
                        log.info("streaming list failed, falling back to LIST: %s", exc, extra={"informer": self.name})
                        self._watch_list = False
                self._list()
                self._watch(initial_events=False, backoff=backoff)
            except GoneError:
                self.expired += 1
                continue  # relist at once: _list already remembered whether the version itself is gone
            except _RelistRequested:
                continue
            except NotFoundError as exc:
                if self._stop.is_set():
                    return
                delay = backoff.next()
                # An expected state under absent_as_empty (a CRD not installed): one line, no traceback.
                log.info("%s is not served, listing again in %.1fs: %s", self.name, delay, exc.message,
                         extra={"informer": self.name})  # fmt: skip
                self._sleep(delay)
            except Exception as exc:
                if self._stop.is_set():
                    return
                delay = backoff.next()
                log.warning("list/watch failed, retrying in %.1fs: %s", delay, exc, extra={"informer": self.name})
                self._sleep(delay)

    def _list(self) -> None:
        with self._lists:
            self._relist_requested = False
        self._wake.clear()
        if self._version_unavailable:
            version = ""  # quorum read: the version we know was compacted away
        elif not self._listed_once:
            version = "0"  # first list from the watch cache
        else:
            version = self.last_sync_resource_version
        if self._listed_once:
            self.relists += 1
        items: list[Any] = []
        continue_: str | None = None
        # Paging asks etcd for a consistent snapshot; client-go turns it off for versioned relists so that
        # they are served from the watch cache.
        page_size = self._page_size if version in ("", "0") and self._page_size else None
        list_version: str | None = version
        while True:
            try:
                body = self._lw.list(resource_version=list_version, limit=page_size, continue_=continue_)
            except GoneError:
                self._version_unavailable = True
                raise
            except NotFoundError:
                if self._absent_as_empty:
                    # Nothing of a type that is not served exists: empty (its deletes delivered) and synced.
                    self.served = False
                    self._replace([], "")
                raise
            page = self._decoder.decode_list(body)
            items.extend(page.items)
            if not page.continue_:
                break
            continue_, list_version = page.continue_, None  # continue pages carry no resourceVersion
        self._version_unavailable = False
        self.served = True
        self._replace(items, page.resource_version)

    def _replace(self, items: list[Any], version: str) -> None:
        """Make the store exactly `items` and tell handlers what changed."""
        initial = not self._listed_once
        fresh = {object_key(obj): obj for obj in items}
        with self._dispatch:
            previous = self.store.replace(fresh)
            for key, obj in fresh.items():
                old = previous.get(key)
                if old is None:
                    self._fan_out("add", obj, initial)
                elif resource_version(old) != resource_version(obj):
                    self._fan_out("update", old, obj)
            for key, old in previous.items():
                if key not in fresh:
                    self._fan_out("delete", old)
        self.last_sync_resource_version = version
        self._listed_once = True
        self._synced.set()
        with self._lists:
            self.completed_lists += 1
            self._lists.notify_all()

    def _open(self, version: str, initial_events: bool) -> WatchStream:
        timeout = int(MIN_WATCH_TIMEOUT * (1 + random.random()))  # noqa: S311 - spread reconnections
        return self._lw.watch(
            resource_version=version,
            timeout_seconds=timeout,
            allow_bookmarks=True,
            send_initial_events=initial_events,
            read_timeout=self._inactivity_timeout,
        )

    def _watch(self, initial_events: bool, backoff: _Backoff) -> None:
        """Watch until something fails (raises then); a stream the server ends is re-opened."""
        state = _WatchState(self.last_sync_resource_version, [] if initial_events else None)
        while not self._stop.is_set():
            self._check_relist()
            try:
                stream = self._open(state.version, state.initial_items is not None)
            except (ConnectionError, TooManyRequestsError) as exc:
                if state.initial_items is not None:
                    raise  # a streaming list has no version to resume from: start over
                delay = backoff.next()
                log.info("watch could not be re-opened, retrying from %s in %.1fs: %s", state.version, delay, exc,
                         extra={"informer": self.name})  # fmt: skip
                self._sleep(delay)
                self._check_relist()
                continue
            with self._stream_lock:
                if self._stop.is_set():
                    stream.close()
                    return
                self._stream = stream
            lines = iter(stream)  # one iterator: it holds the partial line between reads
            try:
                if state.initial_items is not None:
                    # A streaming list decodes the whole initial state, like a LIST: keep the collector out of it.
                    with gc_paused():
                        self._consume(lines, state, until_synced=True)
                self._consume(lines, state)
            except ReadTimeoutError:
                log.info("watch silent for %.0fs, reopening", self._inactivity_timeout, extra={"informer": self.name})
            except ProtocolError as exc:
                if self._stop.is_set():
                    return
                self._check_relist()
                log.info("watch stream broke, reopening: %s", exc, extra={"informer": self.name})
            finally:
                with self._stream_lock:
                    self._stream = None
                stream.close()
            if state.initial_items is not None:
                raise ValueError("streaming list ended before its initial-events-end bookmark")
            self.watch_restarts += 1

    def _check_relist(self) -> None:
        with self._lists:
            if self._relist_requested:
                raise _RelistRequested

    def _consume(self, lines: Iterator[bytes], state: _WatchState, *, until_synced: bool = False) -> None:
        """Apply the stream's events; with `until_synced`, return as soon as a streaming list has synced."""
        for line in lines:
            event = self._decoder.decode_event(line)
            if event.type == "ERROR":
                status = event.status or {}
                raise error_from_response(int(status.get("code", 500)), _status_bytes(status), method="WATCH")
            if state.initial_items is not None:
                if event.type == "ADDED":
                    state.initial_items.append(event.object)
                elif event.initial_events_end:
                    self._replace(state.initial_items, event.resource_version)
                    state.initial_items = None
            elif event.type != "BOOKMARK":
                self._apply(event.type, event.object)
            state.version = event.resource_version or state.version
            if state.initial_items is None:
                self.last_sync_resource_version = state.version
                if until_synced:
                    return

    def _apply(self, kind: str, obj: Any) -> None:
        with self._dispatch:
            if kind == "DELETED":
                old = self.store.delete(object_key(obj))
                self._fan_out("delete", obj if obj is not None else old)
                return
            old = self.store.upsert(obj)
            if old is None:
                self._fan_out("add", obj, False)
            else:
                self._fan_out("update", old, obj)

    def _resync_loop(self) -> None:
        """Re-deliver every cached object as an update with old == new (no API call), every period."""
        while not self._clock.wait_event(self._stop, self._resync_period):
            if not self.has_synced():
                continue
            with self._dispatch:
                for obj in self.store.values():
                    self._fan_out("update", obj, obj)


@dataclass
class _WatchState:
    """Where a watch is: the last resourceVersion seen, and the objects of a streaming list not yet synced."""

    version: str
    initial_items: list[Any] | None


def _status_bytes(status: Mapping[str, Any]) -> bytes:
    import orjson  # noqa: PLC0415 - only on the rare error path

    return orjson.dumps(status)


__all__ = [
    "BACKOFF_INITIAL",
    "BACKOFF_MAX",
    "BACKOFF_RESET_AFTER",
    "INACTIVITY_TIMEOUT",
    "MIN_WATCH_TIMEOUT",
    "FuncHandler",
    "Registration",
    "ResourceEventHandler",
    "SharedIndexInformer",
]
