"""`ballast enroll`'s runner on the in-memory API: dry-run writes nothing, the no-restart routes write the right
objects, a failed write is a FAIL with exit code 2, and flag errors exit 1 with the enroll script's words."""

from __future__ import annotations

import argparse
import io
import re
import zlib
from typing import Any

import pytest
from rich.console import Console

from ballast.internal.cmd import ballast as cli
from ballast.internal.cmd.enroll import flag_problem
from ballast.internal.enroll import Identity, Options, Status
from ballast.internal.enroll.enroller import Enroller, PlainReporter, ProgressReporter, make_reporter
from ballast.internal.enrollment import MODE_LABEL
from ballast.runtime import FakeAPI, GroupVersionKind, RealClock
from ballast.runtime.apierrors import ForbiddenError

from .support import TUPLE, daemonset, deployment, pod, replica_set, statefulset

IDENTITY = Identity(tuple(TUPLE), "test")


def cluster(*objects: dict[str, Any]) -> FakeAPI:
    """The fake API with `objects`; ReplicaSets are re-pointed at the Deployment's uid as stored."""
    api = FakeAPI()
    client = api.client()
    stored: dict[str, Any] = {}
    for obj in objects:
        if obj["kind"] == "ReplicaSet" and "Deployment" in stored:
            obj["metadata"]["ownerReferences"][0]["uid"] = stored["Deployment"]["metadata"]["uid"]
        stored[obj["kind"]] = client.create(obj)
    return api


REVISION_HASH = "controller-revision-hash"
CONTROLLER_REVISION = GroupVersionKind("apps", "v1", "ControllerRevision")


def template_hash(obj: dict[str, Any]) -> str:
    labels = dict(obj["spec"]["template"]["metadata"]["labels"])
    labels.pop("pod-template-hash", None)
    return format(zlib.crc32(repr(sorted(labels.items())).encode()), "x")


def reconcile(api: FakeAPI, *, stale: bool) -> None:
    """One pass of the workload controllers the fake does not run: each workload's status at its latest
    generation, with the pods (a Deployment: its ReplicaSet's) it counts as at its template. `stale`: a controller
    whose caches have not caught up with the enroller's writes, so it counts none — resuming or restoring then
    would replace the pods."""
    client = api.client()
    pods = api.objects("v1/Pod")
    for obj in api.objects("apps/v1/Deployment"):
        rs_hashes = {template_hash(rs) for rs in api.objects("apps/v1/ReplicaSet")}
        updated = obj["spec"]["replicas"] if template_hash(obj) in rs_hashes and not stale else 0
        status = {"observedGeneration": obj["metadata"]["generation"], "updatedReplicas": updated}
        client.status().patch(obj, {"status": status})
    for obj in api.objects("apps/v1/StatefulSet"):
        revision = f"{obj['metadata']['name']}-{template_hash(obj)}"
        updated = 0 if stale else sum(p["metadata"]["labels"].get(REVISION_HASH) == revision for p in pods)
        status = {"observedGeneration": obj["metadata"]["generation"], "updateRevision": revision}
        client.status().patch(obj, {"status": status | {"updatedReplicas": updated}})
    for obj in api.objects("apps/v1/DaemonSet"):
        current = template_hash(obj)
        revisions = api.objects(CONTROLLER_REVISION)
        if all(rev["metadata"]["labels"][REVISION_HASH] != current for rev in revisions):
            owner = {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": obj["metadata"]["name"],
                     "uid": obj["metadata"]["uid"], "controller": True}  # fmt: skip
            metadata = {"name": f"agent-{current}", "namespace": "shop", "labels": {REVISION_HASH: current},
                        "ownerReferences": [owner]}  # fmt: skip
            client.create({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": metadata,
                           "revision": len(revisions) + 1, "data": {}})  # fmt: skip
        updated = 0 if stale else sum(p["metadata"]["labels"].get(REVISION_HASH) == current for p in pods)
        status = {"observedGeneration": obj["metadata"]["generation"], "updatedNumberScheduled": updated}
        client.status().patch(obj, {"status": status})


class Controllers(RealClock):
    """The enroller's clock, playing the controllers: each of its pauses is one `reconcile` pass, and no real
    time passes."""

    def __init__(self, api: FakeAPI, *, stale: bool = False) -> None:
        self.api = api
        self.stale = stale
        self.elapsed = 0.0

    def monotonic(self) -> float:
        return self.elapsed

    def sleep(self, seconds: float) -> None:
        self.elapsed += seconds
        reconcile(self.api, stale=self.stale)


