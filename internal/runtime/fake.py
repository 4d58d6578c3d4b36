"""An in-memory API server for fast unit tests and the offline simulator (controller-runtime's fake client,
done at the transport level).

`FakeAPI` stores objects and answers the same HTTP-shaped requests the real API server does, so the real
`APIServerClient`, informers, cache, controllers and manager run on it unchanged:

    api = FakeAPI()
    client = api.client()                       # a real APIServerClient over the fake transport
    manager = Manager(client=client)            # informers list and watch the fake

It keeps resourceVersion (one counter, conflicts on stale updates) and generation (bumped when anything
outside metadata and status changes), status-subresource semantics (the main resource cannot change status,
`/status` changes only status), finalizers (delete sets deletionTimestamp until they are gone), label and
field selectors (`metadata.name`, `metadata.namespace`), watches from a resourceVersion, and admission hooks
(`api.admission(fn)`) so webhook handlers can be exercised in-process. Strategic merge patches merge lists of
objects by `name` (what built-in kinds use for containers, env, volumes, ports); server-side apply is treated
as a merge that creates when absent. Behaviour that matters against a real API server is tested on envtest.
"""

from __future__ import annotations

import copy
import itertools
import queue
import threading
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import unquote

import jsonpatch
import orjson

from . import labels as label_selectors
from .apierrors import error_from_response
from .client import APIServerClient
from .clock import Clock, RealClock, rfc3339
from .gvk import GroupVersionKind, GroupVersionResource, RESTMapping
from .rest import check_call
from .restmapper import RESTMapper
from .scheme import Scheme

AdmissionHook = Callable[[str, GroupVersionKind, dict[str, Any], dict[str, Any] | None], dict[str, Any] | None]

BUILTIN_KINDS: tuple[tuple[str, str, str, str, bool, bool], ...] = (
    # group, version, kind, plural, namespaced, has status subresource
    ("", "v1", "Namespace", "namespaces", False, True),
    ("", "v1", "Node", "nodes", False, True),
    ("", "v1", "Pod", "pods", True, True),
    ("", "v1", "ConfigMap", "configmaps", True, False),
    ("", "v1", "Secret", "secrets", True, False),
    ("", "v1", "Service", "services", True, True),
    ("", "v1", "ServiceAccount", "serviceaccounts", True, False),
    ("", "v1", "Event", "events", True, False),
    ("apps", "v1", "Deployment", "deployments", True, True),
    ("apps", "v1", "ReplicaSet", "replicasets", True, True),
    ("apps", "v1", "StatefulSet", "statefulsets", True, True),
    ("apps", "v1", "DaemonSet", "daemonsets", True, True),
    ("batch", "v1", "Job", "jobs", True, True),
    ("coordination.k8s.io", "v1", "Lease", "leases", True, False),
    ("events.k8s.io", "v1", "Event", "events", True, False),
    ("policy", "v1", "PodDisruptionBudget", "poddisruptionbudgets", True, True),
)


@dataclass
class _Kind:
    mapping: RESTMapping
    status: bool


@dataclass(frozen=True, slots=True)
class _Call:
    kind: _Kind
    namespace: str | None
    name: str | None
    subresource: str | None
    params: dict[str, str]
    payload: Any
    content_type: str

    @property
    def dry_run(self) -> bool:
        return self.params.get("dryRun") == "All"


class _Response:
    """A finished response (what `Transport.request` returns)."""

    def __init__(self, status: int, data: bytes) -> None:
        self.status = status
        self.headers: dict[str, str] = {"Content-Type": "application/json"}
        self.data = data


