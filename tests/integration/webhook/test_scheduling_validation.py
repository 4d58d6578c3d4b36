"""`/validate-kupid` behind the real API server: a scheduling policy the API server would refuse in a pod spec is
refused when it is written (through kubectl and the client), naming the field; kupid's own sample policies apply
unchanged; the CRD schema's enums refuse an unknown toleration effect before the webhook is asked."""

from __future__ import annotations

import contextlib
import copy
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import yaml

from ballast.api.kupid.v1alpha1 import GROUP, VERSION, ClusterPodSchedulingPolicy, PodSchedulingPolicy
from ballast.internal.manifests.scheduling_webhooks import VALIDATE_WEBHOOK, scheduling_webhook_configurations
from ballast.runtime import APIStatusError, Client, WebhookServer
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.errors import EnvtestError
from ballast.runtime.envtest.wait import poll_until
from ballast.webhook import schedulingpolicies
from tests.integration.cleanup import deleted_afterwards
from tests.integration.webhook_server import serve
from tests.unit.internal.scheduling.kupid_samples import chart_samples, cluster_samples, namespaced_samples

JSON = dict[str, Any]
ADMISSION = "/apis/admissionregistration.k8s.io/v1"
WEBHOOK = VALIDATE_WEBHOOK
EMPTY_KEY = (
    'spec.tolerations[0].operator: Invalid value: "Equal": operator must be Exists when `key` is empty, which means '
    '"match all values and all keys"'
)


def validating_configuration(name: str) -> JSON:
    """The product's ValidatingWebhookConfiguration for `/validate-kupid` (of `scheduling_webhook_configurations`),
    refusing what it cannot ask (`Fail`); `install_webhooks` rewrites its service reference to the local server."""
    configurations = scheduling_webhook_configurations(
        service_name="ballast-webhook", service_namespace="ballast-system", name=name, failure_policy="Fail"
    )
    [validating] = [c for c in configurations if c["kind"] == "ValidatingWebhookConfiguration"]
    assert [webhook["clientConfig"]["service"]["path"] for webhook in validating["webhooks"]] == [
        schedulingpolicies.VALIDATE_PATH
    ]
    return validating


def psp(name: str, namespace: str, **spec: Any) -> JSON:
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "PodSchedulingPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def cpsp(name: str, **spec: Any) -> JSON:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "ClusterPodSchedulingPolicy", "metadata": {"name": name},
            "spec": spec}  # fmt: skip


def _wire(obj: Any) -> JSON:
    wire: JSON = obj.to_wire() if hasattr(obj, "to_wire") else obj
    return wire


@pytest.fixture(scope="module")
def admitting(envtest: Environment, client: Client) -> Iterator[Client]:
    """The `/validate-kupid` handler served locally and its configuration installed, once the API server calls it."""
    server = WebhookServer(host="127.0.0.1", port=0, cert_dir=envtest.webhook_cert_dir())
    schedulingpolicies.register(server)
    shutdown = serve(server)
    configuration = validating_configuration(f"kupid-{uuid.uuid4().hex[:8]}")
    envtest.install_webhooks([configuration], host="127.0.0.1", port=server.port, ca_bundle=envtest.ca.cert_pem)
    attempt = iter(range(1_000))

    def refused() -> bool:
        probe = cpsp(f"probe-{next(attempt)}", tolerations=[{"operator": "Equal"}])
        try:
            client.create(probe)
        except APIStatusError as error:
            return WEBHOOK in error.message
        client.delete(probe)
        return False

    try:
        poll_until(refused, timeout=20, what="the API server to call /validate-kupid")
        yield client
    finally:
        with contextlib.suppress(APIStatusError):
            envtest.rest.delete(f"{ADMISSION}/validatingwebhookconfigurations/{configuration['metadata']['name']}")
        shutdown()


