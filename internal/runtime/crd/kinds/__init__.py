"""Typed built-in kinds, generated from the API server's own OpenAPI: `Deployment`, `StatefulSet` (`apps_v1`),
`Job` (`batch_v1`), `Service`, `ConfigMap`, `Secret`, `ServiceAccount`, `PersistentVolumeClaim` (`core_v1`), and
every type they hold (`PodSpec`, `Container`, …, each in its group-version's module).

    deployment = Deployment(
        metadata=ObjectMeta(name="web", namespace="shop"),
        spec=DeploymentSpec(replicas=2, selector=LabelSelector(match_labels=labels), template=...),
    )
    client.create(deployment)                      # a Deployment back, as stored
    client.get(Deployment, "web", "shop")          # no scheme registration: built-in kinds know what they are
    Builder(manager).for_(Memcached).owns(Deployment)

Every field is typed (strict: a string is not an integer). Building a model in code with a field it does not
declare raises a ValidationError naming it (`DeploymentSpec(replcias=2)`), and so does assigning one; a model
the client, the cache or a webhook decodes (`from_wire`) keeps the fields a newer API server sent, and
`to_wire()` writes them back (docs/design.md, difference 72). `repr()` of a `Secret` never shows `data` or
`stringData`.

The modules are written by `hack/gen-builtin-models` from the schemas `hack/record-builtin-schemas` recorded;
`--check` (a unit test) keeps them current.
"""

from __future__ import annotations

from .apps_v1 import Deployment, DeploymentSpec, DeploymentStatus, StatefulSet, StatefulSetSpec, StatefulSetStatus
from .base import BuiltinKind, BuiltinModel, Quantity
from .batch_v1 import Job, JobSpec, JobStatus, JobTemplateSpec
from .core_v1 import (
    ConfigMap,
    Container,
    ContainerPort,
    EnvVar,
    PersistentVolumeClaim,
    PodSpec,
    PodTemplateSpec,
    ResourceRequirements,
    Secret,
    Service,
    ServiceAccount,
    ServicePort,
    ServiceSpec,
    Volume,
    VolumeMount,
)

__all__ = [
    "BuiltinKind",
    "BuiltinModel",
    "ConfigMap",
    "Container",
    "ContainerPort",
    "Deployment",
    "DeploymentSpec",
    "DeploymentStatus",
    "EnvVar",
    "Job",
    "JobSpec",
    "JobStatus",
    "JobTemplateSpec",
    "PersistentVolumeClaim",
    "PodSpec",
    "PodTemplateSpec",
    "Quantity",
    "ResourceRequirements",
    "Secret",
    "Service",
    "ServiceAccount",
    "ServicePort",
    "ServiceSpec",
    "StatefulSet",
    "StatefulSetSpec",
    "StatefulSetStatus",
    "Volume",
    "VolumeMount",
]
