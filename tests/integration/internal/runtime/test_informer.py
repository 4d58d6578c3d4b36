"""Informers against the real API server: list+watch, relist after 410, selectors, indexes, projections."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import msgspec
import orjson
import pytest
import urllib3

from ballast.runtime import GroupVersionKind, Projection, RESTConfig
from ballast.runtime._decode import DictDecoder, ProjectionDecoder
from ballast.runtime.client import APIServerClient, ListerWatcher, WatchStream
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.informer import FuncHandler, SharedIndexInformer
from ballast.runtime.rest import Transport

CONFIGMAP = GroupVersionKind("", "v1", "ConfigMap")


class Recorder:
    """Collects informer callbacks as (event, name, extra) tuples."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, Any]] = []
        self._lock = threading.Lock()
        self.handler = FuncHandler(
            add=lambda obj, initial: self._record("add", obj, initial),
            update=lambda old, new: self._record("update", new, None),
            delete=lambda obj: self._record("delete", obj, None),
        )

    def _record(self, event: str, obj: Any, extra: Any) -> None:
        name = obj["metadata"]["name"] if isinstance(obj, dict) else obj.metadata.name
        with self._lock:
            self.events.append((event, name, extra))

    def names(self, event: str) -> list[str]:
        with self._lock:
            return [name for kind, name, _ in self.events if kind == event]


def configmap(name: str, namespace: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels or {}},
    }


@pytest.fixture
def started() -> Iterator[list[SharedIndexInformer]]:
    informers: list[SharedIndexInformer] = []
    yield informers
    for informer in informers:
        informer.stop()


def _informer(
    client: APIServerClient, namespace: str, started: list[SharedIndexInformer], **options: Any
) -> SharedIndexInformer:
    label_selector = options.pop("label_selector", None)
    informer = SharedIndexInformer(
        client.lister_watcher(CONFIGMAP, namespace, label_selector), DictDecoder(CONFIGMAP), name="test", **options
    )
    started.append(informer)
    return informer


def test_list_then_watch_delivers_every_change_in_order(
    client: APIServerClient, envtest_namespace: str, started: list[SharedIndexInformer]
) -> None:
    client.create(configmap("before", envtest_namespace))
    informer = _informer(client, envtest_namespace, started)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler)
    informer.start()
    assert informer.wait_for_sync(10)
    assert recorder.events == [("add", "before", True)]
    made = client.create(configmap("after", envtest_namespace))
    client.patch(made, {"data": {"k": "v"}})
    client.delete(made)
    poll_until(lambda: recorder.names("delete") == ["after"], timeout=10, what="the delete event")
    assert recorder.events[1:] == [("add", "after", False), ("update", "after", None), ("delete", "after", None)]
    assert informer.store.keys() == [f"{envtest_namespace}/before"]
    # A handler added later first receives what is already cached, flagged as initial.
    late = Recorder()
    informer.add_event_handler(late.handler)
    assert late.events == [("add", "before", True)]
    stored = informer.store.get(f"{envtest_namespace}/before")
    assert stored is not None
    assert "managedFields" not in stored["metadata"]


class PartitionedListerWatcher:
    """Around the real lister-watcher: `partition()` cuts the open watch and holds re-watches back until
    `heal()`, as a network partition would — the informer then resumes from the version it last saw."""

    def __init__(self, inner: ListerWatcher) -> None:
        self.inner = inner
        self.streams: list[WatchStream] = []
        self._healed = threading.Event()
        self._healed.set()

    def list(self, **options: Any) -> bytes:
        return self.inner.list(**options)

    def watch(self, **options: Any) -> WatchStream:
        self._healed.wait(30)
        stream = self.inner.watch(**options)
        self.streams.append(stream)
        return stream

    def partition(self) -> None:
        self._healed.clear()
        self.streams[-1].close()

    def heal(self) -> None:
        self._healed.set()


@pytest.fixture(scope="module")
def uncached_env(envtest: Environment) -> Iterator[Environment]:
    """A control plane whose watches go to etcd (no watch cache), so a compacted version is a real 410."""
    with Environment(
        assets=envtest.assets, apiserver_args=["--watch-cache=false"], network_mode=envtest.network_mode
    ) as env:
        yield env


def test_a_watch_resuming_from_a_compacted_version_relists_and_delivers_the_difference(
    uncached_env: Environment, started: list[SharedIndexInformer]
) -> None:
    client = APIServerClient(Transport(RESTConfig(uncached_env.client_configuration())))
    namespace = "relist"
    client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    for name in ("keep", "drop"):
        client.create(configmap(name, namespace))
    lister_watcher = PartitionedListerWatcher(client.lister_watcher(CONFIGMAP, namespace))
    informer = SharedIndexInformer(lister_watcher, DictDecoder(CONFIGMAP), name="partitioned")
    started.append(informer)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler)
    informer.start()
    assert informer.wait_for_sync(10)
    poll_until(lambda: lister_watcher.streams, timeout=10, what="the first watch")

    lister_watcher.partition()
    client.delete(configmap("drop", namespace))
    client.create(configmap("new", namespace))
    revision = client.list(CONFIGMAP, namespace).resource_version
    compacted = urllib3.request(
        "POST", f"{uncached_env.etcd_url}/v3/kv/compaction", body=orjson.dumps({"revision": int(revision)})
    )
    assert compacted.status == 200
    lister_watcher.heal()

    poll_until(lambda: informer.relists >= 1, timeout=15, what="a relist after 410 Gone")
    poll_until(
        lambda: sorted(informer.store.keys()) == [f"{namespace}/keep", f"{namespace}/new"],
        timeout=15,
        what="the store to match the server after the relist",
    )
    assert "drop" in recorder.names("delete")
    assert "new" in recorder.names("add")


