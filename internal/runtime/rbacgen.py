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

Rules declared next to the code that needs them, as kubebuilder's `+kubebuilder:rbac` markers are, for
`ballast-crdgen rbac` (`declared_rules`, `normalize_rules`, `cluster_role`): a decorator on a reconciler class or
function, or a module-level `RBAC_RULES` list.

    @rbac(groups=["batch"], resources=["jobs"], verbs=["get", "list", "watch", "create"])
    @rbac(groups=[""], resources=["events"], verbs=["create", "patch"])
    class JobReconciler: ...

    RBAC_RULES = [PolicyRule(groups=("apps",), resources=("deployments",), verbs=("get",))]

`normalize_rules` merges and sorts them as controller-gen does, so the ClusterRole is the same bytes whatever the
order of declaration.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, NamedTuple, TypeVar

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


# Rules declared next to the code (kubebuilder's `+kubebuilder:rbac` markers).

RBAC_RULES = "RBAC_RULES"
"""The module-level name `declared_rules` reads: a sequence of `PolicyRule` (or `Rule`)."""
_DECLARED = "__rbac_rules__"

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PolicyRule:
    """One PolicyRule as a `+kubebuilder:rbac` marker declares it: API groups (`""` or `"core"` is the core
    group), resources (`<resource>/<subresource>` for a subresource), verbs, and optionally resource names or
    non-resource URLs."""

    groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("groups", "resources", "verbs", "resource_names", "urls"):
            value = getattr(self, name)
            if isinstance(value, str):
                raise TypeError(f"PolicyRule.{name} is a list of strings, not the string {value!r}")
            object.__setattr__(self, name, tuple(value))
        if not self.verbs:
            raise ValueError("a PolicyRule needs at least one verb")
        if not self.resources and not self.urls:
            raise ValueError("a PolicyRule needs resources or urls")

    @classmethod
    def of(cls, rule: PolicyRule | Rule) -> PolicyRule:
        """`rule` as a PolicyRule (a `Rule` has one group)."""
        if isinstance(rule, PolicyRule):
            return rule
        return cls((rule.group,), rule.resources, rule.verbs, rule.resource_names)

    def normalized(self) -> PolicyRule:
        """Each field sorted and without repeats, `core` spelled `""`."""
        return PolicyRule(
            _sorted("" if group == "core" else group for group in self.groups),
            _sorted(self.resources),
            _sorted(self.verbs),
            _sorted(self.resource_names),
            _sorted(self.urls),
        )

    def to_wire(self) -> dict[str, Any]:
        """The PolicyRule as controller-gen writes it: keys sorted, empty fields left out."""
        rule: dict[str, Any] = {}
        if self.groups:
            rule["apiGroups"] = list(self.groups)
        if self.urls:
            rule["nonResourceURLs"] = list(self.urls)
        if self.resource_names:
            rule["resourceNames"] = list(self.resource_names)
        if self.resources:
            rule["resources"] = list(self.resources)
        rule["verbs"] = list(self.verbs)
        return rule


