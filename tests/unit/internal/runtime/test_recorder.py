"""The event recorder on the in-memory API server: Events, deduplication, aggregation and the spam filter."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from ballast.runtime import Client, FakeAPI, FakeClock, GroupVersionKind, Projection
from ballast.runtime._decode import ObjectMeta
from ballast.runtime.apierrors import InternalServerError
from ballast.runtime.objects import freeze
from ballast.runtime.recorder import NORMAL, SPAM_BURST, WARNING, EventRecorder
from tests.unit.internal.runtime.support import eventually

RecorderFactory = Callable[..., EventRecorder]


@pytest.fixture
def make_recorder(client: Client, clock: FakeClock) -> Iterator[RecorderFactory]:
    made: list[EventRecorder] = []

    def make(target: Any = None, **options: Any) -> EventRecorder:
        recorder = EventRecorder(target or client, "profiles", host="node-1", clock=clock, **options)
        made.append(recorder)
        return recorder

    yield make
    for recorder in made:
        recorder.shutdown()


@pytest.fixture
def pod(client: Client) -> dict[str, Any]:
    created: dict[str, Any] = client.create(
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "shop"}}
    )
    return created


def test_an_event_names_its_object_reason_type_and_source(
    api: FakeAPI, pod: dict[str, Any], make_recorder: RecorderFactory
) -> None:
    recorder = make_recorder()
    recorder.event(pod, NORMAL, "Resized", "cpu 300m → 200m")
    recorder.shutdown()  # writes what is queued
    [event] = api.objects("v1/Event")
    assert event["metadata"]["namespace"] == "shop"
    assert event["metadata"]["name"].startswith("web-0.")
    assert event["involvedObject"] == {
        "apiVersion": "v1", "kind": "Pod", "name": "web-0", "namespace": "shop",
        "uid": pod["metadata"]["uid"], "resourceVersion": pod["metadata"]["resourceVersion"],
    }  # fmt: skip
    assert (event["type"], event["reason"], event["message"]) == (NORMAL, "Resized", "cpu 300m → 200m")
    assert event["source"] == {"component": "profiles", "host": "node-1"}
    assert (event["reportingComponent"], event["reportingInstance"]) == ("profiles", "node-1")
    assert event["count"] == 1
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2026-01-01T00:00:00Z"


def test_an_identical_event_patches_the_count(
    api: FakeAPI, pod: dict[str, Any], clock: FakeClock, make_recorder: RecorderFactory
) -> None:
    recorder = make_recorder()
    recorder.event(pod, WARNING, "ResizeFailed", "quota exceeded")
    clock.advance(90)
    recorder.event(pod, WARNING, "ResizeFailed", "quota exceeded")
    recorder.event(pod, WARNING, "ResizeFailed", "quota exceeded")
    recorder.event(pod, WARNING, "OtherReason", "quota exceeded")
    recorder.shutdown()
    events = {event["reason"]: event for event in api.objects("v1/Event")}
    assert len(events) == 2
    repeated = events["ResizeFailed"]
    assert repeated["count"] == 3
    assert repeated["firstTimestamp"] == "2026-01-01T00:00:00Z"
    assert repeated["lastTimestamp"] == "2026-01-01T00:01:30Z"
    assert events["OtherReason"]["count"] == 1
    assert len([r for r in api.requests if r[0] == "PATCH"]) == 2


def test_an_expired_event_is_created_afresh(api: FakeAPI, pod: dict[str, Any], make_recorder: RecorderFactory) -> None:
    recorder = make_recorder()
    recorder.event(pod, NORMAL, "Resized", "again")
    first = eventually(lambda: api.objects("v1/Event"), "the first event")[0]
    api.client().delete(first)  # the API server's event TTL
    recorder.event(pod, NORMAL, "Resized", "again")
    recorder.shutdown()
    [event] = api.objects("v1/Event")
    assert event["metadata"]["name"] != first["metadata"]["name"]
    assert event["count"] == 1


def test_more_than_ten_similar_events_are_combined(
    api: FakeAPI, pod: dict[str, Any], make_recorder: RecorderFactory
) -> None:
    recorder = make_recorder()
    for index in range(1, 13):
        recorder.event(pod, NORMAL, "Measured", f"sample {index}")
    recorder.shutdown()
    events = api.objects("v1/Event")
    individual = sorted(e["message"] for e in events if not e["message"].startswith("(combined"))
    combined = [e for e in events if e["message"].startswith("(combined")]
    assert individual == sorted(f"sample {index}" for index in range(1, 10))
    assert len(combined) == 1
    assert combined[0]["message"] == "(combined from similar events): sample 12"
    assert combined[0]["count"] == 3  # the 10th, 11th and 12th


def test_similar_events_age_out_of_the_aggregation_window(
    api: FakeAPI, pod: dict[str, Any], clock: FakeClock, make_recorder: RecorderFactory
) -> None:
    recorder = make_recorder()
    for index in range(9):
        recorder.event(pod, NORMAL, "Measured", f"sample {index}")
    eventually(lambda: len(api.objects("v1/Event")) == 9, "nine events")
    clock.advance(601)  # the 10-minute window passed: the tenth message starts a new group
    recorder.event(pod, NORMAL, "Measured", "sample 9")
    recorder.shutdown()
    messages = [e["message"] for e in api.objects("v1/Event")]
    assert len(messages) == 10
    assert not any(message.startswith("(combined") for message in messages)


def test_the_spam_filter_allows_a_burst_per_object_then_one_per_five_minutes(
    api: FakeAPI, pod: dict[str, Any], clock: FakeClock, make_recorder: RecorderFactory
) -> None:
    recorder = make_recorder()
    for _ in range(SPAM_BURST + 5):
        recorder.event(pod, WARNING, "Hot", "looping")
    assert recorder.dropped == 5
    other = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-1", "namespace": "shop"}}
    recorder.event(other, WARNING, "Hot", "looping")  # another object has its own bucket
    assert recorder.dropped == 5
    clock.advance(299)
    recorder.event(pod, WARNING, "Hot", "looping")
    assert recorder.dropped == 6
    clock.advance(1)
    recorder.event(pod, WARNING, "Hot", "looping")
    assert recorder.dropped == 6
    recorder.shutdown()
    counts = {e["involvedObject"]["name"]: e["count"] for e in api.objects("v1/Event")}
    assert counts == {"web-0": SPAM_BURST + 1, "web-1": 1}


@pytest.mark.parametrize(
    ("obj", "kind", "namespace"),
    [
        (freeze({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "namespace": "shop"}}),
         None, "shop"),
        (Projection(metadata=ObjectMeta(name="p", namespace="blog", uid="u")), GroupVersionKind("", "v1", "Pod"),
         "blog"),
        ({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}, None, "default"),
    ],
)  # fmt: skip
def test_views_projections_and_cluster_scoped_objects(
    api: FakeAPI, make_recorder: RecorderFactory, obj: Any, kind: GroupVersionKind | None, namespace: str
) -> None:
    recorder = make_recorder()
    recorder.event(obj, NORMAL, "Seen", "hello", kind=kind)
    recorder.shutdown()
    [event] = api.objects("v1/Event")
    assert event["metadata"]["namespace"] == namespace
    assert event["involvedObject"]["kind"] == (kind.kind if kind else obj["kind"])


def test_the_event_type_must_be_normal_or_warning(make_recorder: RecorderFactory, pod: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="event type must be Normal or Warning, not 'Error'"):
        make_recorder().event(pod, "Error", "Bad", "x")


class FlakyClient:
    """Wraps a client: the first create fails, and creates can be held to fill the recorder's queue."""

    def __init__(self, inner: Client) -> None:
        self.inner = inner
        self.failures = 1
        self.release = threading.Event()
        self.release.set()
        self.entered = threading.Event()

    def create(self, obj: Any) -> Any:
        self.entered.set()
        self.release.wait(10)
        if self.failures:
            self.failures -= 1
            raise InternalServerError(500, "InternalError", "etcd hiccup")
        return self.inner.create(obj)

    def patch(self, obj: Any, patch: Any) -> Any:
        return self.inner.patch(obj, patch)


def test_a_failed_write_does_not_stop_later_events(
    api: FakeAPI, client: Client, pod: dict[str, Any], make_recorder: RecorderFactory
) -> None:
    recorder = make_recorder(FlakyClient(client))
    recorder.event(pod, NORMAL, "First", "lost")
    recorder.event(pod, NORMAL, "Second", "kept")
    recorder.shutdown()
    assert [e["reason"] for e in api.objects("v1/Event")] == ["Second"]


def test_a_full_queue_drops_events_instead_of_blocking(
    client: Client, pod: dict[str, Any], make_recorder: RecorderFactory
) -> None:
    flaky = FlakyClient(client)
    flaky.failures = 0
    flaky.release.clear()
    recorder = make_recorder(flaky, queue_size=1)
    recorder.event(pod, NORMAL, "A", "taken by the writer")
    assert flaky.entered.wait(5)  # the writer is now held inside create
    recorder.event(pod, NORMAL, "B", "queued")
    recorder.event(pod, NORMAL, "C", "no room")
    assert recorder.dropped == 1
    flaky.release.set()
