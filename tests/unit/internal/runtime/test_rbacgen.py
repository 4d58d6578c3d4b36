"""RBAC objects from rules: the PolicyRules of a ClusterRole or Role in declared order, its binding to the right
ServiceAccount, the grants a role allows, and one YAML document per object."""

from __future__ import annotations

from collections.abc import Sequence
from types import ModuleType

import pytest
import yaml

from ballast.runtime.rbacgen import (
    Grant,
    Placement,
    PolicyRule,
    Role,
    Rule,
    binding_manifest,
    cluster_role,
    comment,
    declared_rules,
    normalize_rules,
    rbac,
    role_manifest,
    rules_of,
    service_account_manifest,
    yaml_document,
)

PODS = Rule("", ("pods", "pods/status"), ("list", "watch"), ("cache",), "the informer")
LEASE = Rule("coordination.k8s.io", ("leases",), ("get", "update"), ("leader-election",), "renew", ("my-lock",))
MANAGER = Role("manager", False, "what the controllers read", (PODS, Rule("apps", ("deployments",), ("get",))))
ELECTION = Role("leader-election", True, "the Lease", (LEASE,), service_account="elector")
WHERE = Placement("my-operator", "my-system", labels={"app.kubernetes.io/name": "my-operator"})


def test_a_cluster_role_holds_the_rules_in_declared_order() -> None:
    assert role_manifest(MANAGER, WHERE) == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "my-operator-manager", "labels": {"app.kubernetes.io/name": "my-operator"}},
        "rules": [
            {"apiGroups": [""], "resources": ["pods", "pods/status"], "verbs": ["list", "watch"]},
            {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]},
        ],
    }


def test_a_namespaced_role_sits_in_the_placements_namespace_and_limits_by_name() -> None:
    role = role_manifest(ELECTION, WHERE)

    assert role["kind"] == "Role"
    assert role["metadata"]["namespace"] == "my-system"
    assert role["rules"] == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": ["my-lock"],
         "verbs": ["get", "update"]},
    ]  # fmt: skip
    assert list(role["rules"][0]) == ["apiGroups", "resources", "resourceNames", "verbs"]


def test_bindings_name_the_role_and_its_service_account() -> None:
    cluster = binding_manifest(MANAGER, WHERE)
    namespaced = binding_manifest(ELECTION, WHERE)

    assert cluster["kind"] == "ClusterRoleBinding"
    assert "namespace" not in cluster["metadata"]
    assert cluster["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": "my-operator-manager"}  # fmt: skip
    assert cluster["subjects"] == [{"kind": "ServiceAccount", "name": "my-operator", "namespace": "my-system"}]
    assert namespaced["kind"] == "RoleBinding"
    assert namespaced["metadata"]["namespace"] == "my-system"
    assert namespaced["subjects"][0]["name"] == "my-operator-elector" == ELECTION.service_account_name("my-operator")


def test_a_service_account_and_metadata_carry_labels_and_annotations_only_when_given() -> None:
    hooked = Placement("op", "ns", annotations={"helm.sh/hook": "pre-install"})

    assert service_account_manifest("op", WHERE) == {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "op", "namespace": "my-system", "labels": {"app.kubernetes.io/name": "my-operator"}},
    }
    assert service_account_manifest("op", hooked)["metadata"] == {
        "name": "op",
        "namespace": "ns",
        "annotations": {"helm.sh/hook": "pre-install"},
    }


def test_grants_are_what_an_audit_log_records() -> None:
    assert set(MANAGER.grants()) == {
        Grant("", "pods", "", "list"),
        Grant("", "pods", "", "watch"),
        Grant("", "pods", "status", "list"),
        Grant("", "pods", "status", "watch"),
        Grant("apps", "deployments", "", "get"),
    }


def test_a_document_keeps_key_order_and_writes_comments_first_without_anchors_or_folding() -> None:
    shared = {"k": "v"}
    long = "x" * 300
    obj = {"zeta": shared, "alpha": shared, "long": long}

    text = yaml_document(obj, ["what it is", ""])

    assert text.startswith("---\n# what it is\n#\nzeta:\n")
    assert text.index("zeta:") < text.index("alpha:")
    assert "&id" not in text
    assert f"long: {long}\n" in text
    assert yaml.safe_load(text) == obj
    assert comment("trailing   ") == "# trailing\n"


# Rules declared next to the code (`@rbac`, `RBAC_RULES`), merged as controller-gen merges them.


def _module_with_rules(name: str, listed: Sequence[object]) -> ModuleType:
    module = ModuleType(name)

    @rbac(groups=["batch"], resources=["jobs"], verbs=["get", "list", "watch", "create"])
    @rbac(groups=["batch"], resources=["jobs/status"], verbs=["update", "patch", "get"])
    class JobReconciler:
        pass

    @rbac(groups=["core"], resources=["events"], verbs=["patch", "create"])
    def record() -> None:
        pass

    class Imported:  # declared in another module: not this one's rules
        pass

    for value in (JobReconciler, record):
        value.__module__ = name
    rbac(resources=["secrets"], verbs=["*"])(Imported)
    module.JobReconciler = JobReconciler  # type: ignore[attr-defined]
    module.record = record  # type: ignore[attr-defined]
    module.Imported = Imported  # type: ignore[attr-defined]
    module.RBAC_RULES = listed  # type: ignore[attr-defined]
    return module


