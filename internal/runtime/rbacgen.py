"""RBAC manifests from rules declared as data (kubebuilder's `+kubebuilder:rbac` markers, without the markers).

A `Rule` is one PolicyRule and says who needs it and why; a `Role` groups rules into one ClusterRole (or a Role
in one namespace) bound to one ServiceAccount. `Grant` is the unit RBAC authorizes — what an audit log records
of a request — so a test can compare what a role allows with what the code really calls.

    role = Role("manager", False, "what the controllers read and write",
                (Rule("", ("pods",), ("list", "watch"), ("cache",), "the informer"),))
    where = Placement("my-operator", "my-operator-system", labels={"app.kubernetes.io/name": "my-operator"})
    text = yaml_document(role_manifest(role, where)) + yaml_document(binding_manifest(role, where))

Objects are named `<prefix>-<role name>`; the ServiceAccount is `<prefix>` or `<prefix>-<service_account>`.
Rules keep the order they are declared in. `yaml_document` writes one `---` document in the key order of the
dict, without anchors or line folding, after optional comment lines.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import yaml

RBAC_API = "rbac.authorization.k8s.io"


class Grant(NamedTuple):
    """One authorizable permission: what the audit log records of a request (core group is "")."""

    group: str
    resource: str
    subresource: str
    verb: str


@dataclass(frozen=True, slots=True)
class Rule:
    """One PolicyRule (one API group), with the code that needs it (`used_by`) and why, for the reader."""

    group: str
    resources: tuple[str, ...]
    """Resources, `<resource>/<subresource>` for a subresource."""
    verbs: tuple[str, ...]
    used_by: tuple[str, ...] = ()
    why: str = ""
    resource_names: tuple[str, ...] = ()
    """Empty: every object; otherwise only these names (which RBAC cannot check for `create`, `list`, `watch`
    without a name)."""

    def to_wire(self) -> dict[str, Any]:
        """The PolicyRule as it appears in a Role."""
        rule: dict[str, Any] = {"apiGroups": [self.group], "resources": list(self.resources)}
        if self.resource_names:
            rule["resourceNames"] = list(self.resource_names)
        rule["verbs"] = list(self.verbs)
        return rule

    def grants(self) -> Iterator[Grant]:
        """Every (group, resource, subresource, verb) the rule allows."""
        for resource in self.resources:
            name, _, subresource = resource.partition("/")
            for verb in self.verbs:
                yield Grant(self.group, name, subresource, verb)


@dataclass(frozen=True, slots=True)
class Role:
    """A ClusterRole (or a Role in the placement's namespace) and its binding to one ServiceAccount."""

    name: str
    """Suffix of the object names: `<prefix>-<name>`."""
    namespaced: bool
    purpose: str
    rules: tuple[Rule, ...]
    service_account: str = ""
    """Suffix of the ServiceAccount (`<prefix>-<suffix>`); empty: `<prefix>` itself."""
    warning: str = ""

    @property
    def kind(self) -> str:
        """`Role` or `ClusterRole`."""
        return "Role" if self.namespaced else "ClusterRole"

    def object_name(self, prefix: str) -> str:
        """The Role's (and its binding's) name."""
        return f"{prefix}-{self.name}"

    def service_account_name(self, prefix: str) -> str:
        """The ServiceAccount the role is bound to."""
        return f"{prefix}-{self.service_account}" if self.service_account else prefix

    def grants(self) -> Iterator[Grant]:
        """Every (group, resource, subresource, verb) the role allows."""
        for rule in self.rules:
            yield from rule.grants()


@dataclass(frozen=True, slots=True)
class Placement:
    """Where objects go: the name prefix, the namespace of ServiceAccounts and Roles, and the labels and
    annotations every object carries."""

    prefix: str
    namespace: str
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)

    def metadata(self, name: str, *, namespaced: bool) -> dict[str, Any]:
        """`name`, the namespace when `namespaced`, then the labels and the annotations (each when not empty)."""
        metadata: dict[str, Any] = {"name": name}
        if namespaced:
            metadata["namespace"] = self.namespace
        if self.labels:
            metadata["labels"] = dict(self.labels)
        if self.annotations:
            metadata["annotations"] = dict(self.annotations)
        return metadata


def service_account_manifest(name: str, where: Placement) -> dict[str, Any]:
    """A ServiceAccount in the placement's namespace."""
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": where.metadata(name, namespaced=True)}


def role_manifest(role: Role, where: Placement) -> dict[str, Any]:
    """The Role or ClusterRole of `role`, its rules in declared order."""
    return {
        "apiVersion": f"{RBAC_API}/v1",
        "kind": role.kind,
        "metadata": where.metadata(role.object_name(where.prefix), namespaced=role.namespaced),
        "rules": [rule.to_wire() for rule in role.rules],
    }


def binding_manifest(role: Role, where: Placement) -> dict[str, Any]:
    """The RoleBinding or ClusterRoleBinding of `role` to its ServiceAccount."""
    name = role.object_name(where.prefix)
    return {
        "apiVersion": f"{RBAC_API}/v1",
        "kind": f"{role.kind}Binding",
        "metadata": where.metadata(name, namespaced=role.namespaced),
        "roleRef": {"apiGroup": RBAC_API, "kind": role.kind, "name": name},
        "subjects": [
            {
                "kind": "ServiceAccount",
                "name": role.service_account_name(where.prefix),
                "namespace": where.namespace,
            }
        ],
    }


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True  # a manifest is read by people and by kustomize: no anchors


def comment(line: str) -> str:
    """`line` as a YAML comment line (trailing blanks dropped)."""
    return f"# {line}".rstrip() + "\n"


def yaml_document(obj: Mapping[str, Any], comments: Sequence[str] = ()) -> str:
    """One `---` document: the `comments` as comment lines, then `obj` in its own key order."""
    body = yaml.dump(dict(obj), Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=1 << 16)
    return "---\n" + "".join(comment(line) for line in comments) + body
