"""The webhook builder for custom kinds: paths, defaulting patches, validator warnings and denials, decoding."""

from __future__ import annotations

import base64
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, cast

import jsonpatch
import orjson
import pytest
from pydantic import Field

from ballast.runtime import (
    AdmissionRequest,
    AdmissionResponse,
    Manager,
    NotFoundError,
    WebhookBuilder,
    WebhookServer,
)
from ballast.runtime.admission import encode_review
from ballast.runtime.crd import CustomResource, Int32, Scope, WireModel
from ballast.runtime.webhookbuilder import (
    AdmissionContext,
    FieldError,
    Invalid,
    KindWebhooks,
    forbidden,
    invalid,
    mutating_path,
    required,
    validating_path,
    webhook_configurations,
)


class CronJobSpec(WireModel):
    schedule: str = ""
    concurrency_policy: Literal["Allow", "Forbid", "Replace"] | None = None
    suspend: bool | None = None
    successful_jobs_history_limit: Int32 | None = None


class CronJob(CustomResource):
    """A CronJob."""

    GROUP, VERSION, KIND, PLURAL = "batch.tutorial.kubebuilder.io", "v1", "CronJob", "cronjobs"
    SCOPE: ClassVar[Scope] = "Namespaced"

    spec: CronJobSpec = Field(default_factory=CronJobSpec)


class Defaulter:
    def __init__(self, fail: Exception | None = None) -> None:
        self.fail = fail
        self.seen: list[AdmissionContext] = []

    def default(self, ctx: AdmissionContext, obj: CronJob) -> None:
        self.seen.append(ctx)
        if self.fail is not None:
            raise self.fail
        if obj.spec.concurrency_policy is None:
            obj.spec.concurrency_policy = "Allow"
        if obj.spec.suspend is None:
            obj.spec.suspend = False
        if obj.spec.successful_jobs_history_limit is None:
            obj.spec.successful_jobs_history_limit = 3


class Validator:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str]] = []

    def _check(self, obj: CronJob) -> list[str]:
        errors: list[FieldError] = []
        if not obj.spec.schedule:
            errors.append(required("spec.schedule", "a schedule is needed"))
        elif len(obj.spec.schedule.split()) != 5:
            errors.append(invalid("spec.schedule", obj.spec.schedule, "not a cron schedule"))
        if len(obj.metadata.name or "") > 52:
            errors.append(invalid("metadata.name", obj.metadata.name, "must be no more than 52 characters"))
        if errors:
            raise Invalid(errors)
        return ["spec.suspend is deprecated"] if obj.spec.suspend else []

    def validate_create(self, ctx: AdmissionContext, obj: CronJob) -> Sequence[str] | None:
        self.calls.append(("create", obj.metadata.name or "", ""))
        return self._check(obj)

    def validate_update(self, ctx: AdmissionContext, old: CronJob, new: CronJob) -> Sequence[str] | None:
        self.calls.append(("update", old.spec.schedule, new.spec.schedule))
        if old.spec.schedule != new.spec.schedule and new.spec.suspend:
            raise Invalid(forbidden("spec.schedule", "cannot change while suspended"), warnings=["it is suspended"])
        return self._check(new)

    def validate_delete(self, ctx: AdmissionContext, obj: CronJob) -> Sequence[str] | None:
        self.calls.append(("delete", obj.metadata.name or "", ""))
        if (obj.metadata.labels or {}).get("protected") == "true":
            raise PermissionError("this CronJob is protected")
        return None


class Recording(WebhookServer):
    """A server that is never started: the builder registers on it and the tests call the handlers."""

    def __init__(self, cert_dir: Path) -> None:
        super().__init__(cert_dir=cert_dir)
        self.handlers: dict[str, Any] = {}

    def register(self, path: str, handler: Any) -> None:
        super().register(path, handler)
        self.handlers[path] = handler


@pytest.fixture
def server(tmp_path: Path) -> Recording:
    return Recording(tmp_path)


def cronjob(name: str = "nightly", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch.tutorial.kubebuilder.io/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": "default", "uid": "u-1",
                     "managedFields": [{"time": "2026-01-01T00:00:00Z"}]},
        "spec": {"schedule": "*/1 * * * *", **spec},
        "extra": {"kept": True},
    }  # fmt: skip


def review(
    operation: str, obj: dict[str, Any] | None, old: dict[str, Any] | None = None, name: str = "nightly"
) -> AdmissionRequest:
    return AdmissionRequest(
        uid="r-1",
        kind={"group": CronJob.GROUP, "version": "v1", "kind": "CronJob"},
        resource={"group": CronJob.GROUP, "version": "v1", "resource": "cronjobs"},
        operation=operation,
        name=name,
        namespace="default",
        object=obj,
        old_object=old,
    )


