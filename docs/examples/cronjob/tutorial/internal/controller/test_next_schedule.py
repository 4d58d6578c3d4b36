"""When the next run is due (`next_schedule`), without an API server: the run missed last, the starting
deadline, and the two ways a schedule is given up on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tutorial.api.v1 import CronJob
from tutorial.internal.controller.cronjob_controller import ScheduleError, next_schedule

CREATED = datetime(2026, 12, 3, 10, 0, 30, tzinfo=UTC)


def cronjob(schedule: str, **spec: Any) -> CronJob:
    return CronJob.model_validate({
        "metadata": {"name": "c", "namespace": "default", "creationTimestamp": "2026-12-03T10:00:30Z"},
        "spec": {"schedule": schedule, "jobTemplate": {}, **spec},
    })  # fmt: skip


def test_the_last_missed_run_and_the_next_one() -> None:
    missed, following = next_schedule(cronjob("*/5 * * * *"), CREATED + timedelta(minutes=12))
    assert (missed, following) == (datetime(2026, 12, 3, 10, 10, tzinfo=UTC), datetime(2026, 12, 3, 10, 15, tzinfo=UTC))


def test_nothing_is_missed_before_the_first_time() -> None:
    assert next_schedule(cronjob("*/5 * * * *"), CREATED + timedelta(minutes=1)) == (
        None, datetime(2026, 12, 3, 10, 5, tzinfo=UTC),
    )  # fmt: skip


def test_the_starting_deadline_bounds_how_far_back_runs_count() -> None:
    now = CREATED + timedelta(minutes=12)
    assert next_schedule(cronjob("*/5 * * * *", startingDeadlineSeconds=60), now)[0] is None  # 10:10 is 2.5 min ago
    assert next_schedule(cronjob("*/5 * * * *", startingDeadlineSeconds=180), now)[0] == datetime(
        2026, 12, 3, 10, 10, tzinfo=UTC
    )


def test_more_than_100_missed_starts_and_a_bad_schedule_are_refused() -> None:
    with pytest.raises(ScheduleError, match=r"Too many missed start times \(> 100\)"):
        next_schedule(cronjob("* * * * *"), CREATED + timedelta(hours=3))
    with pytest.raises(ScheduleError, match="unparseable schedule 'every day'"):
        next_schedule(cronjob("every day"), CREATED)
