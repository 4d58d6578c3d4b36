"""A typed Deployment (the generated `ballast.runtime.crd.kinds.Deployment`) owned by a typed custom resource
through the framework's helpers, on the mini-cluster: created and updated with create_or_update, owned with
set_controller_reference on the typed owner, and deleted by kube-controller-manager's garbage collector once the
owner goes (the memcached tutorial's ownership)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from pydantic import Field

from ballast.runtime import ConflictError, NotFoundError, Scheme, controllerutil, set_controller_reference
from ballast.runtime.client import APIServerClient
from ballast.runtime.controllerutil import OperationResult
from ballast.runtime.crd import ConditionList, Conditions, CustomResource, Int32, ObjectMeta, Scope, WireModel, crd_for
from ballast.runtime.crd.kinds import Deployment, DeploymentSpec
from ballast.runtime.envtest import MiniCluster
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.rest import Transport
from tests.e2e.support import create_namespace, deployment


class CacheSpec(WireModel):
    size: Int32 = 1


class CacheStatus(WireModel):
    conditions: Conditions = ConditionList()


class Cache(CustomResource):
    """A cache that owns a Deployment."""

    GROUP, VERSION, KIND, PLURAL = "gc.ballast.example", "v1", "Cache", "caches"
    SCOPE: ClassVar[Scope] = "Namespaced"
    STATUS_SUBRESOURCE = True

    spec: CacheSpec = Field(default_factory=CacheSpec)
    status: CacheStatus = Field(default_factory=CacheStatus)


def _retried_on_conflict(write: Callable[[], OperationResult], attempts: int = 5) -> OperationResult:
    """client-go's RetryOnConflict: `write` again, from a fresh read, while the API server answers 409."""
    for _ in range(attempts - 1):
        try:
            return write()
        except ConflictError:
            continue
    return write()


def test_an_owned_deployment_is_created_updated_and_garbage_collected(cluster: MiniCluster) -> None:
    cluster.env.install_crds([crd_for(Cache)])
    namespace = create_namespace(cluster, "owned-deployment-gc")
    scheme = Scheme()
    scheme.add(Cache)
    client = APIServerClient(Transport(cluster.env.rest_config()), scheme=scheme, field_owner="gc-test")
    try:
        owner = client.create(Cache(metadata=ObjectMeta(name="cache", namespace=namespace), spec=CacheSpec(size=2)))

        def wanted(current: Deployment) -> None:
            # As Go's mutate functions: the whole spec only when new, then the fields this owner decides
            # (rewriting the spec would drop what the API server defaulted, and update every time).
            if current.spec is None:
                current.spec = DeploymentSpec.from_wire(
                    deployment("cache", replicas=owner.spec.size, cpu="10m")["spec"]
                )
            current.spec.replicas = owner.spec.size
            set_controller_reference(owner, current)

        body = Deployment(metadata=ObjectMeta(name="cache", namespace=namespace))
        assert controllerutil.create_or_update(client, body, wanted) is OperationResult.CREATED
        assert body.metadata.owner_references is not None
        assert body.metadata.owner_references[0].uid == owner.metadata.uid
        assert body.spec is not None
        assert body.spec.template.spec is not None
        assert body.spec.template.spec.containers[0].resources is not None  # typed all the way down
        assert controllerutil.create_or_update(client, body.model_copy(deep=True), wanted) is OperationResult.NONE

        owner = client.patch(owner, {"spec": {"size": 3}})
        again = Deployment()

        def update() -> OperationResult:
            nonlocal again
            again = Deployment(metadata=ObjectMeta(name="cache", namespace=namespace))
            return controllerutil.create_or_update(client, again, wanted)

        # kube-controller-manager writes the Deployment too: a conflict is retried, as a reconciler is requeued.
        assert _retried_on_conflict(update) is OperationResult.UPDATED
        assert again.spec is not None
        assert again.spec.replicas == 3
        assert client.get(Deployment, "cache", namespace).spec.replicas == 3  # type: ignore[union-attr]

        client.delete(owner)

        def collected() -> bool:
            try:
                client.get(Deployment, "cache", namespace)
            except NotFoundError:
                return True
            return False

        poll_until(collected, timeout=60.0, what="the garbage collector to delete the owned Deployment")
    finally:
        client.close()