def answered(response: AdmissionResponse) -> dict[str, Any]:
    """The AdmissionReview response as the API server reads it."""
    body: dict[str, Any] = orjson.loads(encode_review("admission.k8s.io/v1", "r-1", response))["response"]
    return body


def built(server: Recording, *, defaulter: Any = None, validator: Any = None, **options: Any) -> KindWebhooks:
    builder = WebhookBuilder(server=server).for_(CronJob)
    if defaulter is not None:
        builder = builder.with_defaulter(defaulter)
    if validator is not None:
        builder = builder.with_validator(validator, **options)
    return builder.complete()


# ------------------------------------------------------------------------------------------------ paths


def test_the_paths_are_controller_runtimes() -> None:
    assert mutating_path(CronJob) == "/mutate-batch-tutorial-kubebuilder-io-v1-cronjob"
    assert validating_path(CronJob) == "/validate-batch-tutorial-kubebuilder-io-v1-cronjob"


def test_complete_registers_both_paths_on_the_server(server: Recording) -> None:
    hooks = built(server, defaulter=Defaulter(), validator=Validator())
    assert sorted(server.handlers) == [
        "/mutate-batch-tutorial-kubebuilder-io-v1-cronjob",
        "/validate-batch-tutorial-kubebuilder-io-v1-cronjob",
    ]
    assert hooks == KindWebhooks(
        CronJob,
        "/mutate-batch-tutorial-kubebuilder-io-v1-cronjob",
        "/validate-batch-tutorial-kubebuilder-io-v1-cronjob",
    )


def test_only_the_webhooks_given_are_registered_and_one_is_needed(server: Recording) -> None:
    assert built(server, validator=Validator()).mutating_path is None
    assert list(server.handlers) == ["/validate-batch-tutorial-kubebuilder-io-v1-cronjob"]
    with pytest.raises(ValueError, match="with_defaulter"):
        WebhookBuilder(server=server).for_(CronJob).complete()


class Managed:
    """What the builder uses of a Manager: its webhook servers and adding one."""

    def __init__(self, *servers: object) -> None:
        self.servers = list(servers)

    @property
    def webhook_servers(self) -> tuple[object, ...]:
        return tuple(self.servers)

    def add_webhook_server(self, server: object) -> None:
        self.servers.append(server)


def test_the_builder_registers_on_the_managers_first_webhook_server_or_adds_one(server: Recording) -> None:
    manager = Managed(object(), server)
    WebhookBuilder(cast("Manager", manager)).for_(CronJob).with_validator(Validator()).complete()
    assert list(server.handlers) == [validating_path(CronJob)]
    empty = Managed()
    WebhookBuilder(cast("Manager", empty)).for_(CronJob).with_defaulter(Defaulter()).complete()
    [added] = empty.servers
    assert isinstance(added, WebhookServer)
    assert added.port == 9443


def test_for_takes_a_kind_class(server: Recording) -> None:
    with pytest.raises(TypeError, match="CustomResource kind class"):
        WebhookBuilder(server=server).for_(dict)  # type: ignore[type-var]


# --------------------------------------------------------------------------------------------- defaulting


def test_the_defaulter_answers_a_patch_of_what_it_set(server: Recording) -> None:
    defaulter = Defaulter()
    built(server, defaulter=defaulter)
    handler = server.handlers[mutating_path(CronJob)]
    obj = cronjob(concurrencyPolicy="Forbid")
    response = handler(review("CREATE", obj))
    assert response.allowed
    body = answered(response)
    assert body["patchType"] == "JSONPatch"
    patch = orjson.loads(base64.b64decode(body["patch"]))
    assert sorted(patch, key=lambda op: op["path"]) == [
        {"op": "add", "path": "/spec/successfulJobsHistoryLimit", "value": 3},
        {"op": "add", "path": "/spec/suspend", "value": False},
    ]
    patched = jsonpatch.apply_patch(obj, patch)
    assert patched["extra"] == {"kept": True}
    assert patched["metadata"] == obj["metadata"]  # the model's own form of metadata is not patched in
    assert defaulter.seen[0].request.operation == "CREATE"


