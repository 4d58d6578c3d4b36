"""Decoders: dict decoding with managedFields stripped, typed projections, watch events, and the GC pause."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import msgspec
import orjson
import pytest

from ballast.runtime import GroupVersionKind, Projection
from ballast.runtime._decode import (
    INITIAL_EVENTS_END,
    DecodedEvent,
    Decoder,
    DictDecoder,
    ProjectionDecoder,
    gc_paused,
    strip_managed_fields,
)

POD = GroupVersionKind("", "v1", "Pod")


def _pod(name: str, version: str = "5") -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "shop",
            "resourceVersion": version,
            "labels": {"app": "web"},
            "managedFields": [{"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:spec": {}}}],
        },
        "spec": {"nodeName": "n1", "containers": [{"name": "web", "image": "nginx"}]},
        "status": {"phase": "Running"},
    }


def _list_body(items: list[dict[str, Any]], version: str = "9", continue_: str | None = None) -> bytes:
    metadata: dict[str, Any] = {"resourceVersion": version}
    if continue_:
        metadata["continue"] = continue_
    return orjson.dumps({"apiVersion": "v1", "kind": "PodList", "metadata": metadata, "items": items})


def _event(type_: str, obj: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": type_, "object": obj})


def _bookmark(version: str, *, end: str | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"resourceVersion": version}
    if end is not None:
        metadata["annotations"] = {INITIAL_EVENTS_END: end}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata}


_EXPIRED = {"kind": "Status", "status": "Failure", "reason": "Expired", "code": 410, "message": "too old"}


class _PodSpec(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    node_name: str = ""


class PodProjection(Projection, frozen=True):
    spec: _PodSpec = _PodSpec()


# ------------------------------------------------------------------------------------------- dicts


def test_dict_lists_strip_managed_fields_and_fill_api_version_and_kind() -> None:
    decoded = DictDecoder(POD).decode_list(_list_body([_pod("a"), _pod("b")], "9", "token"))
    assert [item["metadata"]["name"] for item in decoded.items] == ["a", "b"]
    for item in decoded.items:
        assert item["apiVersion"] == "v1"
        assert item["kind"] == "Pod"
        assert "managedFields" not in item["metadata"]
        assert item["status"] == {"phase": "Running"}  # everything else is kept
    assert decoded.resource_version == "9"
    assert decoded.continue_ == "token"


def test_dict_lists_without_items_or_metadata() -> None:
    decoded = DictDecoder(POD).decode_list(b'{"items": null}')
    assert decoded.items == []
    assert decoded.resource_version == ""
    assert decoded.continue_ == ""


def test_a_custom_transform_replaces_the_default() -> None:
    def keep_name_only(obj: dict[str, Any]) -> dict[str, Any]:
        return {"name": obj["metadata"]["name"], "kind": obj["kind"]}

    decoded = DictDecoder(POD, keep_name_only).decode_list(_list_body([_pod("a")]))
    assert decoded.items == [{"name": "a", "kind": "Pod"}]
    untouched = DictDecoder(POD, None).decode_list(_list_body([_pod("a")]))
    assert "managedFields" in untouched.items[0]["metadata"]


def test_strip_managed_fields_is_in_place_and_tolerates_no_metadata() -> None:
    obj = _pod("a")
    assert strip_managed_fields(obj) is obj
    assert "managedFields" not in obj["metadata"]
    assert strip_managed_fields({"kind": "X"}) == {"kind": "X"}


@pytest.mark.parametrize("type_", ["ADDED", "MODIFIED", "DELETED"])
def test_dict_events(type_: str) -> None:
    event = DictDecoder(POD).decode_event(_event(type_, _pod("a", "17")))
    assert event.type == type_
    assert event.resource_version == "17"
    assert event.object["kind"] == "Pod"
    assert "managedFields" not in event.object["metadata"]
    assert event.status is None
    assert not event.initial_events_end


# ------------------------------------------------------------------------------------- projections


def test_projection_lists_keep_only_declared_fields_in_frozen_structs() -> None:
    decoded = ProjectionDecoder(PodProjection).decode_list(_list_body([_pod("a"), _pod("b")], "9", "next"))
    assert decoded.resource_version == "9"
    assert decoded.continue_ == "next"
    first = decoded.items[0]
    assert isinstance(first, PodProjection)
    assert first.metadata.name == "a"
    assert first.metadata.namespace == "shop"
    assert first.metadata.labels == {"app": "web"}
    assert first.spec.node_name == "n1"
    assert not hasattr(first, "status")  # undeclared: never decoded, never stored
    assert not hasattr(first.metadata, "managed_fields")
    with pytest.raises(AttributeError):
        first.metadata.name = "changed"  # type: ignore[misc]
    assert msgspec.to_builtins(first) == {
        "metadata": {"name": "a", "namespace": "shop", "resourceVersion": "5", "labels": {"app": "web"}},
        "spec": {"nodeName": "n1"},
    }


def test_projection_lists_without_items() -> None:
    decoded = ProjectionDecoder(PodProjection).decode_list(b'{"metadata": {}, "items": null}')
    assert decoded.items == []
    assert decoded.resource_version == ""


def test_projection_events() -> None:
    event = ProjectionDecoder(PodProjection).decode_event(_event("MODIFIED", _pod("a", "17")))
    assert event.type == "MODIFIED"
    assert event.resource_version == "17"
    assert isinstance(event.object, PodProjection)
    assert event.object.spec.node_name == "n1"


# ---------------------------------------------------------------------------- bookmarks and errors


@pytest.fixture(params=["dict", "projection"])
def decoder(request: pytest.FixtureRequest) -> Decoder:
    if request.param == "dict":
        return DictDecoder(POD)
    return ProjectionDecoder(PodProjection)


@pytest.mark.parametrize(("annotation", "end"), [("true", True), ("false", False), (None, False)])
def test_bookmarks_carry_their_version_and_the_initial_events_end_marker(
    decoder: Decoder, annotation: str | None, end: bool
) -> None:
    event = decoder.decode_event(_event("BOOKMARK", _bookmark("30", end=annotation)))
    assert event.type == "BOOKMARK"
    assert event.resource_version == "30"
    assert event.initial_events_end is end


def test_the_end_marker_counts_only_on_bookmarks(decoder: Decoder) -> None:
    added = _pod("a")
    added["metadata"]["annotations"] = {INITIAL_EVENTS_END: "true"}
    assert not decoder.decode_event(_event("ADDED", added)).initial_events_end


def test_error_events_carry_the_status_and_no_object(decoder: Decoder) -> None:
    event = decoder.decode_event(_event("ERROR", _EXPIRED))
    assert event == DecodedEvent("ERROR", None, "", status=_EXPIRED)


# -------------------------------------------------------------------------------------- GC pause


@pytest.fixture
def gc_enabled() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.enable()
    yield
    if not was_enabled:
        gc.disable()


@pytest.mark.usefixtures("gc_enabled")
def test_nested_pauses_restore_the_collector_only_at_the_outermost_exit() -> None:
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()


@pytest.mark.usefixtures("gc_enabled")
def test_a_pause_restores_the_collector_when_decoding_fails() -> None:
    with pytest.raises(orjson.JSONDecodeError):
        DictDecoder(POD).decode_list(b"{not json")
    assert gc.isenabled()
    with pytest.raises(msgspec.DecodeError):
        ProjectionDecoder(PodProjection).decode_list(b'{"items": [{"metadata": 5}]}')
    assert gc.isenabled()


@pytest.mark.usefixtures("gc_enabled")
def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with gc_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()


class _Container(msgspec.Struct, frozen=True):
    name: str = ""


class _Spec(msgspec.Struct, frozen=True):
    containers: tuple[_Container, ...] = ()  # not Optional: a null here would not decode


class _PodWithContainers(Projection, frozen=True):
    spec: _Spec = _Spec()


def test_pod_bookmarks_with_null_fields_decode_into_any_projection() -> None:
    """The API server writes Pod bookmarks with `"containers": null`; only their metadata matters."""
    decoder = ProjectionDecoder(_PodWithContainers)
    line = (
        b'{"type":"BOOKMARK","object":{"kind":"Pod","apiVersion":"v1","metadata":{"resourceVersion":"4242",'
        b'"annotations":{"k8s.io/initial-events-end":"true"}},"spec":{"containers":null},"status":{}}}'
    )
    event = decoder.decode_event(line)
    assert (event.type, event.resource_version, event.initial_events_end) == ("BOOKMARK", "4242", True)
