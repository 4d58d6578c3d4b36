"""Enrollment and admission agree on every pod's profile: the same pods go through the enrollment controller
(which creates the profile and stamps `profile-ref`) and through pod admission (which looks the profile up),
and both name the same profile — through owner kinds, a recreated owner, namespaced policies and empty
identity values."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from ballast.api.scheme import add_to_scheme
from ballast.controllers import enrollment
from ballast.internal.cmd.wiring import new_manager
from ballast.internal.enrollment import PROFILE_REF
from ballast.internal.killswitch import KillSwitchState
from ballast.internal.naming import policy_discriminator
from ballast.internal.operator import OperatorOptions
from ballast.internal.telemetry import WEBHOOK_MUTATIONS
from ballast.runtime import FakeAPI, Scheme, objects
from ballast.runtime.client import APIServerClient
from ballast.webhook.pods import PodMutator
from tests.unit.internal.policy.builders import crp, rp
from tests.unit.internal.runtime.support import eventually, running

from .support import APP_LABELS, NAMESPACE, ballast_config, owner, pod, review


@pytest.fixture
def client(api: FakeAPI) -> APIServerClient:
    client = api.client(scheme=add_to_scheme(Scheme()))
    client.create(ballast_config())
    client.create(crp("default"))
    client.create(crp("deployments", 5, {"kinds": ["Deployment"]}))
    client.create(rp("team", "team-policy", 1))
    return client


def _deployment_pod(client: APIServerClient, name: str) -> dict[str, Any]:
    deployment = client.create({"apiVersion": "apps/v1", "kind": "Deployment",
                                "metadata": {"name": "web", "namespace": NAMESPACE}})  # fmt: skip
    reference = owner("Deployment", "web", objects.uid(deployment))
    replica_set = client.create({"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                 "metadata": {"name": "web-7d9", "namespace": NAMESPACE,
                                              "ownerReferences": [reference]}})  # fmt: skip
    body = pod("apply", owners=[owner("ReplicaSet", "web-7d9", objects.uid(replica_set))])
    body["metadata"]["name"] = name
    return body


def _pods(client: APIServerClient) -> list[dict[str, Any]]:
    bare = pod("apply")
    bare["metadata"]["name"] = "bare"
    stateful = pod("apply", owners=[owner("StatefulSet", "db", "sts-1")])
    stateful["metadata"]["name"] = "db-0"
    empty = pod("apply", labels={**APP_LABELS, "app.kubernetes.io/component": ""})
    empty["metadata"]["name"] = "no-component"
    team = pod("apply")
    team["metadata"].update(name="team-0", namespace="team")
    # Its ReplicaSet reference names a uid that is not the stored one (deleted and recreated): the chain ends.
    orphan = pod("apply", owners=[owner("ReplicaSet", "web-7d9", "a-previous-uid")])
    orphan["metadata"]["name"] = "web-7d9-old"
    return [_deployment_pod(client, "web-7d9-x1"), bare, stateful, empty, team, orphan]


def _admitted_profile(mutator: PodMutator, body: dict[str, Any], profile: str) -> bool:
    """Whether admission looked up `profile` for `body` (the profile exists but is not ready: a skip under its
    name, counted with the profile as a label)."""
    labels = {"profile": profile, "result": "skipped", "namespace": body["metadata"]["namespace"]}
    before = _count(labels)
    mutator(review(body, namespace=body["metadata"]["namespace"]))
    return _count(labels) == before + 1


def _count(labels: dict[str, str]) -> float:
    total = 0.0
    for metric in WEBHOOK_MUTATIONS.collect():
        for sample in metric.samples:
            if sample.name.endswith("_total") and all(sample.labels.get(k) == v for k, v in labels.items()):
                total += sample.value
    return total


def _profile_ref(client: APIServerClient, body: dict[str, Any]) -> str | None:
    stored = client.get("v1/Pod", objects.name(body), objects.namespace(body))
    ref: str | None = objects.annotations(stored).get(PROFILE_REF)
    return ref


def test_enrollment_and_admission_name_the_same_profile(api: FakeAPI, client: APIServerClient) -> None:
    manager = new_manager(client, namespace="ballast-system")
    enrollment.setup(manager, kill_switch=KillSwitchState(), options=OperatorOptions())
    bodies = _pods(client)
    with running(manager):
        for body in bodies:
            client.create(body)
        enrolled = {
            objects.name(body): eventually(partial(_profile_ref, client, body), what=f"{objects.name(body)} enrolled")
            for body in bodies
        }
    # The Deployment's pod is under the `kinds: [Deployment]` policy, team's under its ResourcePolicy.
    assert enrolled["web-7d9-x1"].endswith(policy_discriminator("ClusterResourcePolicy", "", "deployments"))
    assert enrolled["team-0"].endswith(policy_discriminator("ResourcePolicy", "team", "team-policy"))
    assert enrolled["bare"] == enrolled["db-0"] == enrolled["web-7d9-old"] != enrolled["no-component"]
    mutator = PodMutator(client, kill_switch=KillSwitchState(), options=OperatorOptions(), owner_reader=client)
    for body in bodies:
        assert _admitted_profile(mutator, body, enrolled[objects.name(body)]), objects.name(body)
