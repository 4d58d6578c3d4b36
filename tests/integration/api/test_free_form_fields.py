"""A free-form field (`dict[str, Any]`, as a CronJob-style kind types its job template) keeps what is written
under it on the real API server: its schema says `x-kubernetes-preserve-unknown-fields`, so nothing is pruned."""

from __future__ import annotations

import contextlib
from typing import Any, ClassVar

from ballast.api.customresource import CustomResource
from ballast.api.schema import openapi_schema
from ballast.api.wire import WireModel
from ballast.internal.runtime import crdgen
from ballast.internal.runtime.crdgen import Scope
from ballast.internal.runtime.envtest import Environment


class TemplatedSpec(WireModel):
    schedule: str = ""
    job_template: dict[str, Any] | None = None


class Templated(CustomResource):
    """A test kind embedding a free-form job template."""

    GROUP: ClassVar[str] = "freeform.test.ballast.example"
    VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "Templated"
    PLURAL: ClassVar[str] = "templateds"
    SCOPE: ClassVar[Scope] = "Namespaced"

    spec: TemplatedSpec | None = None


def test_a_nested_object_under_a_free_form_field_is_stored_and_read_back_whole(envtest: Environment) -> None:
    names = crdgen.CRDNames.of(Templated)
    crd = crdgen.crd_for(names, crdgen.crd_schema(names, openapi_schema(Templated)))
    envtest.install_crds([crd])
    template = {"spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                                               "containers": [{"name": "hello", "image": "busybox",
                                                               "args": ["date"], "resources": {}}]}}}}  # fmt: skip
    path = f"/apis/{Templated.GROUP}/v1/namespaces/default/templateds"
    body = {"apiVersion": Templated.API_VERSION, "kind": "Templated", "metadata": {"name": "nightly"},
            "spec": {"schedule": "0 3 * * *", "jobTemplate": template}}  # fmt: skip
    try:
        envtest.rest.create(path, body)
        stored = envtest.rest.get(f"{path}/nightly")
        assert stored["spec"]["jobTemplate"] == template
        assert Templated.model_validate(stored).spec == TemplatedSpec(schedule="0 3 * * *", job_template=template)
    finally:
        with contextlib.suppress(Exception):
            envtest.rest.delete(f"{path}/nightly")
