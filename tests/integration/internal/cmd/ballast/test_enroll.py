"""`ballast enroll` against a real API server with kube-controller-manager: Deployments, StatefulSets and
DaemonSets carrying the identity tuple are planned in dry-run without a change, enrolled with `--apply` (a rolling
restart for multi-replica ones, in place — same pod UIDs — for single-replica ones and with `--no-restart`),
a second run is a no-op, another mode is warned about unless `--remode`, and a refused write exits 2."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.internal.cmd import ballast as cli
from ballast.internal.enroll import Kind
from ballast.internal.enrollment import MODE_LABEL
from ballast.runtime.client import APIServerClient
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.wait import poll_until

from .conftest import create, pod_modes, pod_uids, wait_settled, workload

RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
APPS = ("web", "solo", "db", "db3", "agent")


def fleet(env: Environment, client: APIServerClient, namespace: str) -> None:
    """web: Deployment × 3; solo: Deployment × 1; plain: no tuple; db: StatefulSet × 1; db3: StatefulSet × 2;
    agent: DaemonSet on two nodes."""
    create(
        env,
        namespace,
        workload("deployment", "web", replicas=3),
        workload("deployment", "solo", replicas=1),
        workload("deployment", "plain", replicas=1, labels={"app.kubernetes.io/name": "plain"}),
        workload("statefulset", "db", replicas=1),
        workload("statefulset", "db3", replicas=2),
        workload("daemonset", "agent"),
    )
    names: list[tuple[Kind, str]] = [("deployment", "web"), ("deployment", "solo"), ("deployment", "plain")]
    names += [("statefulset", "db"), ("statefulset", "db3"), ("daemonset", "agent")]
    wait_settled(client, namespace, *names, pods=10)


def enroll(capsys: pytest.CaptureFixture[str], env: Environment, namespace: str, *flags: str) -> tuple[int, list[str]]:
    code = cli.main(["enroll", "--kubeconfig", str(env.kubeconfig_path), "-n", namespace, "--settle", "1", *flags])
    out = capsys.readouterr().out
    return code, out.splitlines()


def records(lines: list[str], status: str) -> dict[str, str]:
    """subject → detail of the records of one status."""
    return {" ".join(line.split()[1:3]): line[62:] for line in lines if line.startswith(f"{status} ")}


def template_of(client: APIServerClient, kind: str, name: str, namespace: str) -> dict[str, Any]:
    template: dict[str, Any] = client.get(f"apps/v1/{kind}", name, namespace)["spec"]["template"]["metadata"]
    return template


def generations(client: APIServerClient, namespace: str) -> dict[str, int]:
    kinds = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet")
    return {
        f"{kind}/{obj['metadata']['name']}": obj["metadata"]["generation"]
        for kind in kinds
        for obj in client.list(f"apps/v1/{kind}", namespace).items
    }


def test_dry_run_plans_every_workload_with_the_tuple_and_changes_nothing(
    cluster: Environment, client: APIServerClient, namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet(cluster, client, namespace)
    before = generations(client, namespace), {app: pod_uids(client, namespace, app) for app in APPS}
    code, lines = enroll(capsys, cluster, namespace, "--mode", "measure")
    assert code == 0, "\n".join(lines)
    assert lines[0] == "=== DRY-RUN [mode=measure]: no changes will be made; re-run with --apply to execute ==="
    assert "Found (before ignore filter): 2 deployment(s), 2 statefulset(s), 1 daemonset(s)" in lines
    plans = records(lines, "PLAN")
    ns = namespace
    assert set(plans) == {f"deployment {ns}/web", f"deployment {ns}/solo", f"statefulset {ns}/db",
                          f"statefulset {ns}/db3", f"daemonset {ns}/agent"}  # fmt: skip
    assert plans[f"deployment {ns}/web"].endswith("rolling restart; every pod replaced, born labeled")
    assert "in place (adopt, no rollout); then label 1 unlabeled pod(s)" in plans[f"deployment {ns}/solo"]
    assert plans[f"statefulset {ns}/db"].startswith("no restart: raise partition 0 -> 1;")
    assert plans[f"statefulset {ns}/db3"].endswith("restart; wait on rollout up to 300s")
    assert plans[f"daemonset {ns}/agent"].endswith("restart; wait on rollout up to 300s")  # two nodes
    assert lines[-1] == "Summary: 0 enrolled, 0 failed, 0 warning(s), 0 skipped.", "\n".join(lines)
    after = generations(client, namespace), {app: pod_uids(client, namespace, app) for app in APPS}
    assert after == before
    assert all(pod_modes(client, namespace, app) == [None] * len(before[1][app]) for app in APPS)


def test_apply_restarts_multi_replica_workloads_keeps_single_replica_pods_and_reruns_as_a_no_op(
    cluster: Environment, client: APIServerClient, namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    fleet(cluster, client, namespace)
    uids = {app: pod_uids(client, namespace, app) for app in APPS}
    solo_rs = [rs["metadata"]["name"] for rs in client.list("apps/v1/ReplicaSet", namespace).items
               if rs["metadata"]["name"].startswith("solo-")]  # fmt: skip

    code, lines = enroll(capsys, cluster, namespace, "--mode", "measure", "--apply", "--timeout", "120")
    assert code == 0, "\n".join(lines)
    assert lines[0] == "=== APPLY MODE [mode=measure]: changes will be made (namespace " + namespace + ") ==="
    assert lines[-1] == "Summary: 5 enrolled, 0 failed, 0 warning(s), 0 skipped.", "\n".join(lines)
    ok = records(lines, "OK")
    assert ok[f"deployment {namespace}/web"].endswith("rolling restart complete, pods carry the label")
    assert ok[f"deployment {namespace}/solo"].endswith("adopted, pods labeled (running-pod set unchanged)")
    assert ok[f"statefulset {namespace}/db"].endswith("and labeled, no restart (running-pod set unchanged)")
    # Multi-replica: one rolling restart, every pod new and born labeled.
    for kind, app in (("Deployment", "web"), ("StatefulSet", "db3"), ("DaemonSet", "agent")):
        assert RESTARTED_AT in template_of(client, kind, app, namespace)["annotations"]
        assert not uids[app] & pod_uids(client, namespace, app), app
    # Single replica: the same pods, labeled in place; the Deployment re-adopted its ReplicaSet (no new one).
    for kind, app in (("Deployment", "solo"), ("StatefulSet", "db")):
        assert RESTARTED_AT not in (template_of(client, kind, app, namespace).get("annotations") or {})
        assert pod_uids(client, namespace, app) == uids[app], app
    assert [rs["metadata"]["name"] for rs in client.list("apps/v1/ReplicaSet", namespace).items
            if rs["metadata"]["name"].startswith("solo-")] == solo_rs  # fmt: skip
    assert not client.get("apps/v1/Deployment", "solo", namespace)["spec"].get("paused")
    poll_until(
        lambda: all(pod_modes(client, namespace, app) and set(pod_modes(client, namespace, app)) == {"measure"}
                    for app in APPS),
        timeout=60, what="every pod labeled measure",
    )  # fmt: skip
    assert pod_modes(client, namespace, "plain") == [None]

    # A second run changes nothing.
    wait_settled(client, namespace, ("deployment", "web"), ("statefulset", "db3"), ("daemonset", "agent"), pods=10)
    before = generations(client, namespace), {app: pod_uids(client, namespace, app) for app in APPS}
    code, lines = enroll(capsys, cluster, namespace, "--mode", "measure", "--apply")
    assert code == 0, "\n".join(lines)
    assert lines[-1] == "Summary: 0 enrolled, 0 failed, 0 warning(s), 0 skipped.", "\n".join(lines)
    notes = [line for line in lines if line.startswith("NOTE ")]
    assert notes[0].endswith(f"3 workload(s) already carry {MODE_LABEL}=measure; nothing to do (no patch, no restart)")
    assert notes[1].endswith(
        f"2 deployment(s) already fully enrolled at {MODE_LABEL}=measure (template, ReplicaSet, and all pods); "
        "nothing to do"
    )
    assert (generations(client, namespace), {app: pod_uids(client, namespace, app) for app in APPS}) == before

    # Another mode: warned about and left alone.
    code, lines = enroll(capsys, cluster, namespace, "--mode", "apply", "--apply")
    assert code == 0, "\n".join(lines)
    assert lines[-1] == "Summary: 0 enrolled, 0 failed, 5 warning(s), 0 skipped.", "\n".join(lines)
    assert records(lines, "WARN")[f"statefulset {namespace}/db3"] == (
        f"already enrolled at {MODE_LABEL}=measure, not apply; left unchanged (re-run with --remode to change it)"
    )
    assert (generations(client, namespace), {app: pod_uids(client, namespace, app) for app in APPS}) == before

    # --remode --no-restart: every workload, multi-replica ones too, moves to apply without a pod recreated.
    code, lines = enroll(capsys, cluster, namespace, "--mode", "apply", "--apply", "--remode", "--no-restart")
    assert code == 0, "\n".join(lines)
    assert lines[-1] == "Summary: 5 enrolled, 0 failed, 0 warning(s), 0 skipped.", "\n".join(lines)
    assert all(
        "re-mode" in detail and "(running-pod set unchanged)" in detail for detail in records(lines, "OK").values()
    )
    for app in APPS:
        assert pod_uids(client, namespace, app) == before[1][app], app
        assert set(pod_modes(client, namespace, app)) == {"apply"}, app


def test_no_restart_enrolls_multi_replica_workloads_without_recreating_a_pod(
    cluster: Environment, client: APIServerClient, namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    create(
        cluster,
        namespace,
        workload("deployment", "web", replicas=3),
        workload("statefulset", "db3", replicas=2),
        workload("daemonset", "agent"),
    )
    wait_settled(client, namespace, ("deployment", "web"), ("statefulset", "db3"), ("daemonset", "agent"), pods=7)
    uids = {app: pod_uids(client, namespace, app) for app in ("web", "db3", "agent")}
    code, lines = enroll(capsys, cluster, namespace, "--mode", "resize", "--apply", "--no-restart")
    assert code == 0, "\n".join(lines)
    assert "Route: no-restart (hotfix in place) for all workloads, including multi-replica." in lines
    assert lines[-1] == "Summary: 3 enrolled, 0 failed, 0 warning(s), 0 skipped.", "\n".join(lines)
    for kind, app in (("Deployment", "web"), ("StatefulSet", "db3"), ("DaemonSet", "agent")):
        template = template_of(client, kind, app, namespace)
        assert template["labels"][MODE_LABEL] == "resize"
        assert RESTARTED_AT not in (template.get("annotations") or {})
        assert pod_uids(client, namespace, app) == uids[app], app
        assert set(pod_modes(client, namespace, app)) == {"resize"}
    # The controllers count the relabeled pods as up to date: the rollouts stay settled, nothing is replaced.
    wait_settled(client, namespace, ("deployment", "web"), ("statefulset", "db3"), ("daemonset", "agent"), pods=7)
    assert {app: pod_uids(client, namespace, app) for app in uids} == uids


def deny_mode_label_on_replica_sets(env: Environment, client: APIServerClient, namespace: str) -> None:
    """A ValidatingAdmissionPolicy refusing ReplicaSet writes that add the mode label, in `namespace` only."""
    name = f"freeze-{namespace}"
    env.rest.create(
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "resourceRules": [
                        {
                            "apiGroups": ["apps"],
                            "apiVersions": ["v1"],
                            "operations": ["UPDATE"],
                            "resources": ["replicasets"],
                        }
                    ]
                },
                "validations": [
                    {
                        "expression": f"!has(object.spec.template.metadata.labels) || "
                        f"!('{MODE_LABEL}' in object.spec.template.metadata.labels)",
                        "message": "replica sets are frozen here",
                    }
                ],
            },
        },
    )
    env.rest.create(
        "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name},
            "spec": {
                "policyName": name,
                "validationActions": ["Deny"],
                "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}},
            },
        },
    )
    [replica_set] = client.list("apps/v1/ReplicaSet", namespace).items
    probe = {"spec": {"template": {"metadata": {"labels": {MODE_LABEL: "measure"}}}}}

    def refused() -> bool:
        try:
            client.patch(replica_set, probe, dry_run=True)
        except Exception as exc:
            return "frozen" in str(exc)
        return False

    poll_until(refused, timeout=30, what="the admission policy to take effect")


def test_a_refused_write_is_a_failure_rolled_back_and_exit_code_2(
    cluster: Environment, client: APIServerClient, namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    create(cluster, namespace, workload("deployment", "solo", replicas=1))
    wait_settled(client, namespace, ("deployment", "solo"), pods=1)
    deny_mode_label_on_replica_sets(cluster, client, namespace)
    uids = pod_uids(client, namespace, "solo")
    code, lines = enroll(capsys, cluster, namespace, "--mode", "measure", "--apply")
    assert code == 2, "\n".join(lines)
    [replica_set] = client.list("apps/v1/ReplicaSet", namespace).items
    assert records(lines, "FAIL") == {
        f"deployment {namespace}/solo": f"failed to patch ReplicaSet {replica_set['metadata']['name']} "
        "(deployment resumed unchanged)"
    }
    assert lines[-1] == "Summary: 0 enrolled, 1 failed, 0 warning(s), 0 skipped.", "\n".join(lines)
    deployment = client.get("apps/v1/Deployment", "solo", namespace)
    assert not deployment["spec"].get("paused")
    assert MODE_LABEL not in deployment["spec"]["template"]["metadata"]["labels"]
    assert pod_uids(client, namespace, "solo") == uids