def test_a_label_scoped_informer_sees_delete_when_the_label_goes(
    client: APIServerClient, envtest_namespace: str, started: list[SharedIndexInformer]
) -> None:
    informer = _informer(client, envtest_namespace, started, label_selector="ballast.tightlinesoftware.com/mode")
    recorder = Recorder()
    informer.add_event_handler(recorder.handler)
    informer.start()
    assert informer.wait_for_sync(10)
    enrolled = client.create(
        configmap("enrolled", envtest_namespace, {"ballast.tightlinesoftware.com/mode": "measure"})
    )
    client.create(configmap("other", envtest_namespace))
    poll_until(lambda: recorder.names("add") == ["enrolled"], timeout=10, what="the enrolled add")
    client.patch(enrolled, {"metadata": {"labels": {"ballast.tightlinesoftware.com/mode": None}}})
    poll_until(lambda: recorder.names("delete") == ["enrolled"], timeout=10, what="a delete when the label goes")
    assert informer.store.keys() == []
    assert client.get("v1/ConfigMap", "enrolled", envtest_namespace)  # the object itself still exists


def test_indexes_follow_changes(
    client: APIServerClient, envtest_namespace: str, started: list[SharedIndexInformer]
) -> None:
    informer = _informer(client, envtest_namespace, started)
    informer.add_indexers({"by-app": lambda obj: [obj["metadata"].get("labels", {}).get("app", "")]})
    informer.start()
    assert informer.wait_for_sync(10)
    first = client.create(configmap("a1", envtest_namespace, {"app": "api"}))
    client.create(configmap("w1", envtest_namespace, {"app": "web"}))
    poll_until(lambda: len(informer.store) == 2, timeout=10, what="two objects")
    assert [o["metadata"]["name"] for o in informer.store.by_index("by-app", "api")] == ["a1"]
    client.patch(first, {"metadata": {"labels": {"app": "web"}}})
    poll_until(lambda: informer.store.by_index("by-app", "api") == [], timeout=10, what="the index to move")
    assert informer.store.index_keys("by-app", "web") == [f"{envtest_namespace}/a1", f"{envtest_namespace}/w1"]
    assert informer.store.by_index("namespace", envtest_namespace)  # every informer has the namespace index


class ConfigMapProjection(Projection, frozen=True):
    data: dict[str, str] = msgspec.field(default_factory=dict)


def test_a_projection_informer_stores_only_declared_fields(
    client: APIServerClient, envtest_namespace: str, started: list[SharedIndexInformer]
) -> None:
    client.create({**configmap("p", envtest_namespace, {"app": "x"}), "data": {"k": "v"}, "binaryData": {"b": "AA=="}})
    informer = SharedIndexInformer(
        client.lister_watcher(CONFIGMAP, envtest_namespace), ProjectionDecoder(ConfigMapProjection), name="projection"
    )
    started.append(informer)
    informer.start()
    assert informer.wait_for_sync(10)
    (stored,) = informer.store.values()
    assert isinstance(stored, ConfigMapProjection)
    assert (stored.metadata.name, stored.metadata.labels, stored.data) == ("p", {"app": "x"}, {"k": "v"})
    assert not hasattr(stored, "binary_data")
    with pytest.raises(AttributeError):
        stored.data = {}  # type: ignore[misc]


def test_streaming_list_syncs_from_initial_events(
    client: APIServerClient, envtest_namespace: str, started: list[SharedIndexInformer]
) -> None:
    for index in range(3):
        client.create(configmap(f"s{index}", envtest_namespace))
    informer = _informer(client, envtest_namespace, started, watch_list=True)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler)
    informer.start()
    assert informer.wait_for_sync(10)
    assert sorted(recorder.names("add")) == ["s0", "s1", "s2"]
    assert all(extra is True for kind, _, extra in recorder.events if kind == "add")
    client.create(configmap("s3", envtest_namespace))
    poll_until(lambda: "s3" in recorder.names("add"), timeout=10, what="a watch event after the streaming list")
    assert informer.relists == 0


def test_a_silent_stream_is_reopened(
    client: APIServerClient, envtest_namespace: str, started: list[SharedIndexInformer]
) -> None:
    informer = _informer(client, envtest_namespace, started, inactivity_timeout=1.0)
    recorder = Recorder()
    informer.add_event_handler(recorder.handler)
    informer.start()
    assert informer.wait_for_sync(10)
    poll_until(lambda: informer.watch_restarts >= 1, timeout=10, what="the silent watch to be reopened")
    client.create(configmap("after-silence", envtest_namespace))
    poll_until(lambda: "after-silence" in recorder.names("add"), timeout=10, what="events after the reopen")