class _WatchResponse:
    """A streaming watch response fed from a queue of JSON lines."""

    def __init__(self, lines: queue.Queue[bytes | None], on_close: Callable[[], None]) -> None:
        self._lines = lines
        self._on_close = on_close
        self._closed = False

    def stream(self, amount: int = 65536) -> Iterator[bytes]:
        while not self._closed:
            line = self._lines.get()
            if line is None:
                self._lines.task_done()
                return
            yield line + b"\n"
            self._lines.task_done()  # asked for the next line: the reader is done with this one (`FakeAPI.settle`)

    def shutdown(self) -> None:
        self.close()

    def release_conn(self) -> None:
        return

    def read(self) -> bytes:
        return b""

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._lines.put(None)
            self._on_close()


class _Watcher:
    def __init__(self, kind: _Kind, namespace: str | None, selector: label_selectors.Selector, fields: _FieldTerms):
        self.kind = kind
        self.namespace = namespace
        self.selector = selector
        self.fields = fields
        self.lines: queue.Queue[bytes | None] = queue.Queue()


class FakeAPI:
    """The in-memory API server. Thread-safe."""

    def __init__(self, clock: Clock | None = None, history: int = 10_000) -> None:
        self._clock = clock or RealClock()
        self._lock = threading.RLock()
        self._kinds: dict[GroupVersionKind, _Kind] = {}
        self._by_path: dict[tuple[str, str, str], _Kind] = {}
        self._objects: dict[tuple[GroupVersionKind, str, str], dict[str, Any]] = {}
        self._version = itertools.count(1)
        self._last_version = 0
        # (resourceVersion, kind, event, object, the object before the event): watches need both to filter.
        self._events: list[tuple[int, GroupVersionKind, str, dict[str, Any], dict[str, Any] | None]] = []
        self._history = history
        self._watchers: list[_Watcher] = []
        self._hooks: list[AdmissionHook] = []
        self.requests: list[tuple[str, str]] = []
        for group, version, kind, plural, namespaced, status in BUILTIN_KINDS:
            self.register(GroupVersionKind(group, version, kind), plural, namespaced=namespaced, status=status)

    # -------------------------------------------------------------------------------------- set-up

    def register(self, gvk: GroupVersionKind, plural: str, *, namespaced: bool, status: bool = True) -> None:
        """Serve a kind (CRDs: register their GVK and plural; `status` declares a status subresource)."""
        mapping = RESTMapping(gvk, GroupVersionResource(gvk.group, gvk.version, plural), namespaced)
        kind = _Kind(mapping, status)
        with self._lock:
            self._kinds[gvk] = kind
            self._by_path[(gvk.group, gvk.version, plural)] = kind

    def admission(self, hook: AdmissionHook) -> None:
        """Add an admission hook: `hook(operation, gvk, obj, old)` returns a mutated object (or None to keep
        it) or raises an APIStatusError to deny (e.g. `ForbiddenError`). Runs on CREATE and UPDATE."""
        self._hooks.append(hook)

    def client(self, *, scheme: Scheme | None = None, field_owner: str | None = "fake") -> APIServerClient:
        """A real `APIServerClient` whose transport is this fake."""
        mapper = RESTMapper(self._discovery)
        return APIServerClient(self, mapper=mapper, scheme=scheme, field_owner=field_owner)  # type: ignore[arg-type]

    def discovery(self, path: str) -> dict[str, Any]:
        """The APIResourceList a real server answers at `path` (`/api/v1`, `/apis/<group>/<version>`)."""
        return self._discovery(path)

    def _discovery(self, path: str) -> dict[str, Any]:
        parts = path.strip("/").split("/")
        group, version = ("", parts[1]) if parts[0] == "api" else (parts[1], parts[2])
        with self._lock:
            resources = [
                {"name": kind.mapping.resource.resource, "kind": gvk.kind, "namespaced": kind.mapping.namespaced}
                for gvk, kind in self._kinds.items()
                if (gvk.group, gvk.version) == (group, version)
            ]
        return {
            "kind": "APIResourceList",
            "groupVersion": f"{group}/{version}" if group else version,
            "resources": resources,
        }

    # ------------------------------------------------------------------------------ direct inspection

    def objects(self, kind: GroupVersionKind | str) -> list[dict[str, Any]]:
        """Deep copies of every stored object of `kind` (test assertions)."""
        gvk = GroupVersionKind.parse(kind) if isinstance(kind, str) else kind
        with self._lock:
            return [_copy(obj) for (g, _, _), obj in sorted(self._objects.items(), key=lambda i: i[0][1:]) if g == gvk]

    @property
    def resource_version(self) -> str:
        return str(self._last_version)

    def settle(self, timeout: float = 30.0) -> None:
        """Return once every open watch's reader has taken in every event written so far (it asked for the next
        line): informers over this fake then hold every write — the point where a one-thread driver (the fleet
        simulator) reads its cache deterministically. Raises TimeoutError when a reader stalls."""
        with self._lock:
            watchers = list(self._watchers)
        for watcher in watchers:
            if not _taken_in(watcher.lines, timeout):
                raise TimeoutError(f"a watch of {watcher.kind.mapping.gvk} did not take its events in {timeout}s")

    # ---------------------------------------------------------------------------- transport interface

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        accept: str = "application/json",
        timeout: float | None = None,
    ) -> _Response:
        check_call()  # as the real transport: a cancelled caller or a passed deadline sends nothing
        self.requests.append((method, path))
        status, payload = self._serve(method, path, dict(params or {}), body, content_type or "")
        data = orjson.dumps(payload)
        if status >= 400:
            raise error_from_response(status, data, method=method, path=path)
        return _Response(status, data)

    def stream(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, str] | None = None,
        read_timeout: float | None = None,
        accept: str = "application/json",
    ) -> _WatchResponse:
        check_call()
        self.requests.append(("WATCH", path))
        kind, namespace, name, _ = self._route(path)
        if name:
            raise error_from_response(
                405, b'{"reason":"MethodNotAllowed","message":"watch a collection"}', method=method, path=path
            )
        options = dict(params or {})
        watcher = _Watcher(
            kind, namespace, _selector(options.get("labelSelector")), _fields(options.get("fieldSelector"))
        )
        since = int(options.get("resourceVersion") or 0)
        with self._lock:
            if options.get("sendInitialEvents") == "true":
                for obj in self._select(kind, namespace, watcher.selector, watcher.fields):
                    watcher.lines.put(orjson.dumps({"type": "ADDED", "object": obj}))
                bookmark = {
                    "kind": kind.mapping.gvk.kind,
                    "apiVersion": kind.mapping.gvk.api_version,
                    "metadata": {
                        "resourceVersion": self.resource_version,
                        "annotations": {"k8s.io/initial-events-end": "true"},
                    },
                }
                watcher.lines.put(orjson.dumps({"type": "BOOKMARK", "object": bookmark}))
            elif since:
                if self._events and since < self._events[0][0] - 1:
                    expired = {
                        "kind": "Status",
                        "status": "Failure",
                        "reason": "Expired",
                        "code": 410,
                        "message": f"too old resource version: {since}",
                    }
                    watcher.lines.put(orjson.dumps({"type": "ERROR", "object": expired}))
                    watcher.lines.put(None)  # the API server closes an expired watch after the ERROR event
                    return _WatchResponse(watcher.lines, lambda: None)
                for version, gvk, event, obj, previous in self._events:
                    if version > since and gvk == kind.mapping.gvk:
                        line = self._event_line(watcher, event, obj, previous)
                        if line is not None:
                            watcher.lines.put(line)
            self._watchers.append(watcher)
        return _WatchResponse(watcher.lines, lambda: self._unwatch(watcher))

    def close(self) -> None:
        with self._lock:
            for watcher in list(self._watchers):
                watcher.lines.put(None)
            self._watchers.clear()

    def _unwatch(self, watcher: _Watcher) -> None:
        with self._lock:
            if watcher in self._watchers:
                self._watchers.remove(watcher)

    # ------------------------------------------------------------------------------------- routing

    def _route(self, path: str) -> tuple[_Kind, str | None, str | None, str | None]:
        """path → (kind, namespace, name, subresource); segments are percent-decoded, as the API server does."""
        parts = path.strip("/").split("/")
        if "%" in path:
            parts = [unquote(part) for part in parts]
        if parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        elif parts[0] == "apis" and len(parts) >= 3:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise error_from_response(404, b'{"reason":"NotFound","message":"no such path"}', path=path)
        namespace = None
        if len(rest) >= 3 and rest[0] == "namespaces" and not (parts[0] == "api" and rest[2:] == ["status"]):
            namespace, rest = rest[1], rest[2:]
        plural = rest[0] if rest else ""
        kind = self._by_path.get((group, version, plural))
        if kind is None:
            if namespace is not None and not rest:
                kind, rest = self._kinds[GroupVersionKind("", "v1", "Namespace")], [namespace]
                return kind, None, namespace, None
            message = orjson.dumps(
                {"reason": "NotFound", "message": f"the server could not find the requested resource {plural}"}
            )
            raise error_from_response(404, message, path=path)
        name = rest[1] if len(rest) > 1 else None
        subresource = rest[2] if len(rest) > 2 else None
        return kind, namespace, name, subresource

    def _serve(
        self, method: str, path: str, params: dict[str, str], body: bytes | None, content_type: str
    ) -> tuple[int, Any]:
        kind, namespace, name, subresource = self._route(path)
        if subresource == "status" and not kind.status:
            message = f"the server could not find the requested resource {kind.mapping.resource.resource}/status"
            return 404, {"reason": "NotFound", "message": message}
        call = _Call(kind, namespace, name, subresource, params, orjson.loads(body) if body else None, content_type)
        verb = {"GET": self._read, "POST": self._post, "PUT": self._put, "PATCH": self._patch_verb,
                "DELETE": self._delete_verb}.get(method)  # fmt: skip
        if verb is None or (method in ("PUT", "PATCH", "DELETE") and not name):
            return 405, {"reason": "MethodNotAllowed", "message": f"{method} {path}"}
        with self._lock:
            return verb(call)

    def _read(self, call: _Call) -> tuple[int, Any]:
        if call.name is None:
            return 200, self._list(call.kind, call.namespace, call.params)
        obj = self._get(call.kind, call.namespace, call.name)
        return 200, _scale_of(obj) if call.subresource == "scale" else obj

    def _post(self, call: _Call) -> tuple[int, Any]:
        if call.subresource == "eviction" and call.name:
            self._delete(call.kind, call.namespace, call.name, {})
            return 201, {"kind": "Status", "status": "Success"}
        return 201, self._create(call.kind, call.namespace, call.payload or {}, call.dry_run)

    def _put(self, call: _Call) -> tuple[int, Any]:
        assert call.name is not None
        return 200, self._update(
            call.kind, call.namespace, call.name, call.payload or {}, call.subresource, call.dry_run
        )

    def _patch_verb(self, call: _Call) -> tuple[int, Any]:
        assert call.name is not None
        return 200, self._patch(
            call.kind, call.namespace, call.name, call.payload, call.content_type, call.subresource, call.dry_run
        )

    def _delete_verb(self, call: _Call) -> tuple[int, Any]:
        assert call.name is not None
        return 200, self._delete(call.kind, call.namespace, call.name, call.payload or {})

    # -------------------------------------------------------------------------------------- verbs

    def _key(self, kind: _Kind, namespace: str | None, name: str) -> tuple[GroupVersionKind, str, str]:
        return kind.mapping.gvk, (namespace or "") if kind.mapping.namespaced else "", name

    def _get(self, kind: _Kind, namespace: str | None, name: str) -> dict[str, Any]:
        obj = self._objects.get(self._key(kind, namespace, name))
        if obj is None:
            raise _not_found(kind, name)
        return obj  # stored objects are replaced, never changed in place; `request` serialises the answer

    def _select(
        self, kind: _Kind, namespace: str | None, selector: label_selectors.Selector, fields: _FieldTerms
    ) -> list[dict[str, Any]]:
        found = []
        for (gvk, obj_namespace, _), obj in sorted(self._objects.items(), key=lambda i: i[0][1:]):
            if gvk != kind.mapping.gvk or (namespace and obj_namespace != namespace):
                continue
            if selector.matches(obj["metadata"].get("labels")) and _fields_match(obj, fields):
                found.append(obj)  # as stored: `_list` answers shallow copies without apiVersion and kind
        return found

    def _list(self, kind: _Kind, namespace: str | None, params: dict[str, str]) -> dict[str, Any]:
        items = self._select(
            kind, namespace, _selector(params.get("labelSelector")), _fields(params.get("fieldSelector"))
        )
        start = int(params.get("continue") or 0)
        limit = int(params.get("limit") or 0)
        metadata: dict[str, Any] = {"resourceVersion": self.resource_version}
        if limit and start + limit < len(items):
            metadata["continue"] = str(start + limit)
        page = [
            {key: value for key, value in item.items() if key not in ("apiVersion", "kind")}
            for item in (items[start : start + limit] if limit else items[start:])
        ]
        gvk = kind.mapping.gvk
        return {"apiVersion": gvk.api_version, "kind": f"{gvk.kind}List", "metadata": metadata, "items": page}

    def _admit(self, operation: str, kind: _Kind, obj: dict[str, Any], old: dict[str, Any] | None) -> dict[str, Any]:
        for hook in self._hooks:
            mutated = hook(operation, kind.mapping.gvk, _copy(obj), _copy(old) if old else None)
            if mutated is not None:
                obj = mutated
        return obj

    def _create(self, kind: _Kind, namespace: str | None, obj: dict[str, Any], dry_run: bool) -> dict[str, Any]:
        meta = obj.setdefault("metadata", {})
        if meta.get("resourceVersion"):
            raise error_from_response(
                400, b'{"reason":"BadRequest","message":"resourceVersion should not be set on objects to be created"}'
            )
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + uuid.uuid4().hex[:5]
        if not meta.get("name"):
            raise _invalid(kind, "", "metadata.name: Required value: name or generateName is required")
        if kind.mapping.namespaced:
            meta["namespace"] = namespace or meta.get("namespace") or "default"
        key = self._key(kind, meta.get("namespace"), meta["name"])
        if key in self._objects:
            message = orjson.dumps(
                {
                    "reason": "AlreadyExists",
                    "message": f'{kind.mapping.resource.resource} "{meta["name"]}" already exists',
                }
            )
            raise error_from_response(409, message)
        obj = self._admit("CREATE", kind, obj, None)
        obj["apiVersion"], obj["kind"] = kind.mapping.gvk.api_version, kind.mapping.gvk.kind
        meta = obj["metadata"]
        meta.update(uid=str(uuid.uuid4()), generation=1, creationTimestamp=_now(self._clock))
        if dry_run:
            return obj
        self._store(key, obj, "ADDED")
        return obj

    def _update(
        self, kind: _Kind, namespace: str | None, name: str, obj: dict[str, Any], subresource: str | None, dry_run: bool
    ) -> dict[str, Any]:
        key = self._key(kind, namespace, name)
        old = self._objects.get(key)
        if old is None:
            raise _not_found(kind, name)
        _check_version(kind, name, old, obj)
        return self._commit(kind, key, old, obj, subresource, dry_run)

    def _commit(
        self,
        kind: _Kind,
        key: tuple[GroupVersionKind, str, str],
        old: dict[str, Any],
        new: dict[str, Any],
        subresource: str | None,
        dry_run: bool,
    ) -> dict[str, Any]:
        # Only the dicts changed below are new: the top level and `metadata`. The rest may be shared with `old`
        # (`_merge` keeps what a patch leaves alone) or with the request's decoded body, and stored objects are
        # never changed in place, so sharing is safe and saves copying whole objects on every write.
        if subresource == "status":
            new = {**old, "status": new.get("status")}  # everything but the status stays the old object's
        else:
            new = dict(new)
            if kind.status and "status" in old:
                new["status"] = old["status"]  # only /status may change status
            elif kind.status:
                new.pop("status", None)
        new["metadata"] = meta = dict(new.get("metadata") or {})
        for immutable in ("uid", "creationTimestamp", "namespace", "name", "deletionTimestamp"):
            if immutable in old["metadata"]:
                meta[immutable] = old["metadata"][immutable]
        new["apiVersion"], new["kind"] = kind.mapping.gvk.api_version, kind.mapping.gvk.kind
        if subresource != "status":
            new = self._admit("UPDATE", kind, new, old)
            meta = new["metadata"]
        spec_changed = subresource != "status" and _spec_changed(old, new)  # a status write keeps the rest as it was
        meta["generation"] = old["metadata"].get("generation", 1) + (1 if spec_changed else 0)
        meta["resourceVersion"] = old["metadata"]["resourceVersion"]
        if _without_version(new) == _without_version(old):
            return old  # a no-op write does not bump the resourceVersion
        if dry_run:
            return new
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self._remove(key, new)
            return _copy(new)
        self._store(key, new, "MODIFIED")
        return new  # stored, so never changed in place again; `request` serialises it

    def _patch(
        self,
        kind: _Kind,
        namespace: str | None,
        name: str,
        patch: Any,
        content_type: str,
        subresource: str | None,
        dry_run: bool,
    ) -> dict[str, Any]:
        key = self._key(kind, namespace, name)
        old = self._objects.get(key)
        if old is None:
            # Apply creates the object, but never through a subresource: the API server answers 404 there (a
            # status written just after a delete must not bring the object back without its spec).
            if content_type.startswith("application/apply-patch") and subresource is None:
                return self._create(kind, namespace, patch, dry_run)
            raise _not_found(kind, name)
        if subresource == "scale":
            replicas = (patch.get("spec") or {}).get("replicas")
            patch = {"spec": {"replicas": replicas}}
            subresource = None
        if content_type == "application/json-patch+json":
            try:
                patched = jsonpatch.apply_patch(_copy(old), patch)
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
                raise _invalid(kind, name, f"the JSON patch could not be applied: {exc}") from exc
        elif content_type == "application/strategic-merge-patch+json":  # `_merge` never changes `old`, and the
            patched = _merge(old, patch, by_name=True)  # stored result shares the decoded body, held by no one else
        else:
            patched = _merge(old, patch, by_name=False)
        if subresource == "resize":
            subresource = None
        _check_version(kind, name, old, patched)  # a resourceVersion in the patch is a precondition
        return self._commit(kind, key, old, patched, subresource, dry_run)

    def _delete(self, kind: _Kind, namespace: str | None, name: str, options: dict[str, Any]) -> dict[str, Any]:
        key = self._key(kind, namespace, name)
        old = self._objects.get(key)
        if old is None:
            raise _not_found(kind, name)
        preconditions = options.get("preconditions") or {}
        for field, value in preconditions.items():
            if old["metadata"].get(field) != value:
                raise error_from_response(
                    409, orjson.dumps({"reason": "Conflict", "message": f"Precondition failed: {field}"})
                )
        if old["metadata"].get("finalizers"):
            if not old["metadata"].get("deletionTimestamp"):
                marked = _copy(old)
                marked["metadata"]["deletionTimestamp"] = _now(self._clock)
                self._store(key, marked, "MODIFIED")
                return _copy(marked)
            return _copy(old)
        self._remove(key, old)
        return {"kind": "Status", "status": "Success"}

    # ---------------------------------------------------------------------------------- bookkeeping

    def _next_version(self) -> str:
        self._last_version = next(self._version)
        return str(self._last_version)

    def _store(self, key: tuple[GroupVersionKind, str, str], obj: dict[str, Any], event: str) -> None:
        previous = self._objects.get(key)
        obj["metadata"]["resourceVersion"] = self._next_version()
        self._objects[key] = obj
        self._publish(key[0], event, obj, previous)

    def _remove(self, key: tuple[GroupVersionKind, str, str], obj: dict[str, Any]) -> None:
        del self._objects[key]
        final = _copy(obj)
        final["metadata"]["resourceVersion"] = self._next_version()
        self._publish(key[0], "DELETED", final, final)

    def _publish(self, gvk: GroupVersionKind, event: str, obj: dict[str, Any], previous: dict[str, Any] | None) -> None:
        snapshot = obj  # stored, so never changed in place again
        before = previous  # no longer stored (replaced or removed), and never changed in place: no copy needed
        self._events.append((self._last_version, gvk, event, snapshot, before))
        if len(self._events) > self._history:
            del self._events[: len(self._events) - self._history]
        for watcher in self._watchers:
            if watcher.kind.mapping.gvk == gvk:
                line = self._event_line(watcher, event, snapshot, before)
                if line is not None:
                    watcher.lines.put(line)

    @classmethod
    def _event_line(
        cls, watcher: _Watcher, event: str, obj: dict[str, Any], previous: dict[str, Any] | None
    ) -> bytes | None:
        """What a filtered watch sees (the API server's cacheWatcher): an object that starts matching arrives
        as ADDED, one that stops matching as DELETED with its previous content; None if it never matched."""
        matches = event != "DELETED" and cls._matches(watcher, obj)
        matched = previous is not None and cls._matches(watcher, previous)
        if matches:
            return orjson.dumps({"type": event if matched else "ADDED", "object": obj})
        if previous is None or not matched:
            return None
        gone = {**previous, "metadata": {**previous["metadata"], "resourceVersion": obj["metadata"]["resourceVersion"]}}
        return orjson.dumps({"type": "DELETED", "object": gone})

    @staticmethod
    def _matches(watcher: _Watcher, obj: dict[str, Any]) -> bool:
        if watcher.namespace and obj["metadata"].get("namespace") != watcher.namespace:
            return False
        return watcher.selector.matches(obj["metadata"].get("labels")) and _fields_match(obj, watcher.fields)


