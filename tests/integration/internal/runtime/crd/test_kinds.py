"""The generated built-in kinds on the real API server: created, read, updated, patched and listed as typed models
with no scheme registration, and owned by a custom resource through `owns(Deployment)`; a field the model does
not know (an older model of a Deployment, as against a newer API server) survives a get → update round trip
(docs/design.md, difference 72); a Secret's data is written and read back but never shown."""

from __future__ import annotations

import base64
from typing import Any, ClassVar, Literal

import pytest
from pydantic import Field, ValidationError

from ballast.runtime import Builder, Context, Manager, Request, RESTConfig, Result, set_controller_reference
from ballast.runtime.client import APIServerClient
from ballast.runtime.controllerutil import create_or_update
from ballast.runtime.crd import CustomResource, Int32, LabelSelector, ObjectMeta, Scope, WireModel, crd_for
from ballast.runtime.crd.kinds import (
    ConfigMap,
    Container,
    Deployment,
    DeploymentSpec,
    PodSpec,
    PodTemplateSpec,
    Secret,
    Service,
    ServicePort,
    ServiceSpec,
)
from ballast.runtime.crd.kinds.base import BuiltinKind, BuiltinModel
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until
from tests.unit.internal.runtime.support import running

LABELS = {"app": "web"}


class OlderDeploymentSpec(BuiltinModel):
    """apps/v1 DeploymentSpec as a model written before `minReadySeconds` and `strategy` existed."""

    replicas: Int32 | None = None
    selector: LabelSelector
    template: PodTemplateSpec


class OlderDeployment(BuiltinKind):
    """A Deployment as that older model knows it."""

    GROUP: ClassVar[str] = "apps"
    VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "Deployment"
    PLURAL: ClassVar[str] = "deployments"
    SCOPE: ClassVar[Literal["Namespaced", "Cluster"]] = "Namespaced"

    api_version: str = ""
    kind: str = ""
    metadata: ObjectMeta = Field(default_factory=ObjectMeta)
    spec: OlderDeploymentSpec | None = None


def _deployment(name: str, namespace: str, **spec: Any) -> Deployment:
    template = PodTemplateSpec(
        metadata=ObjectMeta(labels=LABELS), spec=PodSpec(containers=[Container(name="web", image="nginx:1.27")])
    )
    return Deployment(
        metadata=ObjectMeta(name=name, namespace=namespace),
        spec=DeploymentSpec(selector=LabelSelector(match_labels=LABELS), template=template, **spec),
    )


def test_typed_built_in_kinds_are_created_read_updated_patched_and_listed(
    client: APIServerClient, envtest_namespace: str
) -> None:
    created = client.create(_deployment("web", envtest_namespace, replicas=1))
    assert isinstance(created, Deployment)
    assert created.spec is not None
    assert created.spec.strategy is not None
    assert created.spec.strategy.type == "RollingUpdate"  # the API server's default, typed

    fetched = client.get(Deployment, "web", envtest_namespace)
    assert fetched.spec is not None
    fetched.spec.replicas = 2
    updated = client.update(fetched)
    patched = client.patch(updated, {"spec": {"replicas": 3}})
    listed = client.list(Deployment, envtest_namespace).items

    assert isinstance(patched, Deployment)
    assert patched.spec is not None
    assert patched.spec.replicas == 3
    assert [item.metadata.name for item in listed] == ["web"]
    assert all(isinstance(item, Deployment) for item in listed)

    service = client.create(
        Service(
            metadata=ObjectMeta(name="web", namespace=envtest_namespace),
            spec=ServiceSpec(selector=LABELS, ports=[ServicePort(port=80, target_port=8080)]),
        )
    )
    assert service.spec is not None
    assert service.spec.cluster_ip  # assigned by the API server
    assert service.spec.ports is not None
    assert service.spec.ports[0].target_port == 8080
    config = client.create(ConfigMap(metadata=ObjectMeta(name="web", namespace=envtest_namespace), data={"a": "1"}))
    assert client.get(ConfigMap, "web", envtest_namespace).data == {"a": "1"} == config.data


