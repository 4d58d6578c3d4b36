"""The generated built-in kinds: every recorded field typed, unknown fields refused in code and kept from the
server (docs/design.md, difference 72), a Secret's values never in repr or logs, and the kinds usable with the
client and any scheme without registration."""

from __future__ import annotations

import copy
import io
import logging
from typing import Any, ClassVar, assert_type

import pytest
from pydantic import ValidationError

from ballast.runtime import FakeAPI, GroupVersionKind, Scheme
from ballast.runtime.crd import LabelSelector, ObjectMeta, WireModel, builtin
from ballast.runtime.crd.kinds import (
    ConfigMap,
    Container,
    Deployment,
    DeploymentSpec,
    Job,
    PodSpec,
    PodTemplateSpec,
    Secret,
    Service,
    ServiceAccount,
    StatefulSet,
    apps_v1,
    batch_v1,
    core_v1,
)
from ballast.runtime.crd.kinds.base import BuiltinKind, BuiltinModel
from ballast.runtime.crd.wire import as_model
from ballast.runtime.log import JSONFormatter, TextFormatter, get_logger

LABELS = {"app": "web"}

# A Deployment as a newer API server would return it: `spec.rolloutPolicy`, `spec.template.spec.sandbox` and
# `status.readyPercent` are fields no recorded schema has.
NEWER: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "shop", "resourceVersion": "7", "managedFields": [{"manager": "x"}]},
    "spec": {
        "replicas": 2,
        "rolloutPolicy": {"mode": "Careful", "steps": [1, 2]},
        "selector": {"matchLabels": LABELS},
        "template": {
            "metadata": {"labels": LABELS},
            "spec": {"containers": [{"name": "web", "image": "nginx", "ports": [{"containerPort": 80}]}],
                     "sandbox": {"runtime": "gvisor"}},
        },
    },
    "status": {"replicas": 2, "readyPercent": 100},
}  # fmt: skip


def _deployment(**spec: Any) -> Deployment:
    template = PodTemplateSpec(
        metadata=ObjectMeta(labels=LABELS), spec=PodSpec(containers=[Container(name="web", image="nginx")])
    )
    return Deployment(
        metadata=ObjectMeta(name="web", namespace="shop"),
        spec=DeploymentSpec(selector=LabelSelector(match_labels=LABELS), template=template, **spec),
    )


def test_a_typo_in_code_is_refused_naming_the_field() -> None:
    with pytest.raises(ValidationError, match=r"unknown field 'replcias' for DeploymentSpec"):
        _deployment(replcias=2)


class _Gadget(WireModel):
    """A model of one's own, closed in code (docs/framework/crds.md); `_Part`, its field, is too, by inheritance."""

    CLOSED_IN_CODE: ClassVar[bool] = True
    size: int | None = None


class _Part(_Gadget):
    colour: str | None = None


class _OpenGadget(WireModel):
    size: int | None = None


class _Closed:
    CLOSED_IN_CODE: ClassVar[bool] = True


class _MixedGadget(_Closed, WireModel):
    size: int | None = None


def test_a_model_of_ones_own_closed_in_code_refuses_a_typo_and_an_open_one_keeps_it() -> None:
    with pytest.raises(ValidationError, match=r"unknown field 'sise' for _Gadget"):
        _Gadget.model_validate({"sise": 2})
    with pytest.raises(ValidationError, match=r"unknown field 'color' for _Part"):
        _Part.model_validate({"color": "red"})
    with pytest.raises(ValidationError, match=r"unknown field 'sise' for _MixedGadget"):
        _MixedGadget.model_validate({"sise": 2})  # closed by a mixin
    assert _Gadget.from_wire({"sise": 2}).model_extra == {"sise": 2}  # from the server: kept
    assert _OpenGadget.model_validate({"sise": 2}).model_extra == {"sise": 2}


def test_a_typo_deep_in_a_dict_built_in_code_is_refused_with_its_path() -> None:
    body = copy.deepcopy(NEWER)
    del body["spec"]["rolloutPolicy"], body["status"], body["spec"]["template"]["spec"]["sandbox"]
    body["spec"]["template"]["spec"]["containers"][0]["imagePullPolcy"] = "Always"

    with pytest.raises(ValidationError) as raised:
        Deployment.model_validate(body)

    (error,) = raised.value.errors()
    assert "'imagePullPolcy'" in error["msg"]
    assert error["loc"] == ("spec", "template", "spec", "containers", 0)