# ----------------------------------------------------------------------------------------- helpers


_T = TypeVar("_T")
_STRICT_JSON = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_SUBCLASS
"""Values that are not plain JSON raise (and are deep-copied) rather than come back as strings or dicts."""


def _copy(obj: _T) -> _T:
    """A deep copy of a stored object. What the fake stores is JSON (request bodies, as the API server decodes
    them), and a JSON round trip copies it several times faster than `copy.deepcopy`; an object a test handed in
    that is not JSON (a non-str key, an int beyond 64 bits) is deep-copied."""
    try:
        copied: _T = orjson.loads(orjson.dumps(obj, option=_STRICT_JSON))
    except TypeError:
        return copy.deepcopy(obj)
    return copied


def _taken_in(lines: queue.Queue[bytes | None], timeout: float) -> bool:
    """Whether the reader of `lines` finished with every line put so far, waiting up to `timeout` seconds."""
    with lines.all_tasks_done:
        return lines.all_tasks_done.wait_for(lambda: lines.unfinished_tasks == 0, timeout)


def _now(clock: Clock) -> str:
    return rfc3339(clock.now())


def _check_version(kind: _Kind, name: str, old: dict[str, Any], new: dict[str, Any]) -> None:
    version = (new.get("metadata") or {}).get("resourceVersion")
    if version and version != old["metadata"]["resourceVersion"]:
        message = orjson.dumps(
            {
                "reason": "Conflict",
                "message": (
                    f"Operation cannot be fulfilled on {kind.mapping.resource.resource} {name!r}: the object has "
                    "been modified; please apply your changes to the latest version and try again"
                ),
            }
        )
        raise error_from_response(409, message)


