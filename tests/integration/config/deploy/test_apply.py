"""What config/ and the chart render is accepted by the real kube-apiserver (server-side apply, `dryRun=All`), the
two grant the same RBAC, and the chart's hook Jobs work with exactly the rights the chart gives them."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from ballast.internal.cmd.ballastd import build_parser, selected_controllers
from ballast.internal.cmd.wiring import CONTROLLERS, DISABLED_BY_DEFAULT
from ballast.internal.enrollment import PROFILE_CLEANUP_FINALIZER
from ballast.internal.manifests.ballast_crds import all_crds
from ballast.runtime import APIStatusError, Client, NotFoundError
from ballast.runtime.envtest import Environment
from tests.integration.config.deploy.conftest import (
    PRESETS,
    REPO,
    STAND_IN_LABEL,
    dry_run_apply,
    find,
    kustomize,
    one,
    render,
)

WORKLOAD_PROFILE = "ballast.tightlinesoftware.com/v1/WorkloadProfile"
RBAC_KINDS = ("ClusterRole", "Role")


@pytest.fixture
def stand_ins(cert_manager_stand_ins: list[str], admin_client: Client) -> list[str]:
    """cert-manager's CRDs as stand-ins (see conftest): the Issuer and Certificate kinds exist, cert-manager not."""
    for name in cert_manager_stand_ins:
        crd = admin_client.get("apiextensions.k8s.io/v1/CustomResourceDefinition", name)
        assert crd["metadata"]["labels"].items() >= STAND_IN_LABEL.items()
    return cert_manager_stand_ins


@pytest.fixture
def ballast_system(envtest: Environment) -> str:
    """The namespace config/ deploys to, created for real (a dry-run Namespace would not exist for the rest)."""
    body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ballast-system"}}
    with contextlib.suppress(Exception):
        envtest.rest.create("/api/v1/namespaces", body)
    return "ballast-system"


