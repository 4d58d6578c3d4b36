"""controllerutil: create-or-update/patch outcomes, merge patches, owner references and finalizers."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from ballast.runtime import (
    AlreadyOwnedError,
    Client,
    ConflictError,
    FakeAPI,
    GroupVersionKind,
    Projection,
    Scheme,
    controllerutil,
    get_controller_of,
    get_reference,
    new_controller_ref,
    set_controller_reference,
)
from ballast.runtime._decode import ObjectMeta
from ballast.runtime.controllerutil import (
    OperationResult,
    add_finalizer,
    contains_finalizer,
    merge_patch,
    remove_finalizer,
    set_owner_reference,
)
from ballast.runtime.objects import freeze
from tests.unit.internal.runtime.support import configmap

DEPLOYMENT = GroupVersionKind("apps", "v1", "Deployment")
NODE = GroupVersionKind("", "v1", "Node")


def _set_data(**data: str) -> Any:
    def mutate(obj: dict[str, Any]) -> None:
        obj["data"] = dict(data)

    return mutate


# ---------------------------------------------------------------------------------- create-or-update


@pytest.mark.parametrize("operation", [controllerutil.create_or_update, controllerutil.create_or_patch])
def test_created_updated_unchanged(api: FakeAPI, client: Client, operation: Any) -> None:
    obj = configmap("settings", "shop")
    assert operation(client, obj, _set_data(mode="measure")) is OperationResult.CREATED
    assert obj["metadata"]["resourceVersion"]  # `obj` now holds what the server stored
    assert api.objects("v1/ConfigMap")[0]["data"] == {"mode": "measure"}

    obj = configmap("settings", "shop")
    assert operation(client, obj, _set_data(mode="apply")) is OperationResult.UPDATED
    assert obj["data"] == {"mode": "apply"}
    assert obj["metadata"]["resourceVersion"] == api.objects("v1/ConfigMap")[0]["metadata"]["resourceVersion"]

    writes = len([r for r in api.requests if r[0] in ("PUT", "PATCH", "POST")])
    obj = configmap("settings", "shop")
    assert operation(client, obj, _set_data(mode="apply")) is OperationResult.NONE
    assert obj["data"] == {"mode": "apply"}
    assert len([r for r in api.requests if r[0] in ("PUT", "PATCH", "POST")]) == writes  # no write at all


def test_create_or_update_puts_and_create_or_patch_patches(api: FakeAPI, client: Client) -> None:
    client.create(configmap("a", "shop", mode="x"))
    controllerutil.create_or_update(client, configmap("a", "shop"), _set_data(mode="y"))
    assert api.requests[-1] == ("PUT", "/api/v1/namespaces/shop/configmaps/a")
    controllerutil.create_or_patch(client, configmap("a", "shop"), _set_data(mode="z"))
    assert api.requests[-1] == ("PATCH", "/api/v1/namespaces/shop/configmaps/a")
    assert api.objects("v1/ConfigMap")[0]["data"] == {"mode": "z"}


def test_create_or_update_sees_the_current_object(client: Client) -> None:
    client.create(configmap("a", "shop", mode="x", keep="1"))
    seen: list[dict[str, Any]] = []

    def mutate(obj: dict[str, Any]) -> None:
        seen.append(copy.deepcopy(obj))
        obj["data"]["mode"] = "y"

    controllerutil.create_or_update(client, configmap("a", "shop"), mutate)
    assert seen[0]["data"] == {"mode": "x", "keep": "1"}
    assert client.get("v1/ConfigMap", "a", "shop")["data"] == {"mode": "y", "keep": "1"}


def test_a_concurrent_write_surfaces_as_a_conflict(client: Client) -> None:
    client.create(configmap("a", "shop", mode="x"))

    def racing(obj: dict[str, Any]) -> None:
        client.patch(obj, {"data": {"other": "writer"}})  # someone else writes in between
        obj["data"]["mode"] = "mine"

    with pytest.raises(ConflictError):
        controllerutil.create_or_update(client, configmap("a", "shop"), racing)


@pytest.mark.parametrize("operation", [controllerutil.create_or_update, controllerutil.create_or_patch])
@pytest.mark.parametrize("exists", [True, False])
def test_mutate_must_not_change_identity(client: Client, operation: Any, exists: bool) -> None:
    if exists:
        client.create(configmap("a", "shop"))

    def rename(obj: dict[str, Any]) -> None:
        obj["metadata"]["name"] = "b"

    with pytest.raises(ValueError, match="must not change the object's name or namespace"):
        operation(client, configmap("a", "shop"), rename)


# ------------------------------------------------------------------------------------ merge patches


def _apply_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 MergePatch, written out from the RFC's pseudo-code."""
    if not isinstance(patch, dict):
        return patch
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _apply_merge_patch(result.get(key), value)
    return result


