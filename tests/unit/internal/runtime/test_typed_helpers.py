"""The helpers that change an object take a typed model as well as a dict and give back the same kind: finalizers,
owner references, create-or-update/patch, status conditions (Go's calls on a fresh typed object), scheme.add."""

from __future__ import annotations

import datetime
import warnings
from typing import Any, ClassVar

import pytest
from pydantic import Field

from ballast.runtime import FakeAPI, FakeClock, GroupVersionKind, Scheme, controllerutil, set_controller_reference
from ballast.runtime.conditions import find_status_condition, set_status_condition
from ballast.runtime.controllerutil import OperationResult, add_finalizer, remove_finalizer, set_owner_reference
from ballast.runtime.crd import Condition, ConditionList, Conditions, CustomResource, Scope, WireModel, crd_schema
from ballast.runtime.crd.meta import OwnerReference
from ballast.runtime.objects import freeze

GADGET = GroupVersionKind("example.com", "v1", "Gadget")


class GadgetSpec(WireModel):
    size: int = 1


class GadgetStatus(WireModel):
    conditions: Conditions = ConditionList()


class Gadget(CustomResource):
    """A gadget."""

    GROUP, VERSION, KIND, PLURAL = "example.com", "v1", "Gadget", "gadgets"
    SCOPE: ClassVar[Scope] = "Namespaced"
    STATUS_SUBRESOURCE = True

    spec: GadgetSpec = Field(default_factory=GadgetSpec)
    status: GadgetStatus = Field(default_factory=GadgetStatus)


def _gadget(name: str = "g", **spec: Any) -> Gadget:
    return Gadget.model_validate({"metadata": {"name": name, "namespace": "shop", "uid": f"uid-{name}"}, "spec": spec})


def _dict(name: str = "d") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "shop", "uid": "u"}}


@pytest.fixture
def typed_api() -> Any:
    api = FakeAPI()
    api.register(GADGET, "gadgets", namespaced=True)
    scheme = Scheme()
    scheme.add(Gadget)
    yield api, api.client(scheme=scheme)
    api.close()


# ----------------------------------------------------------------------------------------- finalizers


@pytest.mark.parametrize("make", [_gadget, _dict], ids=["typed", "dict"])
def test_finalizers_are_added_once_and_removed_on_either_kind_of_object(make: Any) -> None:
    obj = make()
    assert add_finalizer(obj, "example.com/cleanup") is True
    assert add_finalizer(obj, "example.com/cleanup") is False
    assert controllerutil.contains_finalizer(obj, "example.com/cleanup")
    assert remove_finalizer(obj, "example.com/cleanup") is True
    assert remove_finalizer(obj, "example.com/cleanup") is False
    assert not controllerutil.contains_finalizer(obj, "example.com/cleanup")


def test_a_typed_finalizer_is_written_on_the_wire() -> None:
    gadget = _gadget()
    add_finalizer(gadget, "example.com/cleanup")
    assert gadget.to_wire()["metadata"]["finalizers"] == ["example.com/cleanup"]


@pytest.mark.parametrize("helper", [add_finalizer, remove_finalizer], ids=["add_finalizer", "remove_finalizer"])
@pytest.mark.parametrize("wrong", [freeze(_dict()), 42, "name"], ids=["view", "int", "str"])
def test_a_wrong_object_is_a_type_error_naming_what_is_accepted(helper: Any, wrong: Any) -> None:
    with pytest.raises(TypeError, match="takes a dict or a typed model"):
        helper(wrong, "example.com/cleanup")


def test_a_cache_view_is_told_to_thaw_first() -> None:
    with pytest.raises(TypeError, match=r"objects.thaw\(\)"):
        add_finalizer(freeze(_dict()), "x")


# ------------------------------------------------------------------------------------ owner references