def test_a_field_the_model_does_not_know_survives_a_read_modify_write(
    client: APIServerClient, envtest_namespace: str
) -> None:
    client.create(_deployment("older", envtest_namespace, replicas=1, min_ready_seconds=7))

    older = client.get(OlderDeployment, "older", envtest_namespace)
    assert older.spec is not None
    assert older.spec.model_extra is not None
    assert older.spec.model_extra["minReadySeconds"] == 7
    older.spec.replicas = 2
    client.update(older)

    current = client.get(Deployment, "older", envtest_namespace)
    assert current.spec is not None
    assert current.spec.replicas == 2
    assert current.spec.min_ready_seconds == 7  # kept, not reset to the server's default of 0
    assert current.spec.strategy is not None
    assert current.spec.strategy.rolling_update is not None  # the rest of what the old model does not declare
    with pytest.raises(ValidationError, match="unknown field 'minReadySeconds' for OlderDeploymentSpec"):
        OlderDeploymentSpec(selector=older.spec.selector, template=older.spec.template, minReadySeconds=8)  # type: ignore[call-arg]


def test_a_secret_is_written_and_read_but_never_shown(client: APIServerClient, envtest_namespace: str) -> None:
    password = base64.b64encode(b"hunter2-hunter2").decode()

    client.create(
        Secret(
            metadata=ObjectMeta(name="db", namespace=envtest_namespace),
            data={"password": password},
            string_data={"token": "s3cr3t-t0ken"},
        )
    )
    read = client.get(Secret, "db", envtest_namespace)

    assert read.data == {"password": password, "token": base64.b64encode(b"s3cr3t-t0ken").decode()}
    assert password not in repr(read)
    assert "s3cr3t" not in repr(read)
    assert base64.b64encode(b"s3cr3t-t0ken").decode() not in str(read)


class WebSpec(WireModel):
    size: Int32 = 1


class Web(CustomResource):
    """A web app that owns a Deployment."""

    GROUP, VERSION, KIND, PLURAL = "kinds.ballast.example", "v1", "Web", "webs"
    SCOPE: ClassVar[Scope] = "Namespaced"

    spec: WebSpec = Field(default_factory=WebSpec)


def test_a_typed_deployment_is_owned_through_owns(
    envtest: Environment, rest_config: RESTConfig, client: APIServerClient, envtest_namespace: str
) -> None:
    envtest.install_crds([crd_for(Web)])
    manager = Manager(rest_config, field_owner="kinds-tests", metrics_bind_address="0", health_probe_bind_address="0")
    manager.scheme.add(Web)
    read: list[Deployment] = []

    def reconcile(ctx: Context, request: Request) -> Result | None:
        web = manager.client.get(Web, request.name, request.namespace)

        def mutate(deployment: Deployment) -> None:
            read.append(deployment)
            if deployment.spec is None:
                deployment.spec = _deployment(request.name, request.namespace).spec
            assert deployment.spec is not None
            deployment.spec.replicas = web.spec.size
            set_controller_reference(web, deployment)

        create_or_update(
            manager.client, Deployment(metadata=ObjectMeta(name=request.name, namespace=request.namespace)), mutate
        )
        return None

    Builder(manager).for_(Web).owns(Deployment).named("web").complete(reconcile)
    typed = APIServerClient(client.transport, scheme=manager.scheme, field_owner="kinds-tests")
    with running(manager, stop_timeout=30):
        web = typed.create(Web(metadata=ObjectMeta(name="site", namespace=envtest_namespace), spec=WebSpec(size=2)))

        def replicas() -> int | None:
            deployment = client.get(Deployment, "site", envtest_namespace)
            return deployment.spec.replicas if deployment.spec else None

        poll_until(lambda: replicas() == 2, timeout=20, what="the owned Deployment with 2 replicas")
        owned = client.get(Deployment, "site", envtest_namespace)
        assert owned.metadata.owner_references is not None
        assert [(ref.kind, ref.uid, ref.controller) for ref in owned.metadata.owner_references] == [
            ("Web", web.metadata.uid, True)
        ]
        client.patch(owned, {"spec": {"replicas": 5}})  # a change to the owned object reconciles its owner
        poll_until(lambda: replicas() == 2, timeout=20, what="the owner's reconcile to put 2 replicas back")
    assert any(isinstance(deployment, Deployment) and deployment.spec is not None for deployment in read)