def test_rbac_declares_rules_on_a_class_in_the_written_order() -> None:
    @rbac(groups=["apps"], resources=["deployments"], verbs=["get"])
    @rbac(groups=["apps"], resources=["replicasets"], verbs=["list"])
    class Reconciler:
        pass

    assert rules_of(Reconciler) == (
        PolicyRule(("apps",), ("deployments",), ("get",)),
        PolicyRule(("apps",), ("replicasets",), ("list",)),
    )
    assert rules_of(type("Sub", (Reconciler,), {})) == ()  # a subclass declares its own


def test_declared_rules_read_the_module_list_and_its_own_decorated_objects() -> None:
    listed = [PolicyRule(("apps",), ("deployments",), ("get",)), Rule("apps", ("statefulsets",), ("get",))]
    rules = declared_rules(_module_with_rules("my_operator.controllers", listed))

    assert PolicyRule(("apps",), ("statefulsets",), ("get",)) in rules
    assert PolicyRule(("core",), ("events",), ("patch", "create")) in rules
    assert all(rule.resources != ("secrets",) for rule in rules)
    assert len(rules) == 5


def test_the_cluster_role_merges_and_sorts_as_controller_gen() -> None:
    listed = [
        PolicyRule(("apps",), ("statefulsets",), ("get",)),
        PolicyRule(("apps",), ("deployments",), ("get",)),
        PolicyRule(("batch",), ("jobs",), ("delete", "get")),
        PolicyRule(("extensions",), ("deployments",), ("get",)),
    ]
    role = cluster_role("manager-role", declared_rules(_module_with_rules("my_operator.more", listed)))

    assert role == {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": "manager-role"},
        "rules": [
            {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
            {"apiGroups": ["apps"], "resources": ["deployments", "statefulsets"], "verbs": ["get"]},
            {"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["create", "delete", "get", "list", "watch"]},
            {"apiGroups": ["batch"], "resources": ["jobs/status"], "verbs": ["get", "patch", "update"]},
            {"apiGroups": ["extensions"], "resources": ["deployments"], "verbs": ["get"]},
        ],
    }


def test_rules_differing_in_resources_then_groups_then_urls_become_one() -> None:
    same_group = [PolicyRule(("apps",), ("deployments",), ("get",)), PolicyRule(("apps",), ("daemonsets",), ("get",))]
    same_resource = [
        PolicyRule(("apps",), ("deployments",), ("get",)),
        PolicyRule(("extensions",), ("deployments",), ("get",)),
    ]
    same_verbs = [PolicyRule(urls=("/metrics",), verbs=("get",)), PolicyRule(urls=("/healthz",), verbs=("get",))]

    assert normalize_rules(same_group) == [PolicyRule(("apps",), ("daemonsets", "deployments"), ("get",))]
    assert normalize_rules(same_resource) == [PolicyRule(("apps", "extensions"), ("deployments",), ("get",))]
    assert normalize_rules(same_verbs) == [PolicyRule(urls=("/healthz", "/metrics"), verbs=("get",))]


def test_a_rule_is_split_by_resource_before_verbs_merge() -> None:
    rules = [PolicyRule(("",), ("pods", "services"), ("get",)), PolicyRule(("",), ("pods",), ("watch",))]

    assert normalize_rules(rules) == [
        PolicyRule(("",), ("pods",), ("get", "watch")),
        PolicyRule(("",), ("services",), ("get",)),
    ]


def test_verbs_with_a_star_are_the_star() -> None:
    rules = [PolicyRule(("",), ("pods",), ("get",)), PolicyRule(("",), ("pods",), ("*",))]

    assert normalize_rules(rules) == [PolicyRule(("",), ("pods",), ("*",))]


def test_the_order_of_declaration_does_not_change_the_role() -> None:
    rules = [
        PolicyRule(("",), ("pods",), ("get",)),
        PolicyRule(("apps",), ("deployments",), ("list", "get")),
        PolicyRule(("",), ("pods",), ("watch",)),
        PolicyRule(urls=("/metrics",), verbs=("get",)),
        PolicyRule(("",), ("configmaps",), ("get",), resource_names=("my-config",)),
    ]

    assert normalize_rules(rules) == normalize_rules(reversed(rules))
    assert [rule.to_wire() for rule in normalize_rules(rules)] == [
        {"nonResourceURLs": ["/metrics"], "verbs": ["get"]},  # its key " +  +  + /metrics" sorts first
        {"apiGroups": [""], "resourceNames": ["my-config"], "resources": ["configmaps"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "watch"]},
        {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get", "list"]},
    ]


def test_a_string_where_a_list_belongs_is_refused() -> None:
    with pytest.raises(TypeError, match="verbs"):
        rbac(resources=["pods"], verbs="get")
    with pytest.raises(ValueError, match="verb"):
        PolicyRule(("",), ("pods",), ())


def test_rbac_rules_that_are_not_rules_are_refused_naming_the_module() -> None:
    with pytest.raises(TypeError, match=r"my_operator\.bad\.RBAC_RULES"):
        declared_rules(_module_with_rules("my_operator.bad", ["pods"]))
