"""Enrollment planning: the identity tuple, which workloads are targets, and each one's decision and route."""

from __future__ import annotations

import re
from typing import Any

import pytest

from ballast.internal.enroll import (
    DEFAULT_IDENTITY_LABELS,
    Converged,
    Identity,
    IdentityError,
    Options,
    Record,
    Route,
    Status,
    Step,
    Workload,
    counts_pods_updated,
    plan_daemonset,
    plan_deployment,
    plan_statefulset,
    qualifies,
    resolve_identity,
    scan,
    selector_string,
    settled,
)
from ballast.internal.enrollment import MODE_LABEL

from .support import TUPLE, daemonset, deployment, pod, replica_set, statefulset, template_labels

IDENTITY = Identity(tuple(TUPLE), "test")
MEASURE = Options("measure")

# ------------------------------------------------------------------------------------------- identity


def test_identity_comes_from_the_flag_then_the_ballast_config_then_the_chart_default() -> None:
    assert resolve_identity(" a , ,b ", ["x"]) == Identity(("a", "b"), "--identity-labels")
    assert resolve_identity(None, ["tier", "app"], "prod") == Identity(
        ("tier", "app"), "BallastConfig 'ballast' (context: prod)"
    )
    assert resolve_identity(None, ["tier"]).source == "BallastConfig 'ballast' (context: current)"
    fallback = resolve_identity(None, None)
    assert fallback.labels == DEFAULT_IDENTITY_LABELS
    assert fallback.source == "chart default (no BallastConfig 'ballast' reachable)"
    assert resolve_identity(None, ["  "]).labels == DEFAULT_IDENTITY_LABELS


def test_an_identity_flag_of_only_commas_is_an_error_naming_its_source() -> None:
    with pytest.raises(IdentityError, match=r"^no identity labels resolved \(source: --identity-labels\)$"):
        resolve_identity(" , ", None)


def test_the_identity_line_joins_the_keys_with_commas() -> None:
    assert Identity(("a", "b"), "src").describe() == "Identity tuple (all required, non-empty): a,b [source: src]"


@pytest.mark.parametrize(
    ("labels", "remode", "expected"),
    [
        (template_labels(), False, True),
        (template_labels("measure"), False, False),  # already enrolled
        (template_labels("apply"), True, True),  # another mode: a --remode target
        (template_labels("measure"), True, False),  # already at the mode
        ({**template_labels(), "app.kubernetes.io/component": ""}, False, False),  # empty counts as absent
        ({"app": "shop"}, False, False),
    ],
)
def test_which_templates_qualify(labels: dict[str, str], remode: bool, expected: bool) -> None:
    assert qualifies(labels, IDENTITY, "measure", remode=remode) is expected


# ------------------------------------------------------------------------------------------- workloads


def test_a_workload_is_read_from_its_object() -> None:
    web = Workload.from_object(deployment(replicas=3, mode="apply", paused=True))
    assert (web.kind, web.subject, web.replicas, web.mode, web.paused) == (
        "deployment",
        "deployment shop/web",
        3,
        "apply",
        True,
    )
    assert (web.selector, web.revision, web.uid) == ("app=shop", "3", "d-1")
    db = Workload.from_object(statefulset(replicas=2, partition=1, strategy="RollingUpdate"))
    assert (db.replicas, db.partition, db.strategy) == (2, 1, "RollingUpdate")
    agent = Workload.from_object(daemonset(scheduled=4, strategy="OnDelete"))
    assert (agent.replicas, agent.strategy) == (4, "OnDelete")  # a DaemonSet's replicas are its nodes
    assert agent.update_strategy == {"type": "OnDelete", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}


def test_unset_replicas_mean_one_and_other_kinds_are_refused() -> None:
    obj = deployment()
    del obj["spec"]["replicas"]
    assert Workload.from_object(obj).replicas == 1
    with pytest.raises(ValueError, match="cannot enroll a 'Job'"):
        Workload.from_object({"kind": "Job", "metadata": {"name": "x"}})


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ({"matchLabels": {"b": "2", "a": "1"}}, "a=1,b=2"),
        (
            {
                "matchLabels": {"app": "x"},
                "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}],
            },
            "app=x,tier in (a,b)",
        ),
        ({"matchExpressions": [{"key": "legacy", "operator": "DoesNotExist"}]}, "!legacy"),
        ({}, ""),  # would select every pod of the namespace: treated as no selector
        (None, ""),
        ({"matchExpressions": [{"key": "x", "operator": "Near"}]}, ""),
    ],
)
def test_selectors_become_label_selector_strings(selector: dict[str, Any] | None, expected: str) -> None:
    assert selector_string(selector) == expected


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (deployment(replicas=2), True),
        (deployment(replicas=2, settled=False), False),
        (statefulset(), True),
        (statefulset(settled=False), False),
        (statefulset(settled=False, strategy="OnDelete"), True),  # OnDelete: only the generation counts
        (statefulset(observed=False, strategy="OnDelete"), False),
        (daemonset(), True),
        (daemonset(settled=False), False),
    ],
)
def test_settled_rollouts(obj: dict[str, Any], expected: bool) -> None:
    assert settled(Workload.from_object(obj)) is expected


