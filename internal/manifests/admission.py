"""What every webhook configuration of the operator shares: names, defaults, the client config and metadata."""

from __future__ import annotations

import base64
from typing import Any

DEFAULT_NAME = "ballast"
"""The configurations' name (the chart's fullname; `ballastd --webhook-configuration-name`)."""
DEFAULT_SERVICE_PORT = 443
DEFAULT_TIMEOUT_SECONDS = 10
"""The API server's default, written out: a pod CREATE waits at most this long for us."""
API_VERSION = "admissionregistration.k8s.io/v1"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def client_config(name: str, namespace: str, port: int, path: str, ca_bundle: bytes | None) -> dict[str, Any]:
    """The `clientConfig` of a webhook served at `path` behind the Service `namespace/name:port`."""
    config: dict[str, Any] = {"service": {"name": name, "namespace": namespace, "path": path, "port": port}}
    if ca_bundle:
        config["caBundle"] = base64.b64encode(ca_bundle).decode()
    return config


def metadata(name: str, inject_ca_from: str | None) -> dict[str, Any]:
    """A configuration's metadata: its name, our label, and cert-manager's CA injection when asked for."""
    body: dict[str, Any] = {"name": name, "labels": {"app.kubernetes.io/name": "ballast"}}
    if inject_ca_from:
        body["annotations"] = {"cert-manager.io/inject-ca-from": inject_ca_from}
    return body