def _rbac_rules(documents: list[dict[str, Any]], prefix: str) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(kind, name without the release prefix) → rules, for every ClusterRole and Role."""
    return {
        (d["kind"], d["metadata"]["name"].removeprefix(prefix)): d["rules"]
        for d in documents
        if d["kind"] in RBAC_KINDS
    }


def _config_rbac() -> list[dict[str, Any]]:
    """Every Role and ClusterRole under config/rbac, the optional components included."""
    documents = []
    for path in sorted((REPO / "config" / "rbac").rglob("*.yaml")):
        documents += [doc for doc in yaml.safe_load_all(path.read_text()) if doc and doc.get("kind") in RBAC_KINDS]
    return documents


# ------------------------------------------------------------------------------------------- server-side dry run


@pytest.mark.parametrize("preset", PRESETS)
def test_the_charts_manifests_apply_server_side(
    helm: Path, envtest_namespace: str, admin_client: Client, stand_ins: list[str], preset: str
) -> None:
    documents = render(helm, namespace=envtest_namespace, files=PRESETS[preset])
    applied = dry_run_apply(admin_client, documents)
    assert len(applied) == len(documents)
    expected = {"Deployment/ballast", "Certificate/ballast-serving-cert", "Issuer/ballast-selfsigned",
                "ClusterResourcePolicy/default", "MutatingWebhookConfiguration/ballast", "Job/ballast-crd-upgrade",
                "Job/ballast-uninstall", "StatefulSet/ballast-valkey"}  # fmt: skip
    assert expected <= set(applied)
    with pytest.raises(NotFoundError):  # dry run: nothing persisted
        admin_client.get("apps/v1/Deployment", "ballast", envtest_namespace)


def test_the_charts_other_modes_apply_server_side(
    helm: Path, envtest_namespace: str, admin_client: Client, stand_ins: list[str]
) -> None:
    modes = [
        {"certManager.enabled": "false", "replicaCount": "2", "priorityClassName": "system-cluster-critical"},
        {"valkey.enabled": "false", "store.sqlite.enabled": "true", "leaderElect": "false"},
        {"valkey.enabled": "false", "store.url": "rediss://history:6380/0", "telemetry.prometheus.enabled": "true"},
    ]
    for settings in modes:
        documents = render(helm, namespace=envtest_namespace, settings=settings)
        assert len(dry_run_apply(admin_client, documents)) == len(documents), settings


def test_an_invalid_object_is_refused_by_the_dry_run(helm: Path, envtest_namespace: str, admin_client: Client) -> None:
    # The dry run really validates: the CRD schema refuses a policy field the chart must never render.
    policy = one(render(helm, namespace=envtest_namespace), "ClusterResourcePolicy")
    policy["spec"]["readiness"]["minDataPoints"] = "many"
    with pytest.raises(APIStatusError, match="minDataPoints"):
        dry_run_apply(admin_client, [policy])


@pytest.mark.parametrize(
    "path", ["config/default", "config/overlays/local-testing", "config/overlays/homogeneous-large-fleet"]
)
def test_kustomize_output_applies_server_side(
    envtest: Environment, ballast_system: str, admin_client: Client, stand_ins: list[str], path: str
) -> None:
    documents = kustomize(envtest, path)
    applied = dry_run_apply(admin_client, documents)
    assert {"Namespace/ballast-system", "Deployment/ballast", "Certificate/ballast-serving-cert",
            "ValidatingWebhookConfiguration/ballast", "ClusterRole/ballast-manager"} <= set(applied)  # fmt: skip
    assert len(find(documents, "CustomResourceDefinition")) == len(all_crds())
    policies = find(documents, "ClusterResourcePolicy")
    assert len(policies) == (0 if path == "config/default" else 1)
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        for name in ("ballast", "ballast-scheduling"):
            annotations = one(documents, kind, name)["metadata"]["annotations"]
            assert annotations == {"cert-manager.io/inject-ca-from": "ballast-system/ballast-serving-cert"}


def test_the_without_scheduling_component_leaves_scheduling_out(envtest: Environment, tmp_path: Path) -> None:
    overlay = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(REPO / "config" / "default", tmp_path)],
        "components": [os.path.relpath(REPO / "config" / "without-scheduling", tmp_path)],
    }
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump(overlay))
    text = envtest.kubectl("kustomize", "--load-restrictor", "LoadRestrictionsNone", str(tmp_path))
    documents = [doc for doc in yaml.safe_load_all(text) if doc]
    assert [d for d in documents if d["metadata"]["name"] == "ballast-scheduling"] == []
    assert one(documents, "ValidatingWebhookConfiguration", "ballast")  # Ballast's own stay
    container = one(documents, "Deployment", "ballast")["spec"]["template"]["spec"]["containers"][0]
    assert build_parser().parse_args(container["args"]).scheduling_webhooks is False
    with_scheduling = kustomize(envtest, "config/default")
    assert len([d for d in with_scheduling if d["metadata"]["name"] == "ballast-scheduling"]) == 4


def test_the_without_balancer_component_leaves_the_balancer_out(envtest: Environment, tmp_path: Path) -> None:
    overlay = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(REPO / "config" / "default", tmp_path)],
        "components": [os.path.relpath(REPO / "config" / "without-balancer", tmp_path)],
    }
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump(overlay))
    text = envtest.kubectl("kustomize", "--load-restrictor", "LoadRestrictionsNone", str(tmp_path))
    documents = [doc for doc in yaml.safe_load_all(text) if doc]
    assert [d for d in documents if d["metadata"]["name"] == "ballast-balancer"] == []
    assert one(documents, "ClusterRole", "ballast-manager")  # the rest of the RBAC stays
    assert one(documents, "CustomResourceDefinition", "balancers.balancer.x-k8s.io")  # Balancers are still stored
    container = one(documents, "Deployment", "ballast")["spec"]["template"]["spec"]["containers"][0]
    args = build_parser().parse_args(container["args"])
    assert selected_controllers(args) == set(CONTROLLERS) - {"balancer", *DISABLED_BY_DEFAULT}
    default = kustomize(envtest, "config/default")
    assert {d["kind"] for d in default if d["metadata"]["name"] == "ballast-balancer"} == {
        "ClusterRole", "ClusterRoleBinding",
    }  # fmt: skip
    container = one(default, "Deployment", "ballast")["spec"]["template"]["spec"]["containers"][0]
    assert selected_controllers(build_parser().parse_args(container["args"])) == set(CONTROLLERS) - set(
        DISABLED_BY_DEFAULT
    )


def test_the_consolidation_and_karpenter_components_turn_the_advisor_on(envtest: Environment, tmp_path: Path) -> None:
    default = kustomize(envtest, "config/default")
    advisor = {"ballast-consolidation", "ballast-consolidation-catalogue", "ballast-karpenter"}
    assert [d for d in default if d["metadata"]["name"] in advisor] == []  # off by default: no rights either
    overlay = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [os.path.relpath(REPO / "config" / "default", tmp_path)],
        "components": [os.path.relpath(REPO / "config" / name, tmp_path) for name in ("consolidation", "karpenter")],
    }
    (tmp_path / "kustomization.yaml").write_text(yaml.safe_dump(overlay))
    text = envtest.kubectl("kustomize", "--load-restrictor", "LoadRestrictionsNone", str(tmp_path))
    documents = [doc for doc in yaml.safe_load_all(text) if doc]
    assert one(documents, "ClusterRole", "ballast-consolidation")
    assert one(documents, "ClusterRoleBinding", "ballast-consolidation")
    assert one(documents, "ClusterRole", "ballast-karpenter")["rules"] == [
        {"apiGroups": ["karpenter.sh"], "resources": ["nodepools"], "verbs": ["list"]}
    ]
    catalogue = one(documents, "Role", "ballast-consolidation-catalogue")
    assert catalogue["metadata"]["namespace"] == "ballast-system"
    assert catalogue["rules"][0]["resourceNames"] == ["ballast-consolidation-catalogue"]
    container = one(documents, "Deployment", "ballast")["spec"]["template"]["spec"]["containers"][0]
    args = build_parser().parse_args(container["args"])
    assert selected_controllers(args) == set(CONTROLLERS)
    assert ballastd_catalogue(args) == ("ballast-system", "ballast-consolidation-catalogue")


def ballastd_catalogue(args: Any) -> tuple[str, str] | None:
    from ballast.internal.cmd.ballastd import consolidation_settings  # noqa: PLC0415

    catalogue: tuple[str, str] | None = consolidation_settings(args).read.catalogue
    return catalogue


# ------------------------------------------------------------------------------------------------------ RBAC


def test_config_and_chart_grant_the_same_rules(helm: Path) -> None:
    # Release `ballast`, so that names inside rules (resourceNames) are config/'s too.
    chart = render(helm, settings={"certManager.enabled": "true"})
    chart += render(helm, settings={"certManager.enabled": "false"})  # the self-signed rights
    chart += render(helm, settings={"consolidation.enabled": "true", "consolidation.karpenter": "true"})
    chart += render(helm, settings={"telemetry.prometheus.secure": "true"})  # config/'s metrics-auth Component
    chart_rules = _rbac_rules(chart, "ballast-")
    config_rules = _rbac_rules(_config_rbac(), "ballast-")
    # Both hooks' rights included: the chart's hook objects are config/'s crd-installer and uninstall Components.
    assert set(chart_rules) == set(config_rules)
    assert {("ClusterRole", "uninstall"), ("Role", "uninstall-stop-operator")} <= set(config_rules)
    for key, rules in config_rules.items():
        assert chart_rules[key] == rules, key


def test_kustomize_default_binds_the_manager_roles_to_the_deployments_account(envtest: Environment) -> None:
    documents = kustomize(envtest, "config/default")
    account = one(documents, "Deployment", "ballast")["spec"]["template"]["spec"]["serviceAccountName"]
    subjects = [
        s for b in find(documents, "ClusterRoleBinding") + find(documents, "RoleBinding") for s in b["subjects"]
    ]
    assert {(s["kind"], s["name"], s["namespace"]) for s in subjects} == {("ServiceAccount", account, "ballast-system")}
    assert one(documents, "ServiceAccount", account)["metadata"]["namespace"] == "ballast-system"


# ------------------------------------------------------------------------------------------- the hook Jobs, real


@contextlib.contextmanager
def _installed(client: Client, documents: list[dict[str, Any]]) -> Iterator[None]:
    """Apply `documents` for real; delete the cluster-scoped ones afterwards (the namespace takes the rest)."""
    for document in documents:
        client.apply(document, field_manager="ballast-deploy-test")
    try:
        yield
    finally:
        for document in documents:
            if not document["metadata"].get("namespace"):
                client.delete(document, ignore_not_found=True)


def _hook_objects(documents: list[dict[str, Any]], account: str) -> list[dict[str, Any]]:
    """The ServiceAccount `account` and the roles and bindings that grant it something."""
    bound = [d for d in documents if d["kind"].endswith("Binding") and any(s["name"] == account for s in d["subjects"])]
    roles = [one(documents, b["roleRef"]["kind"], b["roleRef"]["name"]) for b in bound]
    return [one(documents, "ServiceAccount", account), *roles, *bound]


def _profile_ref(name: str) -> dict[str, Any]:
    return {"apiVersion": "ballast.tightlinesoftware.com/v1", "kind": "WorkloadProfile", "metadata": {"name": name}}


def _run_job_command(
    envtest: Environment, job: dict[str, Any], namespace: str, work: Path
) -> subprocess.CompletedProcess[str]:
    """Run the Job's container command — the image's ENTRYPOINT `ballastd` with the Job's args — as the Job's
    ServiceAccount (a token minted by the harness), with the Job's namespace as POD_NAMESPACE."""
    pod = job["spec"]["template"]["spec"]
    credentials = envtest.service_account(namespace, pod["serviceAccountName"])
    kubeconfig = credentials.write_kubeconfig(work / f"{pod['serviceAccountName']}.kubeconfig")
    env = {**os.environ, "POD_NAMESPACE": namespace}
    argv = [sys.executable, "-m", "ballast.internal.cmd.ballastd", *pod["containers"][0]["args"]]
    return subprocess.run(
        [*argv, f"--kubeconfig={kubeconfig}"], capture_output=True, text=True, check=False, env=env, timeout=120
    )


