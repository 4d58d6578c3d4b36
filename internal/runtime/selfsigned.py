"""Self-managed webhook certificates, for clusters without cert-manager (kupid's approach).

Every replica runs `SelfSignedCertificates` (it does not need leadership):
- the CA and serving certificate live in one Secret (`kubernetes.io/tls` with `ca.crt`), created only if absent:
  when several replicas race, `create` lets exactly one win and the others adopt its Secret — one CA, never two;
- the pair is written into the webhook server's certificate directory (atomically, the way kubelet updates a
  mounted Secret), where the server's CertWatcher picks it up;
- `caBundle` is set on every webhook of the named Mutating/ValidatingWebhookConfigurations where it differs;
- the pair is renewed `renew_before` its expiry by whichever replica sees it first (an update guarded by
  resourceVersion: a conflict means another replica renewed, and its Secret is adopted).

RBAC: get/update/patch of that one Secret and of those webhook configurations can be limited by
`resourceNames`; `create` of secrets cannot, so grant it in the operator namespace only.
"""

from __future__ import annotations

import base64
import datetime
import os
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .apierrors import AlreadyExistsError, ConflictError, NotFoundError
from .certs import CertificateAuthority, not_after
from .clock import Clock, RealClock
from .interfaces import Client
from .log import get_logger

_log = get_logger("ballast.runtime.selfsigned")
MUTATING = "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration"
VALIDATING = "admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration"


@dataclass(frozen=True)
class ServingPair:
    ca: bytes
    cert: bytes
    key: bytes