def _not_found(kind: _Kind, name: str) -> Exception:
    message = orjson.dumps({"reason": "NotFound", "message": f'{kind.mapping.resource.resource} "{name}" not found'})
    return error_from_response(404, message)


def _invalid(kind: _Kind, name: str, detail: str) -> Exception:
    message = orjson.dumps({"reason": "Invalid", "message": f'{kind.mapping.gvk.kind} "{name}" is invalid: {detail}'})
    return error_from_response(422, message)


def _selector(text: str | None) -> label_selectors.Selector:
    try:
        return label_selectors.parse(text)
    except label_selectors.SelectorError as exc:  # the API server answers 400, not a client-side crash
        raise error_from_response(400, orjson.dumps({"reason": "BadRequest", "message": str(exc)})) from exc


_FieldTerms = list[tuple[str, bool, str]]
"""A parsed field selector: (field path, whether it must equal, value) for each term."""


def _fields(selector: str | None) -> _FieldTerms:
    terms: _FieldTerms = []
    for term in (selector or "").split(","):
        if term.strip():
            equal = "!=" not in term
            key, _, value = term.partition("!=" if not equal else "=")
            terms.append((key.strip(), equal, value.strip().lstrip("=")))
    return terms


def _fields_match(obj: dict[str, Any], fields: _FieldTerms) -> bool:
    for key, equal, value in fields:
        current: Any = obj
        for part in key.split("."):
            current = current.get(part) if isinstance(current, dict) else None
        if (str(current or "") == value) != equal:
            return False
    return True