def test_the_crd_hook_applies_the_crds_with_only_its_own_rights(
    helm: Path, envtest: Environment, envtest_namespace: str, admin_client: Client, tmp_path: Path
) -> None:
    release = f"crd{uuid.uuid4().hex[:6]}"
    documents = render(helm, release=release, namespace=envtest_namespace)
    job = one(documents, "Job", f"{release}-crd-upgrade")
    with _installed(admin_client, _hook_objects(documents, job["spec"]["template"]["spec"]["serviceAccountName"])):
        result = _run_job_command(envtest, job, envtest_namespace, tmp_path)
    assert result.returncode == 0, result.stderr
    applied = [line for line in result.stdout.splitlines() if line.endswith("serverside-applied")]
    assert len(applied) == len(all_crds())
    crd = admin_client.get(
        "apiextensions.k8s.io/v1/CustomResourceDefinition", "workloadprofiles.ballast.tightlinesoftware.com"
    )
    managers = {entry["manager"] for entry in crd["metadata"]["managedFields"]}
    assert "ballast-crd-installer" in managers


def test_the_uninstall_hook_stops_the_operator_and_frees_the_profiles(
    helm: Path, envtest: Environment, envtest_namespace: str, admin_client: Client, tmp_path: Path
) -> None:
    release = f"un{uuid.uuid4().hex[:6]}"
    documents = render(helm, release=release, namespace=envtest_namespace)
    admin_client.apply(one(documents, "Deployment", release), field_manager="ballast-deploy-test")
    names = [f"{release}-app--api--default-a9696153", f"{release}-web--ui--default-a9696153"]
    for name in names:
        metadata = {"name": name, "finalizers": [PROFILE_CLEANUP_FINALIZER]}
        admin_client.create({**_profile_ref(name), "metadata": metadata, "spec": {}})
    job = one(documents, "Job", f"{release}-uninstall")
    try:
        with _installed(admin_client, _hook_objects(documents, job["spec"]["template"]["spec"]["serviceAccountName"])):
            result = _run_job_command(envtest, job, envtest_namespace, tmp_path)
        assert result.returncode == 0, result.stderr
        assert f"deployment.apps/{release} scaled to 0" in result.stdout
        assert admin_client.get("apps/v1/Deployment", release, envtest_namespace)["spec"]["replicas"] == 0
        for name in names:
            assert not admin_client.get(WORKLOAD_PROFILE, name)["metadata"].get("finalizers")
            admin_client.delete(admin_client.get(WORKLOAD_PROFILE, name))
            with pytest.raises(NotFoundError):  # nothing holds a deleted profile any more
                admin_client.get(WORKLOAD_PROFILE, name)
    finally:
        for name in names:
            with contextlib.suppress(NotFoundError):
                admin_client.patch(_profile_ref(name), {"metadata": {"finalizers": []}})
                admin_client.delete(_profile_ref(name), ignore_not_found=True)


def test_the_uninstall_hook_has_no_rights_beyond_its_job(
    helm: Path, envtest: Environment, envtest_namespace: str, admin_client: Client, tmp_path: Path
) -> None:
    release = f"un{uuid.uuid4().hex[:6]}"
    documents = render(helm, release=release, namespace=envtest_namespace)
    job = one(documents, "Job", f"{release}-uninstall")
    job["spec"]["template"]["spec"]["containers"][0]["args"] = ["uninstall", "--deployment=someone-else"]
    with _installed(admin_client, _hook_objects(documents, job["spec"]["template"]["spec"]["serviceAccountName"])):
        result = _run_job_command(envtest, job, envtest_namespace, tmp_path)
    assert result.returncode == 1
    assert "forbidden" in result.stderr.lower()
