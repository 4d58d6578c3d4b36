"""`config/rbac/` on a real API server: applied as committed, ServiceAccount kubeconfigs for the identities it
binds, the grants it makes, and what an audit log says each identity used."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import yaml

from ballast.internal.manifests.rbac import NAMESPACE
from ballast.runtime.envtest import APIError, Environment
from ballast.runtime.envtest.wait import poll_until
from ballast.runtime.rbacgen import Grant
from tests.paths import REPOSITORY

ROOT = REPOSITORY
CONFIG_RBAC = ROOT / "config" / "rbac"
RBAC_PATH = "/apis/rbac.authorization.k8s.io/v1"
TOKEN_SECONDS = 3600
TOKEN_REFRESH = 2400.0
"""Re-mint a token this long after minting it: a session may outlive one hour."""
_KIND_ORDER = {"ServiceAccount": 0, "ClusterRole": 1, "Role": 1, "ClusterRoleBinding": 2, "RoleBinding": 2}


def documents(directory: Path = CONFIG_RBAC) -> list[dict[str, Any]]:
    """Every object under `config/rbac/` (base and Components), ServiceAccounts first, then roles, then bindings."""
    return documents_of([directory])


def documents_of(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """Every object of the YAML files `paths` (a directory: every file under it but its kustomization.yaml),
    ServiceAccounts first, then roles, then bindings."""
    files: list[Path] = []
    for path in paths:
        files += sorted(p for p in path.rglob("*.yaml") if p.name != "kustomization.yaml") if path.is_dir() else [path]
    found: list[dict[str, Any]] = []
    for path in files:
        found += [doc for doc in yaml.safe_load_all(path.read_text("utf-8")) if doc]
    return sorted(found, key=lambda doc: _KIND_ORDER[doc["kind"]])


def object_path(doc: Mapping[str, Any]) -> str:
    kind, metadata = doc["kind"], doc["metadata"]
    if kind == "ServiceAccount":
        return f"/api/v1/namespaces/{metadata['namespace']}/serviceaccounts/{metadata['name']}"
    plural = kind.lower() + "s"
    if kind in ("Role", "RoleBinding"):
        return f"{RBAC_PATH}/namespaces/{metadata['namespace']}/{plural}/{metadata['name']}"
    return f"{RBAC_PATH}/{plural}/{metadata['name']}"


def user_of(namespace: str, name: str) -> str:
    return f"system:serviceaccount:{namespace}:{name}"


@dataclass(frozen=True, slots=True)
class Permission:
    """One grant with where it holds: `namespace` "" for a ClusterRole, `names` empty when not name-limited."""

    grant: Grant
    namespace: str
    names: tuple[str, ...]


def permissions(docs: Iterable[Mapping[str, Any]]) -> dict[str, list[Permission]]:
    """User → what the bindings among `docs` grant it, read from the manifests themselves."""
    docs = list(docs)
    roles = {(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d for d in docs}
    result: dict[str, list[Permission]] = {}
    for binding in (d for d in docs if d["kind"] in ("ClusterRoleBinding", "RoleBinding")):
        namespace = binding["metadata"].get("namespace", "")
        ref = binding["roleRef"]
        role = roles[(ref["kind"], namespace if ref["kind"] == "Role" else "", ref["name"])]
        for subject in binding["subjects"]:
            user = user_of(subject["namespace"], subject["name"])
            for rule in role["rules"]:
                names = tuple(rule.get("resourceNames") or ())
                for group in rule["apiGroups"]:
                    for resource in rule["resources"]:
                        name, _, subresource = resource.partition("/")
                        for verb in rule["verbs"]:
                            grant = Grant(group, name, subresource, verb)
                            result.setdefault(user, []).append(Permission(grant, namespace, names))
    return result


def grants(docs: Iterable[Mapping[str, Any]]) -> dict[str, set[Grant]]:
    """User → the (group, resource, subresource, verb) tuples `docs` grant it."""
    return {user: {p.grant for p in found} for user, found in permissions(docs).items()}


def allowed(env: Environment, user: str, permission: Permission) -> bool:
    """Ask the API server's authorizer (a SubjectAccessReview, as admin) whether `user` holds `permission`."""
    grant = permission.grant
    attributes = {"group": grant.group, "resource": grant.resource, "subresource": grant.subresource,
                  "verb": grant.verb, "namespace": permission.namespace,
                  "name": permission.names[0] if permission.names else ""}  # fmt: skip
    namespace = user.split(":")[2]  # system:serviceaccount:<namespace>:<name>
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "SubjectAccessReview",
        "spec": {
            "user": user,
            "groups": ["system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"],
            "resourceAttributes": attributes,
        },
    }
    answer = env.rest.create("/apis/authorization.k8s.io/v1/subjectaccessreviews", review)
    return bool(answer.get("status", {}).get("allowed"))