@pytest.mark.parametrize(
    ("before", "after", "patch"),
    [
        ({"a": 1}, {"a": 1}, {}),
        ({"a": 1}, {"a": 2}, {"a": 2}),
        ({"a": 1, "b": 2}, {"a": 1}, {"b": None}),
        ({"m": {"x": 1, "y": 2}}, {"m": {"x": 1, "y": 3, "z": 4}}, {"m": {"y": 3, "z": 4}}),
        ({"l": [1, 2, 3]}, {"l": [1, 3]}, {"l": [1, 3]}),  # lists are replaced whole
        ({"m": {"x": 1}}, {"m": 5}, {"m": 5}),
        ({"m": 5}, {"m": {"x": 1}}, {"m": {"x": 1}}),
        ({"m": {"x": 1}}, {"m": {}}, {"m": {"x": None}}),
    ],
)
def test_merge_patch_table(before: dict[str, Any], after: dict[str, Any], patch: dict[str, Any]) -> None:
    assert merge_patch(before, after) == patch
    assert _apply_merge_patch(before, patch) == after


_SCALARS = st.one_of(st.booleans(), st.integers(-3, 3), st.sampled_from(["", "a", "b"]))
_KEYS = st.sampled_from(["a", "b", "c", "d"])
# Merge patches cannot express a null value (null deletes), so documents hold none.
_DOCS = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=12,
)
_OBJECTS = st.dictionaries(_KEYS, _DOCS, max_size=4)


@settings(max_examples=150)
@given(_OBJECTS, _OBJECTS)
def test_a_merge_patch_turns_before_into_after(before: dict[str, Any], after: dict[str, Any]) -> None:
    patch = merge_patch(before, after)
    assert _apply_merge_patch(before, patch) == after
    assert (patch == {}) == (before == after)


@given(_OBJECTS, _OBJECTS)
def test_the_fake_api_applies_merge_patches_the_same_way(before: dict[str, Any], after: dict[str, Any]) -> None:
    api = FakeAPI()
    client = api.client()
    created = client.create({**configmap("p", "shop"), "spec": before})
    patched = client.patch(created, merge_patch({"spec": before}, {"spec": after}))
    assert patched.get("spec", {}) == after


# ---------------------------------------------------------------------------------- owner references


def _deployment(name: str = "web", namespace: str = "shop", uid: str = "uid-web") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "uid": uid}}


def test_set_controller_reference_adds_a_blocking_controller_reference() -> None:
    obj = configmap("c", "shop")
    set_controller_reference(_deployment(), obj, owner_gvk=DEPLOYMENT)
    assert obj["metadata"]["ownerReferences"] == [
        {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "uid-web", "controller": True,
         "blockOwnerDeletion": True},
    ]  # fmt: skip


def test_setting_the_same_controller_again_refreshes_it() -> None:
    obj = configmap("c", "shop")
    set_controller_reference(_deployment(uid="old"), obj, owner_gvk=DEPLOYMENT)
    set_controller_reference(_deployment(uid="new"), obj, owner_gvk=GroupVersionKind("apps", "v2", "Deployment"))
    references = obj["metadata"]["ownerReferences"]
    assert len(references) == 1
    assert references[0]["uid"] == "new"
    assert references[0]["apiVersion"] == "apps/v2"