def test_what_the_model_fills_in_itself_is_not_patched_in(server: Recording) -> None:
    built(server, defaulter=Defaulter())
    obj = cronjob(concurrencyPolicy="Allow", suspend=True, successfulJobsHistoryLimit=1)
    del obj["spec"]["schedule"]  # the model's default ("") is its own form, not the defaulter's change
    assert server.handlers[mutating_path(CronJob)](review("CREATE", obj)).patch is None
    del obj["spec"]["suspend"]
    patch = server.handlers[mutating_path(CronJob)](review("CREATE", obj)).patch
    assert patch == [{"op": "add", "path": "/spec/suspend", "value": False}]


def test_a_default_under_a_node_the_object_lacks_is_still_a_patch_that_applies(server: Recording) -> None:
    built(server, defaulter=Defaulter())
    obj = cronjob()
    del obj["spec"]
    patch = server.handlers[mutating_path(CronJob)](review("CREATE", obj)).patch
    assert patch is not None
    assert jsonpatch.apply_patch(obj, patch)["spec"]["suspend"] is False


def test_nothing_to_default_is_no_patch(server: Recording) -> None:
    built(server, defaulter=Defaulter())
    obj = cronjob(concurrencyPolicy="Allow", suspend=True, successfulJobsHistoryLimit=1)
    response = server.handlers[mutating_path(CronJob)](review("UPDATE", obj, obj))
    assert response.allowed
    assert response.patch is None
    assert "patch" not in answered(response)


def test_a_raising_defaulter_denies_with_its_message(server: Recording) -> None:
    built(server, defaulter=Defaulter(fail=RuntimeError("the schedule service is down")))
    response = server.handlers[mutating_path(CronJob)](review("CREATE", cronjob()))
    assert not response.allowed
    assert response.code == 403
    assert response.message == "the schedule service is down"


def test_a_defaulter_raising_invalid_answers_invalid(server: Recording) -> None:
    built(server, defaulter=Defaulter(fail=Invalid(invalid("spec.schedule", "x", "bad"))))
    response = server.handlers[mutating_path(CronJob)](review("CREATE", cronjob()))
    assert (response.allowed, response.code, response.reason) == (False, 422, "Invalid")


def test_a_defaulter_raising_an_api_error_answers_its_status(server: Recording) -> None:
    built(server, defaulter=Defaulter(fail=NotFoundError(404, "NotFound", 'configmaps "x" not found')))
    response = server.handlers[mutating_path(CronJob)](review("CREATE", cronjob()))
    assert (response.allowed, response.code, response.reason) == (False, 404, "NotFound")
    assert response.message == 'configmaps "x" not found'


def test_an_object_that_does_not_fit_the_model_is_a_400(server: Recording) -> None:
    built(server, defaulter=Defaulter(), validator=Validator())
    bad = cronjob(successfulJobsHistoryLimit="three")
    for path in (mutating_path(CronJob), validating_path(CronJob)):
        response = server.handlers[path](review("CREATE", bad))
        assert (response.allowed, response.code) == (False, 400)
        assert "spec.successfulJobsHistoryLimit" in response.message
        assert "CronJob" in response.message


def test_a_wrong_kind_and_a_missing_object_are_400s(server: Recording) -> None:
    built(server, defaulter=Defaulter(), validator=Validator())
    wrong = {**cronjob(), "kind": "Pod"}
    assert server.handlers[mutating_path(CronJob)](review("CREATE", wrong)).code == 400
    response = server.handlers[validating_path(CronJob)](review("UPDATE", cronjob(), None))
    assert (response.allowed, response.code) == (False, 400)
    assert "oldObject" in response.message


# --------------------------------------------------------------------------------------------- validation


def test_a_valid_object_is_allowed_with_the_validators_warnings(server: Recording) -> None:
    validator = Validator()
    built(server, validator=validator)
    handler = server.handlers[validating_path(CronJob)]
    assert handler(review("CREATE", cronjob())).warnings == []
    response = handler(review("CREATE", cronjob(suspend=True)))
    assert response.allowed
    assert answered(response)["warnings"] == ["spec.suspend is deprecated"]
    assert validator.calls[0] == ("create", "nightly", "")


def test_field_errors_answer_invalid_naming_the_kind_the_name_and_each_field(server: Recording) -> None:
    built(server, validator=Validator())
    handler = server.handlers[validating_path(CronJob)]
    long_name = "n" * 53
    response = handler(review("CREATE", cronjob(name=long_name, schedule="every minute"), name=long_name))
    body = answered(response)
    assert body["allowed"] is False
    status = body["status"]
    assert (status["code"], status["reason"], status["status"]) == (422, "Invalid", "Failure")
    assert status["message"] == (
        f'CronJob.batch.tutorial.kubebuilder.io "{long_name}" is invalid: '
        '[spec.schedule: Invalid value: "every minute": not a cron schedule, '
        f'metadata.name: Invalid value: "{long_name}": must be no more than 52 characters]'
    )
    assert status["details"] == {
        "name": long_name,
        "group": "batch.tutorial.kubebuilder.io",
        "kind": "CronJob",
        "causes": [
            {"reason": "FieldValueInvalid", "message": 'Invalid value: "every minute": not a cron schedule',
             "field": "spec.schedule"},
            {"reason": "FieldValueInvalid",
             "message": f'Invalid value: "{long_name}": must be no more than 52 characters', "field": "metadata.name"},
        ],
    }  # fmt: skip