def enroller(api: FakeAPI, options: Options, *, apply: bool, out: io.StringIO, **kwargs: Any) -> Enroller:
    kwargs.setdefault("clock", Controllers(api))
    return Enroller(
        api.client(), IDENTITY, options, apply=apply, settle=0, reporter=PlainReporter(out, out), poll=0.01, **kwargs
    )


def writes(api: FakeAPI) -> list[tuple[str, str]]:
    return [(method, path) for method, path in api.requests if method not in ("GET",)]


def test_dry_run_prints_the_plan_and_writes_nothing() -> None:
    api = cluster(deployment(replicas=1), replica_set(), pod("web-abc-1"), statefulset(replicas=3))
    before = len(writes(api))
    out = io.StringIO()
    tally = enroller(api, Options("measure"), apply=False, out=out).run()
    assert writes(api)[before:] == []
    lines = out.getvalue().splitlines()
    assert lines[0] == "=== DRY-RUN [mode=measure]: no changes will be made; re-run with --apply to execute ==="
    assert lines[1] == (
        "Identity tuple (all required, non-empty): app.kubernetes.io/name,app.kubernetes.io/component [source: test]"
    )
    assert "Found (before ignore filter): 1 deployment(s), 1 statefulset(s), 0 daemonset(s)" in lines
    plans = [line for line in lines if line.startswith("PLAN")]
    assert [line.split()[1:3] for line in plans] == [["deployment", "shop/web"], ["statefulset", "shop/db"]]
    assert lines[-1] == "Summary: 0 enrolled, 0 failed, 0 warning(s), 0 skipped."
    assert tally.exit_code() == 0


def test_a_single_replica_deployment_is_adopted_in_place() -> None:
    api = cluster(deployment(replicas=1), replica_set(), pod("web-abc-1"))
    out = io.StringIO()
    tally = enroller(api, Options("measure"), apply=True, out=out).run()
    [stored] = api.objects("apps/v1/Deployment")
    [rs] = api.objects("apps/v1/ReplicaSet")
    [labeled] = api.objects("v1/Pod")
    assert stored["spec"]["template"]["metadata"]["labels"][MODE_LABEL] == "measure"
    assert "paused" not in stored["spec"]  # resumed
    assert rs["spec"]["template"]["metadata"]["labels"][MODE_LABEL] == "measure"
    assert labeled["metadata"]["labels"][MODE_LABEL] == "measure"
    assert "kubectl.kubernetes.io/restartedAt" not in str(stored)
    assert "ReplicaSet web-abc adopted, pods labeled (running-pod set unchanged)" in out.getvalue()
    assert tally.summary() == "Summary: 1 enrolled, 0 failed, 0 warning(s), 0 skipped."


def test_a_deployment_stays_paused_until_its_controller_counts_the_adopted_replica_set() -> None:
    api = cluster(deployment(replicas=3), replica_set(), pod("web-abc-1"), pod("web-abc-2"), pod("web-abc-3"))
    out = io.StringIO()
    options = Options("measure", no_restart=True, timeout=2)
    runner = enroller(api, options, apply=True, out=out, clock=Controllers(api, stale=True))
    tally = runner.run()
    [stored] = api.objects("apps/v1/Deployment")
    [rs] = api.objects("apps/v1/ReplicaSet")
    assert stored["spec"]["paused"] is True  # resumed now, it would roll out a new ReplicaSet
    assert stored["spec"]["template"]["metadata"]["labels"][MODE_LABEL] == "measure"
    assert rs["spec"]["template"]["metadata"]["labels"][MODE_LABEL] == "measure"
    assert "FAIL  deployment shop/web" in out.getvalue()
    assert "did not count ReplicaSet web-abc's pods as updated within 2s; deployment left paused" in out.getvalue()
    assert "kubectl -n shop rollout resume deployment/web" in out.getvalue()
    assert (tally.failed, tally.exit_code()) == (1, 2)


