"""A CronJob-like kind embedding `JobTemplateSpec`, on the real kube-apiserver: the stored template comes back
whole, a container without a name is refused by the CRD's schema, and a Job made from the stored template with
the framework's APIServerClient is accepted by batch/v1."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from ballast.runtime import GroupVersionKind, RESTConfig, Scheme
from ballast.runtime.client import APIServerClient
from ballast.runtime.crd import (
    ObjectMeta,
    ObjectReference,
    crd_for,
)
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.errors import APIError
from ballast.runtime.rest import Transport
from tests.unit.internal.runtime.crd.crontab import CronTab

GROUP = CronTab.GROUP
CRD_NAME = f"crontabs.{GROUP}"


TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "report"}, "annotations": {"team": "data"}},
    "spec": {
        "backoffLimit": 2,
        "template": {
            "metadata": {"labels": {"app": "report", "tier": "batch"}},
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "report",
                        "image": "registry.example.com/report:1.2",
                        "args": ["--since", "24h"],
                        "env": [
                            {"name": "MODE", "value": "daily"},
                            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "report", "key": "token"}}},
                        ],
                        "ports": [{"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
                        "resources": {
                            "limits": {"cpu": "500m", "memory": "256Mi"},
                            "requests": {"cpu": "250m", "memory": "128Mi"},
                        },
                        "volumeMounts": [{"name": "config", "mountPath": "/etc/report", "readOnly": True}],
                        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "metrics"}, "periodSeconds": 10},
                    }
                ],
                "volumes": [{"name": "config", "configMap": {"name": "report-config"}}],
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}
                            ]
                        }
                    }
                },
            },
        },
    },
}


@pytest.fixture(scope="module")
def crontabs(envtest: Environment) -> Iterator[str]:
    """The CronTab CRD as `crd_for` renders it, installed; yields the namespaces prefix of its collection."""
    assert envtest.install_crds([crd_for(CronTab)]) == [CRD_NAME]
    yield f"/apis/{GROUP}/v1/namespaces"
    envtest.rest.delete(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD_NAME}")


@pytest.fixture
def client(rest_config: RESTConfig) -> Iterator[APIServerClient]:
    """The framework's APIServerClient with CronTab registered in its scheme."""
    scheme = Scheme()
    scheme.register(GroupVersionKind(GROUP, "v1", "CronTab"), CronTab)
    client = APIServerClient(Transport(rest_config), scheme=scheme, field_owner="builtin-tests")
    yield client
    client.close()


def _crontab(namespace: str, template: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "CronTab",
        "metadata": {"name": f"c-{uuid.uuid4().hex[:8]}", "namespace": namespace},
        "spec": {"schedule": "*/5 * * * *", "jobTemplate": template},
    }


def test_the_stored_job_template_comes_back_whole(
    client: APIServerClient, crontabs: str, envtest_namespace: str
) -> None:
    sent = CronTab.model_validate(_crontab(envtest_namespace, copy.deepcopy(TEMPLATE)))

    client.create(sent)
    stored = client.get(CronTab, sent.metadata.name or "", envtest_namespace)

    assert stored.spec.job_template.to_wire() == TEMPLATE  # nothing pruned, nothing defaulted
    assert stored.spec.job_template.spec is not None
    assert stored.spec.job_template.spec.template.spec is not None
    resources = stored.spec.job_template.spec.template.spec.containers[0].resources
    assert resources is not None
    assert resources.limits == {"cpu": "500m", "memory": "256Mi"}


def test_a_container_without_a_name_is_refused(envtest: Environment, crontabs: str, envtest_namespace: str) -> None:
    template = copy.deepcopy(TEMPLATE)
    del template["spec"]["template"]["spec"]["containers"][0]["name"]

    with pytest.raises(APIError) as refused:
        envtest.rest.create(f"{crontabs}/{envtest_namespace}/crontabs", _crontab(envtest_namespace, template))

    assert refused.value.status == 422
    assert "spec.jobTemplate.spec.template.spec.containers[0].name: Required value" in refused.value.message


def test_a_job_made_from_the_stored_template_is_accepted(
    client: APIServerClient, crontabs: str, envtest_namespace: str
) -> None:
    created = client.create(CronTab.model_validate(_crontab(envtest_namespace, copy.deepcopy(TEMPLATE))))
    stored = client.get(CronTab, created.metadata.name or "", envtest_namespace)
    template = stored.spec.job_template
    assert template.spec is not None
    assert template.metadata is not None

    body: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": f"{stored.metadata.name}-1",
            "namespace": envtest_namespace,
            "labels": template.metadata.labels,
            "annotations": template.metadata.annotations,
        },
        "spec": template.spec.to_wire(),
    }
    job = client.create(body)

    pod = job["spec"]["template"]["spec"]
    sent = TEMPLATE["spec"]["template"]["spec"]
    assert job["metadata"]["labels"] == {"app": "report"}
    assert pod["containers"][0]["resources"] == sent["containers"][0]["resources"]
    assert pod["containers"][0]["env"] == sent["containers"][0]["env"]
    assert pod["containers"][0]["volumeMounts"] == sent["containers"][0]["volumeMounts"]
    assert pod["affinity"] == sent["affinity"]

    reference = ObjectReference(
        api_version="batch/v1",
        kind="Job",
        name=job["metadata"]["name"],
        namespace=envtest_namespace,
        uid=job["metadata"]["uid"],
    )
    stored.status.active = [reference]
    updated = client.status().update(stored)
    assert updated.status.active == [reference]
    assert isinstance(updated.metadata, ObjectMeta)
