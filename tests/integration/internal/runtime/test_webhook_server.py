"""The webhook server behind the real API server: mutation, certificate rotation in place, self-signed mode."""

from __future__ import annotations

import base64
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from ballast.runtime import AdmissionRequest, AdmissionResponse, Client, WebhookServer, metrics, patched
from ballast.runtime.certs import CertificateAuthority
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.selfsigned import MUTATING, SelfSignedCertificates

LABEL = "admitted-by"


def label_configmap(request: AdmissionRequest) -> AdmissionResponse:
    mutated = request.object_copy()
    mutated["metadata"].setdefault("labels", {})[LABEL] = "ballast-webhook"
    return patched(request, mutated)


def configmap(name: str, namespace: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}


def write_pair(directory: Path, ca: CertificateAuthority, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> int:
    """Write a new serving pair the way kubelet updates a Secret volume: each file replaced atomically."""
    pair = ca.issue("webhook", hosts=hosts, server=True)
    for name, data in (("tls.key", pair.key_pem), ("tls.crt", pair.cert_pem), ("ca.crt", ca.cert_pem)):
        temporary = directory / f".{name}.tmp"
        temporary.write_bytes(data)
        temporary.replace(directory / name)
    return x509.load_pem_x509_certificate(pair.cert_pem).serial_number


def presented_serial(port: int, ca_pem: bytes, server_name: str = "127.0.0.1") -> int:
    """Serial of the certificate a fresh TLS handshake gets."""
    context = ssl.create_default_context(cadata=ca_pem.decode())
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname=server_name) as tls,
    ):
        der = tls.getpeercert(binary_form=True)
    assert der is not None
    return x509.load_der_x509_certificate(der).serial_number


@pytest.fixture
def server(envtest: Environment, tmp_path: Path) -> Iterator[tuple[WebhookServer, CertificateAuthority, Path]]:
    ca = CertificateAuthority("rotation-test-ca")
    cert_dir = tmp_path / "certs"
    cert_dir.mkdir()
    write_pair(cert_dir, ca)
    webhook = WebhookServer(host="127.0.0.1", port=0, cert_dir=cert_dir)
    webhook.cert_watcher.poll_interval = 0.5
    webhook.register("/mutate-configmaps", label_configmap)
    stop = threading.Event()
    thread = threading.Thread(target=webhook.start, args=(stop,), daemon=True)
    thread.start()
    assert webhook.wait_listening(10)
    yield webhook, ca, cert_dir
    stop.set()
    thread.join(15)
    assert not thread.is_alive()


def _configuration(name: str, namespace: str, ca_bundle: bytes, port: int) -> dict[str, Any]:
    return {
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": name},
        "webhooks": [{
            "name": "label.configmaps.ballast.dev",
            "clientConfig": {"url": f"https://127.0.0.1:{port}/mutate-configmaps",
                             "caBundle": base64.b64encode(ca_bundle).decode()},
            "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                       "resources": ["configmaps"]}],
            "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}},
            "sideEffects": "None", "admissionReviewVersions": ["v1"], "failurePolicy": "Fail", "timeoutSeconds": 5,
        }],
    }  # fmt: skip


class Admissions:
    """Creates ConfigMaps continuously on a thread; every one must be admitted and labelled."""

    def more(self, count: int, what: str) -> None:
        """Wait until `count` more admissions succeeded (a count of events, whatever the machine's speed)."""
        mark = self.ok
        poll_until(lambda: self.ok >= mark + count, timeout=60, what=f"{count} admissions {what}")

    def __init__(self, client: Client, namespace: str) -> None:
        self.client, self.namespace = client, namespace
        self.ok = 0
        self.failures: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        index = 0
        while not self._stop.is_set():
            index += 1
            body = configmap(f"cm-{index}", self.namespace)
            try:
                made = self.client.create(body)
                if made["metadata"].get("labels", {}).get(LABEL) == "ballast-webhook":
                    self.ok += 1
                else:
                    self.failures.append(f"cm-{index} not mutated")
            except Exception as exc:
                self.failures.append(f"cm-{index}: {exc}")
            time.sleep(0.02)

    def __enter__(self) -> Admissions:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(15)


def _wait_admitting(client: Client, namespace: str) -> None:
    counter = iter(range(10_000))

    def admitted() -> bool:
        name = f"probe-{next(counter)}"
        made = client.create(configmap(name, namespace))
        return bool(made["metadata"].get("labels", {}).get(LABEL))

    poll_until(admitted, timeout=15, what="the API server to call the webhook")


def test_the_api_server_calls_the_server_and_applies_its_patch(
    envtest: Environment,
    client: Client,
    envtest_namespace: str,
    server: tuple[WebhookServer, CertificateAuthority, Path],
) -> None:
    webhook, ca, _ = server
    envtest.install_webhooks([_configuration(f"wh-{envtest_namespace}", envtest_namespace, ca.cert_pem, webhook.port)],
                             port=webhook.port, ca_bundle=ca.cert_pem)  # fmt: skip
    _wait_admitting(client, envtest_namespace)
    made = client.create(configmap("final", envtest_namespace))
    assert made["metadata"]["labels"] == {LABEL: "ballast-webhook"}
    webhook.ready()
    assert metrics.WEBHOOK_REQUESTS.labels("/mutate-configmaps", "200")._value.get() >= 2


