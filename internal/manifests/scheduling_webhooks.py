"""The webhook configurations of scheduling policies (kupid): `<name>-scheduling`, mutating and validating.

    scheduling_webhook_configurations(service_name="ballast-webhook", service_namespace="ballast-system")

The same Service and certificate as Ballast's own configurations (every replica serves every path), but
configurations of their own, so `ballastd --scheduling-webhooks=false` (the chart's `scheduling.enabled`) leaves
them out, and the `schedulingpolicy` controller owns the mutating webhook's `matchConditions` without touching
anything else.

- `mscheduling.ballast.tightlinesoftware.com` → `/mutate-kupid`: one rule per kind of
  `ballast.internal.scheduling.TARGETS` — Pods and Jobs on CREATE, the other workloads on CREATE and UPDATE; no
  ReplicaSets. `reinvocationPolicy: IfNeeded` (the merge is idempotent, docs/design.md, difference 28),
  `matchPolicy: Equivalent`, and the operator's namespace and `kube-system` excluded, so that under
  `failurePolicy: Fail` the operator and the control plane can always start.
- `vscheduling.ballast.tightlinesoftware.com` → `/validate-kupid`: CREATE and UPDATE of both policy kinds.

`failurePolicy` is `Ignore` by default, as kupid's; `Fail` refuses what the webhook cannot answer (kupid #53).
"""

from __future__ import annotations

from typing import Any, Literal

from ballast.api.kupid.v1alpha1 import GROUP as KUPID_GROUP
from ballast.api.kupid.v1alpha1 import VERSION as KUPID_VERSION
from ballast.api.kupid.v1alpha1 import ClusterPodSchedulingPolicy, PodSchedulingPolicy
from ballast.internal.scheduling import TARGETS
from ballast.webhook.scheduling import MUTATE_PATH
from ballast.webhook.schedulingpolicies import VALIDATE_PATH

from .admission import (
    API_VERSION,
    DEFAULT_NAME,
    DEFAULT_SERVICE_PORT,
    DEFAULT_TIMEOUT_SECONDS,
    NAMESPACE_NAME_LABEL,
    client_config,
    metadata,
)

SUFFIX = "-scheduling"
MUTATE_WEBHOOK = "mscheduling.ballast.tightlinesoftware.com"
VALIDATE_WEBHOOK = "vscheduling.ballast.tightlinesoftware.com"
SYSTEM_NAMESPACE = "kube-system"
DEFAULT_FAILURE_POLICY = "Ignore"
FailurePolicy = Literal["Ignore", "Fail"]


def configuration_name(name: str = DEFAULT_NAME) -> str:
    """`<name>-scheduling`: both configurations' name for `--webhook-configuration-name` `name`."""
    return name + SUFFIX


def _rules() -> list[dict[str, Any]]:
    rules: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
    for target in TARGETS:
        operations = ("CREATE", "UPDATE") if target.on_update else ("CREATE",)
        rules.setdefault((target.group, target.version, operations), []).append(target.resource)
    return [
        {"apiGroups": [group], "apiVersions": [version], "operations": list(operations),
         "resources": resources, "scope": "Namespaced"}
        for (group, version, operations), resources in rules.items()
    ]  # fmt: skip


def _common(failure_policy: str, timeout_seconds: int | str) -> dict[str, Any]:
    return {
        "failurePolicy": failure_policy,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": timeout_seconds,
    }


def scheduling_webhook_configurations(
    *,
    service_name: str,
    service_namespace: str,
    service_port: int = DEFAULT_SERVICE_PORT,
    ca_bundle: bytes | None = None,
    operator_namespace: str | None = None,
    name: str = DEFAULT_NAME,
    inject_ca_from: str | None = None,
    failure_policy: FailurePolicy | str = DEFAULT_FAILURE_POLICY,
    timeout_seconds: int | str = DEFAULT_TIMEOUT_SECONDS,
) -> list[dict[str, Any]]:
    """The Mutating- and ValidatingWebhookConfiguration `<name>-scheduling`, mutating first; the arguments are
    those of `webhooks.mutating_webhook_configuration`, plus the failure policy and timeout of both."""
    client = {
        path: client_config(service_name, service_namespace, service_port, path, ca_bundle)
        for path in (MUTATE_PATH, VALIDATE_PATH)
    }
    excluded = list(dict.fromkeys((operator_namespace or service_namespace, SYSTEM_NAMESPACE)))
    mutating = {
        "name": MUTATE_WEBHOOK,
        "clientConfig": client[MUTATE_PATH],
        "rules": _rules(),
        "matchPolicy": "Equivalent",
        "namespaceSelector": {
            "matchExpressions": [{"key": NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": excluded}]
        },
        "reinvocationPolicy": "IfNeeded",
        **_common(failure_policy, timeout_seconds),
    }
    validating = {
        "name": VALIDATE_WEBHOOK,
        "clientConfig": client[VALIDATE_PATH],
        "rules": [
            {
                "apiGroups": [KUPID_GROUP],
                "apiVersions": [KUPID_VERSION],
                "operations": ["CREATE", "UPDATE"],
                "resources": [ClusterPodSchedulingPolicy.PLURAL, PodSchedulingPolicy.PLURAL],
                "scope": "*",
            }
        ],
        "matchPolicy": "Exact",
        **_common(failure_policy, timeout_seconds),
    }
    return [
        {"apiVersion": API_VERSION, "kind": kind, "metadata": metadata(configuration_name(name), inject_ca_from),
         "webhooks": [webhook]}
        for kind, webhook in (("MutatingWebhookConfiguration", mutating),
                              ("ValidatingWebhookConfiguration", validating))
    ]  # fmt: skip