# ------------------------------------------------------------------------------------------ deployments


def plan(obj: dict[str, Any], options: Options = MEASURE, **kwargs: Any) -> Any:
    replica_sets = kwargs.get("replica_sets", [replica_set()])
    pods = kwargs.get("pods", [pod("web-abc-1")])
    return plan_deployment(Workload.from_object(obj), replica_sets, pods, IDENTITY, options)


def test_a_multi_replica_deployment_is_restarted_and_a_single_replica_one_adopted() -> None:
    multi = plan(deployment(replicas=3), pods=[pod("a"), pod("b"), pod("c")])
    assert isinstance(multi, Step)
    assert multi.route is Route.RESTART
    assert multi.plan == f"set {MODE_LABEL}=measure on template + rolling restart; every pod replaced, born labeled"
    single = plan(deployment(replicas=1))
    assert isinstance(single, Step)
    assert (single.route, single.replica_set, single.replica_set_mode, single.unlabeled_pods) == (
        Route.ADOPT,
        "web-abc",
        "",
        1,
    )
    assert single.plan == (
        f"set {MODE_LABEL}=measure on ReplicaSet web-abc + Deployment templates in place (adopt, no rollout); "
        "then label 1 unlabeled pod(s); verify the running-pod set is unchanged"
    )


def test_no_restart_adopts_a_multi_replica_deployment_too() -> None:
    decision = plan(deployment(replicas=5), Options("measure", no_restart=True))
    assert isinstance(decision, Step)
    assert decision.route is Route.ADOPT


def test_a_deployment_fully_at_the_mode_is_converged_and_a_half_enrolled_one_repaired() -> None:
    labeled = [pod("web-abc-1", mode="measure")]
    assert isinstance(
        plan(deployment(mode="measure"), replica_sets=[replica_set(mode="measure")], pods=labeled), Converged
    )
    repair = plan(deployment(mode="measure"), replica_sets=[replica_set(mode="measure")], pods=[pod("x"), *labeled])
    assert isinstance(repair, Step)
    assert (repair.route, repair.unlabeled_pods) == (Route.PODS_ONLY, 1)
    assert repair.plan == "label 1 unlabeled pod(s); verify the running-pod set is unchanged"
    # Template labeled but its ReplicaSet not (an interrupted run): the templates are synced again.
    resync = plan(deployment(mode="measure"), replica_sets=[replica_set()], pods=labeled)
    assert isinstance(resync, Step)
    assert resync.route is Route.ADOPT


@pytest.mark.parametrize(
    ("obj", "options", "status", "detail"),
    [
        (deployment(labels={"app": "shop"}), MEASURE, Status.SKIP, "no longer carries the full identity tuple"),
        (
            deployment(mode="apply"),
            MEASURE,
            Status.WARN,
            f"already enrolled at {MODE_LABEL}=apply, not measure; left unchanged (re-run with --remode to change it)",
        ),
        (deployment(paused=True), MEASURE, Status.SKIP, "deployment is paused; resolve, then re-run"),
        (
            deployment(replicas=2, settled=False),
            MEASURE,
            Status.SKIP,
            "rollout not settled; wait for it to finish, then re-run",
        ),
        (deployment(revision="4"), MEASURE, Status.SKIP, "could not identify a unique current ReplicaSet (revision 4)"),
    ],
)
def test_deployments_left_alone_say_why(obj: dict[str, Any], options: Options, status: Status, detail: str) -> None:
    assert plan(obj, options) == Record(status, "deployment shop/web", detail)


def test_remode_changes_a_deployment_at_another_mode_and_says_so() -> None:
    decision = plan(deployment(mode="apply", replicas=2), Options("resize", remode=True))
    assert isinstance(decision, Step)
    assert decision.action == f"re-mode {MODE_LABEL} apply->resize"


def test_a_replica_set_of_another_deployment_or_revision_is_not_the_current_one() -> None:
    others = [replica_set("old", revision="2"), replica_set("stranger", owner="d-2")]
    assert plan(deployment(), replica_sets=others) == Record(
        Status.SKIP, "deployment shop/web", "could not identify a unique current ReplicaSet (revision 3)"
    )


# ------------------------------------------------------------------------------ statefulsets, daemonsets


def test_statefulset_routes() -> None:
    restart = plan_statefulset(Workload.from_object(statefulset(replicas=3)), IDENTITY, Options("measure", timeout=60))
    assert isinstance(restart, Step)
    assert (restart.route, restart.plan) == (
        Route.RESTART,
        f"set {MODE_LABEL}=measure on the template + restart; wait on rollout up to 60s",
    )
    partition = plan_statefulset(Workload.from_object(statefulset(replicas=1)), IDENTITY, MEASURE)
    assert isinstance(partition, Step)
    assert (partition.route, partition.plan) == (
        Route.PARTITION,
        f"no restart: raise partition 0 -> 1; set {MODE_LABEL}=measure on template; relabel 1 pod(s) to the new "
        "controller-revision-hash; label live pod(s); restore partition 0; verify",
    )
    on_delete = plan_statefulset(Workload.from_object(statefulset(replicas=3, strategy="OnDelete")), IDENTITY, MEASURE)
    assert isinstance(on_delete, Step)
    assert (on_delete.route, on_delete.plan) == (
        Route.ON_DELETE,
        f"OnDelete: set {MODE_LABEL}=measure on template; label live pods in place; no restart",
    )