def test_rotation_with_the_same_ca_keeps_admitting_and_serves_the_new_certificate(
    envtest: Environment,
    client: Client,
    envtest_namespace: str,
    server: tuple[WebhookServer, CertificateAuthority, Path],
) -> None:
    webhook, ca, cert_dir = server
    envtest.install_webhooks([_configuration(f"wh-{envtest_namespace}", envtest_namespace, ca.cert_pem, webhook.port)],
                             port=webhook.port, ca_bundle=ca.cert_pem)  # fmt: skip
    _wait_admitting(client, envtest_namespace)
    before = presented_serial(webhook.port, ca.cert_pem)
    with Admissions(client, envtest_namespace) as admissions:
        admissions.more(5, "before the rotation")
        serial = write_pair(cert_dir, ca)
        poll_until(lambda: webhook.cert_watcher.reloads >= 1, timeout=10, what="the reload")
        admissions.more(10, "after the reload")
    assert serial != before
    assert presented_serial(webhook.port, ca.cert_pem) == serial  # a fresh handshake gets the new pair
    assert admissions.failures == []


def test_rotation_to_a_new_ca_in_the_documented_order(
    envtest: Environment,
    client: Client,
    envtest_namespace: str,
    server: tuple[WebhookServer, CertificateAuthority, Path],
) -> None:
    webhook, old_ca, cert_dir = server
    name = f"wh-{envtest_namespace}"
    envtest.install_webhooks([_configuration(name, envtest_namespace, old_ca.cert_pem, webhook.port)],
                             port=webhook.port, ca_bundle=old_ca.cert_pem)  # fmt: skip
    _wait_admitting(client, envtest_namespace)
    new_ca = CertificateAuthority("rotation-test-ca-2")
    with Admissions(client, envtest_namespace) as admissions:
        # 1. trust both CAs; 2. rotate the files; 3. after the reload, trust only the new CA.
        envtest.install_webhooks([_configuration(name, envtest_namespace, old_ca.cert_pem, webhook.port)],
                                 port=webhook.port, ca_bundle=old_ca.cert_pem + new_ca.cert_pem)  # fmt: skip
        admissions.more(5, "trusting both CAs")
        serial = write_pair(cert_dir, new_ca)
        poll_until(lambda: webhook.cert_watcher.reloads >= 1, timeout=10, what="the reload")
        admissions.more(5, "after the reload")
        envtest.install_webhooks([_configuration(name, envtest_namespace, new_ca.cert_pem, webhook.port)],
                                 port=webhook.port, ca_bundle=new_ca.cert_pem)  # fmt: skip
        admissions.more(10, "trusting only the new CA")
    assert presented_serial(webhook.port, new_ca.cert_pem) == serial
    assert admissions.failures == []


def test_a_broken_pair_on_disk_keeps_the_old_one_in_service(
    server: tuple[WebhookServer, CertificateAuthority, Path],
) -> None:
    webhook, ca, cert_dir = server
    before = presented_serial(webhook.port, ca.cert_pem)
    errors = metrics.CERTWATCHER_READ_ERRORS._value.get()
    (cert_dir / "tls.crt").write_bytes(b"-----BEGIN CERTIFICATE-----\nhalf written")
    poll_until(lambda: metrics.CERTWATCHER_READ_ERRORS._value.get() > errors, timeout=10, what="a counted read error")
    other = CertificateAuthority("mismatch").issue("x", server=True)
    (cert_dir / "tls.crt").write_bytes(other.cert_pem)  # a certificate that does not match the key on disk
    time.sleep(1.0)
    assert presented_serial(webhook.port, ca.cert_pem) == before
    assert webhook.cert_watcher.reloads == 0


def test_self_signed_mode_creates_one_secret_for_all_replicas_and_sets_ca_bundles(
    envtest: Environment, client: Client, envtest_namespace: str, tmp_path: Path
) -> None:
    name = f"selfsigned-{envtest_namespace}"
    configuration = _configuration(name, envtest_namespace, b"placeholder", 1)
    configuration["webhooks"][0]["clientConfig"] = {
        "service": {"name": "ballast-webhook", "namespace": envtest_namespace}
    }
    client.create(configuration)
    replicas = [
        SelfSignedCertificates(
            client, namespace=envtest_namespace, secret_name="ballast-webhook-cert", service_name="ballast-webhook",
            cert_dir=tmp_path / f"replica-{index}", webhook_configurations=[(MUTATING, name)],
        )
        for index in range(3)
    ]  # fmt: skip
    barrier = threading.Barrier(3)
    results: list[Any] = [None] * 3

    def race(index: int) -> None:
        barrier.wait()
        results[index] = replicas[index].ensure()

    threads = [threading.Thread(target=race, args=(i,)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert results[0] == results[1] == results[2]  # one CA and pair, adopted by all
    files = [(tmp_path / f"replica-{i}" / "tls.crt").read_bytes() for i in range(3)]
    assert files[0] == files[1] == files[2] == results[0].cert
    stored = client.get(MUTATING, name)
    assert base64.b64decode(stored["webhooks"][0]["clientConfig"]["caBundle"]) == results[0].ca
    secret = client.get("v1/Secret", "ballast-webhook-cert", envtest_namespace)
    assert secret["type"] == "kubernetes.io/tls"
    # The certificate names the Service, so the API server can verify it when it calls through the Service.
    presented = x509.load_pem_x509_certificate(results[0].cert)
    names = presented.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.DNSName
    )
    assert f"ballast-webhook.{envtest_namespace}.svc" in names
    # A second pass changes nothing.
    assert replicas[0].ensure() == results[0]
    assert replicas[0].patch_ca_bundles(results[0].ca) == 0
