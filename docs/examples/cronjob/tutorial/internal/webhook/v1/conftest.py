"""webhook_suite_test.go: the CronJob CRD, the webhook configurations controller-gen would write installed
pointing at a local webhook server (envtest's WebhookInstallOptions), and a manager serving the webhooks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ballast.runtime import Manager, Scheme, WebhookServer
from ballast.runtime.envtest import Environment, WebhookInstallOptions
from ballast.runtime.testing import running
from ballast.runtime.webhookbuilder import KindWebhooks, webhook_configurations
from tutorial.api.v1 import CronJob, add_to_scheme
from tutorial.internal.webhook.v1.cronjob_webhook import setup_cronjob_webhook_with_manager

CRD_DIRECTORY = Path(__file__).parents[4] / "config" / "crd" / "bases"


@pytest.fixture(scope="module")
def webhooks(envtest: Environment) -> Iterator[WebhookInstallOptions]:
    envtest.install_crds([CRD_DIRECTORY])
    configurations = webhook_configurations([KindWebhooks.of(CronJob)])
    options = WebhookInstallOptions(
        mutating_webhooks=[c for c in configurations if c["kind"] == "MutatingWebhookConfiguration"],
        validating_webhooks=[c for c in configurations if c["kind"] == "ValidatingWebhookConfiguration"],
    ).install(envtest)
    try:
        manager = Manager(envtest.rest_config(), scheme=add_to_scheme(Scheme()))
        server = WebhookServer(
            host=options.local_serving_host, port=options.local_serving_port, cert_dir=options.local_serving_cert_dir
        )
        manager.add_webhook_server(server)
        setup_cronjob_webhook_with_manager(manager)
        with running(manager):
            assert server.wait_listening(10)
            yield options
    finally:
        options.uninstall(envtest)
