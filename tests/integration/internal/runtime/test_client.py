"""The client against the real API server: verbs, patch types, subresources, typed errors, pagination."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from ballast.runtime import (
    APPLY,
    JSON_PATCH,
    STRATEGIC,
    GroupVersionKind,
    ObjectList,
    RESTConfig,
    apierrors,
    labels,
    new_client,
)
from ballast.runtime.client import APIServerClient
from ballast.runtime.rest import deadline
from ballast.runtime.restmapper import NoKindMatchError
from tests.integration.internal.runtime.envtest.test_control_plane import WIDGET_CRD


def configmap(name: str, namespace: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, "data": data}


def test_create_get_update_delete_round_trip(client: APIServerClient, envtest_namespace: str) -> None:
    created = client.create(configmap("settings", envtest_namespace, mode="measure"))
    assert created["metadata"]["uid"]
    fetched = client.get("v1/ConfigMap", "settings", envtest_namespace)
    assert fetched["data"] == {"mode": "measure"}
    fetched["data"]["mode"] = "apply"
    updated = client.update(fetched)
    assert updated["data"] == {"mode": "apply"}
    assert updated["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    client.delete(updated)
    with pytest.raises(apierrors.NotFoundError, match='configmaps "settings" not found'):
        client.get("v1/ConfigMap", "settings", envtest_namespace)
    client.delete(updated, ignore_not_found=True)  # already gone: no error


def test_errors_are_typed(client: APIServerClient, envtest_namespace: str) -> None:
    stale = client.create(configmap("c", envtest_namespace, a="1"))
    client.patch(stale, {"data": {"a": "2"}})
    stale["data"]["a"] = "3"
    with pytest.raises(apierrors.ConflictError) as conflict:
        client.update(stale)  # stale resourceVersion
    assert conflict.value.status == 409
    with pytest.raises(apierrors.AlreadyExistsError):
        client.create(configmap("c", envtest_namespace))
    with pytest.raises(apierrors.UnprocessableEntityError, match=r"metadata\.name"):
        client.create(configmap("Not_Valid", envtest_namespace))
    with pytest.raises(apierrors.BadRequestError):
        client.list("v1/ConfigMap", envtest_namespace, label_selector="a in (")


def test_patch_types(client: APIServerClient, envtest_namespace: str) -> None:
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": envtest_namespace},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [
                {"name": "web", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}},
                {"name": "sidecar", "image": "envoy"},
            ]},
        }},
    }  # fmt: skip
    client.create(deployment)
    merged = client.patch(deployment, {"metadata": {"labels": {"tier": "front"}}})
    assert merged["metadata"]["labels"] == {"tier": "front"}
    strategic = client.patch(
        deployment,
        {"spec": {"template": {"spec": {"containers": [{"name": "web", "resources": {"requests": {"cpu": "200m"}}}]}}}},
        patch_type=STRATEGIC,
    )
    containers = strategic["spec"]["template"]["spec"]["containers"]
    assert [c["name"] for c in containers] == ["web", "sidecar"]  # merged by name, sidecar kept
    assert containers[0]["resources"]["requests"]["cpu"] == "200m"
    json_patched = client.patch(
        deployment, [{"op": "replace", "path": "/spec/replicas", "value": 3}], patch_type=JSON_PATCH
    )
    assert json_patched["spec"]["replicas"] == 3
    applied = client.patch(
        deployment,
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "annotations": {"owner": "tests"}}},
        patch_type=APPLY,
        field_manager="applier",
        force=True,
    )
    assert applied["metadata"]["annotations"] == {"owner": "tests"}
    managers = {entry["manager"] for entry in applied["metadata"]["managedFields"]}
    assert {"applier", "runtime-tests"} <= managers
    with pytest.raises(ValueError, match="force is only valid for server-side apply"):
        client.patch(deployment, {}, force=True)


def test_status_scale_resize_and_eviction_subresources(client: APIServerClient, envtest_namespace: str) -> None:
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": envtest_namespace},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "api"}}, "template": {
            "metadata": {"labels": {"app": "api"}}, "spec": {"containers": [{"name": "api", "image": "api"}]}}},
    }  # fmt: skip
    client.create(deployment)
    scale = client.subresource("scale").get(deployment)
    assert (scale["kind"], scale["spec"]["replicas"]) == ("Scale", 2)
    client.subresource("scale").patch(deployment, {"spec": {"replicas": 5}})
    assert client.get("apps/v1/Deployment", "api", envtest_namespace)["spec"]["replicas"] == 5
    status = client.status().patch(deployment, {"status": {"observedGeneration": 7}})
    assert status["status"]["observedGeneration"] == 7

    pod = {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": envtest_namespace},
        "spec": {"containers": [{"name": "app", "image": "app", "resources": {
            "requests": {"cpu": "300m"}, "limits": {"cpu": "300m"}}}]},
    }  # fmt: skip
    client.create(pod)
    resized = client.subresource("resize").patch(
        pod,
        {
            "spec": {
                "containers": [{"name": "app", "resources": {"requests": {"cpu": "200m"}, "limits": {"cpu": "200m"}}}]
            }
        },
        patch_type=STRATEGIC,
    )
    assert resized["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "200m"
    client.evict(pod)
    with pytest.raises(apierrors.NotFoundError):  # an unscheduled pod is deleted at once by its eviction
        client.get("v1/Pod", "p", envtest_namespace)


def test_list_pages_with_continue(client: APIServerClient, envtest_namespace: str) -> None:
    for index in range(7):
        client.create(configmap(f"page-{index}", envtest_namespace))
    first = client.list("v1/ConfigMap", envtest_namespace, limit=3)
    assert len(first) == 3
    assert first.continue_
    every = list(client.list_all("v1/ConfigMap", envtest_namespace, page_size=3))
    assert sorted(item["metadata"]["name"] for item in every) == [f"page-{i}" for i in range(7)]
    assert all(item["kind"] == "ConfigMap" for item in every)
    selected = client.list("v1/ConfigMap", envtest_namespace, field_selector="metadata.name=page-4")
    assert [item["metadata"]["name"] for item in selected] == ["page-4"]


def test_the_live_reader_takes_every_readers_list_options(client: APIServerClient, envtest_namespace: str) -> None:
    for name, tier in (("front-a", "front"), ("back-a", "back"), ("back-b", "back")):
        made = configmap(name, envtest_namespace)
        made["metadata"]["labels"] = {"tier": tier}
        client.create(made)

    def names(listed: ObjectList) -> list[str]:
        return sorted(item["metadata"]["name"] for item in listed)

    as_text = client.list("v1/ConfigMap", envtest_namespace, label_selector="tier=back")
    assert isinstance(as_text, ObjectList)
    assert as_text.resource_version
    assert names(as_text) == ["back-a", "back-b"]
    assert names(client.list("v1/ConfigMap", envtest_namespace, label_selector={"tier": "back"})) == names(as_text)
    selector = labels.parse("tier notin (front)")
    assert names(client.list("v1/ConfigMap", envtest_namespace, label_selector=selector)) == ["back-a", "back-b"]
    fields = {"metadata.name": "back-b"}
    assert names(client.list("v1/ConfigMap", envtest_namespace, field_selector=fields)) == ["back-b"]
    with pytest.raises(ValueError, match="the live API has no indexes; read through the cache"):
        client.list("v1/ConfigMap", envtest_namespace, index=("tier", "back"))


def test_writes_return_the_stored_object_and_reusing_an_updated_argument_says_what_to_do(
    client: APIServerClient, envtest_namespace: str
) -> None:
    argument = configmap("reused", envtest_namespace, a="1")
    created = client.create(argument)
    assert created["metadata"]["resourceVersion"]
    assert "resourceVersion" not in argument["metadata"]  # the argument is left unchanged
    created["data"]["a"] = "2"
    updated = client.update(created)
    assert updated["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    assert created["metadata"]["resourceVersion"] != updated["metadata"]["resourceVersion"]  # still the old one
    created["data"]["a"] = "3"  # Go's habit: the object passed to Update is current again; here it is not
    with pytest.raises(apierrors.ConflictError) as conflict:
        client.update(created)
    assert conflict.value.status == 409
    assert "the object you passed is unchanged by update(); use the returned object, or re-read it" in str(
        conflict.value
    )
    assert f"resourceVersion {created['metadata']['resourceVersion']} is stale" in conflict.value.message
    updated["data"]["a"] = "3"
    assert client.update(updated)["data"] == {"a": "3"}  # the returned object updates fine


class Widget(BaseModel):
    """A stand-in for our pydantic CRD models, registered in the scheme."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    apiVersion: str = "test.ballast.dev/v1"  # noqa: N815 - wire name
    kind: str = "Widget"
    metadata: dict[str, Any]
    spec: dict[str, Any] = {}


