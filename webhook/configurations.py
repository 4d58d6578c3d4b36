"""The Mutating- and ValidatingWebhookConfiguration that route admission to the handlers of `webhook/`.

    mutating_webhook_configuration(service_name="ballast-webhook", service_namespace="ballast-system")
    validating_webhook_configuration(service_name="ballast-webhook", service_namespace="ballast-system",
                                     ca_bundle=ca_pem)

Both are plain dicts, ready for `client.apply`, `envtest.install_webhooks` (which rewrites the service
reference to a local URL), `make dev` and the packaging under `config/`. As in the Go operator: pod webhooks
see only pods with the mode label (`objectSelector: … Exists`) outside the operator's own namespace,
`failurePolicy: Fail`, `sideEffects: None`, `admissionReviewVersions: [v1]`; unlike it, the mutating webhook
sets `reinvocationPolicy: IfNeeded` (docs/design.md, difference 21), so a sidecar injected by a later webhook is
sized too, and the validating webhooks check policies and pod mode updates (difference 18).
"""

from __future__ import annotations

import base64
from typing import Any

from ballast.api.ballast.v1 import GROUP, ClusterResourcePolicy, ResourcePolicy
from ballast.internal.enrollment import MODE_LABEL

from . import pods, policies

DEFAULT_NAME = "ballast"
"""The configurations' name (the chart's fullname; `ballastd --webhook-configuration-name`)."""
DEFAULT_SERVICE_PORT = 443
DEFAULT_TIMEOUT_SECONDS = 10
"""The API server's default, written out: a pod CREATE waits at most this long for us."""

API_VERSION = "admissionregistration.k8s.io/v1"
MUTATE_POD_WEBHOOK = "mpod.ballast.tightlinesoftware.com"
VALIDATE_POD_WEBHOOK = "vpod.ballast.tightlinesoftware.com"
VALIDATE_POLICY_WEBHOOK = "vpolicy.ballast.tightlinesoftware.com"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def _client_config(name: str, namespace: str, port: int, path: str, ca_bundle: bytes | None) -> dict[str, Any]:
    config: dict[str, Any] = {"service": {"name": name, "namespace": namespace, "path": path, "port": port}}
    if ca_bundle:
        config["caBundle"] = base64.b64encode(ca_bundle).decode()
    return config


def _metadata(name: str, inject_ca_from: str | None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "labels": {"app.kubernetes.io/name": "ballast"}}
    if inject_ca_from:
        metadata["annotations"] = {"cert-manager.io/inject-ca-from": inject_ca_from}
    return metadata


def _pod_webhook(name: str, operation: str, client_config: dict[str, Any], operator_namespace: str) -> dict[str, Any]:
    return {
        "name": name,
        "clientConfig": client_config,
        "rules": [
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": [operation],
                "resources": ["pods"],
                "scope": "Namespaced",
            }
        ],
        "namespaceSelector": {
            "matchExpressions": [{"key": NAMESPACE_NAME_LABEL, "operator": "NotIn", "values": [operator_namespace]}]
        },
        "objectSelector": {"matchExpressions": [{"key": MODE_LABEL, "operator": "Exists"}]},
        "failurePolicy": "Fail",
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": DEFAULT_TIMEOUT_SECONDS,
    }


def mutating_webhook_configuration(
    *,
    service_name: str,
    service_namespace: str,
    service_port: int = DEFAULT_SERVICE_PORT,
    ca_bundle: bytes | None = None,
    operator_namespace: str | None = None,
    name: str = DEFAULT_NAME,
    inject_ca_from: str | None = None,
) -> dict[str, Any]:
    """The MutatingWebhookConfiguration: `mpod.ballast.tightlinesoftware.com` → `/mutate-v1-pod` on pod CREATE.

    `ca_bundle` is the PEM of the CA that signed the serving certificate (left out when cert-manager injects it:
    pass `inject_ca_from="<namespace>/<certificate>"`). `operator_namespace` (default: the service's) is
    excluded by `namespaceSelector`, so the operator never needs itself to start its own pods.
    """
    webhook = _pod_webhook(
        MUTATE_POD_WEBHOOK,
        "CREATE",
        _client_config(service_name, service_namespace, service_port, pods.MUTATE_PATH, ca_bundle),
        operator_namespace or service_namespace,
    )
    webhook["reinvocationPolicy"] = "IfNeeded"
    return {
        "apiVersion": API_VERSION,
        "kind": "MutatingWebhookConfiguration",
        "metadata": _metadata(name, inject_ca_from),
        "webhooks": [webhook],
    }


def validating_webhook_configuration(
    *,
    service_name: str,
    service_namespace: str,
    service_port: int = DEFAULT_SERVICE_PORT,
    ca_bundle: bytes | None = None,
    operator_namespace: str | None = None,
    name: str = DEFAULT_NAME,
    inject_ca_from: str | None = None,
) -> dict[str, Any]:
    """The ValidatingWebhookConfiguration with two webhooks:

    - `vpod.ballast.tightlinesoftware.com` → `/validate-v1-pod` on pod UPDATE (same selectors as the mutating
      one; an UPDATE is sent when the old or the new pod has the mode label);
    - `vpolicy.ballast.tightlinesoftware.com` → `/validate-ballast-policies` on CREATE and UPDATE of
      clusterresourcepolicies and resourcepolicies (status writes go to the status subresource and are not
      sent), with `failurePolicy: Ignore` so policies installed while the operator starts are not refused.

    Arguments as for `mutating_webhook_configuration`.
    """
    pod_webhook = _pod_webhook(
        VALIDATE_POD_WEBHOOK,
        "UPDATE",
        _client_config(service_name, service_namespace, service_port, pods.VALIDATE_PATH, ca_bundle),
        operator_namespace or service_namespace,
    )
    policy_webhook = {
        "name": VALIDATE_POLICY_WEBHOOK,
        "clientConfig": _client_config(
            service_name, service_namespace, service_port, policies.VALIDATE_PATH, ca_bundle
        ),
        "rules": [
            {
                "apiGroups": [GROUP],
                "apiVersions": ["v1"],
                "operations": ["CREATE", "UPDATE"],
                "resources": [ClusterResourcePolicy.PLURAL, ResourcePolicy.PLURAL],
                "scope": "*",
            }
        ],
        # Ignore, not Fail: a policy applied while the operator starts (a chart's default policy) must not be
        # refused; a bad policy that slips through is still skipped alone at resolve time (difference 8).
        "failurePolicy": "Ignore",
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "timeoutSeconds": DEFAULT_TIMEOUT_SECONDS,
    }
    return {
        "apiVersion": API_VERSION,
        "kind": "ValidatingWebhookConfiguration",
        "metadata": _metadata(name, inject_ca_from),
        "webhooks": [pod_webhook, policy_webhook],
    }


def webhook_configurations(**options: Any) -> list[dict[str, Any]]:
    """Both configurations, mutating first, with the same arguments (see `mutating_webhook_configuration`)."""
    return [mutating_webhook_configuration(**options), validating_webhook_configuration(**options)]
