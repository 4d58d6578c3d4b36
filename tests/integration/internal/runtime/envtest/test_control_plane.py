"""The control plane is real: objects round-trip, watches deliver, subresources and kubectl work."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from kubernetes import client, watch

from ballast.runtime.envtest import Environment, ManifestError

WIDGET_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.test.ballast.dev"},
    "spec": {
        "group": "test.ballast.dev",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {"type": "object", "properties": {"size": {"type": "integer", "minimum": 1}}},
                            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                        },
                    }
                },
            }
        ],
    },
}


class EventRecorder:
    """Collects (type, name) of watch events on a background thread until `count` arrived."""

    def __init__(self, list_function: Callable[..., Any], count: int, **kwargs: Any) -> None:
        self.events: list[tuple[str, str]] = []
        self._done = threading.Event()
        self._ready = threading.Event()
        self._watch: Any = watch.Watch()  # type: ignore[no-untyped-call]
        self._thread = threading.Thread(target=self._run, args=(list_function, count, kwargs), daemon=True)
        self._thread.start()
        assert self._ready.wait(10)

    def _run(self, list_function: Callable[..., Any], count: int, kwargs: dict[str, Any]) -> None:
        listed = list_function(**kwargs, _preload_content=False)
        kwargs["resource_version"] = orjson.loads(listed.data)["metadata"]["resourceVersion"]
        self._ready.set()
        for event in self._watch.stream(list_function, timeout_seconds=30, **kwargs):
            obj = event["object"]
            name = obj["metadata"]["name"] if isinstance(obj, dict) else obj.metadata.name
            self.events.append((event["type"], name))
            if len(self.events) >= count:
                self._watch.stop()
        self._done.set()

    def wait(self) -> list[tuple[str, str]]:
        assert self._done.wait(30), f"watch saw only {self.events}"
        return self.events


@pytest.fixture
def core(api_client: Any) -> Any:
    """CoreV1Api, untyped here: its generated signatures want model classes where the server takes dicts."""
    return client.CoreV1Api(api_client)


def test_version_is_stamped_with_the_real_release(envtest: Environment) -> None:
    version = envtest.rest.get("/version")
    manifest_version = envtest.assets.directory.name
    assert version["gitVersion"] == f"v{manifest_version}"
    assert version["minor"] == manifest_version.split(".")[1]


def test_namespaces_are_created_watched_and_deleted(core: Any) -> None:
    selector = "suite=ballast-envtest-namespace-watch"
    recorder = EventRecorder(core.list_namespace, 2, label_selector=selector)
    core.create_namespace({"metadata": {"name": "watched-ns", "labels": {"suite": "ballast-envtest-namespace-watch"}}})
    core.delete_namespace("watched-ns")
    # No namespace controller runs here, so deletion leaves the namespace Terminating: one MODIFIED event.
    assert recorder.wait() == [("ADDED", "watched-ns"), ("MODIFIED", "watched-ns")]
    assert core.read_namespace("watched-ns").status.phase == "Terminating"


def test_configmaps_round_trip_and_are_watched(core: Any, envtest_namespace: str) -> None:
    recorder = EventRecorder(core.list_namespaced_config_map, 3, namespace=envtest_namespace)
    body = {"metadata": {"name": "settings"}, "data": {"mode": "measure"}}
    core.create_namespaced_config_map(envtest_namespace, body)
    core.patch_namespaced_config_map("settings", envtest_namespace, {"data": {"mode": "apply"}})
    assert core.read_namespaced_config_map("settings", envtest_namespace).data == {"mode": "apply"}
    core.delete_namespaced_config_map("settings", envtest_namespace)
    assert recorder.wait() == [("ADDED", "settings"), ("MODIFIED", "settings"), ("DELETED", "settings")]


def test_custom_resources_are_served_validated_and_watched(
    envtest: Environment, api_client: Any, envtest_namespace: str
) -> None:
    assert envtest.install_crds([WIDGET_CRD]) == ["widgets.test.ballast.dev"]
    custom: Any = client.CustomObjectsApi(api_client)
    args = {"group": "test.ballast.dev", "version": "v1", "namespace": envtest_namespace, "plural": "widgets"}
    recorder = EventRecorder(custom.list_namespaced_custom_object, 2, **args)
    widget = {"apiVersion": "test.ballast.dev/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": 3}}
    created = custom.create_namespaced_custom_object(body=widget, **args)
    assert created["spec"] == {"size": 3}
    custom.patch_namespaced_custom_object_status(name="w1", body={"status": {"phase": "Ready"}}, **args)
    assert recorder.wait() == [("ADDED", "w1"), ("MODIFIED", "w1")]
    assert custom.get_namespaced_custom_object(name="w1", **args)["status"] == {"phase": "Ready"}

    invalid = {**widget, "metadata": {"name": "w2"}, "spec": {"size": 0}}
    with pytest.raises(client.ApiException) as refused:
        custom.create_namespaced_custom_object(body=invalid, **args)
    assert refused.value.status == 422
    assert "spec.size" in str(refused.value.body)


def test_leases_round_trip(api_client: Any, envtest_namespace: str) -> None:
    coordination: Any = client.CoordinationV1Api(api_client)
    lease = {
        "metadata": {"name": "910c37cf.tightlinesoftware.com"},
        "spec": {"holderIdentity": "replica-a", "leaseDurationSeconds": 15, "leaseTransitions": 0},
    }
    recorder = EventRecorder(coordination.list_namespaced_lease, 2, namespace=envtest_namespace)
    coordination.create_namespaced_lease(envtest_namespace, lease)
    coordination.patch_namespaced_lease(
        "910c37cf.tightlinesoftware.com",
        envtest_namespace,
        {"spec": {"holderIdentity": "replica-b", "leaseTransitions": 1}},
    )
    read = coordination.read_namespaced_lease("910c37cf.tightlinesoftware.com", envtest_namespace)
    assert (read.spec.holder_identity, read.spec.lease_transitions) == ("replica-b", 1)
    assert recorder.wait() == [
        ("ADDED", "910c37cf.tightlinesoftware.com"),
        ("MODIFIED", "910c37cf.tightlinesoftware.com"),
    ]


def test_pod_resize_subresource_takes_a_strategic_merge_patch(core: Any, envtest_namespace: str) -> None:
    def container(name: str, cpu: str) -> dict[str, Any]:
        return {
            "name": name,
            "image": "registry.k8s.io/pause:3.10",
            "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}, "limits": {"cpu": cpu, "memory": "64Mi"}},
        }

    pod = {"metadata": {"name": "app"}, "spec": {"containers": [container("app", "300m"), container("sidecar", "50m")]}}
    core.create_namespaced_pod(envtest_namespace, pod)
    patch = {
        "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "200m"}, "limits": {"cpu": "200m"}}}]}
    }
    core.patch_namespaced_pod_resize(
        "app", envtest_namespace, patch, _content_type="application/strategic-merge-patch+json"
    )
    containers = {c.name: c.resources for c in core.read_namespaced_pod("app", envtest_namespace).spec.containers}
    assert containers["app"].requests == {"cpu": "200m", "memory": "64Mi"}
    assert containers["app"].limits == {"cpu": "200m", "memory": "64Mi"}
    assert containers["sidecar"].requests == {"cpu": "50m", "memory": "64Mi"}  # merged by name, not replaced


def test_kubectl_uses_the_admin_kubeconfig(envtest: Environment, envtest_namespace: str) -> None:
    assert f"namespace/{envtest_namespace}" in envtest.kubectl("get", "namespaces", "-o", "name").split()


def test_a_crd_file_that_does_not_parse_is_refused_by_name(envtest: Environment, tmp_path: Any) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x\n")
    with pytest.raises(ManifestError, match=f"{broken} does not parse as YAML"):
        envtest.install_crds([broken])


def test_a_crd_the_api_server_refuses_is_reported_with_its_message(envtest: Environment) -> None:
    bad = {**WIDGET_CRD, "metadata": {"name": "wrong.test.ballast.dev"}}
    with pytest.raises(
        ManifestError,
        match=r"the API server refused CustomResourceDefinition wrong\.test\.ballast\.dev.*"
        'must be spec.names.plural\\+"."\\+spec.group',
    ):
        envtest.install_crds([bad])


def test_a_non_crd_document_is_refused(envtest: Environment) -> None:
    with pytest.raises(
        ManifestError, match=r"expected apiextensions\.k8s\.io/v1 CustomResourceDefinition, got v1 ConfigMap"
    ):
        envtest.install_crds([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}])