def test_typed_access_for_registered_models(client: APIServerClient, envtest: Any, envtest_namespace: str) -> None:
    envtest.install_crds([WIDGET_CRD])
    client.scheme.register(GroupVersionKind("test.ballast.dev", "v1", "Widget"), Widget)
    created = client.create(Widget(metadata={"name": "w", "namespace": envtest_namespace}, spec={"size": 2}))
    assert isinstance(created, Widget)
    assert created.metadata["uid"]
    fetched = client.get(Widget, "w", envtest_namespace)
    assert isinstance(fetched, Widget)
    assert fetched.spec == {"size": 2}
    listed = client.list(Widget, envtest_namespace)
    assert [w.metadata["name"] for w in listed] == ["w"]


def test_a_cooperative_deadline_bounds_calls(client: APIServerClient, envtest_namespace: str) -> None:
    with deadline(0.0), pytest.raises(apierrors.DeadlineExceededError):
        client.get("v1/ConfigMap", "anything", envtest_namespace)
    with deadline(30):
        assert client.list("v1/ConfigMap", envtest_namespace).items == []


def test_a_bearer_token_client_is_authorized_by_rbac(envtest: Any, envtest_namespace: str) -> None:
    credentials = envtest.service_account(envtest_namespace, "nobody")
    sa_client = new_client(RESTConfig(credentials.client_configuration()))
    with pytest.raises(apierrors.ForbiddenError, match="cannot list resource"):
        sa_client.list("v1/ConfigMap", envtest_namespace)


def test_unknown_kinds_are_named(client: APIServerClient) -> None:
    with pytest.raises(NoKindMatchError, match="no kind 'Gizmo' is served in 'v1'"):
        client.get("v1/Gizmo", "x")
