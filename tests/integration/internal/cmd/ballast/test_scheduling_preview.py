"""`ballast scheduling preview` on a real API server: a labelled namespace with a Deployment, a StatefulSet, a
DaemonSet (and their pods) and a bare Pod, a ClusterPodSchedulingPolicy already in the cluster and a previewed one
from a file. The output names exactly the objects the previewed policy selects, with the diff of their
scheduling fields merged after the cluster's policy (first writer wins), skips the DaemonSet's pods, and writes
nothing. A foreign MutatingWebhookConfiguration on pods is warned about; ours is not."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from ballast.internal.cmd import ballast as cli
from ballast.runtime import Client
from ballast.runtime.envtest import Environment

from .conftest import create, wait_settled, workload

KUPID = "/apis/kupid.gardener.cloud/v1alpha1/clusterpodschedulingpolicies"
WEBHOOKS = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
SPOT_TOLERATION = {"key": "spot", "operator": "Equal", "value": "true", "effect": "NoSchedule"}


def cluster_policy(name: str, namespace_label: str, apps: list[str], node_selector: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "kupid.gardener.cloud/v1alpha1",
        "kind": "ClusterPodSchedulingPolicy",
        "metadata": {"name": name},
        "spec": {
            "namespaceSelector": {"matchLabels": {"preview": namespace_label}},
            "podSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": apps}]},
            "nodeSelector": node_selector,
        },
    }


@pytest.fixture
def scene(cluster: Environment, client: Client, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The namespace (labelled `preview=<its name>`) with its objects settled, the cluster's policy `aaa-db`
    (pool=db for app db), and the file previewing `spot` (pool=spot and a toleration for web, db, agent, bare)."""
    namespace = f"preview-{uuid.uuid4().hex[:6]}"
    cluster.rest.create(
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace, "labels": {"preview": namespace}}},
    )
    create(
        cluster, namespace,
        workload("deployment", "web"), workload("deployment", "other"),
        workload("statefulset", "db"), workload("daemonset", "agent"),
    )  # fmt: skip
    cluster.rest.create(
        f"/api/v1/namespaces/{namespace}/pods",
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bare", "labels": {"app": "bare"}},
         "spec": {"terminationGracePeriodSeconds": 0,
                  "containers": [{"name": "app", "image": "registry.k8s.io/pause:3.10"}]}},
    )  # fmt: skip
    names = [("deployment", "web"), ("deployment", "other"), ("statefulset", "db"), ("daemonset", "agent")]
    wait_settled(client, namespace, *names, pods=6)  # type: ignore[arg-type]  # web, other, db-0, 2 agents, bare
    cluster.rest.create(KUPID, cluster_policy("aaa-db", namespace, ["db"], {"pool": "db"}))
    previewed = cluster_policy("spot", namespace, ["web", "db", "agent", "bare"], {"pool": "spot"})
    previewed["spec"]["tolerations"] = [SPOT_TOLERATION]
    path = tmp_path / "spot.yaml"
    path.write_text(yaml.safe_dump(previewed))
    try:
        yield namespace, path
    finally:
        with contextlib.suppress(Exception):
            cluster.rest.delete(f"{KUPID}/aaa-db")
        with contextlib.suppress(Exception):
            cluster.rest.delete(f"/api/v1/namespaces/{namespace}")


def resource_versions(env: Environment, namespace: str) -> dict[str, str]:
    """Every object the preview reads that it could write, by path."""
    paths = [f"/api/v1/namespaces/{namespace}/pods", KUPID] + [
        f"/apis/apps/v1/namespaces/{namespace}/{plural}" for plural in ("deployments", "statefulsets", "daemonsets")
    ]
    return {
        f"{path}/{item['metadata']['name']}": item["metadata"]["resourceVersion"]
        for path in paths
        for item in env.rest.get(path)["items"]
    }


