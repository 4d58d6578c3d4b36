"""Credentials for the test control plane: kubeconfig files and in-memory client configurations."""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml


@dataclass(frozen=True, slots=True)
class Credentials:
    """How one identity talks to the API server: a client certificate or a bearer token."""

    user: str
    server: str
    ca_file: Path
    cert_file: Path | None = None
    key_file: Path | None = None
    token: str | None = None
    groups: tuple[str, ...] = field(default=())

    def kubeconfig(self) -> dict[str, Any]:
        """A self-contained kubeconfig (certificates embedded), as kubectl and client libraries read it."""
        user: dict[str, str] = {}
        if self.cert_file and self.key_file:
            user["client-certificate-data"] = _b64(self.cert_file)
            user["client-key-data"] = _b64(self.key_file)
        if self.token:
            user["token"] = self.token
        return {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "envtest",
                    "cluster": {"server": self.server, "certificate-authority-data": _b64(self.ca_file)},
                }
            ],
            "users": [{"name": self.user, "user": user}],
            "contexts": [{"name": "envtest", "context": {"cluster": "envtest", "user": self.user}}],
            "current-context": "envtest",
        }

    def write_kubeconfig(self, path: Path) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(self.kubeconfig(), sort_keys=False))
        path.chmod(0o600)
        return path

    def client_configuration(self) -> Any:
        """A `kubernetes.client.Configuration` for this identity (the official client's in-memory config)."""
        from kubernetes import client  # noqa: PLC0415 - lazy: the official client is slow to import

        configuration = client.Configuration()
        configuration.host = self.server
        configuration.ssl_ca_cert = str(self.ca_file)
        configuration.verify_ssl = True
        if self.cert_file and self.key_file:
            configuration.cert_file = str(self.cert_file)
            configuration.key_file = str(self.key_file)
        if self.token:
            configuration.api_key = {"authorization": self.token}
            configuration.api_key_prefix = {"authorization": "Bearer"}
        return configuration


def _b64(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


__all__ = [
    "Credentials",
]