def test_a_typed_object_gets_a_typed_controller_reference_from_a_dict_owner() -> None:
    owned = _gadget("owned")
    set_controller_reference(_dict("owner"), owned)
    [reference] = owned.metadata.owner_references or []
    assert isinstance(reference, OwnerReference)
    assert owned.to_wire()["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": "owner",
            "uid": "u",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def test_a_dict_gets_a_controller_reference_from_a_typed_owner() -> None:
    owned = _dict("owned")
    set_controller_reference(_gadget("owner"), owned)
    assert owned["metadata"]["ownerReferences"][0]["kind"] == "Gadget"
    assert owned["metadata"]["ownerReferences"][0]["uid"] == "uid-owner"


def test_a_typed_object_refuses_a_second_controller_and_refreshes_the_same_one() -> None:
    owned = _gadget("owned")
    set_controller_reference(_gadget("a"), owned)
    set_controller_reference(_gadget("a"), owned)
    assert len(owned.metadata.owner_references or []) == 1
    with pytest.raises(controllerutil.AlreadyOwnedError, match="already controlled by Gadget a"):
        set_controller_reference(_gadget("b"), owned)
    set_owner_reference(_gadget("b"), owned)
    assert [r.name for r in owned.metadata.owner_references or []] == ["a", "b"]


def test_set_controller_reference_refuses_a_view() -> None:
    with pytest.raises(TypeError, match="set_controller_reference takes a dict or a typed model"):
        set_controller_reference(_gadget(), freeze(_dict()))


# ---------------------------------------------------------------------------------- create-or-update


@pytest.mark.parametrize("operation", [controllerutil.create_or_update, controllerutil.create_or_patch])
def test_create_or_update_on_a_typed_object(typed_api: Any, operation: Any) -> None:
    api, client = typed_api
    seen: list[Any] = []

    def grow(gadget: Gadget) -> None:
        seen.append(type(gadget))
        gadget.spec.size = 3

    gadget = _gadget("g")
    assert operation(client, gadget, grow) is OperationResult.CREATED
    assert gadget.metadata.resource_version  # `gadget` now holds what the server stored
    assert operation(client, _gadget("g"), grow) is OperationResult.NONE

    def grow_more(gadget: Gadget) -> None:
        seen.append(type(gadget))
        gadget.spec.size = 5

    again = _gadget("g")
    assert operation(client, again, grow_more) is OperationResult.UPDATED
    assert isinstance(again, Gadget)
    assert again.spec.size == 5
    assert api.objects(GADGET)[0]["spec"] == {"size": 5}
    assert seen == [Gadget, Gadget, Gadget]


def test_create_or_update_refuses_a_view(typed_api: Any) -> None:
    _, client = typed_api
    with pytest.raises(TypeError, match="create_or_update takes a dict or a typed model"):
        controllerutil.create_or_update(client, freeze(_dict()), lambda obj: None)


# ------------------------------------------------------------------------------------- conditions


def test_go_style_set_status_condition_on_a_fresh_typed_object() -> None:
    clock = FakeClock(datetime.datetime(2026, 3, 4, 5, 6, 7, tzinfo=datetime.UTC))
    gadget = _gadget()
    assert gadget.status.conditions == []
    assert isinstance(gadget.status.conditions, ConditionList)
    assert "conditions" not in gadget.to_wire()["status"]  # an empty list stays off the wire (omitempty)

    new = {"type": "Available", "status": "False", "reason": "Reconciling", "message": "starting"}
    assert set_status_condition(gadget.status.conditions, new, clock=clock)
    [available] = gadget.status.conditions
    assert isinstance(available, Condition)  # a typed list holds typed elements
    assert available.last_transition_time == clock.now()

    clock.advance(60)
    same_status = Condition(type="Available", status="False", reason="StillReconciling", message="")
    assert set_status_condition(gadget.status.conditions, same_status, clock=clock)
    assert available.last_transition_time == datetime.datetime(2026, 3, 4, 5, 6, 7, tzinfo=datetime.UTC)
    assert available.reason == "StillReconciling"

    flipped = Condition(type="Available", status="True", reason="Ready", message="")
    assert set_status_condition(gadget.status.conditions, flipped, clock=clock)
    assert available.last_transition_time == clock.now()
    assert gadget.to_wire()["status"]["conditions"] == [
        {
            "type": "Available",
            "status": "True",
            "lastTransitionTime": "2026-03-04T05:07:07Z",
            "reason": "Ready",
            "message": "",
        }
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no serialisation warning: no dict among the typed conditions
        gadget.model_dump(mode="json")


def test_a_dict_list_stays_a_dict_list_and_takes_the_clock() -> None:
    clock = FakeClock(datetime.datetime(2026, 3, 4, 5, 6, 7, tzinfo=datetime.UTC))
    conditions: list[dict[str, Any]] = []
    set_status_condition(conditions, {"type": "Ready", "status": "True", "reason": "Ok", "message": ""}, clock=clock)
    assert conditions == [
        {"type": "Ready", "status": "True", "reason": "Ok", "message": "", "lastTransitionTime": "2026-03-04T05:06:07Z"}
    ]
    assert find_status_condition(conditions, "Ready") is conditions[0]


def test_set_status_condition_on_none_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="takes the list of conditions"):
        set_status_condition(None, {"type": "Ready", "status": "True", "reason": "Ok", "message": ""})  # type: ignore[call-overload]


def test_the_condition_schema_still_requires_its_transition_time() -> None:
    schema = crd_schema(Gadget)
    condition = schema["properties"]["status"]["properties"]["conditions"]["items"]
    assert condition["required"] == ["type", "status", "lastTransitionTime", "reason", "message"]


# ----------------------------------------------------------------------------------------- scheme.add


def test_a_kind_registers_itself_from_its_constants() -> None:
    scheme = Scheme()
    Gadget.add_to_scheme(scheme)
    scheme.add(Gadget)  # again: a no-op
    assert scheme.gvk_for(Gadget) == GADGET


def test_scheme_add_refuses_a_class_without_constants() -> None:
    with pytest.raises(TypeError, match=r"declare GROUP, VERSION and KIND.*GadgetSpec"):
        Scheme().add(GadgetSpec)