def test_assigning_an_unknown_field_raises_and_a_known_one_works() -> None:
    deployment = _deployment()
    assert deployment.spec is not None

    with pytest.raises(AttributeError, match="DeploymentSpec has no field 'replcias'"):
        deployment.spec.replcias = 3  # type: ignore[attr-defined]
    deployment.spec.replicas = 3

    assert deployment.to_wire()["spec"]["replicas"] == 3


def test_a_model_decoded_from_the_server_keeps_what_it_does_not_know() -> None:
    deployment = Deployment.from_wire(copy.deepcopy(NEWER))

    assert deployment.spec is not None
    assert deployment.spec.model_extra == {"rolloutPolicy": {"mode": "Careful", "steps": [1, 2]}}
    deployment.spec.replicas = 5  # a read-modify-write
    wire = deployment.to_wire()
    assert wire == {**NEWER, "spec": {**NEWER["spec"], "replicas": 5}}
    assert wire["spec"]["template"]["spec"]["sandbox"] == {"runtime": "gvisor"}
    assert wire["status"]["readyPercent"] == 100


def test_decoded_fields_stay_settable_and_new_ones_do_not() -> None:
    deployment = Deployment.from_wire(copy.deepcopy(NEWER))
    assert deployment.spec is not None

    deployment.spec.rolloutPolicy = {"mode": "Fast"}  # type: ignore[attr-defined]  # the server's own field

    assert deployment.to_wire()["spec"]["rolloutPolicy"] == {"mode": "Fast"}
    with pytest.raises(AttributeError):
        deployment.spec.rolloutPolicyy = {}  # type: ignore[attr-defined]


def test_the_decode_paths_keep_unknown_fields() -> None:
    for decoded in (Scheme.from_wire(copy.deepcopy(NEWER), Deployment), as_model(Deployment, copy.deepcopy(NEWER))):
        assert decoded.to_wire()["spec"]["rolloutPolicy"] == NEWER["spec"]["rolloutPolicy"]


def test_types_are_strict() -> None:
    with pytest.raises(ValidationError, match="replicas"):
        DeploymentSpec.model_validate(
            {"replicas": "2", "selector": {}, "template": {}}, context={"ballast.runtime.from_server": True}
        )


def test_api_version_and_kind_are_filled_in_and_checked() -> None:
    assert _deployment().to_wire()["apiVersion"] == "apps/v1"
    assert ConfigMap().to_wire() == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}}
    with pytest.raises(ValidationError, match="kind must be 'Deployment'"):
        Deployment.from_wire({"kind": "StatefulSet"})


def test_each_required_kind_is_generated_with_its_identity() -> None:
    kinds: list[type[BuiltinKind]] = [Deployment, StatefulSet, Job, Service, ConfigMap, Secret, ServiceAccount]

    identities = [(kind.GROUP, kind.VERSION, kind.KIND, kind.PLURAL, kind.SCOPE) for kind in kinds]

    assert identities == [
        ("apps", "v1", "Deployment", "deployments", "Namespaced"),
        ("apps", "v1", "StatefulSet", "statefulsets", "Namespaced"),
        ("batch", "v1", "Job", "jobs", "Namespaced"),
        ("", "v1", "Service", "services", "Namespaced"),
        ("", "v1", "ConfigMap", "configmaps", "Namespaced"),
        ("", "v1", "Secret", "secrets", "Namespaced"),
        ("", "v1", "ServiceAccount", "serviceaccounts", "Namespaced"),
    ]


def test_every_recorded_definition_is_a_model_with_every_property_a_field() -> None:
    models = {
        model.OPENAPI_NAME: model
        for module in (core_v1, apps_v1, batch_v1)
        for model in vars(module).values()
        if isinstance(model, type) and issubclass(model, BuiltinModel) and model.OPENAPI_NAME
    }
    for name, schema in builtin.recorded_definitions().items():
        if not name.startswith("io.k8s.api."):
            continue  # meta/v1, Quantity, IntOrString: the hand-written types
        fields = {field.serialization_alias or field.alias or key for key, field in models[name].model_fields.items()}
        assert fields == set(schema.get("properties", {})), name


