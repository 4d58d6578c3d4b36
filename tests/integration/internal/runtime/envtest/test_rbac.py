"""Clients for other identities: RBAC is enforced for ServiceAccounts and certificate users."""

from __future__ import annotations

from typing import Any

import pytest

from ballast.runtime.envtest import APIError, Credentials, Environment
from ballast.runtime.envtest.rest import RESTClient


def _client(credentials: Credentials) -> RESTClient:
    return RESTClient(
        credentials.server,
        str(credentials.ca_file),
        cert_file=str(credentials.cert_file) if credentials.cert_file else None,
        key_file=str(credentials.key_file) if credentials.key_file else None,
        token=credentials.token,
    )


def _grant_configmap_reads(envtest: Environment, namespace: str, subject: dict[str, Any]) -> None:
    rbac = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}"
    envtest.rest.create(
        f"{rbac}/roles",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": {"name": "configmap-reader"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}],
        },
    )
    envtest.rest.create(
        f"{rbac}/rolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": {"name": "read-configmaps"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "configmap-reader"},
            "subjects": [subject],
        },
    )


def _status(call: Any) -> int:
    try:
        call()
    except APIError as exc:
        return exc.status
    return 200


def test_a_service_account_gets_only_what_its_role_grants(envtest: Environment, envtest_namespace: str) -> None:
    credentials = envtest.service_account(envtest_namespace, "narrow")
    _grant_configmap_reads(
        envtest, envtest_namespace, {"kind": "ServiceAccount", "name": "narrow", "namespace": envtest_namespace}
    )
    sa = _client(credentials)
    configmaps = f"/api/v1/namespaces/{envtest_namespace}/configmaps"

    assert _status(lambda: sa.get(configmaps)) == 200
    assert (
        _status(lambda: sa.create(configmaps, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}))
        == 403
    )
    assert _status(lambda: sa.get(f"/api/v1/namespaces/{envtest_namespace}/secrets")) == 403
    assert _status(lambda: sa.get("/api/v1/namespaces/default/configmaps")) == 403
    with pytest.raises(APIError, match=r'User "system:serviceaccount:.*:narrow" cannot create resource "configmaps"'):
        sa.create(configmaps, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})


def test_certificate_users_are_authorized_through_their_groups(envtest: Environment, envtest_namespace: str) -> None:
    alice = envtest.add_user("alice", groups=("readers",))
    bob = envtest.add_user("bob", groups=("writers",))
    _grant_configmap_reads(
        envtest, envtest_namespace, {"kind": "Group", "name": "readers", "apiGroup": "rbac.authorization.k8s.io"}
    )
    configmaps = f"/api/v1/namespaces/{envtest_namespace}/configmaps"
    assert _status(lambda: _client(alice).get(configmaps)) == 200
    assert _status(lambda: _client(bob).get(configmaps)) == 403
    review = _client(alice).create(
        "/apis/authentication.k8s.io/v1/selfsubjectreviews",
        {
            "apiVersion": "authentication.k8s.io/v1",
            "kind": "SelfSubjectReview",
        },
    )
    assert review["status"]["userInfo"]["username"] == "alice"
    assert "readers" in review["status"]["userInfo"]["groups"]
    assert alice.kubeconfig()["users"][0]["name"] == "alice"
