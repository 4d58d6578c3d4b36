"""`ballast scheduling preview`: its flags, what it reads (on the fake API server), its text and JSON output, and
its errors — a bad file exits 1 naming the document before the cluster is contacted."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from ballast.internal.cmd import ballast as cli
from ballast.internal.cmd import scheduling
from ballast.internal.scheduling import preview_report
from ballast.runtime import FakeAPI, GroupVersionKind
from tests.paths import REPOSITORY

KUPID = "kupid.gardener.cloud/v1alpha1"
POLICY = f"""
apiVersion: {KUPID}
kind: ClusterPodSchedulingPolicy
metadata: {{name: spot}}
spec:
  namespaceSelector: {{matchLabels: {{tier: prod}}}}
  podSelector: {{matchLabels: {{app: web}}}}
  nodeSelector: {{pool: spot}}
"""


def test_flags_and_global_flags_on_either_side() -> None:
    args = cli.parser().parse_args(["--context", "c", "scheduling", "preview", "-f", "p.yaml", "-n", "shop"])
    assert (args.command, args.action, args.filename, args.namespace, args.output, args.context) == (
        "scheduling", "preview", "p.yaml", "shop", "text", "c",
    )  # fmt: skip
    args = cli.parser().parse_args(["scheduling", "preview", "-f", "-", "-o", "json", "--kubeconfig", "/k"])
    assert (args.filename, args.output, args.kubeconfig) == ("-", "json", "/k")


@pytest.mark.parametrize(
    "argv", [["scheduling"], ["scheduling", "preview"], ["scheduling", "preview", "-f", "p", "-o", "yaml"]]
)
def test_usage_errors_exit_1(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(argv)
    assert exited.value.code == 1
    assert "error:" in capsys.readouterr().err


def test_a_file_that_is_not_a_policy_exits_1_naming_the_document_before_connecting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scheduling, "connect", lambda *_, **__: pytest.fail("connected"))
    path = tmp_path / "p.yaml"
    path.write_text(POLICY + "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")
    assert cli.main(["scheduling", "preview", "-f", str(path)]) == 1
    assert capsys.readouterr().err.strip() == (
        f"ballast: {path}: document 2: kind 'Deployment' is neither ClusterPodSchedulingPolicy nor PodSchedulingPolicy"
    )
    assert cli.main(["scheduling", "preview", "-f", str(tmp_path / "missing.yaml")]) == 1
    assert capsys.readouterr().err == f"ballast: {tmp_path / 'missing.yaml'}: No such file or directory\n"


def test_a_binary_file_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "policy.bin"
    path.write_bytes(b"kind: \xca\xfe")
    assert cli.main(["scheduling", "preview", "-f", str(path)]) == 1
    assert capsys.readouterr().err == f"ballast: {path}: not a text file (byte 0xca at offset 6 is not UTF-8)\n"


def test_the_listing_scope_is_n_or_the_one_namespace_of_namespaced_policies() -> None:
    def namespaced(namespace: str) -> dict[str, Any]:
        return {"kind": "PodSchedulingPolicy", "metadata": {"name": "p", "namespace": namespace}}

    clustered = {"kind": "ClusterPodSchedulingPolicy", "metadata": {"name": "c"}}
    assert preview_report.listing_scope([clustered], "shop") == "shop"
    assert preview_report.listing_scope([namespaced("a")], None) == "a"
    assert preview_report.listing_scope([namespaced("a"), namespaced("b")], None) is None
    assert preview_report.listing_scope([namespaced("a"), clustered], None) is None


@pytest.fixture
def cluster(api: FakeAPI, monkeypatch: pytest.MonkeyPatch) -> FakeAPI:
    """The fake API server serving every target kind and the webhook configurations, with a labelled namespace,
    a Deployment the policy selects, one it does not select, and a foreign webhook on pods."""
    api.register(GroupVersionKind("", "v1", "ReplicationController"), "replicationcontrollers", namespaced=True)
    api.register(GroupVersionKind("batch", "v1", "CronJob"), "cronjobs", namespaced=True)
    mutating = GroupVersionKind("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration")
    api.register(mutating, "mutatingwebhookconfigurations", namespaced=False, status=False)
    client = api.client()
    for name, labels in (("shop", {"tier": "prod"}), ("lab", {})):
        client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}})
    for namespace, name in (("shop", "web"), ("shop", "api"), ("lab", "web")):
        template = {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "app"}]}}
        client.create(
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace},
             "spec": {"template": template}}
        )  # fmt: skip
    rule = {"apiGroups": [""], "apiVersions": ["v1"], "resources": ["pods"], "operations": ["CREATE"]}
    webhooks = [{"name": "kupid.gardener.cloud", "rules": [rule]}]
    client.create(
        {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
         "metadata": {"name": "gardener-extension-kupid"}, "webhooks": webhooks}
    )  # fmt: skip
    monkeypatch.setattr(scheduling, "connect", lambda *_, **__: api.client())
    return api


def test_the_preview_names_the_selected_object_with_its_diff_and_warns_of_the_foreign_webhook(
    cluster: FakeAPI, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(POLICY))
    before = cluster.resource_version
    assert cli.main(["scheduling", "preview", "-f", "-"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[:2] == ["Previewing ClusterPodSchedulingPolicy/spot (new) in all namespaces",
                         "with the cluster's policies: none"]  # fmt: skip
    assert lines[2].startswith("warning: MutatingWebhookConfiguration gardener-extension-kupid (webhook "
                               "kupid.gardener.cloud) also mutates pods: two webhooks")  # fmt: skip
    assert [line for line in lines if line[:1] in ("+", "-", "@")] == [
        "--- Deployment shop/web (now)",
        "+++ Deployment shop/web (with the policies)",
        "@@ -0,0 +1,2 @@",
        "+nodeSelector:",
        "+  pool: spot",
    ]
    assert "Deployment shop/web: applied — ClusterPodSchedulingPolicy/spot (previewed) applied (nodeSelector)" in lines
    assert "Summary: 1 object selected: 1 applied." in lines
    assert cluster.resource_version == before  # nothing written


def test_json_output(cluster: FakeAPI, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(POLICY)
    assert cli.main(["scheduling", "preview", "-f", str(path), "-n", "shop", "-o", "json"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    assert document["namespace"] == "shop"
    [item] = document["objects"]
    assert (item["kind"], item["namespace"], item["name"], item["result"]) == ("Deployment", "shop", "web", "applied")
    assert (item["before"], item["after"]) == ({}, {"nodeSelector": {"pool": "spot"}})
    assert item["outcomes"] == [
        {"ref": "ClusterPodSchedulingPolicy/spot", "previewed": True, "result": "applied", "message": "",
         "changed": ["nodeSelector"], "conflicts": []}
    ]  # fmt: skip
    assert "gardener-extension-kupid" in captured.err  # warnings also reach people on stderr


def test_a_missing_namespace_exits_1(cluster: FakeAPI, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(POLICY)
    assert cli.main(["scheduling", "preview", "-f", str(path), "-n", "nowhere"]) == 1
    assert capsys.readouterr().err.strip() == 'ballast: namespace "nowhere" not found'


def test_unserved_kinds_are_named_and_previewed_as_absent() -> None:
    bare = FakeAPI()  # no kupid CRDs, no ReplicationControllers, CronJobs or webhook configurations
    state = preview_report.gather(bare.client(), None)
    bare.close()
    assert state.policies == ()
    assert state.configurations is None
    assert [text.split(" ", 1)[0] for text in state.unreadable] == [
        "clusterpodschedulingpolicies",
        "podschedulingpolicies",
        "replicationcontrollers",
        "cronjobs",
        "mutatingwebhookconfigurations",
    ]


def test_the_preview_help_uses_only_resource_names_the_crds_define(capsys: pytest.CaptureFixture[str]) -> None:
    served: set[str] = set()
    for path in (REPOSITORY / "config" / "crd" / "bases").glob("kupid.gardener.cloud_*.yaml"):
        names = yaml.safe_load(path.read_text())["spec"]["names"]
        served |= {names["plural"], names["singular"], names["kind"].lower(), *names.get("shortNames", ())}
    with pytest.raises(SystemExit):
        cli.main(["scheduling", "preview", "--help"])
    used = re.findall(r"kubectl get (\S+)", capsys.readouterr().out)
    assert used
    assert set(used) <= served, f"{used} not among {sorted(served)}"