def test_a_secret_never_shows_its_values() -> None:
    secret = Secret(
        metadata=ObjectMeta(name="db"), data={"password": "aHVudGVyMg=="}, string_data={"token": "s3cr3t-t0ken"}
    )
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = get_logger("test.secret")
    logger.logger.addHandler(handler)
    logger.logger.setLevel(logging.INFO)
    try:
        for formatter in (JSONFormatter(), TextFormatter()):
            handler.setFormatter(formatter)
            logger.with_values(secret=secret).info("read %s", secret, extra={"object": secret})
    finally:
        logger.logger.removeHandler(handler)

    shown = [repr(secret), str(secret), f"{secret}", stream.getvalue()]
    assert all("aHVudGVyMg==" not in text and "s3cr3t-t0ken" not in text for text in shown)
    assert "name='db'" in repr(secret)
    assert secret.to_wire()["data"] == {"password": "aHVudGVyMg=="}  # written, never shown


def test_a_secret_s_validation_error_does_not_echo_its_values() -> None:
    with pytest.raises(ValidationError) as raised:
        Secret.model_validate({"data": {"password": 12345678}, "stringData": {"token": "s3cr3t-t0ken"}})

    assert "12345678" not in str(raised.value)
    assert "s3cr3t-t0ken" not in str(raised.value)


def test_every_scheme_knows_the_built_in_kinds() -> None:
    scheme = Scheme()

    assert scheme.is_registered(Deployment)
    assert scheme.gvk_for(Secret) == GroupVersionKind("", "v1", "Secret")
    assert not scheme.is_registered(DeploymentSpec)


def test_the_client_reads_and_writes_typed_built_in_kinds() -> None:
    client = FakeAPI().client()

    created = client.create(_deployment(replicas=1))
    fetched = client.get(Deployment, "web", "shop")
    assert isinstance(created, Deployment)
    assert isinstance(fetched, Deployment)
    assert fetched.spec is not None
    assert fetched.spec.replicas == 1
    fetched.spec.replicas = 2
    updated = client.update(fetched)
    patched = client.patch(updated, {"spec": {"replicas": 3}})
    items = client.list(Deployment, "shop").items
    assert_type(items, list[Deployment])  # mypy checks the type: `list(Kind).items` is a list of that kind
    (listed,) = items

    assert isinstance(patched, Deployment)
    assert patched.spec is not None
    assert patched.spec.replicas == 3
    assert isinstance(listed, Deployment)
    assert_type(list(client.list_all(Deployment, "shop")), list[Deployment])
    assert listed.metadata.resource_version == patched.metadata.resource_version


def test_a_stateful_set_as_the_api_server_returns_it_round_trips() -> None:
    labels = {"app": "db"}
    stored = {  # kube-apiserver v1.37.2's answer: it fills the claim templates' apiVersion and kind itself
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "db", "namespace": "shop"},
        "spec": {
            "selector": {"matchLabels": labels},
            "serviceName": "db",
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "i"}]}},
            "volumeClaimTemplates": [
                {
                    "kind": "PersistentVolumeClaim",
                    "apiVersion": "v1",
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}},
                        "volumeMode": "Filesystem",
                    },
                    "status": {"phase": "Pending"},
                }
            ],
        },
    }

    statefulset = StatefulSet.from_wire(copy.deepcopy(stored))

    assert statefulset.to_wire() == stored
    assert statefulset.spec is not None
    claims = statefulset.spec.volume_claim_templates or []
    assert [claim.spec.access_modes for claim in claims if claim.spec] == [["ReadWriteOnce"]]


def test_acronyms_read_as_words_in_python_and_stay_as_they_are_on_the_wire() -> None:
    spec = core_v1.ServiceSpec.from_wire({"clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"], "externalIPs": []})
    pod = PodSpec(containers=[], host_ipc=True)

    assert (spec.cluster_ip, spec.cluster_ips, spec.external_ips) == ("10.0.0.1", ["10.0.0.1"], [])
    assert spec.to_wire() == {"clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"], "externalIPs": []}
    assert pod.to_wire() == {"containers": [], "hostIPC": True}
