"""OOM kills read from a pod's container statuses."""

from __future__ import annotations

import datetime
from typing import Any

from ballast.internal.oom import observed_kills

MI = 2**20


def pod(statuses: list[dict[str, Any]], *, limit: str | None = "512Mi") -> dict[str, Any]:
    resources = {"limits": {"memory": limit}} if limit else {}
    return {
        "metadata": {"name": "app-1", "namespace": "team-a", "uid": "u-1"},
        "spec": {"containers": [{"name": "app", "resources": resources}, {"name": "side"}]},
        "status": {"containerStatuses": statuses},
    }


def terminated(reason: str, at: str = "2026-03-01T12:00:00Z") -> dict[str, Any]:
    return {"terminated": {"reason": reason, "exitCode": 137, "finishedAt": at}}


def test_last_state_oom_killed_is_a_kill_at_the_spec_limit() -> None:
    kills = observed_kills(pod([{"name": "app", "restartCount": 1, "lastState": terminated("OOMKilled")}]))
    assert len(kills) == 1
    kill = kills[0]
    assert (kill.container, kill.pod, kill.namespace, kill.uid, kill.limit) == ("app", "app-1", "team-a", "u-1",
                                                                               512 * MI)  # fmt: skip
    assert kill.finished_at == datetime.datetime(2026, 3, 1, 12, tzinfo=datetime.UTC)


def test_current_state_oom_killed_is_a_kill() -> None:
    assert len(observed_kills(pod([{"name": "app", "state": terminated("OOMKilled")}]))) == 1


def test_other_terminations_are_not_kills() -> None:
    statuses = [{"name": "app", "lastState": terminated("Error"), "state": terminated("Completed")}]
    assert observed_kills(pod(statuses)) == []


def test_the_enforced_limit_in_status_wins_over_the_spec() -> None:
    status = {"name": "app", "lastState": terminated("OOMKilled"), "resources": {"limits": {"memory": "600Mi"}}}
    assert observed_kills(pod([status]))[0].limit == 600 * MI


def test_a_container_without_a_memory_limit_is_left_out() -> None:
    assert observed_kills(pod([{"name": "app", "lastState": terminated("OOMKilled")}], limit=None)) == []


def test_unreadable_statuses_are_skipped_not_fatal() -> None:
    statuses: list[Any] = [
        "junk",
        {"name": "app", "lastState": terminated("OOMKilled", at="yesterday")},
        {"name": "app", "lastState": terminated("OOMKilled", at="2026-03-01T12:00:00")},  # no offset
    ]
    assert observed_kills(pod(statuses)) == []
    assert observed_kills({"status": None}) == []