def test_another_controller_is_refused() -> None:
    obj = configmap("c", "shop")
    set_controller_reference(_deployment("web"), obj, owner_gvk=DEPLOYMENT)
    with pytest.raises(AlreadyOwnedError, match="c is already controlled by Deployment web"):
        set_controller_reference(_deployment("api"), obj, owner_gvk=DEPLOYMENT)
    with pytest.raises(AlreadyOwnedError):
        set_controller_reference(_deployment("web"), obj, owner_gvk=GroupVersionKind("apps", "v1", "StatefulSet"))
    assert len(obj["metadata"]["ownerReferences"]) == 1


def test_non_controller_owners_coexist_with_a_controller() -> None:
    obj = configmap("c", "shop")
    set_owner_reference(_deployment("api"), obj, owner_gvk=DEPLOYMENT)
    set_owner_reference(_deployment("api", uid="newer"), obj, owner_gvk=DEPLOYMENT)  # refreshed, not duplicated
    set_controller_reference(_deployment("web"), obj, owner_gvk=DEPLOYMENT)
    references = obj["metadata"]["ownerReferences"]
    assert [(r["name"], r.get("controller", False)) for r in references] == [("api", False), ("web", True)]
    assert references[0]["uid"] == "newer"
    assert "blockOwnerDeletion" not in references[0]


@pytest.mark.parametrize(
    ("owner", "obj", "allowed"),
    [
        (_deployment(namespace="shop"), configmap("c", "shop"), True),
        (_deployment(namespace="shop"), configmap("c", "other"), False),
        ({"metadata": {"name": "node-1", "uid": "n"}}, configmap("c", "shop"), True),  # cluster-scoped owner
        (_deployment(namespace="shop"), {"metadata": {"name": "cluster-thing"}}, False),
    ],
)
def test_cross_namespace_ownership_is_refused(owner: dict[str, Any], obj: dict[str, Any], allowed: bool) -> None:
    owner_kind = DEPLOYMENT if owner["metadata"].get("namespace") else NODE
    if allowed:
        set_controller_reference(owner, obj, owner_gvk=owner_kind)
        assert obj["metadata"]["ownerReferences"][0]["name"] == owner["metadata"]["name"]
    else:
        with pytest.raises(ValueError, match="cross-namespace owner references are not allowed"):
            set_controller_reference(owner, obj, owner_gvk=owner_kind)
        assert "ownerReferences" not in obj["metadata"]


def test_owner_references_accept_views_as_owners() -> None:
    obj = configmap("c", "shop")
    set_controller_reference(freeze(_deployment()), obj, owner_gvk=DEPLOYMENT)
    assert obj["metadata"]["ownerReferences"][0]["uid"] == "uid-web"


def _owner(kind: str = "Deployment", name: str = "web", namespace: str = "shop") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
    }


class Database(BaseModel):
    """A model that does not carry its kind: the scheme says it."""

    metadata: dict[str, Any]


DATABASE = GroupVersionKind("db.example.com", "v1", "Database")


def test_set_controller_reference_takes_owner_controlled_scheme_and_reads_the_owners_kind() -> None:
    obj = configmap("c", "shop")
    set_controller_reference(_owner(), obj)  # controller-runtime's order; the kind is the owner's own
    assert obj["metadata"]["ownerReferences"] == [new_controller_ref(_owner(), DEPLOYMENT)]
    scheme = Scheme()
    scheme.register(DATABASE, Database)
    owned = configmap("d", "shop")
    database = Database(metadata={"name": "orders", "namespace": "shop", "uid": "uid-orders"})
    set_controller_reference(database, owned, scheme=scheme)
    assert owned["metadata"]["ownerReferences"][0]["apiVersion"] == "db.example.com/v1"
    assert owned["metadata"]["ownerReferences"][0]["kind"] == "Database"
    with pytest.raises(ValueError, match=r"cannot tell the kind of the owner orders.*pass scheme="):
        set_controller_reference(database, configmap("e", "shop"))


def test_a_second_controller_is_refused_naming_both_owners() -> None:
    obj = configmap("c", "shop")
    set_controller_reference(_owner("Deployment", "web"), obj)
    with pytest.raises(AlreadyOwnedError) as refused:
        set_controller_reference(_owner("StatefulSet", "db"), obj)
    message = str(refused.value)
    assert "shop/c is already controlled by Deployment web (uid uid-web)" in message
    assert "StatefulSet db cannot also be its controller" in message
    assert (refused.value.existing["name"], refused.value.owner["name"]) == ("web", "db")
    assert [r["name"] for r in obj["metadata"]["ownerReferences"]] == ["web"]


