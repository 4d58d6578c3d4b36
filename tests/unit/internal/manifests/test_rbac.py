"""The operator's RBAC without a cluster: `config/rbac/` and the chart grant the same rules, names agree with
`ballastd`'s flags, and the least-privilege shape holds (name-limited where RBAC allows it, nodes/proxy alone behind
its own switch). That the committed files are current is test_generate.py's; that the grants are sufficient and
all used is proven against a real API server in tests/integration/config/rbac/."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pytest
import yaml

from ballast.internal.cmd.ballastd import CONSOLIDATION_CATALOGUE, build_parser
from ballast.internal.cmd.wiring import CONTROLLERS
from ballast.internal.enrollment import KILL_SWITCH_CONFIGMAP, LEADER_ELECTION_ID
from ballast.internal.manifests import rbac
from ballast.internal.manifests.ballast_crds import all_crds
from ballast.internal.manifests.rbac import granted, roles
from ballast.runtime.rbacgen import Grant
from tests.paths import REPOSITORY

REPO = REPOSITORY
CONFIG_RBAC = REPO / rbac.CONFIG_OUTPUT
HELM_RBAC = REPO / rbac.HELM_OUTPUT
LANES = {*CONTROLLERS, rbac.CACHE, rbac.WEBHOOK, rbac.MIGRATION, rbac.LEADER_ELECTION,
         rbac.SELF_SIGNED_CERTIFICATES, rbac.APPLY_CRDS, rbac.UNINSTALL, rbac.METRICS_AUTH}  # fmt: skip
VERBS = {"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}


def _documents(text: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(text) if doc]


def config_documents() -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for path in sorted(CONFIG_RBAC.rglob("*.yaml")):
        if path.name != "kustomization.yaml":
            found += _documents(path.read_text())
    return found


_IF = re.compile(r"^\{\{- if (not )?\.Values\.([\w.]+) \}\}$")


def render_helm(values: Mapping[str, bool], name: str = "ballast", namespace: str = "ballast-system") -> str:
    """Just enough of Helm for rbac.yaml: `{{- if [not] .Values.x }}`/`{{- end }}` blocks and the release names."""
    kept: list[str] = []
    stack: list[bool] = []
    for line in HELM_RBAC.read_text().splitlines():
        if match := _IF.match(line):
            value = values[match.group(2)]
            stack.append(not value if match.group(1) else value)
        elif line == "{{- end }}":
            stack.pop()
        elif all(stack):
            kept.append(line)
    assert not stack
    text = "\n".join(kept).replace("{{ .Release.Name }}", name).replace("{{ .Release.Namespace }}", namespace)
    assert "{{" not in text, "rbac.yaml uses template actions this test does not know"
    return text


ALL_ON = {"leaderElect": True, "rbac.kubeletSummary": True, "certManager.enabled": False,
          "crds.upgradeHook.enabled": True, "uninstallHook.enabled": True, "scheduling.enabled": True,
          "balancer.enabled": True, "consolidation.enabled": True, "consolidation.karpenter": True,
          "telemetry.prometheus.secure": True}  # fmt: skip


def _without_hooks(doc: dict[str, Any]) -> dict[str, Any]:
    doc = {**doc, "metadata": dict(doc["metadata"])}
    doc["metadata"].pop("annotations", None)
    doc["metadata"]["labels"] = {"app.kubernetes.io/name": "ballast"}
    return doc


def _key(doc: Mapping[str, Any]) -> tuple[str, str, str]:
    return doc["kind"], doc["metadata"].get("namespace", ""), doc["metadata"]["name"]


# ------------------------------------------------------------------------------------------- generation


def test_every_file_is_in_its_kustomization() -> None:
    for kustomization in CONFIG_RBAC.rglob("kustomization.yaml"):
        listed = yaml.safe_load(kustomization.read_text())["resources"]
        here = sorted(p.name for p in kustomization.parent.glob("*.yaml") if p.name != "kustomization.yaml")
        assert sorted(listed) == here, kustomization
    components = [p.parent.name for p in CONFIG_RBAC.glob("*/kustomization.yaml")]
    assert sorted(components) == [
        "consolidation",
        "crd-installer",
        "karpenter",
        "metrics-auth",
        "uninstall",
        "webhook-self-signed",
    ]
    for component in components:
        assert yaml.safe_load((CONFIG_RBAC / component / "kustomization.yaml").read_text())["kind"] == "Component"


def test_the_chart_grants_what_config_grants() -> None:
    chart = {_key(doc): _without_hooks(doc) for doc in _documents(render_helm(ALL_ON))}
    config = {_key(doc): doc for doc in config_documents()}
    assert chart == config


@pytest.mark.parametrize(
    ("value", "setting", "gone"),
    [
        ("leaderElect", False, "ballast-leader-election"),
        ("rbac.kubeletSummary", False, "ballast-kubelet-summary"),
        ("certManager.enabled", True, "ballast-webhook-certificate"),
        ("certManager.enabled", True, "ballast-webhook-configurations"),
        ("crds.upgradeHook.enabled", False, "ballast-crd-installer"),
        ("uninstallHook.enabled", False, "ballast-uninstall"),
        ("uninstallHook.enabled", False, "ballast-uninstall-stop-operator"),
        ("scheduling.enabled", False, "ballast-scheduling"),
        ("balancer.enabled", False, "ballast-balancer"),
        ("consolidation.enabled", False, "ballast-consolidation"),
        ("consolidation.enabled", False, "ballast-consolidation-catalogue"),
        ("consolidation.karpenter", False, "ballast-karpenter"),
        ("telemetry.prometheus.secure", False, "ballast-metrics-auth"),
    ],
)
def test_each_optional_role_follows_its_value(value: str, setting: bool, gone: str) -> None:
    names = {doc["metadata"]["name"] for doc in _documents(render_helm({**ALL_ON, value: setting}))}
    assert gone not in names
    assert "ballast-manager" in names
    assert gone in {doc["metadata"]["name"] for doc in _documents(render_helm(ALL_ON))}


@pytest.mark.parametrize(
    ("account", "events", "kinds"),
    [
        ("ballast-crd-installer", "pre-install,pre-upgrade", {"ServiceAccount", "ClusterRole", "ClusterRoleBinding"}),
        ("ballast-uninstall", "pre-delete",
         {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}),
    ],
)  # fmt: skip
def test_a_hook_jobs_rights_exist_only_during_its_hook(account: str, events: str, kinds: set[str]) -> None:
    documents = _documents(render_helm(ALL_ON))
    bindings = [d for d in documents if d["kind"].endswith("Binding") and d["subjects"][0]["name"] == account]
    refs = {(b["roleRef"]["kind"], b["metadata"].get("namespace", ""), b["roleRef"]["name"]) for b in bindings}
    account_key = ("ServiceAccount", "ballast-system", account)
    hooked = [d for d in documents if _key(d) in refs | {account_key} or d in bindings]
    assert {d["kind"] for d in hooked} == kinds
    for doc in hooked:
        annotations = doc["metadata"]["annotations"]
        assert annotations["helm.sh/hook"] == events  # the events of the Job that uses them
        assert int(annotations["helm.sh/hook-weight"]) < 0  # before the Job, which runs at weight 0
        assert "hook-succeeded" in annotations["helm.sh/hook-delete-policy"]
    operators = [d for d in documents if "ballast" in (d["metadata"]["name"], d.get("subjects", [{}])[0].get("name"))]
    assert operators
    assert not [d for d in operators if "annotations" in d["metadata"]]  # the operator's own rights are no hooks


def test_no_template_action_hides_in_a_comment() -> None:
    # Helm renders actions in comments too; a wrapped one would not parse.
    assert not [line for line in HELM_RBAC.read_text().splitlines() if line.startswith("#") and "{{" in line]
    assert HELM_RBAC.read_text().startswith("# generated by hack/gen-manifests")


# ------------------------------------------------------------------------------------------------ rules


def test_names_agree_with_the_operator() -> None:
    defaults = build_parser().parse_args([])
    assert defaults.webhook_secret_name == rbac.webhook_secret_name()
    assert defaults.webhook_configuration_name == rbac.webhook_configuration_name()
    assert defaults.operator_namespace == rbac.NAMESPACE
    rules = {
        role.name + ":" + rule.group + "/" + rule.resources[0]: rule
        for role in roles() for rule in role.rules if rule.resource_names
    }  # fmt: skip
    assert rules["leader-election:coordination.k8s.io/leases"].resource_names == (LEADER_ELECTION_ID,)
    assert rules["kill-switch:/configmaps"].resource_names == (KILL_SWITCH_CONFIGMAP,)
    catalogue = rules["consolidation-catalogue:/configmaps"].resource_names
    assert (
        catalogue
        == (defaults.consolidation_catalogue or CONSOLIDATION_CATALOGUE,)
        == ("ballast-consolidation-catalogue",)
    )
    assert rules["crd-installer:apiextensions.k8s.io/customresourcedefinitions"].resource_names == tuple(
        crd["metadata"]["name"] for crd in all_crds()
    )


def test_every_rule_names_known_lanes_and_real_verbs() -> None:
    for role in roles():
        for rule in role.rules:
            assert set(rule.used_by) <= LANES, rule
            assert set(rule.verbs) <= VERBS, rule
            assert rule.why


def test_named_objects_are_granted_by_name_and_create_alone() -> None:
    limited = {"secrets", "leases", "configmaps", "mutatingwebhookconfigurations", "validatingwebhookconfigurations",
               "customresourcedefinitions"}  # fmt: skip
    for role in roles():
        for rule in role.rules:
            if not limited & set(rule.resources):
                continue
            if rule.verbs == ("create",):
                assert not rule.resource_names  # a POST names nothing
            else:
                assert rule.resource_names, rule
                # Only a server-side apply (a PATCH by name) authorizes create with the name.
                assert "create" not in rule.verbs or rule.used_by == (rbac.APPLY_CRDS,), rule


def test_namespaced_rights_are_roles_in_the_operator_namespace() -> None:
    # The kill switch, the Lease, the webhook Secret, and what the uninstall stops and waits for: the operator's
    # own Deployment, its pods and its Lease. Everything else is cluster-wide by nature (CRDs, webhook
    # configurations, nodes, profiles) or needed in every namespace (the manager's pods, owners, events).
    operator_namespace_only = {"configmaps", "leases", "secrets"}
    for role in roles():
        touched = {resource for rule in role.rules for resource in rule.resources}
        assert role.namespaced or not touched & operator_namespace_only, role.name
    assert {role.name for role in roles() if role.namespaced} == {
        "kill-switch", "leader-election", "webhook-certificate", "uninstall-stop-operator", "consolidation-catalogue",
        "uninstall-lease",
    }  # fmt: skip


def test_nodes_proxy_is_alone_in_its_role_with_its_warning() -> None:
    holders = [role for role in roles() if any(g.subresource == "proxy" for g in role.grants())]
    assert [role.name for role in holders] == ["kubelet-summary"]
    assert set(holders[0].grants()) == {Grant("", "nodes", "proxy", "get")}
    for text in ((CONFIG_RBAC / "kubelet_summary_role.yaml").read_text(), HELM_RBAC.read_text()):
        assert "WARNING: nodes/proxy reaches the kubelet's whole API" in text
    # Nodes themselves: one get per node hosting enrolled pods (its allocatable), never a watch (docs/design.md,
    # differences 16 and 25); a list only in the consolidation advisor's role, bound only where it runs.
    for role in roles():
        nodes = {g for g in role.grants() if g.resource == "nodes" and not g.subresource}
        expected = {"manager": {Grant("", "nodes", "", "get")}, "consolidation": {Grant("", "nodes", "", "list")}}
        assert nodes == expected.get(role.name, set()), role.name


def test_reads_of_our_kinds_are_list_and_watch_only() -> None:
    manager = set(next(role for role in roles() if role.name == "manager").grants())
    ours = {g for g in manager if g.group == "ballast.tightlinesoftware.com"}
    assert not {g for g in ours if g.verb == "get"}  # the cache serves every get
    assert {g.resource for g in ours if g.verb in ("list", "watch")} == {
        "ballastconfigs", "clusterresourcepolicies", "resourcepolicies", "metricssources", "workloadprofiles",
    }  # fmt: skip
    assert not any(g.group == "events.k8s.io" for g in manager)  # the recorder writes core v1 Events


def test_the_uninstall_grants_exactly_what_ballastd_uninstall_calls() -> None:
    # PATCH the BallastConfig's uninstalling mark; stop_operator: PATCH the one Deployment, LIST pods by its
    # selector; then LIST profiles, PATCH each one's finalizers and, after a conflict, GET it again; LIST them
    # again while waiting for a finalizer to come back, GET the Lease until it expires. Nothing else, and the
    # Deployment, the BallastConfig and the Lease only by name.
    uninstall = {role.name: role for role in roles() if role.feature is rbac.UNINSTALL_FEATURE}
    assert set(uninstall) == {"uninstall", "uninstall-stop-operator", "uninstall-lease"}
    assert {role.service_account_name(rbac.PREFIX) for role in uninstall.values()} == {"ballast-uninstall"}
    profiles, stop, lease = uninstall["uninstall"], uninstall["uninstall-stop-operator"], uninstall["uninstall-lease"]
    assert not profiles.namespaced  # WorkloadProfiles are cluster-scoped
    assert set(profiles.grants()) == {Grant(rbac.BALLAST_GROUP, "workloadprofiles", "", verb)
                                      for verb in ("get", "list", "patch")} | {
                                      Grant(rbac.BALLAST_GROUP, "ballastconfigs", "", "patch")}  # fmt: skip
    (config,) = [rule for rule in profiles.rules if rule.resources == ("ballastconfigs",)]
    assert config.resource_names == ("ballast",)
    assert lease.namespaced
    assert set(lease.grants()) == {Grant("coordination.k8s.io", "leases", "", "get")}
    assert lease.rules[0].resource_names == (LEADER_ELECTION_ID,)
    assert stop.namespaced  # the operator namespace only
    assert set(stop.grants()) == {Grant("apps", "deployments", "", "patch"), Grant("", "pods", "", "list")}
    (deployment,) = [rule for rule in stop.rules if rule.resources == ("deployments",)]
    assert deployment.resource_names == (rbac.operator_deployment_name(),)
    assert granted()["ballast-uninstall"] == set(profiles.grants()) | set(stop.grants()) | set(lease.grants())


def test_the_uninstall_names_the_deployment_config_and_the_chart_deploy() -> None:
    manager = _documents((REPO / "config" / "manager" / "manager.yaml").read_text())
    (deployment,) = [doc for doc in manager if doc["kind"] == "Deployment"]
    assert deployment["metadata"]["name"] == rbac.operator_deployment_name() == rbac.PREFIX
    templates = HELM_RBAC.parent
    assert "kind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\n" in (templates / "deployment.yaml").read_text()
    stop = next(role for role in roles(rbac.HELM_RELEASE_NAME) if role.name == "uninstall-stop-operator")
    assert stop.rules[0].resource_names == (rbac.HELM_RELEASE_NAME,)
    hook = (templates / "uninstall-hook.yaml").read_text()
    assert "- --deployment={{ .Release.Name }}\n" in hook
    assert "serviceAccountName: {{ .Release.Name }}-uninstall\n" in hook
    kinds = set(re.findall(r"^kind: (\w+)$", hook, re.MULTILINE))
    assert kinds == {"Job"}  # its ServiceAccount and rights come from rbac.yaml only


def test_what_only_the_balancer_uses_is_in_its_role_behind_balancer_enabled() -> None:
    # balancer.enabled: false (and config/without-balancer) drop this one role; nothing else grants its rights.
    every = roles()
    balancer = next(role for role in every if role.name == "balancer")
    assert balancer.feature is rbac.BALANCER_FEATURE
    assert balancer.feature.helm_condition == ".Values.balancer.enabled"
    assert "balancer.enabled" in rbac.HELM_VALUES
    assert {(g.group, g.resource, g.subresource) for g in balancer.grants()} == {
        (rbac.BALANCER_GROUP, "balancers", ""), (rbac.BALANCER_GROUP, "balancers", "status"),
        ("autoscaling", "horizontalpodautoscalers", ""),
        ("apps", "deployments", "scale"), ("apps", "statefulsets", "scale"), ("apps", "replicasets", "scale"),
    }  # fmt: skip
    others = [role for role in every if role is not balancer]
    assert not [rule for role in others for rule in role.rules if rule.used_by == ("balancer",)]
    assert not [g for role in others for g in role.grants()
                if g.group in (rbac.BALANCER_GROUP, "autoscaling") or g.subresource == "scale"]  # fmt: skip