def test_kubectl_is_refused_an_invalid_policy_naming_the_field(
    envtest: Environment, admitting: Client, envtest_namespace: str
) -> None:
    body = psp("spot", envtest_namespace, podSelector={}, tolerations=[{"operator": "Equal", "value": "spot"}])
    with pytest.raises(EnvtestError) as refused:
        envtest.kubectl("apply", "-f", "-", input_text=yaml.safe_dump(body))
    assert (
        f'admission webhook "{WEBHOOK}" denied the request: PodSchedulingPolicy.{GROUP} "spot" is invalid: {EMPTY_KEY}'
    ) in str(refused.value)


def test_the_client_is_refused_422_with_every_problem(admitting: Client) -> None:
    name = f"bad-{uuid.uuid4().hex[:6]}"
    preferred = [{"weight": 0, "preference": {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}}]
    body = cpsp(
        name,
        namespaceSelector={},
        podSelector={"matchLabels": {"app": "etcd"}},
        nodeSelector={"not a key": "x"},
        affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": preferred}},
    )
    with deleted_afterwards(admitting) as created, pytest.raises(APIStatusError) as refused:
        created.append(admitting.create(body))
    assert refused.value.status == 422
    message = refused.value.message
    assert message.startswith(
        f'admission webhook "{WEBHOOK}" denied the request: ClusterPodSchedulingPolicy.{GROUP} "{name}" is invalid: ['
    )
    assert 'spec.nodeSelector: Invalid value: "not a key": name part must consist of' in message
    assert (
        "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: "
        "must be in the range 1-100"
    ) in message


def test_the_crd_schema_refuses_an_unknown_effect_before_the_webhook(admitting: Client, envtest_namespace: str) -> None:
    tolerations = [{"operator": "Exists"}, {"key": "dedicated", "value": "etcd", "effect": "Sometimes"}]
    with pytest.raises(APIStatusError) as refused:
        admitting.create(psp("sometimes", envtest_namespace, tolerations=tolerations))
    assert refused.value.status == 422
    assert 'spec.tolerations[1].effect: Unsupported value: "Sometimes"' in refused.value.message
    assert WEBHOOK not in refused.value.message


def test_kupids_sample_policies_apply_unchanged(
    envtest: Environment, admitting: Client, envtest_namespace: str
) -> None:
    namespaced = namespaced_samples(envtest_namespace)
    for sample in namespaced:
        del sample["metadata"]["namespace"]  # as kupid applies them: `kubectl apply -n <namespace> -f`
    cluster = [*cluster_samples(), *chart_samples()]
    suffix = uuid.uuid4().hex[:6]
    for sample in cluster:
        sample["metadata"]["name"] += f"-{suffix}"
    documents = yaml.safe_dump_all([*namespaced, *cluster])
    try:
        envtest.kubectl("apply", "-n", envtest_namespace, "-f", "-", input_text=documents)
        for sample in namespaced:
            stored = _wire(admitting.get(PodSchedulingPolicy, sample["metadata"]["name"], envtest_namespace))
            assert stored["spec"] == sample["spec"]
        for sample in cluster:
            stored = _wire(admitting.get(ClusterPodSchedulingPolicy, sample["metadata"]["name"]))
            assert stored["spec"] == sample["spec"]
    finally:
        envtest.kubectl("delete", "-n", envtest_namespace, "--ignore-not-found", "-f", "-", input_text=documents)


def test_an_update_breaking_a_policy_is_refused_and_a_relabel_allowed(
    admitting: Client, envtest_namespace: str
) -> None:
    with deleted_afterwards(admitting) as created:
        stored = _wire(admitting.create(psp("relabel", envtest_namespace, podSelector={}, nodeName="node-a")))
        created.append(stored)
        with pytest.raises(APIStatusError) as refused:
            admitting.patch(stored, {"spec": {"nodeName": "Node_A"}})
        assert refused.value.status == 422
        assert 'spec.nodeName: Invalid value: "Node_A": a lowercase RFC 1123 subdomain' in refused.value.message
        relabelled = _wire(admitting.patch(stored, {"metadata": {"labels": {"team": "sre"}}}))
        assert relabelled["metadata"]["labels"] == {"team": "sre"}
        assert relabelled["spec"] == copy.deepcopy(stored["spec"])