def _sorted(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(sorted(set(values)))


def rbac(
    *,
    groups: Iterable[str] = ("",),
    resources: Iterable[str] = (),
    verbs: Iterable[str],
    resource_names: Iterable[str] = (),
    urls: Iterable[str] = (),
) -> Callable[[T], T]:
    """Declare a rule the decorated reconciler (class or function) needs, as `// +kubebuilder:rbac:groups=batch,
    resources=jobs,verbs=get;list` does in Go; decorators stack. `groups` defaults to the core group.
    Raises TypeError for a string where a list belongs (`verbs="get"`)."""
    rule = PolicyRule(
        tuple(_strings(groups, "groups")),
        tuple(_strings(resources, "resources")),
        tuple(_strings(verbs, "verbs")),
        tuple(_strings(resource_names, "resource_names")),
        tuple(_strings(urls, "urls")),
    )

    def declare(target: T) -> T:
        own = vars(target).get(_DECLARED, ())
        setattr(target, _DECLARED, (rule, *own))  # decorators apply bottom-up: keep the written order
        return target

    return declare


def _strings(values: Iterable[str], name: str) -> Iterable[str]:
    if isinstance(values, str):
        raise TypeError(f"rbac({name}=...) takes a list of strings, not the string {values!r}")
    return values


def rules_of(target: object) -> tuple[PolicyRule, ...]:
    """The rules `@rbac` declared on `target` itself (not those of a base class)."""
    try:
        declared = vars(target).get(_DECLARED, ())
    except TypeError:  # no __dict__
        return ()
    return tuple(declared)


def declared_rules(module: ModuleType) -> list[PolicyRule]:
    """The rules `module` declares: its `RBAC_RULES`, then those of each class and function defined in it that
    `@rbac` decorates (the order does not matter to `normalize_rules`). Raises TypeError naming the module when
    `RBAC_RULES` holds something else than rules."""
    found: list[PolicyRule] = []
    listed = getattr(module, RBAC_RULES, ())
    if isinstance(listed, (str, bytes, Mapping)) or not isinstance(listed, Iterable):
        raise TypeError(f"{module.__name__}.{RBAC_RULES} must be a list of PolicyRule, got {type(listed).__name__}")
    for rule in listed:
        if not isinstance(rule, (PolicyRule, Rule)):
            raise TypeError(f"{module.__name__}.{RBAC_RULES} holds {rule!r}, which is not a PolicyRule")
        found.append(PolicyRule.of(rule))
    for value in vars(module).values():
        if getattr(value, "__module__", None) == module.__name__:
            found.extend(rules_of(value))
    return found


def normalize_rules(rules: Iterable[PolicyRule | Rule]) -> list[PolicyRule]:
    """The rules merged and sorted as controller-gen's `NormalizeRules`: each rule split into one per resource;
    rules on the same groups, resource, resource names and URLs merge their verbs; then rules differing only in
    resources merge those, then only in groups, then only in URLs; the result sorted by groups, resources,
    resource names and URLs (as strings), and verbs that include `*` are just `*`."""
    by_key: dict[tuple[tuple[str, ...], ...], PolicyRule] = {}
    for given in rules:
        rule = PolicyRule.of(given)
        for resource in rule.resources or (None,):
            one = _with(rule, resources=() if resource is None else (resource,))
            key = (one.groups, one.resources, one.resource_names, one.urls)
            known = by_key.get(key)
            by_key[key] = one if known is None else _with(known, verbs=(*known.verbs, *one.verbs))
    merged = list(by_key.values())
    for field_name in ("resources", "groups", "urls"):
        merged = _merge(merged, field_name)
    return [_with(rule, verbs=("*",)) if "*" in rule.verbs else rule for rule in sorted(merged, key=_sort_key)]


def _with(rule: PolicyRule, **changes: tuple[str, ...]) -> PolicyRule:
    fields = {name: getattr(rule, name) for name in ("groups", "resources", "verbs", "resource_names", "urls")}
    fields.update(changes)
    return PolicyRule(**fields).normalized()


def _merge(rules: Iterable[PolicyRule], field_name: str) -> list[PolicyRule]:
    # rules equal but for `field_name` become one rule holding the union of it
    groups: dict[tuple[tuple[str, ...], ...], PolicyRule] = {}
    others = [name for name in ("groups", "resources", "verbs", "resource_names", "urls") if name != field_name]
    for rule in rules:
        key = tuple(getattr(rule, name) for name in others)
        known = groups.get(key)
        groups[key] = (
            rule
            if known is None
            else _with(known, **{field_name: (*getattr(known, field_name), *getattr(rule, field_name))})
        )
    return list(groups.values())


def _sort_key(rule: PolicyRule) -> str:
    # controller-gen sorts by the rule key's string form
    return " + ".join("&".join(values) for values in (rule.groups, rule.resources, rule.resource_names, rule.urls))


def cluster_role(name: str, rules: Iterable[PolicyRule | Rule]) -> dict[str, Any]:
    """The ClusterRole `name` granting `rules`, normalized (`normalize_rules`)."""
    return {
        "apiVersion": f"{RBAC_API}/v1",
        "kind": "ClusterRole",
        "metadata": {"name": name},
        "rules": [rule.to_wire() for rule in normalize_rules(rules)],
    }


__all__ = [
    "RBAC_API",
    "RBAC_RULES",
    "Grant",
    "Placement",
    "PolicyRule",
    "Role",
    "Rule",
    "binding_manifest",
    "cluster_role",
    "comment",
    "declared_rules",
    "normalize_rules",
    "rbac",
    "role_manifest",
    "rules_of",
    "service_account_manifest",
    "yaml_document",
]
