"""Free-form fields (`dict[str, Any]`, as a CronJob-style kind types its job template; `Any`; lists of free-form
objects) keep what is written under them on the real API server: their schemas say
`x-kubernetes-preserve-unknown-fields`, so nothing is pruned, while the typed parts of the same kind still are."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, ClassVar

import pytest

from ballast.api.customresource import CustomResource
from ballast.api.schema import openapi_schema
from ballast.api.wire import WireModel
from ballast.runtime import crdgen
from ballast.runtime.crdgen import Scope
from ballast.runtime.envtest import Environment


class TemplatedSpec(WireModel):
    schedule: str = ""
    job_template: dict[str, Any] | None = None
    sidecars: list[dict[str, Any]] | None = None
    payload: Any = None
    labels: dict[str, str] | None = None


class Templated(CustomResource):
    """A test kind embedding a free-form job template."""

    GROUP: ClassVar[str] = "freeform.test.ballast.example"
    VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "Templated"
    PLURAL: ClassVar[str] = "templateds"
    SCOPE: ClassVar[Scope] = "Namespaced"

    spec: TemplatedSpec | None = None


@pytest.fixture
def path(envtest: Environment, envtest_namespace: str) -> Iterator[str]:
    """The kind's collection in a namespace of the test's own; the CRD installed from the model's schema."""
    names = crdgen.CRDNames.of(Templated)
    envtest.install_crds([crdgen.crd_for(names, crdgen.crd_schema(names, openapi_schema(Templated)))])
    collection = f"/apis/{Templated.GROUP}/v1/namespaces/{envtest_namespace}/templateds"
    yield collection
    with contextlib.suppress(Exception):
        envtest.rest.delete(f"{collection}/nightly")


def _create_and_read_back(envtest: Environment, path: str, spec: dict[str, Any]) -> dict[str, Any]:
    body = {"apiVersion": Templated.API_VERSION, "kind": "Templated", "metadata": {"name": "nightly"}, "spec": spec}
    envtest.rest.create(path, body)
    stored: dict[str, Any] = envtest.rest.get(f"{path}/nightly")
    return stored


def test_a_nested_object_under_a_free_form_field_is_stored_and_read_back_whole(envtest: Environment, path: str) -> None:
    template = {"metadata": {"labels": {"app": "hello"}},
                "spec": {"backoffLimit": 2,
                         "template": {"spec": {"restartPolicy": "OnFailure",
                                               "containers": [{"name": "hello", "image": "busybox",
                                                               "args": ["date", "-u"], "resources": {},
                                                               "env": [{"name": "TZ", "value": "UTC"}]}],
                                               "volumes": [{"name": "scratch", "emptyDir": {}}]}}}}  # fmt: skip
    sidecars = [{"name": "log", "ports": [{"containerPort": 80, "protocol": "TCP"}], "extra": {"deep": [[1, 2]]}}]
    payload = {"anything": [True, None, 1.5, "x", {"more": {"levels": ["here"]}}]}
    spec = {"schedule": "0 3 * * *", "jobTemplate": template, "sidecars": sidecars, "payload": payload}
    stored = _create_and_read_back(envtest, path, spec)
    assert stored["spec"]["jobTemplate"] == template
    assert stored["spec"]["sidecars"] == sidecars
    assert stored["spec"]["payload"] == payload
    assert Templated.model_validate(stored).spec == TemplatedSpec(
        schedule="0 3 * * *", job_template=template, sidecars=sidecars, payload=payload
    )


def test_an_untyped_field_keeps_a_scalar_and_the_typed_parts_are_still_pruned(envtest: Environment, path: str) -> None:
    spec = {"schedule": "@hourly", "payload": "just a string", "labels": {"a": "b"}, "unknownField": {"x": 1}}
    stored = _create_and_read_back(envtest, path, spec)
    # the typed spec has no `unknownField`: the server drops it, as the free-form markers must not leak upwards
    assert stored["spec"] == {"schedule": "@hourly", "payload": "just a string", "labels": {"a": "b"}}
