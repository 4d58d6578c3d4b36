"""Objects as the runtime hands them out: read-only views, thaw/dumps, and accessors on every shape."""

from __future__ import annotations

from typing import Any

import msgspec
import orjson
import pytest
from pydantic import BaseModel, ConfigDict, Field

from ballast.runtime import Projection, objects
from ballast.runtime._decode import ObjectMeta, OwnerReference
from ballast.runtime.objects import FrozenDict, FrozenList, freeze, stored, thaw


def _pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-0",
            "namespace": "shop",
            "uid": "u-1",
            "resourceVersion": "42",
            "generation": 3,
            "labels": {"app": "web"},
            "annotations": {"note": "x"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "controller": True}],
            "deletionTimestamp": "2026-01-01T00:00:00Z",
        },
        "spec": {"containers": [{"name": "web", "ports": [{"containerPort": 80}]}]},
    }


# ------------------------------------------------------------------------------------------ views


def test_views_wrap_nested_dicts_and_lists() -> None:
    view = freeze(_pod())
    assert isinstance(view, FrozenDict)
    containers = view["spec"]["containers"]
    assert isinstance(view["spec"], FrozenDict)
    assert isinstance(containers, FrozenList)
    assert isinstance(containers[0], FrozenDict)
    assert isinstance(containers[0]["ports"][0], FrozenDict)
    assert isinstance(containers[0:1], FrozenList)
    assert isinstance(view.get("spec"), FrozenDict)  # Mapping.get goes through __getitem__
    assert all(isinstance(value, FrozenDict) for value in view.values() if not isinstance(value, str))
    assert [type(item) for item in containers] == [FrozenDict]  # iteration too
    assert containers[0]["ports"][0]["containerPort"] == 80


def test_views_are_read_only() -> None:
    view = FrozenDict(_pod())
    with pytest.raises(TypeError):
        view["kind"] = "Service"  # type: ignore[index]
    with pytest.raises(TypeError):
        view["spec"]["containers"][0] = {}
    assert not hasattr(view, "update")
    assert not hasattr(view, "pop")
    assert not hasattr(view, "setdefault")
    assert not hasattr(view["spec"]["containers"], "append")
    with pytest.raises(AttributeError):
        view.extra = 1  # type: ignore[attr-defined]  # __slots__: no side channel either


def test_views_compare_equal_to_their_data_and_are_unhashable() -> None:
    data = _pod()
    view = freeze(data)
    assert view == data
    assert data == view
    assert view == freeze(_pod())
    assert view["spec"]["containers"] == data["spec"]["containers"]
    assert view["spec"]["containers"] == freeze(data["spec"]["containers"])
    assert {"name": "web", "ports": [{"containerPort": 80}]} in view["spec"]["containers"]
    assert view != {"other": 1}
    with pytest.raises(TypeError, match="not hashable"):
        hash(view)
    with pytest.raises(TypeError, match="not hashable"):
        hash(view["spec"]["containers"])
    assert len(view) == len(data)
    assert list(view) == list(data)
    assert "spec" in view
    assert "nope" not in view
    assert repr(freeze({"a": 1})) == "FrozenDict({'a': 1})"
    assert repr(freeze([1])) == "FrozenList([1])"


@pytest.mark.parametrize("scalar", [1, "s", None, 1.5, True])
def test_scalars_freeze_to_themselves(scalar: object) -> None:
    assert freeze(scalar) is scalar


def test_views_see_the_data_they_wrap_without_copying() -> None:
    data = {"a": {"b": 1}}
    view = freeze(data)
    data["a"]["b"] = 2
    assert view["a"]["b"] == 2


def test_stored_is_the_data_behind_a_view_without_a_copy() -> None:
    data = _pod()
    assert stored(freeze(data)) is data
    assert stored(freeze(data)["metadata"]) is data["metadata"]
    assert stored(freeze(data)["spec"]["containers"]) is data["spec"]["containers"]
    assert stored(data) is data
    assert stored(7) == 7


def test_thaw_gives_an_independent_mutable_deep_copy() -> None:
    data = _pod()
    thawed = thaw(freeze(data))
    assert thawed == data
    assert type(thawed) is dict
    assert type(thawed["spec"]["containers"]) is list
    thawed["spec"]["containers"][0]["name"] = "changed"
    assert data["spec"]["containers"][0]["name"] == "web"
    plain = thaw(data)
    assert plain == data
    assert plain is not data
    assert plain["metadata"] is not data["metadata"]
    assert thaw([freeze({"a": 1})]) == [{"a": 1}]
    assert thaw("scalar") == "scalar"


