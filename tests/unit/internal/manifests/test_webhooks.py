"""The webhook configurations: names, paths, rules, selectors and policies, and that the paths are the ones the
handlers are registered at."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from ballast.internal.killswitch import KillSwitchState
from ballast.internal.manifests.webhooks import (
    mutating_webhook_configuration,
    validating_webhook_configuration,
    webhook_configurations,
)
from ballast.internal.operator import OperatorOptions
from ballast.runtime import WebhookServer
from ballast.runtime.admission import Handler
from ballast.runtime.envtest.manifests import rewrite_webhook_config
from ballast.webhook import configuration, pods, policies
from tests.unit.webhook.support import MemoryReader

SERVICE: dict[str, Any] = {"service_name": "ballast-webhook", "service_namespace": "ballast-system"}
MODE_EXISTS = {"matchExpressions": [{"key": "ballast.tightlinesoftware.com/mode", "operator": "Exists"}]}
NOT_OPERATOR = {
    "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["ballast-system"]}]
}


class RecordingServer(WebhookServer):
    """A webhook server that is never started; remembers what was registered."""

    def __init__(self, cert_dir: Path) -> None:
        super().__init__(cert_dir=cert_dir)
        self.registered: dict[str, Handler] = {}

    def register(self, path: str, handler: Handler) -> None:
        super().register(path, handler)
        self.registered[path] = handler


def test_the_mutating_configuration() -> None:
    config = mutating_webhook_configuration(**SERVICE, ca_bundle=b"CA PEM")
    assert (config["apiVersion"], config["kind"], config["metadata"]["name"]) == (
        "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "ballast",
    )  # fmt: skip
    [webhook] = config["webhooks"]
    assert webhook == {
        "name": "mpod.ballast.tightlinesoftware.com",
        "clientConfig": {
            "service": {
                "name": "ballast-webhook", "namespace": "ballast-system", "path": "/mutate-v1-pod", "port": 443,
            },
            "caBundle": base64.b64encode(b"CA PEM").decode(),
        },
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"],
                   "scope": "Namespaced"}],
        "namespaceSelector": NOT_OPERATOR,
        "objectSelector": MODE_EXISTS,
        "failurePolicy": "Fail",
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": 10,
        "reinvocationPolicy": "IfNeeded",
    }  # fmt: skip


def test_the_validating_configuration() -> None:
    config = validating_webhook_configuration(**SERVICE, service_port=8443)
    assert (config["kind"], config["metadata"]["name"]) == ("ValidatingWebhookConfiguration", "ballast")
    pod_webhook, policy_webhook, configuration_webhook = config["webhooks"]
    assert pod_webhook["name"] == "vpod.ballast.tightlinesoftware.com"
    assert pod_webhook["clientConfig"] == {
        "service": {"name": "ballast-webhook", "namespace": "ballast-system", "path": "/validate-v1-pod", "port": 8443}
    }
    assert pod_webhook["rules"][0]["operations"] == ["UPDATE"]
    assert (pod_webhook["objectSelector"], pod_webhook["namespaceSelector"]) == (MODE_EXISTS, NOT_OPERATOR)
    assert "reinvocationPolicy" not in pod_webhook
    assert policy_webhook["name"] == "vpolicy.ballast.tightlinesoftware.com"
    assert policy_webhook["clientConfig"]["service"]["path"] == "/validate-ballast-policies"
    assert policy_webhook["rules"] == [{
        "apiGroups": ["ballast.tightlinesoftware.com"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
        "resources": ["clusterresourcepolicies", "resourcepolicies"], "scope": "*",
    }]  # fmt: skip
    assert "objectSelector" not in policy_webhook
    assert configuration_webhook["name"] == "vconfig.ballast.tightlinesoftware.com"
    assert configuration_webhook["clientConfig"]["service"]["path"] == "/validate-ballast-configuration"
    assert configuration_webhook["rules"] == [{
        "apiGroups": ["ballast.tightlinesoftware.com"], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
        "resources": ["ballastconfigs", "metricssources"], "scope": "*",
    }]  # fmt: skip
    assert "objectSelector" not in configuration_webhook
    expected_policy = {"vpod.ballast.tightlinesoftware.com": "Fail", "vpolicy.ballast.tightlinesoftware.com": "Ignore",
                       "vconfig.ballast.tightlinesoftware.com": "Ignore"}  # fmt: skip
    for webhook in config["webhooks"]:
        assert (webhook["failurePolicy"], webhook["sideEffects"], webhook["admissionReviewVersions"]) == (
            expected_policy[webhook["name"]], "None", ["v1"],
        )  # fmt: skip
        assert webhook["timeoutSeconds"] == 10


def test_options_name_the_configurations_the_excluded_namespace_and_cert_manager_injection() -> None:
    for config in webhook_configurations(
        **SERVICE, name="ballast-dev", operator_namespace="ops", inject_ca_from="ballast-system/ballast-serving-cert"
    ):
        assert config["metadata"]["name"] == "ballast-dev"
        assert config["metadata"]["annotations"] == {
            "cert-manager.io/inject-ca-from": "ballast-system/ballast-serving-cert"
        }
        assert config["webhooks"][0]["namespaceSelector"]["matchExpressions"][0]["values"] == ["ops"]
        assert all("caBundle" not in webhook["clientConfig"] for webhook in config["webhooks"])


def test_the_configured_paths_are_the_registered_ones(tmp_path: Path) -> None:
    server = RecordingServer(tmp_path)
    pods.register(server, reader=MemoryReader(), kill_switch=KillSwitchState(), options=OperatorOptions())
    policies.register(server)
    configuration.register(server)
    configured = {
        webhook["clientConfig"]["service"]["path"] for config in webhook_configurations(**SERVICE)
        for webhook in config["webhooks"]
    }  # fmt: skip
    assert configured == set(server.registered) == {
        "/mutate-v1-pod", "/validate-v1-pod", "/validate-ballast-policies", "/validate-ballast-configuration",
    }  # fmt: skip
    assert isinstance(server.registered["/mutate-v1-pod"], pods.PodMutator)
    assert isinstance(server.registered["/validate-v1-pod"], pods.PodModeValidator)


def test_envtest_rewrites_the_service_to_a_local_url_keeping_the_paths() -> None:
    configs: list[dict[str, Any]] = webhook_configurations(**SERVICE)
    urls = [
        webhook["clientConfig"]["url"]
        for config in configs
        for webhook in rewrite_webhook_config(config, host="127.0.0.1", port=9443, ca_bundle=b"x")["webhooks"]
    ]
    assert urls == [
        "https://127.0.0.1:9443/mutate-v1-pod",
        "https://127.0.0.1:9443/validate-v1-pod",
        "https://127.0.0.1:9443/validate-ballast-policies",
        "https://127.0.0.1:9443/validate-ballast-configuration",
    ]