def test_statefulsets_left_alone_say_why() -> None:
    subject = "statefulset shop/db"
    assert plan_statefulset(Workload.from_object(statefulset(mode="measure")), IDENTITY, MEASURE) == Record(
        Status.SKIP, subject, "template no longer qualifies (already at measure, or missing an identity label)"
    )
    assert plan_statefulset(Workload.from_object(statefulset(settled=False)), IDENTITY, MEASURE) == Record(
        Status.SKIP, subject, "update not settled; wait for it to finish, then re-run"
    )
    unobserved = statefulset(observed=False, strategy="OnDelete")
    assert plan_statefulset(Workload.from_object(unobserved), IDENTITY, MEASURE) == Record(
        Status.SKIP, subject, "controller has not observed the latest generation; wait, then re-run"
    )


@pytest.mark.parametrize(
    ("obj", "options", "route"),
    [
        (daemonset(scheduled=3), MEASURE, Route.RESTART),
        (daemonset(scheduled=1), MEASURE, Route.ON_DELETE_SWAP),
        (daemonset(scheduled=0), MEASURE, Route.ON_DELETE_SWAP),
        (daemonset(scheduled=3), Options("measure", no_restart=True), Route.ON_DELETE_SWAP),
        (daemonset(scheduled=3, strategy="OnDelete"), MEASURE, Route.ON_DELETE),
    ],
)
def test_daemonset_routes_follow_the_nodes_it_runs_on(obj: dict[str, Any], options: Options, route: Route) -> None:
    decision = plan_daemonset(Workload.from_object(obj), IDENTITY, options)
    assert isinstance(decision, Step)
    assert decision.route is route


def test_an_unsettled_daemonset_is_skipped() -> None:
    assert plan_daemonset(Workload.from_object(daemonset(settled=False)), IDENTITY, MEASURE) == Record(
        Status.SKIP, "daemonset shop/agent", "update not settled; wait for it to finish, then re-run"
    )


# ------------------------------------------------------------------------------------------------ scan


def workloads(*objects: dict[str, Any]) -> list[Workload]:
    return [Workload.from_object(obj) for obj in objects]


def test_scan_targets_deployments_on_the_tuple_alone_and_others_when_not_enrolled() -> None:
    listed = workloads(
        deployment("web", mode="measure"),
        deployment("bare", labels={"app": "x"}),
        statefulset("db"),
        statefulset("cache", mode="measure"),
        daemonset("agent", mode="measure"),
        daemonset("logs"),
    )
    found = scan(listed, IDENTITY, MEASURE, None)
    assert [w.name for w in found.targets] == ["web", "db", "logs"]
    assert found.found == (1, 1, 1)
    assert found.records == (
        Record(
            Status.NOTE,
            "already enrolled",
            f"2 workload(s) already carry {MODE_LABEL}=measure; nothing to do (no patch, no restart)",
        ),
    )


def test_scan_warns_about_another_mode_unless_remode_makes_it_a_target() -> None:
    listed = workloads(
        statefulset("db", mode="apply"), daemonset("agent", mode="resize"), statefulset("vault", mode="apply")
    )
    found = scan(listed, IDENTITY, Options("measure"), re.compile("vault"))
    assert [record.line().split()[:3] for record in found.records] == [
        ["WARN", "statefulset", "shop/db"],
        ["WARN", "daemonset", "shop/agent"],
    ]  # an ignored workload is not reported
    remoded = scan(listed, IDENTITY, Options("measure", remode=True), None)
    assert [w.name for w in remoded.targets] == ["db", "vault", "agent"]
    assert remoded.records == ()


def with_status(obj: dict[str, Any], **status: Any) -> Workload:
    return Workload.from_object(obj | {"status": obj["status"] | status})


def test_a_controller_counts_the_pods_updated_only_at_the_latest_generation_and_the_relabeled_revision() -> None:
    web = deployment(replicas=3)
    assert counts_pods_updated(with_status(web, updatedReplicas=3))
    assert not counts_pods_updated(with_status(web, updatedReplicas=0))  # the ReplicaSet patch not seen yet
    assert not counts_pods_updated(with_status(web, updatedReplicas=3, observedGeneration=1))  # an older template's
    db = statefulset(replicas=2)
    assert counts_pods_updated(with_status(db, updateRevision="db-2", updatedReplicas=2), "db-2")
    assert not counts_pods_updated(with_status(db, updateRevision="db-2", updatedReplicas=1), "db-2")
    assert not counts_pods_updated(with_status(db, updateRevision="db-1", updatedReplicas=2), "db-2")
    agent = daemonset(scheduled=2)
    assert counts_pods_updated(with_status(agent, updatedNumberScheduled=2))
    assert not counts_pods_updated(with_status(agent, updatedNumberScheduled=1))
