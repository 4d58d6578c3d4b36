"""The CronJob controller (internal/controller/cronjob_controller.go): starts a Job at each scheduled time,
keeps the status's active Jobs and last schedule time, and prunes finished Jobs beyond the history limits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from croniter import croniter

from ballast.runtime import (
    Builder,
    Context,
    Manager,
    NotFoundError,
    Request,
    Result,
    get_controller_of,
    get_reference,
    rfc3339,
    set_controller_reference,
)
from ballast.runtime.crd import ObjectMeta, ObjectReference
from ballast.runtime.crd.kinds import Job
from ballast.runtime.rbacgen import rbac
from tutorial.api.v1 import CronJob

JOB_OWNER_KEY = ".metadata.controller"
"""The cache index of Jobs by the name of the CronJob controlling them."""
SCHEDULED_TIME_ANNOTATION = "batch.tutorial.kubebuilder.io/scheduled-at"
NEVER_STARTED = datetime.min.replace(tzinfo=UTC)
MAX_MISSED_STARTS = 100
"""More missed start times than this means a clock skew or a deadline far too long: give up, as the tutorial."""


class ScheduleError(ValueError):
    """The schedule does not parse, or too many start times were missed."""


@dataclass(frozen=True, slots=True)
class Jobs:
    """The CronJob's child Jobs by state, and the latest scheduled time any of them carries."""

    active: list[Job]
    successful: list[Job]
    failed: list[Job]
    most_recent: datetime | None


def finished_type(job: Job) -> str | None:
    """The type of the Job's finished condition (Complete or Failed), or None while it runs."""
    for condition in (job.status and job.status.conditions) or ():
        if condition.type in ("Complete", "Failed") and condition.status == "True":
            return condition.type
    return None


def scheduled_time(job: Job) -> datetime | None:
    text = (job.metadata.annotations or {}).get(SCHEDULED_TIME_ANNOTATION)
    return datetime.fromisoformat(text) if text else None


def classify(children: Sequence[Job]) -> Jobs:
    active: list[Job] = []
    successful: list[Job] = []
    failed: list[Job] = []
    most_recent: datetime | None = None
    for job in children:
        kind = finished_type(job)
        {None: active, "Complete": successful, "Failed": failed}[kind].append(job)
        at = scheduled_time(job)
        if at is not None and (most_recent is None or at > most_recent):
            most_recent = at
    return Jobs(active, successful, failed, most_recent)


def next_schedule(cronjob: CronJob, now: datetime) -> tuple[datetime | None, datetime]:
    """The latest start time missed since the last run (None if none) and the next one after `now`.
    Raises ScheduleError for a schedule that does not parse or more than MAX_MISSED_STARTS missed starts."""
    spec = cronjob.spec
    try:
        croniter(spec.schedule)
    except (ValueError, KeyError) as exc:
        raise ScheduleError(f"unparseable schedule {spec.schedule!r}: {exc}") from exc
    earliest = cronjob.status.last_schedule_time or cronjob.metadata.creation_timestamp or now
    if spec.starting_deadline_seconds is not None:
        earliest = max(earliest, now - timedelta(seconds=spec.starting_deadline_seconds))
    following = croniter(spec.schedule, now).get_next(datetime)
    if earliest > now:
        return None, following
    missed: datetime | None = None
    times = croniter(spec.schedule, earliest)
    for starts in range(MAX_MISSED_STARTS + 1):
        at: datetime = times.get_next(datetime)
        if at > now:
            return missed, following
        missed = at
        if starts == MAX_MISSED_STARTS:
            break
    raise ScheduleError(
        "Too many missed start times (> 100). Set or decrease .spec.startingDeadlineSeconds or check clock skew."
    )


def job_for(cronjob: CronJob, at: datetime) -> Job:
    """The Job of the run scheduled at `at`: named after the CronJob and the time, so a run is created once."""
    template = cronjob.spec.job_template
    metadata = template.metadata or ObjectMeta()
    job = Job(
        metadata=ObjectMeta(
            name=f"{cronjob.metadata.name}-{int(at.timestamp())}",
            namespace=cronjob.metadata.namespace,
            labels=dict(metadata.labels or {}),
            annotations={**(metadata.annotations or {}), SCHEDULED_TIME_ANNOTATION: rfc3339(at)},
        ),
        spec=template.spec,
    )
    set_controller_reference(cronjob, job)
    return job


def oldest_first(jobs: list[Job]) -> list[Job]:
    # A Job that never started sorts first: it is the first to go.
    return sorted(jobs, key=lambda job: (job.status and job.status.start_time) or NEVER_STARTED)


