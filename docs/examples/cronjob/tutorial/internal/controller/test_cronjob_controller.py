"""The CronJob controller on the real API server (cronjob_controller_test.go, and more): the tutorial's own
test, then runs on a FakeClock — one Job per scheduled time, suspend, Forbid, Replace — and the history limits."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from ballast.runtime import FakeClock, Manager, get_controller_of
from ballast.runtime.envtest import APIError, Environment
from ballast.runtime.testing import consistently, eventually
from tutorial.internal.controller.cronjob_controller import SCHEDULED_TIME_ANNOTATION

StartManager = Callable[..., AbstractContextManager[Manager]]  # the `controller` fixture (conftest.py)

JOB_TEMPLATE = {
    "spec": {
        "template": {
            "spec": {
                "containers": [{"name": "test-container", "image": "test-image"}],
                "restartPolicy": "OnFailure",
            }
        }
    }
}


def cronjob(name: str, schedule: str = "1 * * * *", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch.tutorial.kubebuilder.io/v1",
        "kind": "CronJob",
        "metadata": {"name": name},
        "spec": {"schedule": schedule, "jobTemplate": JOB_TEMPLATE, **spec},
    }


def cronjobs(namespace: str) -> str:
    return f"/apis/batch.tutorial.kubebuilder.io/v1/namespaces/{namespace}/cronjobs"


def jobs(env: Environment, namespace: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = env.rest.get(f"/apis/batch/v1/namespaces/{namespace}/jobs")["items"]
    return sorted(found, key=lambda job: job["metadata"]["name"])


def active_names(env: Environment, namespace: str, name: str) -> list[str]:
    status = env.rest.get(f"{cronjobs(namespace)}/{name}").get("status") or {}
    return sorted(ref["name"] for ref in status.get("active") or ())


def owned_job(env: Environment, namespace: str, owner: dict[str, Any], name: str) -> dict[str, Any]:
    body = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "ownerReferences": [{
        "apiVersion": "batch.tutorial.kubebuilder.io/v1", "kind": "CronJob", "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]}, **JOB_TEMPLATE}  # fmt: skip
    created: dict[str, Any] = env.rest.create(f"/apis/batch/v1/namespaces/{namespace}/jobs", body)
    return created


def clock_at_creation(created: dict[str, Any]) -> tuple[FakeClock, datetime]:
    """A fake clock at the CronJob's creationTimestamp (the API server's time), and the first minute after it."""
    at = datetime.fromisoformat(created["metadata"]["creationTimestamp"])
    return FakeClock(at), at.replace(second=0) + timedelta(minutes=1)


def rfc3339(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_the_cronjob_reports_the_job_it_controls_as_active(
    envtest: Environment, namespace: str, controller: StartManager
) -> None:
    """The tutorial's test: a CronJob with no Job has none active; a Job it owns that is running is."""
    with controller():
        created = envtest.rest.create(cronjobs(namespace), cronjob("test-cronjob"))
        assert created["spec"]["schedule"] == "1 * * * *"
        consistently(lambda: active_names(envtest, namespace, "test-cronjob") == [], duration=2.0, what="no job")
        job = owned_job(envtest, namespace, created, "test-job")
        running = {"status": {"active": 2, "startTime": job["metadata"]["creationTimestamp"]}}
        envtest.rest.patch_status(f"/apis/batch/v1/namespaces/{namespace}/jobs/test-job", running)
        eventually(lambda: active_names(envtest, namespace, "test-cronjob") == ["test-job"], what="the active job")


def test_each_scheduled_time_starts_one_job_named_after_it(
    envtest: Environment, namespace: str, controller: StartManager
) -> None:
    clock, first = clock_at_creation(envtest.rest.create(cronjobs(namespace), cronjob("every-minute", "* * * * *")))
    with controller(clock=clock):
        consistently(lambda: jobs(envtest, namespace) == [], duration=1.0, what="no run before the first minute")
        clock.advance((first - clock.now()).total_seconds())
        created = eventually(lambda: jobs(envtest, namespace), what="the first run's Job")
        assert [job["metadata"]["name"] for job in created] == [f"every-minute-{int(first.timestamp())}"]
        job = created[0]
        assert job["metadata"]["annotations"][SCHEDULED_TIME_ANNOTATION] == rfc3339(first)
        assert get_controller_of(job)["name"] == "every-minute"  # type: ignore[index]
        assert job["spec"]["template"]["spec"]["containers"][0]["image"] == "test-image"
        clock.advance(60)
        eventually(lambda: len(jobs(envtest, namespace)) == 2, what="the second run's Job")
        second = rfc3339(first + timedelta(minutes=1))
        eventually(
            lambda: envtest.rest.get(f"{cronjobs(namespace)}/every-minute")["status"].get("lastScheduleTime") == second,
            what="the last schedule time",
        )


