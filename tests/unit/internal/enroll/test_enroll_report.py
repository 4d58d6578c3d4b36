"""Rollout status, pod sets and revisions; the record, header and summary lines and the exit codes."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from ballast.internal.enroll import (
    Record,
    Status,
    Tally,
    Workload,
    current_replica_set,
    newest_revision_hash,
    pods_missing_mode,
    rollout_status,
    running_pod_uids,
)
from ballast.internal.enroll.patches import (
    on_delete_patch,
    paused_patch,
    restart_stamp,
    strategy_restore_patch,
    template_mode_revert,
    template_patch,
)
from ballast.internal.enroll.report import found_line, header, options_lines
from ballast.internal.enrollment import MODE_LABEL

from .support import daemonset, deployment, pod, replica_set, statefulset

# --------------------------------------------------------------------------------------------- rollouts


def with_status(obj: dict[str, Any], **status: Any) -> Workload:
    obj["status"] = {"observedGeneration": obj["metadata"]["generation"], **status}
    return Workload.from_object(obj)


@pytest.mark.parametrize(
    ("workload", "done"),
    [
        (with_status(deployment(replicas=2), replicas=2, updatedReplicas=2, availableReplicas=2), True),
        (with_status(deployment(replicas=2), replicas=3, updatedReplicas=2, availableReplicas=2), False),  # old pod
        (with_status(deployment(replicas=2), replicas=2, updatedReplicas=1, availableReplicas=2), False),
        (with_status(deployment(replicas=2), replicas=2, updatedReplicas=2, availableReplicas=1), False),
        (with_status(statefulset(replicas=2), readyReplicas=2, currentRevision="a", updateRevision="a"), True),
        (with_status(statefulset(replicas=2), readyReplicas=2, currentRevision="a", updateRevision="b"), False),
        (with_status(statefulset(replicas=3, partition=2), readyReplicas=3, updatedReplicas=1), True),
        (
            with_status(daemonset(scheduled=2), desiredNumberScheduled=2, updatedNumberScheduled=2, numberAvailable=2),
            True,
        ),
        (
            with_status(daemonset(scheduled=2), desiredNumberScheduled=2, updatedNumberScheduled=2, numberAvailable=1),
            False,
        ),
    ],
)
def test_rollout_status_follows_kubectl(workload: Workload, done: bool) -> None:
    assert rollout_status(workload).done is done


def test_an_unobserved_spec_is_not_rolled_out_and_a_deadline_fails_the_wait() -> None:
    obj = deployment(replicas=1)
    obj["metadata"]["generation"] = 9
    assert not rollout_status(Workload.from_object(obj)).done
    stuck = with_status(
        deployment(replicas=1), conditions=[{"type": "Progressing", "reason": "ProgressDeadlineExceeded"}]
    )
    assert rollout_status(stuck).failed
    assert rollout_status(Workload.from_object(statefulset(strategy="OnDelete"))).failed


def test_current_replica_set_needs_exactly_one_owned_at_the_revision() -> None:
    web = Workload.from_object(deployment(revision="3"))
    current = replica_set("web-new", revision="3")
    assert current_replica_set([replica_set("web-old", revision="2"), current], web) is current
    assert current_replica_set([current, replica_set("web-twin", revision="3")], web) is None


def test_the_newest_owned_controller_revision_gives_the_hash() -> None:
    def revision(name: str, number: int, owner: str) -> dict[str, Any]:
        return {
            "metadata": {
                "name": name,
                "labels": {"controller-revision-hash": name},
                "ownerReferences": [{"uid": owner}],
            },
            "revision": number,
        }

    revisions = [revision("h1", 1, "ds-1"), revision("h3", 3, "ds-1"), revision("h9", 9, "other")]
    assert newest_revision_hash(revisions, "ds-1") == "h3"
    assert newest_revision_hash(revisions, "nobody") == ""


def test_running_pods_exclude_terminating_ones_and_missing_mode_includes_them() -> None:
    pods = [pod("a", mode="measure"), pod("b"), pod("c", mode="apply", terminating=True)]
    assert running_pod_uids(pods) == {"uid-a", "uid-b"}
    assert pods_missing_mode(pods, "measure") == ["b", "c"]


# ---------------------------------------------------------------------------------------------- patches


def test_patches_are_merge_patches_of_the_touched_fields_only() -> None:
    assert template_patch("apply") == {"spec": {"template": {"metadata": {"labels": {MODE_LABEL: "apply"}}}}}
    stamped = template_patch("apply", "2026-11-29T12:00:00Z")
    assert stamped["spec"]["template"]["metadata"]["annotations"] == {
        "kubectl.kubernetes.io/restartedAt": "2026-11-29T12:00:00Z"
    }
    assert template_mode_revert("")["spec"]["template"]["metadata"]["labels"] == {MODE_LABEL: None}
    assert paused_patch(True) == {"spec": {"paused": True}}
    assert paused_patch(False) == {"spec": {"paused": None}}
    assert on_delete_patch() == {"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": None}}}
    assert strategy_restore_patch({"type": "RollingUpdate"}) == {"spec": {"updateStrategy": {"type": "RollingUpdate"}}}


def test_restart_stamp_is_utc_to_the_second() -> None:
    moment = datetime.datetime(2026, 11, 29, 13, 0, 5, 999, tzinfo=datetime.timezone(datetime.timedelta(hours=1)))
    assert restart_stamp(moment) == "2026-11-29T12:00:05Z"


# ---------------------------------------------------------------------------------------------- output


def test_a_record_line_has_the_status_in_five_columns_and_the_subject_in_fifty_five() -> None:
    line = Record(Status.OK, "deployment shop/web", "enrolled").line()
    assert line == "OK    deployment shop/web" + " " * 36 + " enrolled"
    assert line.index("enrolled") == 62


def test_the_summary_counts_ok_fail_warn_and_skip_but_not_plan_or_note() -> None:
    records = [
        Record(Status.OK, "a", ""),
        Record(Status.OK, "b", ""),
        Record(Status.WARN, "c", ""),
        Record(Status.SKIP, "d", ""),
        Record(Status.PLAN, "e", ""),
        Record(Status.NOTE, "f", ""),
    ]
    tally = Tally.of(records)
    assert tally.summary() == "Summary: 2 enrolled, 0 failed, 1 warning(s), 1 skipped."
    assert tally.exit_code() == 0
    failed = Tally.of([*records, Record(Status.FAIL, "g", "")])
    assert failed.summary() == "Summary: 2 enrolled, 1 failed, 1 warning(s), 1 skipped."
    assert failed.exit_code() == 2


def test_header_and_option_lines() -> None:
    assert header("measure", apply=False, namespace=None) == (
        "=== DRY-RUN [mode=measure]: no changes will be made; re-run with --apply to execute ==="
    )
    assert header("apply", apply=True, namespace=None) == (
        "=== APPLY MODE [mode=apply]: changes will be made (all namespaces) ==="
    )
    assert header("apply", apply=True, namespace="web").endswith("(namespace web) ===")
    assert options_lines("resize", ignore="consul|vault", no_restart=True, remode=True) == [
        "Ignoring workload names matching: /consul|vault/",
        "Route: no-restart (hotfix in place) for all workloads, including multi-replica.",
        "Re-mode: workloads already at a different mode will be changed to resize.",
    ]
    assert found_line(2, 1, 0) == "Found (before ignore filter): 2 deployment(s), 1 statefulset(s), 0 daemonset(s)"
