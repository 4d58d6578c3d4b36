"""`/validate-kupid`: scheduling policies the API server would refuse in a pod spec are refused at write time,
each problem named by its field path, under the kupid group."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from ballast.runtime import AdmissionResponse, WebhookServer
from ballast.webhook.schedulingpolicies import (
    SPEC_UNCHANGED,
    VALIDATE_PATH,
    invalid_message,
    register,
    validate_scheduling_policy_request,
)
from tests.unit.internal.scheduling.kupid_samples import all_samples

from .support import JSON, review

GROUP = "kupid.gardener.cloud"
SOMETIMES = 'spec.tolerations[1].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", ' + (
    '"PreferNoSchedule", "NoExecute"'
)
EMPTY_KEY = (
    'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means '
    '"match all values and all keys"'
)


def policy(kind: str = "PodSchedulingPolicy", name: str = "spot", **spec: Any) -> JSON:
    metadata: JSON = {"name": name}
    if kind == "PodSchedulingPolicy":
        metadata["namespace"] = "team-a"
    return {"apiVersion": f"{GROUP}/v1alpha1", "kind": kind, "metadata": metadata, "spec": spec}


def admit(
    obj: JSON | None, *, operation: str = "CREATE", old: JSON | None = None, kind: str = "PodSchedulingPolicy"
) -> AdmissionResponse:
    metadata = (obj or {}).get("metadata")
    namespace = str(metadata.get("namespace") or "") if isinstance(metadata, dict) else ""
    request = review(obj, operation=operation, old=old, kind=kind, namespace=namespace)
    kupid = {"group": GROUP, "version": "v1alpha1"}
    request = dataclasses.replace(
        request,
        kind={**kupid, "kind": kind},
        resource={**kupid, "resource": kind.lower().replace("policy", "policies")},
    )
    return validate_scheduling_policy_request(request)


TOLERATIONS = [{"key": "spot", "operator": "Exists"}, {"key": "dedicated", "value": "etcd", "effect": "Sometimes"}]


@pytest.mark.parametrize("sample", all_samples(), ids=lambda sample: sample["metadata"]["name"])
def test_kupids_sample_policies_are_allowed(sample: JSON) -> None:
    response = admit(sample, kind=sample["kind"])
    assert (response.allowed, response.code) == (True, 200)


@pytest.mark.parametrize("kind", ["PodSchedulingPolicy", "ClusterPodSchedulingPolicy"])
def test_an_invalid_policy_is_refused_422_naming_the_field(kind: str) -> None:
    response = admit(policy(kind, tolerations=TOLERATIONS), kind=kind)
    assert (response.allowed, response.code, response.reason) == (False, 422, "Invalid")
    assert response.message == f'{kind}.{GROUP} "spot" is invalid: {SOMETIMES}'


def test_every_problem_is_listed() -> None:
    body = policy(name="Spot", tolerations=[{"operator": "Equal"}], nodeSelector={"a/b/c": "x"})
    response = admit(body)
    assert not response.allowed
    assert response.message.startswith(f'PodSchedulingPolicy.{GROUP} "Spot" is invalid: [metadata.name: Invalid value')
    for fragment in ('spec.nodeSelector: Invalid value: "a/b/c"', EMPTY_KEY):
        assert fragment in response.message


def test_a_namespaced_policy_needs_its_namespace_and_a_cluster_policy_has_none() -> None:
    stray = policy("ClusterPodSchedulingPolicy", "etcd")
    stray["metadata"]["namespace"] = "garden"
    response = admit(stray, kind="ClusterPodSchedulingPolicy")
    assert response.message.endswith("is invalid: metadata.namespace: Forbidden: not allowed on this type")


def test_an_update_that_makes_the_policy_invalid_is_refused() -> None:
    response = admit(policy(tolerations=TOLERATIONS), operation="UPDATE", old=policy())
    assert (response.allowed, response.code) == (False, 422)
    assert SOMETIMES in response.message


def test_an_update_that_adds_a_bad_finalizer_is_refused() -> None:
    edited = policy()
    edited["metadata"]["finalizers"] = ["a/b/c"]
    response = admit(edited, operation="UPDATE", old=policy())
    assert (response.allowed, response.code) == (False, 422)
    assert 'metadata.finalizers[0]: Invalid value: "a/b/c"' in response.message


@pytest.mark.parametrize(
    "edit",
    [
        lambda metadata: metadata.update(labels={"owner": "sre"}),
        lambda metadata: metadata.update(annotations={"note": "x"}, resourceVersion="7"),
        lambda metadata: metadata.update(finalizers=["example.com/keep"]),
        lambda metadata: metadata.update(finalizers=[], deletionTimestamp="2026-12-01T00:00:00Z"),
    ],
    ids=["labels", "annotations", "finalizer-removed", "last-finalizer-removed-while-deleting"],
)
def test_an_update_that_leaves_an_invalid_policy_as_it_was_is_allowed(edit: Any) -> None:
    stored = policy(tolerations=TOLERATIONS)
    stored["metadata"]["finalizers"] = ["example.com/keep", "example.com/cleanup"]
    edited = {**stored, "metadata": dict(stored["metadata"])}
    edit(edited["metadata"])
    response = admit(edited, operation="UPDATE", old=stored)
    assert (response.allowed, response.message) == (True, SPEC_UNCHANGED)


def test_an_update_that_adds_a_finalizer_to_an_invalid_policy_is_refused() -> None:
    stored = policy(tolerations=TOLERATIONS)
    edited = {**stored, "metadata": {**stored["metadata"], "finalizers": ["example.com/keep"]}}
    response = admit(edited, operation="UPDATE", old=stored)
    assert (response.allowed, response.code) == (False, 422)
    assert SOMETIMES in response.message


@pytest.mark.parametrize(
    ("obj", "kind", "fragment"),
    [
        (None, "PodSchedulingPolicy", "the request has no object"),
        (policy(), "ClusterResourcePolicy",
         "expected a ClusterPodSchedulingPolicy or PodSchedulingPolicy, got ClusterResourcePolicy"),
        ({"kind": "PodSchedulingPolicy", "metadata": {"name": "x"}, "spec": ["a"]}, "PodSchedulingPolicy",
         "spec must be an object, got list"),
        ({"kind": "PodSchedulingPolicy", "metadata": "x", "spec": {}}, "PodSchedulingPolicy",
         "metadata must be an object, got str"),
    ],
    ids=["no-object", "wrong-kind", "spec-not-object", "metadata-not-object"],
)  # fmt: skip
def test_a_request_that_is_not_a_scheduling_policy_is_errored_400(obj: JSON | None, kind: str, fragment: str) -> None:
    response = admit(obj, kind=kind)
    assert (response.allowed, response.code, response.message) == (False, 400, fragment)


def test_the_message_names_the_kupid_group() -> None:
    assert (
        invalid_message("PodSchedulingPolicy", "a", ["x: y"], GROUP)
        == f'PodSchedulingPolicy.{GROUP} "a" is invalid: x: y'
    )
    assert invalid_message("ResourcePolicy", "a", ["x: y"]) == (
        'ResourcePolicy.ballast.tightlinesoftware.com "a" is invalid: x: y'
    )


def test_register_serves_the_path() -> None:
    server = WebhookServer(host="127.0.0.1", port=0)
    register(server)
    assert VALIDATE_PATH == "/validate-kupid"
    with pytest.raises(ValueError, match="already registered at /validate-kupid"):
        server.register(VALIDATE_PATH, validate_scheduling_policy_request)