def test_a_suspended_cronjob_starts_nothing(envtest: Environment, namespace: str, controller: StartManager) -> None:
    clock, _ = clock_at_creation(envtest.rest.create(cronjobs(namespace), cronjob("off", "* * * * *", suspend=True)))
    with controller(clock=clock):
        clock.advance(180)
        consistently(lambda: jobs(envtest, namespace) == [], duration=2.0, what="no job while suspended")


def test_forbid_skips_a_run_while_one_is_active_and_replace_replaces_it(
    envtest: Environment, namespace: str, controller: StartManager
) -> None:
    created = [envtest.rest.create(cronjobs(namespace), cronjob(name, "* * * * *", concurrencyPolicy=policy))
               for name, policy in (("forbid", "Forbid"), ("replace", "Replace"))]  # fmt: skip
    clock, first = clock_at_creation(max(created, key=lambda c: c["metadata"]["creationTimestamp"]))
    with controller(clock=clock):
        clock.advance((first - clock.now()).total_seconds())
        eventually(lambda: len(jobs(envtest, namespace)) == 2, what="one run of each")
        runs = {job["metadata"]["name"] for job in jobs(envtest, namespace)}
        assert runs == {f"{name}-{int(first.timestamp())}" for name in ("forbid", "replace")}
        clock.advance(60)  # nothing runs Jobs here: the first runs are still active
        later = f"replace-{int((first + timedelta(minutes=1)).timestamp())}"

        def present() -> set[str]:
            return {j["metadata"]["name"] for j in jobs(envtest, namespace) if "deletionTimestamp" not in j["metadata"]}

        eventually(lambda: present() == {f"forbid-{int(first.timestamp())}", later}, what="Replace's run replaced")
        consistently(lambda: len(present()) == 2, duration=1.0, what="Forbid's second run skipped")


def finish(envtest: Environment, namespace: str, job: dict[str, Any], outcome: str, started: datetime) -> None:
    """Give a Job the status the Job controller would write when it ends (`Complete` or `Failed`)."""
    at = started.strftime("%Y-%m-%dT%H:%M:%SZ")
    ended = (started + timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    if outcome == "Complete":
        conditions = [{"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": ended},
                      {"type": "Complete", "status": "True", "lastTransitionTime": ended}]  # fmt: skip
        status: dict[str, Any] = {"startTime": at, "completionTime": ended, "succeeded": 1, "conditions": conditions}
    else:
        conditions = [{"type": "FailureTarget", "status": "True", "lastTransitionTime": ended},
                      {"type": "Failed", "status": "True", "lastTransitionTime": ended}]  # fmt: skip
        status = {"startTime": at, "failed": 1, "conditions": conditions}
    envtest.rest.patch_status(f"/apis/batch/v1/namespaces/{namespace}/jobs/{job['metadata']['name']}",
                              {"status": status})  # fmt: skip


def test_finished_jobs_beyond_the_history_limits_are_deleted_oldest_first(
    envtest: Environment, namespace: str, controller: StartManager
) -> None:
    with controller():
        owner = envtest.rest.create(cronjobs(namespace), cronjob(
            "limited", suspend=True, successfulJobsHistoryLimit=1, failedJobsHistoryLimit=1))  # fmt: skip
        started = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
        for index, outcome in enumerate(["Complete", "Complete", "Failed", "Failed", "Complete"]):
            job = owned_job(envtest, namespace, owner, f"limited-{index}")
            finish(envtest, namespace, job, outcome, started + timedelta(minutes=index))
        kept = eventually(
            lambda: (names := [j["metadata"]["name"] for j in jobs(envtest, namespace)
                               if "deletionTimestamp" not in j["metadata"]]) == ["limited-3", "limited-4"] and names,
            what="the newest successful and the newest failed Job",
        )  # fmt: skip
        assert kept == ["limited-3", "limited-4"]


def test_the_job_template_is_validated_by_the_api_servers_own_schema(
    envtest: Environment, namespace: str, cronjob_crd: None
) -> None:
    nameless = cronjob("nameless")
    nameless["spec"]["jobTemplate"] = {"spec": {"template": {"spec": {"containers": [{"image": "test-image"}]}}}}
    with pytest.raises(APIError) as refused:
        envtest.rest.create(cronjobs(namespace), nameless)
    assert refused.value.status == 422
    assert "spec.jobTemplate.spec.template.spec.containers[0].name: Required value" in refused.value.message
