"""The CronJob kind (api/v1/cronjob_types.go): runs a Job on a cron schedule."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from ballast.runtime.crd import (
    LIST_ATOMIC,
    CustomResource,
    Int32,
    Int64,
    JobTemplateSpec,
    ObjectReference,
    Scope,
    Time,
    WireModel,
)

from .groupversion_info import GROUP, VERSION

ConcurrencyPolicy = Literal["Allow", "Forbid", "Replace"]
"""How to treat a run that is due while the last one is still active: run both, skip the new one, or replace."""


class CronJobSpec(WireModel):
    """The desired state of a CronJob."""

    schedule: Annotated[str, Field(min_length=0)]
    """The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."""
    starting_deadline_seconds: Annotated[Int64, Field(ge=0)] | None = None
    """Seconds after its scheduled time a run may still start; a later one is skipped as missed."""
    concurrency_policy: ConcurrencyPolicy | None = None
    """What to do with a run due while the last is still active (the webhook defaults it to Allow)."""
    suspend: bool | None = None
    """Suspend later runs; those already started are left alone."""
    job_template: JobTemplateSpec
    """The Job to create at each run; its schema is the API server's, so a bad template is refused at once."""
    successful_jobs_history_limit: Annotated[Int32, Field(ge=0)] | None = None
    """How many finished Jobs to keep."""
    failed_jobs_history_limit: Annotated[Int32, Field(ge=0)] | None = None
    """How many failed Jobs to keep."""


class CronJobStatus(WireModel):
    """The observed state of a CronJob."""

    active: Annotated[list[ObjectReference], LIST_ATOMIC] | None = None
    """The Jobs running now."""
    last_schedule_time: Time | None = None
    """When a Job was last started by schedule."""


class CronJob(CustomResource):
    """A CronJob runs a Job on a cron schedule."""

    GROUP: ClassVar[str] = GROUP
    VERSION: ClassVar[str] = VERSION
    KIND: ClassVar[str] = "CronJob"
    PLURAL: ClassVar[str] = "cronjobs"
    SCOPE: ClassVar[Scope] = "Namespaced"
    STATUS_SUBRESOURCE: ClassVar[bool] = True

    spec: CronJobSpec
    status: CronJobStatus = Field(default_factory=CronJobStatus)
