"""The CronJob webhooks behind the real API server (cronjob_webhook_test.go): defaults fill what is left out and
keep what is set; a name too long for its Jobs or a schedule that is not cron is refused, on create and on
update, naming the field."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.runtime.envtest import APIError, Environment, WebhookInstallOptions
from ballast.runtime.testing import eventually

TEMPLATE = {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i"}], "restartPolicy": "Never"}}}}


def cronjob(name: str, schedule: str = "*/5 * * * *", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch.tutorial.kubebuilder.io/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "jobTemplate": TEMPLATE, **spec}}  # fmt: skip


def collection(namespace: str) -> str:
    return f"/apis/batch.tutorial.kubebuilder.io/v1/namespaces/{namespace}/cronjobs"


def refusal(envtest: Environment, method: str, path: str, body: dict[str, Any]) -> APIError:
    content_type = "application/merge-patch+json" if method == "PATCH" else "application/json"
    with pytest.raises(APIError) as refused:
        envtest.rest.request(method, path, body, content_type=content_type)
    return refused.value


def test_defaults_fill_what_is_left_out_and_keep_what_is_set(
    envtest: Environment, envtest_namespace: str, webhooks: WebhookInstallOptions
) -> None:
    path = collection(envtest_namespace)
    created = eventually(lambda: envtest.rest.create(path, cronjob("defaulted")), what="the webhook answering")
    spec = created["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"]) == ("Allow", False)
    assert (spec["successfulJobsHistoryLimit"], spec["failedJobsHistoryLimit"]) == (3, 1)
    chosen = cronjob("kept", concurrencyPolicy="Forbid", suspend=True, successfulJobsHistoryLimit=5,
                     failedJobsHistoryLimit=2)  # fmt: skip
    kept = envtest.rest.create(path, chosen)["spec"]
    assert (kept["concurrencyPolicy"], kept["suspend"], kept["successfulJobsHistoryLimit"]) == ("Forbid", True, 5)
    assert kept["failedJobsHistoryLimit"] == 2


def test_a_long_name_or_a_bad_schedule_is_refused_on_create_and_update(
    envtest: Environment, envtest_namespace: str, webhooks: WebhookInstallOptions
) -> None:
    path = collection(envtest_namespace)
    eventually(lambda: envtest.rest.create(path, cronjob("valid")), what="a valid CronJob admitted")
    long_name = "a" * 53
    refused = refusal(envtest, "POST", path, cronjob(long_name))
    assert (refused.status, refused.reason) == (422, "Invalid")
    assert f'metadata.name: Invalid value: "{long_name}": must be no more than 52 characters' in refused.message
    refused = refusal(envtest, "POST", path, cronjob("bad-schedule", "every five minutes"))
    assert 'spec.schedule: Invalid value: "every five minutes": expected exactly 5 fields, found 3' in refused.message
    refused = refusal(envtest, "PATCH", f"{path}/valid", {"spec": {"schedule": "61 * * * *"}})
    assert 'spec.schedule: Invalid value: "61 * * * *": not a valid cron expression' in refused.message
    assert envtest.rest.get(f"{path}/valid")["spec"]["schedule"] == "*/5 * * * *"
    envtest.rest.request("PATCH", f"{path}/valid", {"spec": {"schedule": "0 * * * *"}},
                         content_type="application/merge-patch+json")  # fmt: skip
    assert envtest.rest.get(f"{path}/valid")["spec"]["schedule"] == "0 * * * *"