def _merge(target: Any, patch: Any, *, by_name: bool) -> Any:
    """RFC 7386 merge; with `by_name`, lists of objects with a `name` merge element-wise (strategic merge). The
    result shares values with `patch`, a request body decoded for this call (nothing else holds it)."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif by_name and isinstance(value, list) and _named(value) and _named(result.get(key)):
            merged = {item["name"]: item for item in result[key]}
            order = [item["name"] for item in result[key]]
            for item in value:
                if item["name"] in merged:
                    merged[item["name"]] = _merge(merged[item["name"]], item, by_name=True)
                else:
                    merged[item["name"]] = item
                    order.append(item["name"])
            result[key] = [merged[name] for name in order]
        else:
            result[key] = _merge(result.get(key), value, by_name=by_name)
    return result


def _named(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, dict) and "name" in item for item in value)


def _without_version(obj: dict[str, Any]) -> dict[str, Any]:
    copied = dict(obj)
    copied["metadata"] = {k: v for k, v in obj["metadata"].items() if k not in ("resourceVersion", "generation")}
    return copied


def _spec_changed(old: dict[str, Any], new: dict[str, Any]) -> bool:
    ignored = {"metadata", "status", "apiVersion", "kind"}
    return {k: v for k, v in old.items() if k not in ignored} != {k: v for k, v in new.items() if k not in ignored}


def _scale_of(obj: dict[str, Any]) -> dict[str, Any]:
    status: dict[str, Any] = {"replicas": (obj.get("status") or {}).get("replicas", 0)}
    selector = (obj.get("spec") or {}).get("selector")
    if isinstance(selector, dict):  # the workload kinds' scale: their pod selector in query-parameter form
        status["selector"] = str(label_selectors.from_label_selector(selector))
    return {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": obj["metadata"]["name"], "namespace": obj["metadata"].get("namespace")},
        "spec": {"replicas": (obj.get("spec") or {}).get("replicas", 0)},
        "status": status,
    }


__all__ = [
    "BUILTIN_KINDS",
    "AdmissionHook",
    "FakeAPI",
]
