"""Webhooks for a custom kind behind the real API server, as kubebuilder's CronJob tutorial has them: the builder's
defaulter and validator in a running Manager, the configurations controller-gen would write installed by
`WebhookInstallOptions`; defaults reach the stored object, field errors and warnings reach the client."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar

import orjson
import pytest
import urllib3
from pydantic import Field

from ballast.runtime import Manager, WebhookBuilder, WebhookServer
from ballast.runtime.crd import CustomResource, Int32, Scope, WireModel, crd_for
from ballast.runtime.envtest import APIError, Environment, WebhookInstallOptions
from ballast.runtime.testing import eventually, running
from ballast.runtime.webhookbuilder import (
    AdmissionContext,
    FieldError,
    Invalid,
    KindWebhooks,
    forbidden,
    invalid,
    webhook_configurations,
)


class CronJobSpec(WireModel):
    schedule: str = ""
    concurrency_policy: str | None = None
    suspend: bool | None = None
    successful_jobs_history_limit: Int32 | None = None


class CronJob(CustomResource):
    """A CronJob of the kubebuilder tutorial."""

    GROUP, VERSION, KIND, PLURAL = "batch.tutorial.kubebuilder.io", "v1", "CronJob", "cronjobs"
    SCOPE: ClassVar[Scope] = "Namespaced"

    spec: CronJobSpec = Field(default_factory=CronJobSpec)


class CronJobDefaulter:
    def default(self, ctx: AdmissionContext, obj: CronJob) -> None:
        if obj.spec.concurrency_policy is None:
            obj.spec.concurrency_policy = "Allow"
        if obj.spec.suspend is None:
            obj.spec.suspend = False
        if obj.spec.successful_jobs_history_limit is None:
            obj.spec.successful_jobs_history_limit = 3


class CronJobValidator:
    def _check(self, obj: CronJob) -> list[str]:
        if len(obj.spec.schedule.split()) != 5:
            raise Invalid(invalid("spec.schedule", obj.spec.schedule, "not a cron schedule"))
        return [f"{obj.metadata.name} runs every minute"] if obj.spec.schedule == "* * * * *" else []

    def validate_create(self, ctx: AdmissionContext, obj: CronJob) -> Sequence[str] | None:
        return self._check(obj)

    def validate_update(self, ctx: AdmissionContext, old: CronJob, new: CronJob) -> Sequence[str] | None:
        errors: list[FieldError] = []
        if old.spec.concurrency_policy != new.spec.concurrency_policy:
            errors.append(forbidden("spec.concurrencyPolicy", "cannot be changed once set"))
        if errors:
            raise Invalid(errors)
        return self._check(new)

    def validate_delete(self, ctx: AdmissionContext, obj: CronJob) -> Sequence[str] | None:
        return None


def cronjob(name: str, namespace: str, schedule: str = "*/5 * * * *", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": CronJob.API_VERSION,
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"schedule": schedule, **spec},
    }


class Admin:
    """Requests as the admin that keep the response headers (the API server sends a webhook's warnings as
    `Warning: 299 - "..."` headers)."""

    def __init__(self, envtest: Environment) -> None:
        credentials = envtest.admin
        self.server = envtest.server
        self.pool = urllib3.PoolManager(
            ca_certs=str(credentials.ca_file),
            cert_file=str(credentials.cert_file),
            key_file=str(credentials.key_file),
            retries=False,
        )

    def send(self, method: str, path: str, body: dict[str, Any], query: str = "") -> urllib3.BaseHTTPResponse:
        content_type = "application/merge-patch+json" if method == "PATCH" else "application/json"
        return self.pool.request(
            method,
            f"{self.server}{path}{query}",
            body=orjson.dumps(body),
            headers={"Content-Type": content_type, "Accept": "application/json"},
        )


@pytest.fixture
def webhooks(envtest: Environment) -> Iterator[tuple[WebhookInstallOptions, Manager, KindWebhooks]]:
    envtest.install_crds([crd_for(CronJob)])
    configurations = webhook_configurations([KindWebhooks.of(CronJob)])  # config/webhook/manifests.yaml
    options = WebhookInstallOptions(
        mutating_webhooks=[c for c in configurations if c["kind"] == "MutatingWebhookConfiguration"],
        validating_webhooks=[c for c in configurations if c["kind"] == "ValidatingWebhookConfiguration"],
    ).install(envtest)
    try:
        manager = Manager(envtest.rest_config())
        server = WebhookServer(
            host=options.local_serving_host, port=options.local_serving_port, cert_dir=options.local_serving_cert_dir
        )
        manager.add_webhook_server(server)
        hooks = (
            WebhookBuilder(manager)
            .for_(CronJob)
            .with_defaulter(CronJobDefaulter())
            .with_validator(CronJobValidator())
            .complete()
        )
        with running(manager):
            assert server.wait_listening(10)
            yield options, manager, hooks
    finally:
        options.uninstall(envtest)


def test_the_builder_serves_what_the_configurations_call(
    webhooks: tuple[WebhookInstallOptions, Manager, KindWebhooks],
) -> None:
    options, _, hooks = webhooks
    assert hooks == KindWebhooks.of(CronJob)
    assert sorted(options.installed) == [
        "MutatingWebhookConfiguration/mutating-webhook-configuration",
        "ValidatingWebhookConfiguration/validating-webhook-configuration",
    ]
    assert options.cert_file.is_file()
    assert options.key_file.is_file()


def test_defaults_invalid_objects_updates_and_warnings_through_the_api_server(
    envtest: Environment, envtest_namespace: str, webhooks: tuple[WebhookInstallOptions, Manager, KindWebhooks]
) -> None:
    admin = Admin(envtest)
    collection = CronJob.collection_path(envtest_namespace)

    def defaulted_dry_run() -> bool:  # the API server picks the configurations up within a moment
        answer = admin.send("POST", collection, cronjob("probe", envtest_namespace), "?dryRun=All")
        return answer.status == 201 and orjson.loads(answer.data)["spec"].get("suspend") is False

    eventually(defaulted_dry_run, what="the API server to call the mutating webhook")

    created = envtest.rest.create(collection, cronjob("nightly", envtest_namespace, concurrencyPolicy="Forbid"))
    assert created["spec"] == {
        "schedule": "*/5 * * * *",
        "concurrencyPolicy": "Forbid",
        "suspend": False,
        "successfulJobsHistoryLimit": 3,
    }
    stored = envtest.rest.get(CronJob.object_path("nightly", envtest_namespace))
    assert stored["spec"]["successfulJobsHistoryLimit"] == 3

    with pytest.raises(APIError) as refused:
        envtest.rest.create(collection, cronjob("broken", envtest_namespace, schedule="every minute"))
    assert refused.value.status == 422
    assert refused.value.reason == "Invalid"
    assert refused.value.message == (
        'admission webhook "vcronjob-v1.kb.io" denied the request: CronJob.batch.tutorial.kubebuilder.io "broken" '
        'is invalid: spec.schedule: Invalid value: "every minute": not a cron schedule'
    )

    answer = admin.send(
        "PATCH", CronJob.object_path("nightly", envtest_namespace), {"spec": {"concurrencyPolicy": "Allow"}}
    )
    assert answer.status == 422, answer.data
    status = orjson.loads(answer.data)
    assert "spec.concurrencyPolicy: Forbidden: cannot be changed once set" in status["message"]
    assert status["details"]["causes"][0]["field"] == "spec.concurrencyPolicy"
    kept = envtest.rest.get(CronJob.object_path("nightly", envtest_namespace))
    assert kept["spec"]["concurrencyPolicy"] == "Forbid"

    answer = admin.send("POST", collection, cronjob("minutely", envtest_namespace, schedule="* * * * *"))
    assert answer.status == 201, answer.data
    assert answer.headers.get("Warning") == '299 - "minutely runs every minute"'