def test_one_field_error_is_not_bracketed_and_required_shows_no_value(server: Recording) -> None:
    built(server, validator=Validator())
    response = server.handlers[validating_path(CronJob)](review("CREATE", cronjob(schedule="")))
    assert response.message == (
        'CronJob.batch.tutorial.kubebuilder.io "nightly" is invalid: '
        "spec.schedule: Required value: a schedule is needed"
    )
    assert response.details is not None
    assert response.details["causes"][0]["reason"] == "FieldValueRequired"


def test_update_gets_the_old_and_the_new_object_and_a_refusal_keeps_its_warnings(server: Recording) -> None:
    validator = Validator()
    built(server, validator=validator)
    handler = server.handlers[validating_path(CronJob)]
    old, new = cronjob(), cronjob(schedule="0 * * * *", suspend=True)
    response = handler(review("UPDATE", new, old))
    assert validator.calls == [("update", "*/1 * * * *", "0 * * * *")]
    assert (response.allowed, response.code) == (False, 422)
    assert response.message.endswith("spec.schedule: Forbidden: cannot change while suspended")
    assert response.warnings == ["it is suspended"]


def test_delete_validates_the_old_object_and_any_exception_is_a_denial(server: Recording) -> None:
    validator = Validator()
    built(server, validator=validator)
    handler = server.handlers[validating_path(CronJob)]
    assert handler(review("DELETE", None, cronjob())).allowed
    protected = cronjob()
    protected["metadata"]["labels"] = {"protected": "true"}
    response = handler(review("DELETE", None, protected))
    assert (response.allowed, response.code, response.message) == (False, 403, "this CronJob is protected")
    assert validator.calls == [("delete", "nightly", ""), ("delete", "nightly", "")]


def test_a_validator_returning_something_else_than_strings_is_refused_not_a_crash(server: Recording) -> None:
    class Sloppy(Validator):
        def validate_create(self, ctx: AdmissionContext, obj: CronJob) -> Sequence[str] | None:
            return "one warning"  # a str, not a list of them

    built(server, validator=Sloppy())
    response = server.handlers[validating_path(CronJob)](review("CREATE", cronjob()))
    assert not response.allowed
    assert "list of warning strings" in response.message


def test_invalid_needs_a_field_error() -> None:
    with pytest.raises(ValueError, match="at least one"):
        Invalid([])


# ------------------------------------------------------------------------------------------ configurations


def test_configurations_are_what_controller_gen_writes() -> None:
    mutating, validating = webhook_configurations([KindWebhooks.of(CronJob, validate_delete=True)])
    assert mutating == {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "mutating-webhook-configuration"},
        "webhooks": [{
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"service": {"name": "webhook-service", "namespace": "system",
                                         "path": "/mutate-batch-tutorial-kubebuilder-io-v1-cronjob"}},
            "failurePolicy": "Fail",
            "name": "mcronjob-v1.kb.io",
            "rules": [{"apiGroups": ["batch.tutorial.kubebuilder.io"], "apiVersions": ["v1"],
                       "operations": ["CREATE", "UPDATE"], "resources": ["cronjobs"]}],
            "sideEffects": "None",
        }],
    }  # fmt: skip
    assert validating["kind"] == "ValidatingWebhookConfiguration"
    assert validating["metadata"] == {"name": "validating-webhook-configuration"}
    [webhook] = validating["webhooks"]
    assert webhook["name"] == "vcronjob-v1.kb.io"
    assert webhook["clientConfig"]["service"]["path"] == "/validate-batch-tutorial-kubebuilder-io-v1-cronjob"
    assert webhook["rules"][0]["operations"] == ["CREATE", "UPDATE", "DELETE"]


def test_a_configuration_without_webhooks_is_left_out_and_delete_is_opt_in(server: Recording) -> None:
    hooks = built(server, validator=Validator())
    [validating] = webhook_configurations([hooks])
    assert validating["kind"] == "ValidatingWebhookConfiguration"
    assert validating["webhooks"][0]["rules"][0]["operations"] == ["CREATE", "UPDATE"]