@rbac(groups=["batch.tutorial.kubebuilder.io"], resources=["cronjobs"],
      verbs=["get", "list", "watch", "create", "update", "patch", "delete"])  # fmt: skip
@rbac(groups=["batch.tutorial.kubebuilder.io"], resources=["cronjobs/status"], verbs=["get", "update", "patch"])
@rbac(groups=["batch"], resources=["jobs"], verbs=["get", "list", "watch", "create", "update", "patch", "delete"])
@rbac(groups=["batch"], resources=["jobs/status"], verbs=["get"])
class CronJobReconciler:
    """Reconciles a CronJob from the cache: its Jobs are found by the JOB_OWNER_KEY index."""

    def __init__(self, manager: Manager) -> None:
        self.client = manager.client
        self.scheme = manager.scheme

    def reconcile(self, ctx: Context, request: Request) -> Result | None:
        log = ctx.logger
        try:
            cronjob: CronJob = self.client.get(CronJob, request.name, request.namespace)
        except NotFoundError:
            return None  # deleted: its Jobs go with it (they are owned)

        jobs = classify(self.client.list(Job, request.namespace, index=(JOB_OWNER_KEY, request.name)).items)
        active = [ObjectReference.model_validate(get_reference(self.scheme, job)) for job in jobs.active] or None
        status = cronjob.status.model_copy(update={"last_schedule_time": jobs.most_recent, "active": active})
        if status != cronjob.status:
            cronjob = self.client.status().update(cronjob.model_copy(update={"status": status}))
        log.with_values(active=len(jobs.active), successful=len(jobs.successful), failed=len(jobs.failed)).debug(
            "job count"
        )

        self._prune(ctx, jobs.failed, cronjob.spec.failed_jobs_history_limit)
        self._prune(ctx, jobs.successful, cronjob.spec.successful_jobs_history_limit)

        if cronjob.spec.suspend:
            log.debug("cronjob suspended, skipping")
            return None
        return self._run_when_due(ctx, cronjob, jobs)

    def _run_when_due(self, ctx: Context, cronjob: CronJob, jobs: Jobs) -> Result | None:
        """Start the run missed last, if its deadline and the concurrency policy allow; requeue for the next."""
        log = ctx.logger
        now = ctx.clock.now()
        try:
            missed, following = next_schedule(cronjob, now)
        except ScheduleError as exc:
            log.error("unable to figure out CronJob schedule: %s", exc)
            return None  # nothing to retry until the spec changes
        scheduled = Result(requeue_after=max((following - now).total_seconds(), 0.001))
        log = log.with_values(now=rfc3339(now), next_run=rfc3339(following))
        if missed is None:
            log.debug("no upcoming scheduled times, sleeping until next")
            return scheduled

        log = log.with_values(current_run=rfc3339(missed))
        deadline = cronjob.spec.starting_deadline_seconds
        if deadline is not None and missed + timedelta(seconds=deadline) < now:
            log.info("missed starting deadline for last run, sleeping till next")
            return scheduled
        policy = cronjob.spec.concurrency_policy
        if policy == "Forbid" and jobs.active:
            log.debug("concurrency policy blocks concurrent runs, skipping", extra={"active": len(jobs.active)})
            return scheduled
        if policy == "Replace":
            for job in jobs.active:
                self.client.delete(job, propagation_policy="Background", ignore_not_found=True)

        job = self.client.create(job_for(cronjob, missed))
        log.info("created Job for CronJob run", extra={"job": job.metadata.name})
        return scheduled

    def _prune(self, ctx: Context, jobs: list[Job], limit: int | None) -> None:
        if limit is None:
            return
        ordered = oldest_first(jobs)
        for job in ordered[: max(len(ordered) - limit, 0)]:
            self.client.delete(job, propagation_policy="Background", ignore_not_found=True)
            ctx.logger.debug("deleted old job", extra={"job": job.metadata.name})


def owning_cronjob(job: Any) -> list[str]:
    """The index value of a Job: the name of the CronJob that controls it, if one does."""
    owner = get_controller_of(job)
    if owner is None or owner.get("apiVersion") != CronJob.API_VERSION or owner.get("kind") != CronJob.KIND:
        return []
    return [owner["name"]]


def setup_with_manager(manager: Manager) -> None:
    """Index Jobs by their CronJob, and reconcile each CronJob when it or one of its Jobs changes."""
    manager.cache.index_field(Job, JOB_OWNER_KEY, owning_cronjob)
    Builder(manager).for_(CronJob).owns(Job).named("cronjob").complete(CronJobReconciler(manager))
