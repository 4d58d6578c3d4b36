"""The CronJob webhooks (internal/webhook/v1/cronjob_webhook.go): defaults for the optional fields, and a
validator for the name's length and the schedule."""

from __future__ import annotations

from collections.abc import Sequence

from croniter import croniter

from ballast.runtime import Manager, WebhookBuilder
from ballast.runtime.webhookbuilder import AdmissionContext, FieldError, Invalid, KindWebhooks, invalid
from tutorial.api.v1 import CronJob
from tutorial.api.v1.cronjob_types import ConcurrencyPolicy

DEFAULT_CONCURRENCY_POLICY: ConcurrencyPolicy = "Allow"
DEFAULT_SUSPEND = False
DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT = 3
DEFAULT_FAILED_JOBS_HISTORY_LIMIT = 1
MAX_NAME_LENGTH = 52
"""A Job's name is the CronJob's and 11 characters of time, within a DNS-1035 label's 63."""


class CronJobCustomDefaulter:
    """Fills in what the user left out; what they set stays."""

    def default(self, ctx: AdmissionContext, obj: CronJob) -> None:
        ctx.logger.info("defaulting for CronJob", extra={"name": obj.metadata.name})
        spec = obj.spec
        if spec.concurrency_policy is None:
            spec.concurrency_policy = DEFAULT_CONCURRENCY_POLICY
        if spec.suspend is None:
            spec.suspend = DEFAULT_SUSPEND
        if spec.successful_jobs_history_limit is None:
            spec.successful_jobs_history_limit = DEFAULT_SUCCESSFUL_JOBS_HISTORY_LIMIT
        if spec.failed_jobs_history_limit is None:
            spec.failed_jobs_history_limit = DEFAULT_FAILED_JOBS_HISTORY_LIMIT


def schedule_error(schedule: str) -> str | None:
    """Why `schedule` is not a five-field cron schedule, or None."""
    if len(schedule.split()) != 5:  # minute, hour, day of month, month, day of week
        return f"expected exactly 5 fields, found {len(schedule.split())}: {schedule}"
    return None if croniter.is_valid(schedule) else f"not a valid cron expression: {schedule}"


def validate_cronjob(obj: CronJob) -> None:
    """Raise Invalid naming each field that is wrong."""
    errors: list[FieldError] = []
    name = obj.metadata.name or ""
    if len(name) > MAX_NAME_LENGTH:
        errors.append(invalid("metadata.name", name, f"must be no more than {MAX_NAME_LENGTH} characters"))
    if (reason := schedule_error(obj.spec.schedule)) is not None:
        errors.append(invalid("spec.schedule", obj.spec.schedule, reason))
    if errors:
        raise Invalid(errors)


class CronJobCustomValidator:
    """Refuses a CronJob whose name is too long for its Jobs' names, or whose schedule is not cron."""

    def validate_create(self, ctx: AdmissionContext, obj: CronJob) -> Sequence[str] | None:
        validate_cronjob(obj)
        return None

    def validate_update(self, ctx: AdmissionContext, old: CronJob, new: CronJob) -> Sequence[str] | None:
        validate_cronjob(new)
        return None

    def validate_delete(self, ctx: AdmissionContext, obj: CronJob) -> Sequence[str] | None:
        return None  # nothing to check: deletion is always allowed


def setup_cronjob_webhook_with_manager(manager: Manager) -> KindWebhooks:
    """Serve both webhooks on the manager's webhook server, at the paths controller-gen writes."""
    return (
        WebhookBuilder(manager)
        .for_(CronJob)
        .with_defaulter(CronJobCustomDefaulter())
        .with_validator(CronJobCustomValidator())
        .complete()
    )
