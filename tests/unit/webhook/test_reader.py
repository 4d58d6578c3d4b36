"""The readers behind the handlers: models from any reader, and the mutation over the real
client on the in-memory API server — live and through the shared cache."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.api.ballast.v1 import BallastConfig
from ballast.api.scheme import add_to_scheme
from ballast.api.wire import as_model
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.naming import policy_discriminator, profile_name, tuple_labels
from ballast.internal.operator import OperatorOptions
from ballast.runtime import Cache, FakeAPI, Scheme, objects
from ballast.runtime.cache import DelegatingClient
from ballast.runtime.client import APIServerClient
from ballast.webhook.pods import PodMutator
from ballast.webhook.reader import Reader
from tests.unit.internal.policy.builders import crp

from .support import (
    APP_LABELS,
    IDENTITY,
    NAMESPACE,
    ballast_config,
    container_profile,
    owner,
    pod,
    review,
)
from .support import profile as workload_profile

REPLICA_SET = {
    "apiVersion": "apps/v1", "kind": "ReplicaSet",
    "metadata": {"name": "web-7d9", "namespace": NAMESPACE, "uid": "rs-1",
                 "ownerReferences": [owner("Deployment", "web", "dep-1")]},
}  # fmt: skip
DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": NAMESPACE}}


def test_models_come_from_models_dicts_and_read_only_views() -> None:
    model = ballast_config()
    wire = model.to_wire()
    assert as_model(BallastConfig, model) is model
    assert as_model(BallastConfig, wire) == model
    assert as_model(BallastConfig, objects.freeze(wire)) == model


# ------------------------------------------------------------------------------------- over the fake API


@pytest.fixture
def client(api: FakeAPI) -> APIServerClient:
    """A real client on the fake, holding a Deployment's pod's owners, a `kinds: [Deployment]` policy, the
    BallastConfig and a ready profile for billing/api under that policy."""
    client = api.client(scheme=add_to_scheme(Scheme()))
    client.create(REPLICA_SET)  # the fake gives it a uid of its own, which the pod's reference must carry
    client.create(DEPLOYMENT)
    client.create(ballast_config())
    client.create(crp("default"))
    client.create(crp("deployments", 5, {"kinds": ["Deployment"]}))
    disc = policy_discriminator("ClusterResourcePolicy", "", "deployments")
    name = profile_name(tuple_labels(APP_LABELS, IDENTITY), IDENTITY, disc)
    client.create(workload_profile(name, [container_profile("app", {"cpu": {"request": "750m"}})]))
    return client


def _admit(reader: Reader, owner_reader: Reader) -> dict[str, Any]:
    uid = objects.uid(owner_reader.get("apps/v1/ReplicaSet", "web-7d9", NAMESPACE))
    mutator = PodMutator(reader, kill_switch=KillSwitchState(), options=OperatorOptions(), owner_reader=owner_reader)
    response = mutator(review(pod(owners=[owner("ReplicaSet", "web-7d9", uid)])))
    return {op["path"]: op["value"] for op in response.patch or []}


def test_the_mutation_reads_through_the_real_client(client: APIServerClient) -> None:
    patch = _admit(client, client)
    assert patch["/spec/containers/0/resources/requests/cpu"] == "750m"
    assert patch["/metadata/annotations"]["ballast.tightlinesoftware.com/policy-ref"] == "deployments"


def test_the_mutation_reads_through_the_cache_with_owners_read_live(api: FakeAPI, client: APIServerClient) -> None:
    cache = Cache(client)
    cache.start()
    try:
        before = len(api.requests)
        patch = _admit(DelegatingClient(cache, client), client)
        live = [path for method, path in api.requests[before:] if method == "GET" and "watch" not in path]
    finally:
        cache.stop()
    assert patch["/spec/containers/0/resources/requests/cpu"] == "750m"
    assert {informer.name.split(",")[0] for informer in cache.informers()} == {
        "clusterresourcepolicy.ballast.tightlinesoftware.com",
        "resourcepolicy.ballast.tightlinesoftware.com",
        "ballastconfig.ballast.tightlinesoftware.com",
        "workloadprofile.ballast.tightlinesoftware.com",
    }  # no ReplicaSet or Deployment informer
    assert "/apis/apps/v1/namespaces/shop/replicasets/web-7d9" in live