def test_a_namespaced_owner_cannot_own_a_cluster_scoped_object_or_one_in_another_namespace() -> None:
    cluster_scoped: dict[str, Any] = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}}
    with pytest.raises(
        ValueError, match=r"the cluster-scoped team cannot have a namespaced owner \(Deployment shop/web\)"
    ):
        set_controller_reference(_owner(), cluster_scoped)
    with pytest.raises(ValueError, match="Deployment shop/web cannot own an object in blog"):
        set_controller_reference(_owner(), configmap("c", "blog"))
    assert "ownerReferences" not in cluster_scoped["metadata"]


def test_get_controller_of_finds_the_controller_reference() -> None:
    obj = configmap("c", "shop")
    assert get_controller_of(obj) is None
    set_owner_reference(_owner("Deployment", "api"), obj)
    assert get_controller_of(obj) is None  # an owner, not a controller
    set_controller_reference(_owner("Deployment", "web"), obj)
    controller = get_controller_of(freeze(obj))  # views too; a plain dict comes back
    assert controller == new_controller_ref(_owner("Deployment", "web"), DEPLOYMENT)
    assert type(controller) is dict


def test_new_controller_ref_is_a_blocking_controller_reference() -> None:
    assert new_controller_ref(_owner(), DEPLOYMENT) == {
        "apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "uid-web", "controller": True,
        "blockOwnerDeletion": True,
    }  # fmt: skip


def test_get_reference_names_the_object_and_its_version() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "namespace": "shop", "uid": "u1", "resourceVersion": "42"}}  # fmt: skip
    assert get_reference(None, pod) == {
        "apiVersion": "v1", "kind": "Pod", "namespace": "shop", "name": "p", "uid": "u1", "resourceVersion": "42",
    }  # fmt: skip
    assert get_reference(None, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}) == {
        "apiVersion": "v1", "kind": "Node", "name": "n",
    }  # fmt: skip
    scheme = Scheme()
    scheme.register(DATABASE, Database)
    database = Database(metadata={"name": "orders", "namespace": "shop", "uid": "u2"})
    assert get_reference(scheme, database)["apiVersion"] == "db.example.com/v1"
    with pytest.raises(ValueError, match="cannot tell the kind of the object orders"):
        get_reference(None, database)


# ----------------------------------------------------------------------------------------- finalizers


def test_add_and_remove_finalizers_report_changes() -> None:
    obj: dict[str, Any] = {"metadata": {}}
    assert add_finalizer(obj, "ballast.dev/cleanup")
    assert not add_finalizer(obj, "ballast.dev/cleanup")
    assert add_finalizer(obj, "other")
    assert obj["metadata"]["finalizers"] == ["ballast.dev/cleanup", "other"]
    obj["metadata"]["finalizers"].append("ballast.dev/cleanup")
    assert remove_finalizer(obj, "ballast.dev/cleanup")  # every occurrence
    assert obj["metadata"]["finalizers"] == ["other"]
    assert not remove_finalizer(obj, "ballast.dev/cleanup")
    assert not remove_finalizer({}, "x")
    empty: dict[str, Any] = {}
    assert add_finalizer(empty, "x")
    assert empty == {"metadata": {"finalizers": ["x"]}}


class _Finalized(Projection, frozen=True):
    pass


@pytest.mark.parametrize(
    "obj",
    [
        {"metadata": {"finalizers": ["f"]}},
        freeze({"metadata": {"finalizers": ["f"]}}),
        _Finalized(metadata=ObjectMeta(finalizers=("f",))),
    ],
    ids=["dict", "view", "projection"],
)
def test_contains_finalizer_on_every_shape(obj: Any) -> None:
    assert contains_finalizer(obj, "f")
    assert not contains_finalizer(obj, "g")


@pytest.mark.parametrize("obj", [{}, {"metadata": {}}, {"metadata": {"finalizers": None}}, _Finalized()])
def test_contains_finalizer_without_finalizers(obj: Any) -> None:
    assert not contains_finalizer(obj, "f")