class SelfSignedCertificates:
    """Keeps the webhook serving certificate, its Secret, the files on disk and the caBundles in step."""

    def __init__(
        self,
        client: Client,
        *,
        namespace: str,
        secret_name: str,
        service_name: str,
        cert_dir: str | Path,
        webhook_configurations: Sequence[tuple[str, str]] = (),
        validity: datetime.timedelta = datetime.timedelta(days=365),
        renew_before: datetime.timedelta = datetime.timedelta(days=30),
        check_interval: float = 3600.0,
        clock: Clock | None = None,
    ) -> None:
        self.client = client
        self.namespace = namespace
        self.secret_name = secret_name
        self.service_name = service_name
        self.cert_dir = Path(cert_dir)
        self.webhook_configurations = list(webhook_configurations)
        self.validity = validity
        self.renew_before = renew_before
        self.check_interval = check_interval
        self.clock = clock or RealClock()
        self.name = "self-signed-certificates"

    @property
    def dns_names(self) -> tuple[str, ...]:
        service, namespace = self.service_name, self.namespace
        return (
            f"{service}.{namespace}.svc",
            f"{service}.{namespace}.svc.cluster.local",
            f"{service}.{namespace}",
            service,
        )

    def need_leader_election(self) -> bool:
        return False

    # ----------------------------------------------------------------------------------------- secret

    def _generate(self) -> ServingPair:
        ca = CertificateAuthority(f"{self.service_name}-ca", self.validity)
        serving = ca.issue(self.dns_names[0], hosts=self.dns_names, server=True)
        return ServingPair(ca.cert_pem, serving.cert_pem, serving.key_pem)

    def _secret(self, pair: ServingPair, version: str | None = None) -> dict[str, Any]:
        secret: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/tls",
            "metadata": {
                "name": self.secret_name,
                "namespace": self.namespace,
                "labels": {"app.kubernetes.io/managed-by": "ballast"},
            },
            "data": {
                key: base64.b64encode(value).decode()
                for key, value in (("ca.crt", pair.ca), ("tls.crt", pair.cert), ("tls.key", pair.key))
            },
        }
        if version:
            secret["metadata"]["resourceVersion"] = version
        return secret

    @staticmethod
    def _pair_of(secret: dict[str, Any]) -> ServingPair | None:
        data = secret.get("data") or {}
        try:
            return ServingPair(*(base64.b64decode(data[key]) for key in ("ca.crt", "tls.crt", "tls.key")))
        except (KeyError, ValueError):
            return None

    def _needs_renewal(self, pair: ServingPair) -> bool:
        try:
            expires = min(not_after(pair.cert), not_after(pair.ca))
        except ValueError:
            return True
        return expires - self.clock.now() < self.renew_before

    def ensure_secret(self) -> ServingPair:
        """The pair in service: the Secret's, created or renewed as needed; adopts another replica's on a race."""
        try:
            secret = self.client.get("v1/Secret", self.secret_name, self.namespace)
        except NotFoundError:
            try:
                self.client.create(self._secret(self._generate()))
                _log.info("created the webhook certificate secret", extra={"secret": self.secret_name})
            except AlreadyExistsError:
                _log.info("another replica created the webhook certificate secret; adopting it")
            secret = self.client.get("v1/Secret", self.secret_name, self.namespace)
        pair = self._pair_of(secret)
        if pair is None or self._needs_renewal(pair):
            try:
                secret = self.client.update(self._secret(self._generate(), secret["metadata"]["resourceVersion"]))
                _log.info("renewed the webhook serving certificate", extra={"secret": self.secret_name})
            except ConflictError:
                secret = self.client.get("v1/Secret", self.secret_name, self.namespace)
            pair = self._pair_of(secret)
            if pair is None:
                raise ValueError(f"secret {self.namespace}/{self.secret_name} has no usable ca.crt/tls.crt/tls.key")
        return pair

    # ------------------------------------------------------------------------------------------ files

    def write_files(self, pair: ServingPair) -> bool:
        """Write tls.crt/tls.key/ca.crt when they differ; each file is replaced atomically. True if changed."""
        self.cert_dir.mkdir(parents=True, exist_ok=True)
        wanted = {"tls.crt": pair.cert, "tls.key": pair.key, "ca.crt": pair.ca}
        changed = False
        # The key first: a reader that sees the new certificate finds its key already in place.
        for name in ("tls.key", "ca.crt", "tls.crt"):
            path = self.cert_dir / name
            if path.exists() and path.read_bytes() == wanted[name]:
                continue
            descriptor, temporary = tempfile.mkstemp(dir=self.cert_dir, prefix=f".{name}.")
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(wanted[name])
            os.chmod(temporary, 0o600 if name == "tls.key" else 0o644)
            os.replace(temporary, path)
            changed = True
        return changed

    # --------------------------------------------------------------------------------------- caBundle

    def patch_ca_bundles(self, ca: bytes) -> int:
        """Set `caBundle` on every webhook of the configured configurations; returns how many were changed."""
        bundle = base64.b64encode(ca).decode()
        changed = 0
        for kind, name in self.webhook_configurations:
            for _ in range(5):  # re-read on conflicts with other writers (e.g. another replica)
                try:
                    configuration = self.client.get(kind, name)
                except NotFoundError:
                    _log.warning(
                        "webhook configuration %s %s not found; caBundle not set", kind.rsplit("/", 1)[-1], name
                    )
                    break
                webhooks = configuration.get("webhooks") or []
                stale = [w for w in webhooks if w.get("clientConfig", {}).get("caBundle") != bundle]
                if not stale:
                    break
                for webhook in stale:
                    webhook.setdefault("clientConfig", {})["caBundle"] = bundle
                try:
                    self.client.update(configuration)
                    changed += 1
                    break
                except ConflictError:
                    continue
        return changed

    # ---------------------------------------------------------------------------------------- runnable

    def ensure(self) -> ServingPair:
        """One full pass: Secret, files, caBundles."""
        pair = self.ensure_secret()
        if self.write_files(pair):
            _log.info("wrote the webhook serving certificate", extra={"dir": str(self.cert_dir)})
        self.patch_ca_bundles(pair.ca)
        return pair

    def start(self, stop: threading.Event) -> None:
        self.ensure()
        while not self.clock.wait_event(stop, self.check_interval):
            try:
                self.ensure()
            except Exception as exc:  # keep serving with what is on disk; try again at the next check
                _log.warning("could not refresh the webhook certificate: %s", exc)


__all__ = [
    "MUTATING",
    "VALIDATING",
    "SelfSignedCertificates",
    "ServingPair",
]