def preview(capsys: pytest.CaptureFixture[str], env: Environment, path: Path) -> tuple[int, str, str]:
    code = cli.main(["scheduling", "preview", "--kubeconfig", str(env.kubeconfig_path), "-f", str(path)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def blocks(out: str, namespace: str) -> dict[str, tuple[list[str], str]]:
    """Each selected object's diff lines and summary line, by `Kind name` (the namespace left out)."""
    found: dict[str, tuple[list[str], str]] = {}
    for block in out.split("\n\n"):
        lines = block.splitlines()
        if lines and f" {namespace}/" in lines[-1] and not lines[-1].startswith(("Previewing", "Summary")):
            label = lines[-1].split(":", 1)[0].replace(f"{namespace}/", "")
            found[label] = ([line for line in lines[:-1] if line[:1] in ("+", "-")], lines[-1])
    return found


def test_the_preview_shows_exactly_the_selected_objects_and_writes_nothing(
    cluster: Environment, client: Client, scene: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    namespace, path = scene
    before = resource_versions(cluster, namespace)
    code, out, err = preview(capsys, cluster, path)
    assert (code, err) == (0, ""), out
    found = blocks(out, namespace)
    [web_pod] = [label for label in found if label.startswith("Pod web-")]
    assert sorted(found) == sorted(["Deployment web", "StatefulSet db", "DaemonSet agent", "Pod bare", "Pod db-0",
                                    web_pod])  # fmt: skip
    added_spot = ["+nodeSelector:", "+  pool: spot", "+- effect: NoSchedule", "+  key: spot", "+  operator: Equal",
                  "+  value: 'true'"]  # fmt: skip
    for label in ("Deployment web", "Pod bare"):  # the bare pod's context differs (its default tolerations)
        assert [line for line in found[label][0] if line[:3] not in ("---", "+++")] == added_spot, out
    for label in ("Deployment web", "DaemonSet agent", "Pod bare"):
        summary = found[label][1].split(" — the same change as ")[0]
        assert summary.endswith(": applied — ClusterPodSchedulingPolicy/spot (previewed) applied (nodeSelector, "
                                "tolerations)"), summary  # fmt: skip
    # The cluster's aaa-db merges first: db keeps pool=db, the previewed policy adds only its toleration.
    diff, summary = found["StatefulSet db"]
    assert [line for line in diff if line[:3] not in ("---", "+++")] == [
        "+nodeSelector:", "+  pool: db",
        "+- effect: NoSchedule", "+  key: spot", "+  operator: Equal", "+  value: 'true'",
    ], out  # fmt: skip
    assert summary == (
        f"StatefulSet {namespace}/db: applied — ClusterPodSchedulingPolicy/aaa-db applied (nodeSelector); "
        "ClusterPodSchedulingPolicy/spot (previewed) applied (tolerations); not merged (first writer wins): "
        "nodeSelector[pool]: is 'db', the policy's is 'spot'"
    )
    assert found[web_pod][0] == found["DaemonSet agent"][0] == []  # a change already shown is not repeated
    assert found["DaemonSet agent"][1].endswith(f"— the same change as Deployment {namespace}/web")
    assert found[web_pod][1].endswith(f"— the same change as Deployment {namespace}/web")
    assert found["Pod db-0"][1].endswith(f"— the same change as StatefulSet {namespace}/db")
    lines = out.splitlines()
    assert "Summary: 6 objects selected: 6 applied." in lines
    assert "Skipped 2 DaemonSet pods: the webhook leaves them to their DaemonSet's template." in lines
    assert "Note: Nothing was written to the cluster." in lines
    assert not any(line.startswith("warning:") for line in lines), out
    assert "other" not in "".join(found)
    assert resource_versions(cluster, namespace) == before


def test_a_foreign_webhook_on_pods_is_warned_about_and_ours_is_not(
    cluster: Environment, scene: tuple[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    _, path = scene

    def configuration(name: str, labels: dict[str, str]) -> dict[str, Any]:
        rule = {"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "operations": ["CREATE"]}
        return {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": name, "labels": labels},
            "webhooks": [
                {"name": f"{name}.example.com", "rules": [rule], "clientConfig": {"url": "https://127.0.0.1:1/never"},
                 "objectSelector": {"matchLabels": {"never": "true"}},  # calls for no object of the other tests
                 "failurePolicy": "Ignore", "sideEffects": "None", "admissionReviewVersions": ["v1"]}
            ],
        }  # fmt: skip

    cluster.rest.create(WEBHOOKS, configuration("gardener-extension-kupid", {}))
    cluster.rest.create(WEBHOOKS, configuration("ballast-scheduling", {"app.kubernetes.io/name": "ballast"}))
    try:
        code, out, _ = preview(capsys, cluster, path)
    finally:
        for name in ("gardener-extension-kupid", "ballast-scheduling"):
            cluster.rest.delete(f"{WEBHOOKS}/{name}")
    assert code == 0
    warnings = [line for line in out.splitlines() if line.startswith("warning:")]
    assert warnings == [
        "warning: MutatingWebhookConfiguration gardener-extension-kupid (webhook gardener-extension-kupid.example.com) "
        "also mutates pods: two webhooks injecting scheduling fields are not idempotent together (each sees the "
        "other's result); the preview shows Ballast's merge alone"
    ]