def test_dumps_encodes_views_inside_plain_structures() -> None:
    encoded = objects.dumps({"outer": freeze({"inner": [1, {"x": None}]}), "list": freeze([1, 2])})
    assert orjson.loads(encoded) == {"outer": {"inner": [1, {"x": None}]}, "list": [1, 2]}


def test_dumps_refuses_unknown_types() -> None:
    with pytest.raises(TypeError, match="not JSON serializable"):
        objects.dumps({"x": object()})


# ------------------------------------------------------------------------- projections and models


class _PodSpec(msgspec.Struct, frozen=True, rename="camel", omit_defaults=True):
    node_name: str = ""


class _PodProjection(Projection, frozen=True):
    spec: _PodSpec = _PodSpec()


class _Meta(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    name: str
    namespace: str | None = None
    resource_version: str | None = Field(default=None, alias="resourceVersion")
    labels: dict[str, str] = Field(default_factory=dict)


class _Widget(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    api_version: str = Field(default="example.com/v1", alias="apiVersion")
    kind: str = "Widget"
    metadata: _Meta
    size: int | None = None


def _projection() -> _PodProjection:
    return _PodProjection(
        metadata=ObjectMeta(
            name="web-0",
            namespace="shop",
            uid="u-1",
            resource_version="42",
            generation=3,
            labels={"app": "web"},
            annotations={"note": "x"},
            owner_references=(OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="web", controller=True),),
            deletion_timestamp="2026-01-01T00:00:00Z",
        ),
        spec=_PodSpec(node_name="n1"),
    )


@pytest.mark.parametrize("obj", [_pod(), freeze(_pod()), _projection()], ids=["dict", "view", "projection"])
def test_accessors_work_on_every_shape(obj: Any) -> None:
    assert objects.name(obj) == "web-0"
    assert objects.namespace(obj) == "shop"
    assert objects.uid(obj) == "u-1"
    assert objects.resource_version(obj) == "42"
    assert objects.generation(obj) == 3
    assert dict(objects.labels(obj)) == {"app": "web"}
    assert dict(objects.annotations(obj)) == {"note": "x"}
    assert len(objects.owner_references(obj)) == 1
    assert objects.deletion_timestamp(obj) == "2026-01-01T00:00:00Z"
    assert objects.object_key(obj) == "shop/web-0"


def test_accessors_on_a_pydantic_model() -> None:
    widget = _Widget(metadata=_Meta(name="w", namespace="shop", resourceVersion="7", labels={"a": "b"}))
    assert objects.name(widget) == "w"
    assert objects.namespace(widget) == "shop"
    assert objects.resource_version(widget) == "7"
    assert objects.labels(widget) == {"a": "b"}
    assert objects.generation(widget) == 0  # a field the model does not declare
    assert objects.owner_references(widget) == ()
    assert objects.deletion_timestamp(widget) is None


@pytest.mark.parametrize("obj", [{}, {"metadata": None}, object(), freeze({"metadata": {}})])
def test_accessors_default_when_metadata_is_missing(obj: Any) -> None:
    assert objects.name(obj) == ""
    assert objects.namespace(obj) == ""
    assert objects.uid(obj) == ""
    assert objects.generation(obj) == 0
    assert dict(objects.labels(obj)) == {}
    assert dict(objects.annotations(obj)) == {}
    assert tuple(objects.owner_references(obj)) == ()
    assert objects.deletion_timestamp(obj) is None
    assert objects.object_key(obj) == ""


def test_thaw_and_dumps_of_projections_and_models_use_wire_names() -> None:
    thawed = thaw(_projection())
    assert thawed["metadata"]["resourceVersion"] == "42"
    assert thawed["metadata"]["ownerReferences"][0] == {
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "controller": True,
    }  # fmt: skip
    assert thawed["spec"] == {"nodeName": "n1"}
    widget = _Widget(metadata=_Meta(name="w", resourceVersion="7"))
    assert thaw(widget) == {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {
        "name": "w", "resourceVersion": "7", "labels": {}}}  # fmt: skip
    assert orjson.loads(objects.dumps({"items": [widget, _projection()]}))["items"][0]["metadata"]["name"] == "w"
    assert orjson.loads(objects.dumps(_projection()))["spec"]["nodeName"] == "n1"


@pytest.mark.parametrize(
    ("obj", "key"),
    [
        ({"metadata": {"name": "n", "namespace": "ns"}}, "ns/n"),
        ({"metadata": {"name": "node-1"}}, "node-1"),
        ({"metadata": {"name": "node-1", "namespace": ""}}, "node-1"),
    ],
)
def test_object_key_and_split_key_round_trip(obj: dict[str, Any], key: str) -> None:
    assert objects.object_key(obj) == key
    assert objects.split_key(key) == (objects.namespace(obj), objects.name(obj))