def apply_config_rbac(env: Environment, docs: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Server-side apply `config/rbac/` (idempotent) and wait until the authorizer grants all of it."""
    docs = documents() if docs is None else docs
    namespaces = {d["metadata"]["namespace"] for d in docs if "namespace" in d["metadata"]}
    for namespace in sorted(namespaces):
        with contextlib.suppress(APIError):  # exists already
            env.rest.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                   "metadata": {"name": namespace}})  # fmt: skip
    for doc in docs:
        env.rest.apply(object_path(doc), doc, field_manager="ballast-config-rbac")
    # The RBAC authorizer reads roles from informers: wait, so that no request of the operator is refused early.
    pending = [(user, p) for user, found in permissions(docs).items() for p in found]

    def granted() -> bool:
        pending[:] = [(user, p) for user, p in pending if not allowed(env, user, p)]
        return not pending

    poll_until(granted, timeout=20, what="the authorizer to grant config/rbac", last_error=lambda: str(pending[:3]))
    return docs


_minted: dict[tuple[Path, str, str], tuple[Path, float]] = {}
_lock = threading.Lock()


def service_account_kubeconfig(env: Environment, name: str, namespace: str = NAMESPACE) -> Path:
    """A kubeconfig for ServiceAccount `namespace/name` with `config/rbac/` applied (once per environment; the
    token is re-minted before it expires)."""
    key = (env.work_dir, namespace, name)
    with _lock:
        known = _minted.get(key)
        if known is not None and time.monotonic() - known[1] < TOKEN_REFRESH:
            return known[0]
        if not any(k[0] == env.work_dir for k in _minted):
            apply_config_rbac(env)
        credentials = env.service_account(namespace, name, expiration_seconds=TOKEN_SECONDS)
        path = credentials.write_kubeconfig(env.work_dir / "users" / f"{namespace}-{name}" / "kubeconfig")
        _minted[key] = (path, time.monotonic())
        return path


# ------------------------------------------------------------------------------------------------ audit


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One audited resource request (Metadata level), at the stage that carries its response code."""

    user: str
    verb: str
    group: str
    resource: str
    subresource: str
    namespace: str
    name: str
    code: int
    uri: str

    @property
    def grant(self) -> Grant:
        return Grant(self.group, self.resource, self.subresource, self.verb)


def read_audit_log(path: Path) -> Iterator[AuditRecord]:
    """Resource requests with a response code: ResponseComplete, and ResponseStarted for watches still open."""
    with path.open("rb") as lines:
        for line in lines:
            event = orjson.loads(line)
            ref = event.get("objectRef")
            status = event.get("responseStatus")
            if not ref or not status or event.get("stage") not in ("ResponseComplete", "ResponseStarted"):
                continue
            yield AuditRecord(
                user=event["user"]["username"],
                verb=event["verb"],
                group=ref.get("apiGroup", ""),
                resource=ref.get("resource", ""),
                subresource=ref.get("subresource", ""),
                namespace=ref.get("namespace", ""),
                name=ref.get("name", ""),
                code=int(status.get("code", 0)),
                uri=event.get("requestURI", ""),
            )


def used(records: Iterable[AuditRecord], user: str) -> set[Grant]:
    """What `user` was authorized for and did. A server-side apply that created its object (PATCH answered 201)
    was authorized as `create` too, by name."""
    found: set[Grant] = set()
    for record in records:
        if record.user != user or record.code in (401, 403):
            continue
        found.add(record.grant)
        if record.verb == "patch" and record.code == 201:
            found.add(record.grant._replace(verb="create"))
    return found


def forbidden(records: Iterable[AuditRecord], user: str) -> list[AuditRecord]:
    return [r for r in records if r.user == user and r.code == 403]


def audit_problems(
    records: Iterable[AuditRecord], user: str, granted: set[Grant], must_use: Iterable[Grant] | None = None
) -> list[str]:
    """What the audit log holds against `user`: a request refused, a grant of `must_use` (all of `granted` by
    default) never used, a grant used that `granted` does not hold."""
    records = list(records)
    did = used(records, user)
    problems = [f"{user} was refused: {r.verb} {r.uri}" for r in forbidden(records, user)]
    problems += [
        f"{user} never used its grant {g}" for g in sorted(set(granted if must_use is None else must_use) - did)
    ]
    problems += [f"{user} used {g}, granted outside its roles" for g in sorted(did - granted)]
    return problems
