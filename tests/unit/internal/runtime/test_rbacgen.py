"""RBAC objects from rules: the PolicyRules of a ClusterRole or Role in declared order, its binding to the right
ServiceAccount, the grants a role allows, and one YAML document per object."""

from __future__ import annotations

import yaml

from ballast.internal.runtime.rbacgen import (
    Grant,
    Placement,
    Role,
    Rule,
    binding_manifest,
    comment,
    role_manifest,
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
