"""The scheduling webhook configurations: names, paths, rules per kind and operation, excluded namespaces,
failure policy — and that the paths are the handlers'."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ballast.internal.manifests.scheduling_webhooks import (
    MUTATE_WEBHOOK,
    VALIDATE_WEBHOOK,
    configuration_name,
    scheduling_webhook_configurations,
)
from ballast.webhook import scheduling, schedulingpolicies

from .test_webhooks import RecordingServer

SERVICE: dict[str, Any] = {"service_name": "ballast-webhook", "service_namespace": "ballast-system"}


def _operations(webhook: dict[str, Any]) -> dict[tuple[str, str], list[str]]:
    return {(group, resource): rule["operations"]
            for rule in webhook["rules"] for group in rule["apiGroups"] for resource in rule["resources"]}  # fmt: skip


def test_names_and_paths_are_the_handlers(tmp_path: Path) -> None:
    mutating, validating = scheduling_webhook_configurations(**SERVICE, name="bl")
    assert (mutating["kind"], validating["kind"]) == ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
    assert mutating["metadata"]["name"] == validating["metadata"]["name"] == configuration_name("bl") == "bl-scheduling"
    (mutate,), (validate,) = mutating["webhooks"], validating["webhooks"]
    assert (mutate["name"], validate["name"]) == (MUTATE_WEBHOOK, VALIDATE_WEBHOOK)
    server = RecordingServer(tmp_path)
    scheduling.register(server, reader=None)  # type: ignore[arg-type]
    schedulingpolicies.register(server)
    assert mutate["clientConfig"]["service"]["path"] == scheduling.MUTATE_PATH == "/mutate-kupid"
    assert validate["clientConfig"]["service"]["path"] == schedulingpolicies.VALIDATE_PATH == "/validate-kupid"
    assert set(server.registered) == {scheduling.MUTATE_PATH, schedulingpolicies.VALIDATE_PATH}


def test_pods_and_jobs_on_create_workloads_on_create_and_update_and_no_replicasets() -> None:
    (mutate,) = scheduling_webhook_configurations(**SERVICE)[0]["webhooks"]
    assert _operations(mutate) == {
        ("", "pods"): ["CREATE"],
        ("", "replicationcontrollers"): ["CREATE", "UPDATE"],
        ("apps", "deployments"): ["CREATE", "UPDATE"],
        ("apps", "statefulsets"): ["CREATE", "UPDATE"],
        ("apps", "daemonsets"): ["CREATE", "UPDATE"],
        ("batch", "jobs"): ["CREATE"],
        ("batch", "cronjobs"): ["CREATE", "UPDATE"],
    }
    assert all(rule["apiVersions"] == ["v1"] for rule in mutate["rules"])
    assert (mutate["reinvocationPolicy"], mutate["matchPolicy"], mutate["sideEffects"]) == (
        "IfNeeded", "Equivalent", "None"
    )  # fmt: skip


def test_the_operator_namespace_and_kube_system_are_never_sent() -> None:
    (mutate,) = scheduling_webhook_configurations(**SERVICE, operator_namespace="ops")[0]["webhooks"]
    assert mutate["namespaceSelector"] == {
        "matchExpressions": [
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["ops", "kube-system"]}
        ]
    }


def test_the_validating_webhook_covers_both_policy_kinds() -> None:
    (validate,) = scheduling_webhook_configurations(**SERVICE)[1]["webhooks"]
    assert _operations(validate) == {
        ("kupid.gardener.cloud", "clusterpodschedulingpolicies"): ["CREATE", "UPDATE"],
        ("kupid.gardener.cloud", "podschedulingpolicies"): ["CREATE", "UPDATE"],
    }
    assert validate["matchPolicy"] == "Exact"


@pytest.mark.parametrize("policy", ["Ignore", "Fail"])
def test_failure_policy_and_timeout_apply_to_both(policy: str) -> None:
    for configuration in scheduling_webhook_configurations(**SERVICE, failure_policy=policy, timeout_seconds=5):
        (webhook,) = configuration["webhooks"]
        assert (webhook["failurePolicy"], webhook["timeoutSeconds"]) == (policy, 5)
    (webhook,) = scheduling_webhook_configurations(**SERVICE)[0]["webhooks"]
    assert (webhook["failurePolicy"], webhook["timeoutSeconds"]) == ("Ignore", 10)
