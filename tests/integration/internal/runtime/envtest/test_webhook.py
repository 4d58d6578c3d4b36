"""The API server calls a webhook over TLS, installed and rewritten by the harness, and applies its patch."""

from __future__ import annotations

import base64
import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
import pytest

from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until


class LabellingWebhook(BaseHTTPRequestHandler):
    """Adds label `mutated-by=envtest-webhook` to every object it is asked about."""

    protocol_version = "HTTP/1.1"
    calls = 0

    def do_POST(self) -> None:
        review = orjson.loads(self.rfile.read(int(self.headers["Content-Length"])))
        LabellingWebhook.calls += 1
        patch = [{"op": "add", "path": "/metadata/labels", "value": {"mutated-by": "envtest-webhook"}}]
        answer = orjson.dumps(
            {
                "apiVersion": "admission.k8s.io/v1",
                "kind": "AdmissionReview",
                "response": {
                    "uid": review["request"]["uid"],
                    "allowed": True,
                    "patchType": "JSONPatch",
                    "patch": base64.b64encode(orjson.dumps(patch)).decode(),
                },
            }
        )
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def webhook_server(envtest: Environment) -> Iterator[tuple[int, Path]]:
    cert_dir = envtest.webhook_cert_dir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), LabellingWebhook)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_dir / "tls.crt", cert_dir / "tls.key")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], cert_dir
    server.shutdown()
    server.server_close()


def test_a_tls_webhook_mutates_created_objects(
    envtest: Environment, envtest_namespace: str, webhook_server: tuple[int, Path]
) -> None:
    port, cert_dir = webhook_server
    assert sorted(p.name for p in cert_dir.iterdir()) == ["ca.crt", "tls.crt", "tls.key"]
    configuration = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": f"label-{envtest_namespace}"},
        "webhooks": [
            {
                "name": "label.test.ballast.dev",
                "clientConfig": {"service": {"name": "webhook", "namespace": "ballast-system", "path": "/mutate"}},
                "rules": [
                    {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["configmaps"]}
                ],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": envtest_namespace}},
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "failurePolicy": "Fail",
            }
        ],
    }
    installed = envtest.install_webhooks([configuration], port=port, ca_bundle=(cert_dir / "ca.crt").read_bytes())
    assert installed == [f"MutatingWebhookConfiguration/label-{envtest_namespace}"]
    stored = envtest.rest.get(
        f"/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/label-{envtest_namespace}"
    )
    assert stored["webhooks"][0]["clientConfig"]["url"] == f"https://127.0.0.1:{port}/mutate"

    configmaps = f"/api/v1/namespaces/{envtest_namespace}/configmaps"
    counter = iter(range(1000))

    def created_with_label() -> bool:
        # The API server picks up a new configuration within moments; objects created before it stay unlabelled.
        made = envtest.rest.create(
            configmaps, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"cm-{next(counter)}"}}
        )
        return bool(made["metadata"].get("labels") == {"mutated-by": "envtest-webhook"})

    poll_until(created_with_label, timeout=10, what="the webhook to label a created ConfigMap")
    assert LabellingWebhook.calls >= 1