def test_a_statefulset_partition_is_restored_once_its_controller_counts_the_relabeled_pods() -> None:
    api = cluster(statefulset(replicas=2), pod("db-0"), pod("db-1"))
    out = io.StringIO()
    tally = enroller(api, Options("resize", no_restart=True), apply=True, out=out).run()
    [stored] = api.objects("apps/v1/StatefulSet")
    revision = stored["status"]["updateRevision"]
    assert stored["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == 0
    assert stored["status"]["updatedReplicas"] == 2
    assert {p["metadata"]["labels"][REVISION_HASH] for p in api.objects("v1/Pod")} == {revision}
    assert f"pods relabeled to revision {revision} and labeled, no restart (running-pod set unchanged)" in (
        out.getvalue()
    )
    assert tally.summary() == "Summary: 1 enrolled, 0 failed, 0 warning(s), 0 skipped.", out.getvalue()

    api = cluster(statefulset(replicas=2), pod("db-0"), pod("db-1"))
    out = io.StringIO()
    options = Options("resize", no_restart=True, timeout=2)
    tally = enroller(api, options, apply=True, out=out, clock=Controllers(api, stale=True)).run()
    [stored] = api.objects("apps/v1/StatefulSet")
    assert stored["spec"]["updateStrategy"]["rollingUpdate"]["partition"] == 2  # restored, it would replace db-1
    assert "but the controller did not count them as updated within 2s; partition left at 2" in out.getvalue()
    assert """kubectl -n shop patch statefulset db --type merge -p '{"spec":{"updateStrategy":""" in out.getvalue()
    assert (tally.failed, tally.exit_code()) == (1, 2)


def test_a_daemonset_strategy_is_restored_once_its_controller_counts_the_relabeled_pods() -> None:
    api = cluster(daemonset(scheduled=2), pod("agent-a"), pod("agent-b"))
    api.register(CONTROLLER_REVISION, "controllerrevisions", namespaced=True, status=False)
    out = io.StringIO()
    tally = enroller(api, Options("resize", no_restart=True), apply=True, out=out).run()
    [stored] = api.objects("apps/v1/DaemonSet")
    current = template_hash(stored)
    assert stored["spec"]["updateStrategy"]["type"] == "RollingUpdate"
    assert {p["metadata"]["labels"][REVISION_HASH] for p in api.objects("v1/Pod")} == {current}
    assert f"pod(s) relabeled to hash {current} and labeled, no restart (running-pod set unchanged)" in out.getvalue()
    assert tally.summary() == "Summary: 1 enrolled, 0 failed, 0 warning(s), 0 skipped.", out.getvalue()

    api = cluster(daemonset(scheduled=2), pod("agent-a"), pod("agent-b"))
    api.register(CONTROLLER_REVISION, "controllerrevisions", namespaced=True, status=False)
    out = io.StringIO()
    options = Options("resize", no_restart=True, timeout=2)
    tally = enroller(api, options, apply=True, out=out, clock=Controllers(api, stale=True)).run()
    [stored] = api.objects("apps/v1/DaemonSet")
    assert stored["spec"]["updateStrategy"]["type"] == "OnDelete"  # restored, it would replace the pods
    assert "but the controller did not count them as updated within 2s; strategy left OnDelete" in out.getvalue()
    assert (tally.failed, tally.exit_code()) == (1, 2)


def observe(api: FakeAPI) -> None:
    """Play the Deployment controller: it has seen the latest generation (the fake runs no controllers)."""
    client = api.client()
    for stored in api.objects("apps/v1/Deployment"):
        observed = {"status": {"observedGeneration": stored["metadata"]["generation"]}}
        client.status().patch(stored, observed)


def test_a_second_run_is_a_no_op() -> None:
    api = cluster(deployment(replicas=1), replica_set(), pod("web-abc-1"))
    enroller(api, Options("measure"), apply=True, out=io.StringIO()).run()
    observe(api)
    before = len(writes(api))
    out = io.StringIO()
    tally = enroller(api, Options("measure"), apply=True, out=out).run()
    assert writes(api)[before:] == []
    assert "NOTE  already enrolled" in out.getvalue()
    assert "1 deployment(s) already fully enrolled" in out.getvalue()
    assert (tally.enrolled, tally.failed) == (0, 0)


def test_an_on_delete_statefulset_gets_its_template_and_pods_labeled() -> None:
    api = cluster(statefulset(replicas=3, strategy="OnDelete"), pod("db-0"), pod("db-1"))
    out = io.StringIO()
    tally = enroller(api, Options("apply"), apply=True, out=out).run()
    [stored] = api.objects("apps/v1/StatefulSet")
    assert stored["spec"]["template"]["metadata"]["labels"][MODE_LABEL] == "apply"
    assert {p["metadata"]["labels"][MODE_LABEL] for p in api.objects("v1/Pod")} == {"apply"}
    assert "OnDelete template labeled, live pods labeled, no restart" in out.getvalue()
    assert tally.enrolled == 1


def test_a_rollout_that_does_not_finish_in_time_is_a_warning_not_a_failure() -> None:
    api = cluster(daemonset(scheduled=3))
    out = io.StringIO()
    tally = enroller(api, Options("measure", timeout=0), apply=True, out=out).run()
    [stored] = api.objects("apps/v1/DaemonSet")
    assert "kubectl.kubernetes.io/restartedAt" in stored["spec"]["template"]["metadata"]["annotations"]
    assert (
        "but rollout did not finish within 0s; check: kubectl -n shop rollout status daemonset/agent" in out.getvalue()
    )
    assert (tally.warnings, tally.failed, tally.exit_code()) == (1, 0, 0)


def test_a_refused_write_fails_the_workload_rolls_back_and_exits_2() -> None:
    api = cluster(deployment(replicas=1), replica_set(), pod("web-abc-1"))

    def refuse_replica_sets(operation: str, gvk: GroupVersionKind, obj: dict[str, Any], old: Any) -> None:
        if gvk.kind == "ReplicaSet" and operation == "UPDATE":
            raise ForbiddenError(403, "Forbidden", "replicasets are read-only here")

    api.admission(refuse_replica_sets)
    out = io.StringIO()
    runner = enroller(api, Options("measure"), apply=True, out=out)
    tally = runner.run()
    [stored] = api.objects("apps/v1/Deployment")
    assert "paused" not in stored["spec"]  # resumed unchanged
    assert MODE_LABEL not in stored["spec"]["template"]["metadata"]["labels"]
    assert "FAIL  deployment shop/web" in out.getvalue()
    assert "failed to patch ReplicaSet web-abc (deployment resumed unchanged)" in out.getvalue()
    assert runner.inflight == ""
    assert (tally.failed, tally.exit_code()) == (1, 2)
    assert out.getvalue().splitlines()[-1] == "Summary: 0 enrolled, 1 failed, 0 warning(s), 0 skipped."


def test_ignored_names_are_skipped() -> None:
    api = cluster(statefulset("vault-0-db", replicas=1))
    out = io.StringIO()
    tally = enroller(api, Options("measure"), apply=True, out=out, ignore="consul|vault").run()
    assert "SKIP  statefulset shop/vault-0-db" in out.getvalue()
    assert "matches --ignore /consul|vault/" in out.getvalue()
    assert "Ignoring workload names matching: /consul|vault/" in out.getvalue()
    assert tally.skipped == 1


def args(**flags: Any) -> argparse.Namespace:
    defaults: dict[str, Any] = {
        "mode": "measure",
        "ignore": None,
        "timeout": 300,
        "settle": 8.0,
        "identity_labels": None,
    }
    return argparse.Namespace(**(defaults | flags))


@pytest.mark.parametrize(
    ("flags", "problem"),
    [
        ({"mode": None}, "--mode is required (measure|apply|resize)"),
        ({"mode": "Apply"}, "invalid --mode 'Apply' (want measure|apply|resize)"),
        ({"ignore": "("}, "invalid --ignore regex /(/: missing ), unterminated subpattern at position 0"),
        ({}, None),
    ],
)
def test_flag_problems_use_the_scripts_words(flags: dict[str, Any], problem: str | None) -> None:
    assert flag_problem(args(**flags)) == problem


def test_the_cli_exits_1_on_a_flag_problem(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["enroll"]) == 1
    assert capsys.readouterr().err.strip() == "--mode is required (measure|apply|resize)"


def test_plain_lines_when_stdout_is_not_a_terminal() -> None:
    assert isinstance(make_reporter(io.StringIO()), PlainReporter)


def test_status_values_are_the_scripts() -> None:
    assert [status.value for status in Status] == ["PLAN", "OK", "WARN", "SKIP", "FAIL", "NOTE"]


def test_on_a_terminal_records_print_above_a_progress_bar_that_goes_away() -> None:
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=300)
    api = cluster(statefulset(replicas=1))
    Enroller(api.client(), IDENTITY, Options("measure"), apply=False, reporter=ProgressReporter(console)).run()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen.getvalue())
    assert "PLAN  statefulset shop/db" in text
    assert "1/1" in text  # the bar counted the workload
    assert text.rstrip().endswith("Summary: 0 enrolled, 0 failed, 0 warning(s), 0 skipped.")


def test_a_workload_deleted_after_the_scan_is_skipped() -> None:
    api = cluster(statefulset(replicas=1))

    class DeletingReporter(PlainReporter):
        def working_on(self, subject: str) -> None:
            api.client().delete("apps/v1/StatefulSet", name="db", namespace="shop")

    out = io.StringIO()
    runner = Enroller(
        api.client(), IDENTITY, Options("measure"), apply=True, settle=0, reporter=DeletingReporter(out, out)
    )
    tally = runner.run()
    assert "SKIP  statefulset shop/db" in out.getvalue()
    assert "no longer exists" in out.getvalue()
    assert (tally.skipped, tally.exit_code()) == (1, 0)
