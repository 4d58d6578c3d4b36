"""Write-time checks of a whole PodSchedulingPolicy or ClusterPodSchedulingPolicy (kupid's validating webhook,
restated; the `/validate-kupid` handler of `webhook.schedulingpolicies` calls it).

The CRD schema checks types and enums; what it cannot say is whether the policy's pieces are what the API server
accepts in a pod spec. A policy whose toleration or affinity term the API server would refuse on a pod would break
every pod it is merged into, so it is refused when it is written, each problem named by its field path in the API
server's own wording (`fielderrors`):

    validate_scheduling_policy(policy)
    # ['spec.tolerations[1].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", …']

The rules are core/v1's pod validation for the fields a policy carries (label selectors, node selector terms,
pod affinity terms, tolerations, node and scheduler names), plus the object's metadata. Wire dicts of any shape
are taken: a field of the wrong type is left to `merge.policy_problems`, whose problems are added unless one of
ours already names the same field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .affinity import NODE_AFFINITY, POD_AFFINITIES, PREFERRED, REQUIRED, TERMS
from .fielderrors import (
    dns1123_label_problems,
    dns1123_subdomain_problems,
    forbidden,
    invalid,
    label_value_problems,
    qualified_name_problems,
    required,
    unsupported,
)
from .merge import policy_problems
from .policies import CLUSTER_KIND, KINDS, NAMESPACED_KIND
from .terms import EXPRESSIONS, FIELD_KEYS, FIELDS, parse_int64

LABEL_SELECTOR_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
TOLERATION_OPERATORS = ("Equal", "Exists")
"""The operators a toleration names; `""` means `Equal` and is accepted too."""
TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
"""The effects a toleration names; `""` matches every effect and is accepted too."""
MIN_WEIGHT, MAX_WEIGHT = 1, 100

_NO_EXECUTE = "NoExecute"
_EXISTS = "Exists"


def validate_scheduling_policy(obj: Mapping[str, Any]) -> list[str]:
    """Every problem of `obj` (a whole policy, wire dict) as `path: message` strings; [] when it may be stored.

    Checked: `metadata` (name, namespace for the namespaced kind only, finalizers), `spec.podSelector` and, for
    the cluster kind, `spec.namespaceSelector`, `spec.nodeSelector`, `spec.nodeName`, `spec.schedulerName`,
    `spec.affinity` and `spec.tolerations`; then `policy_problems` (types, node selector terms) for any field
    not already named.
    """
    kind = obj.get("kind")
    if kind not in KINDS:
        return [unsupported("kind", kind, KINDS)]
    problems = _metadata_problems(obj.get("metadata"), namespaced=kind == NAMESPACED_KIND)
    spec = obj.get("spec")
    if spec is None:
        spec = {}
    if not isinstance(spec, Mapping):
        return [*problems, invalid("spec", spec, "must be an object")]
    problems.extend(spec_problems(spec, cluster=kind == CLUSTER_KIND))
    return _with_unnamed(problems, policy_problems(spec))


def spec_problems(spec: Mapping[str, Any], *, cluster: bool) -> list[str]:
    """The problems of a policy spec (`cluster`: of a ClusterPodSchedulingPolicy, whose `namespaceSelector` is
    checked too), without the type checks of `policy_problems`."""
    problems = label_selector_problems(spec.get("podSelector"), "spec.podSelector")
    if cluster:
        problems.extend(label_selector_problems(spec.get("namespaceSelector"), "spec.namespaceSelector"))
    problems.extend(label_map_problems(spec.get("nodeSelector"), "spec.nodeSelector"))
    for name in ("nodeName", "schedulerName"):
        value = spec.get(name)
        if isinstance(value, str) and value:
            problems.extend(invalid(f"spec.{name}", value, message) for message in dns1123_subdomain_problems(value))
    problems.extend(affinity_problems(spec.get("affinity"), "spec.affinity"))
    problems.extend(toleration_problems(spec.get("tolerations"), "spec.tolerations"))
    return problems


def _with_unnamed(problems: list[str], others: list[str]) -> list[str]:
    # `others` name a field in their own words; one under (or above) a field we already refused says it again
    named = [_path(problem) for problem in problems]
    merged = list(problems)
    for problem in others:
        path = _path(problem)
        if problem not in merged and not any(_overlaps(path, other) for other in named):
            merged.append(problem)
    return merged


def _path(problem: str) -> str:
    return problem.partition(": ")[0]


def _overlaps(path: str, other: str) -> bool:
    shorter, longer = sorted((path, other), key=len)
    return longer == shorter or longer.startswith((f"{shorter}.", f"{shorter}["))


def _items(value: Any) -> list[tuple[int, Mapping[str, Any]]]:
    """The mapping entries of a list, with their positions; anything else has none (its type is reported by
    `policy_problems`)."""
    if not isinstance(value, list):
        return []
    return [(position, item) for position, item in enumerate(value) if isinstance(item, Mapping)]


def _strings(value: Any) -> list[tuple[int, str]]:
    if not isinstance(value, list):
        return []
    return [(position, item) for position, item in enumerate(value) if isinstance(item, str)]


def _label_name_problems(name: str, path: str) -> list[str]:
    return [invalid(path, name, message) for message in qualified_name_problems(name)]


# ------------------------------------------------------------------------------------------------- metadata


def _metadata_problems(metadata: Any, *, namespaced: bool) -> list[str]:
    if not isinstance(metadata, Mapping):
        return [required("metadata.name", "name or generateName is required")]
    problems = []
    name = metadata.get("name")
    if not name:
        problems.append(required("metadata.name", "name or generateName is required"))
    elif isinstance(name, str):
        problems.extend(invalid("metadata.name", name, message) for message in dns1123_subdomain_problems(name))
    namespace = metadata.get("namespace")
    if namespaced and not namespace:
        problems.append(required("metadata.namespace"))
    elif not namespaced and namespace:
        problems.append(forbidden("metadata.namespace", "not allowed on this type"))
    for position, finalizer in _strings(metadata.get("finalizers")):
        problems.extend(_label_name_problems(finalizer, f"metadata.finalizers[{position}]"))
    return problems


# ------------------------------------------------------------------------------------------------- labels


def label_map_problems(labels: Any, path: str) -> list[str]:
    """A label map (`nodeSelector`, `matchLabels`): every key a qualified name, every value a label value, each
    refused at `path` itself, as the API server reports labels."""
    if not isinstance(labels, Mapping):
        return []
    problems = []
    for key, value in labels.items():
        problems.extend(_label_name_problems(str(key), path))
        if isinstance(value, str):
            problems.extend(invalid(path, value, message) for message in label_value_problems(value))
    return problems


def label_selector_problems(selector: Any, path: str) -> list[str]:
    """A `metav1.LabelSelector`: `matchLabels` a label map; each of `matchExpressions` a known operator with
    values for `In`/`NotIn` and none for `Exists`/`DoesNotExist`, a qualified-name key and label values."""
    if not isinstance(selector, Mapping):
        return []
    problems = label_map_problems(selector.get("matchLabels"), f"{path}.matchLabels")
    for position, requirement in _items(selector.get("matchExpressions")):
        problems.extend(_label_requirement_problems(requirement, f"{path}.matchExpressions[{position}]"))
    return problems


def _set_operator_problems(operator: Any, values: Any, path: str) -> list[str] | None:
    """The `values` rules of the set operators, shared by label and node selector requirements; None for any
    other operator."""
    if operator in ("In", "NotIn"):
        return [] if values else [required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'")]
    if operator in ("Exists", "DoesNotExist"):
        message = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        return [forbidden(f"{path}.values", message)] if values else []
    return None


def _label_requirement_problems(requirement: Mapping[str, Any], path: str) -> list[str]:
    operator = requirement.get("operator")
    values = requirement.get("values") or []
    problems = _set_operator_problems(operator, values, path)
    if problems is None:
        problems = [invalid(f"{path}.operator", operator, "not a valid selector operator")]
    key = requirement.get("key")
    if isinstance(key, str):
        problems.extend(_label_name_problems(key, f"{path}.key"))
    for position, value in _strings(values):
        problems.extend(invalid(f"{path}.values[{position}]", value, m) for m in label_value_problems(value))
    return problems


# ------------------------------------------------------------------------------------------------- affinity


def affinity_problems(affinity: Any, path: str) -> list[str]:
    """`spec.affinity`: node affinity (required selector, preferred weighted terms), pod affinity and pod
    anti-affinity (required terms, preferred weighted terms)."""
    if not isinstance(affinity, Mapping):
        return []
    problems = _node_affinity_problems(affinity.get(NODE_AFFINITY), f"{path}.{NODE_AFFINITY}")
    for name in POD_AFFINITIES:
        problems.extend(_pod_affinity_problems(affinity.get(name), f"{path}.{name}"))
    return problems


def _weight_problems(weighted: Mapping[str, Any], path: str) -> list[str]:
    weight = weighted.get("weight")
    if isinstance(weight, int) and not isinstance(weight, bool) and not MIN_WEIGHT <= weight <= MAX_WEIGHT:
        return [invalid(f"{path}.weight", weight, f"must be in the range {MIN_WEIGHT}-{MAX_WEIGHT}")]
    return []


def _node_affinity_problems(node_affinity: Any, path: str) -> list[str]:
    if not isinstance(node_affinity, Mapping):
        return []
    problems = []
    selector = node_affinity.get(REQUIRED)
    if isinstance(selector, Mapping):
        terms = selector.get(TERMS)
        if not terms:
            problems.append(required(f"{path}.{REQUIRED}.{TERMS}", "must have at least one node selector term"))
        for position, term in _items(terms):
            problems.extend(node_selector_term_problems(term, f"{path}.{REQUIRED}.{TERMS}[{position}]"))
    for position, weighted in _items(node_affinity.get(PREFERRED)):
        at = f"{path}.{PREFERRED}[{position}]"
        problems.extend(_weight_problems(weighted, at))
        preference = weighted.get("preference")
        if isinstance(preference, Mapping):
            problems.extend(node_selector_term_problems(preference, f"{at}.preference"))
    return problems


def node_selector_term_problems(term: Mapping[str, Any], path: str) -> list[str]:
    """A node selector term: each of `matchExpressions` with a known operator, the values it needs (`Gt`/`Lt`:
    exactly one integer) and a qualified-name key; each of `matchFields` on `metadata.name`, with `In` or
    `NotIn` and exactly one value, a node name."""
    problems = []
    for position, requirement in _items(term.get(EXPRESSIONS)):
        problems.extend(_node_requirement_problems(requirement, f"{path}.{EXPRESSIONS}[{position}]"))
    for position, requirement in _items(term.get(FIELDS)):
        problems.extend(_node_field_problems(requirement, f"{path}.{FIELDS}[{position}]"))
    return problems


def _bound_problems(values: Any, path: str) -> list[str]:
    """`Gt` and `Lt` take exactly one value, an integer."""
    if not isinstance(values, list) or len(values) != 1:
        return [required(f"{path}.values", "must be specified single value when `operator` is 'Lt' or 'Gt'")]
    if isinstance(values[0], str) and parse_int64(values[0]) is None:
        return [invalid(f"{path}.values[0]", values[0], "must be an integer when `operator` is 'Lt' or 'Gt'")]
    return []


def _node_requirement_problems(requirement: Mapping[str, Any], path: str) -> list[str]:
    operator = requirement.get("operator")
    values = requirement.get("values") or []
    problems = _set_operator_problems(operator, values, path)
    if problems is None and operator in ("Gt", "Lt"):
        problems = _bound_problems(values, path)
    if problems is None:
        problems = [invalid(f"{path}.operator", operator, "not a valid selector operator")]
    key = requirement.get("key")
    if isinstance(key, str):
        problems.extend(_label_name_problems(key, f"{path}.key"))
    return problems


def _node_field_problems(requirement: Mapping[str, Any], path: str) -> list[str]:
    operator = requirement.get("operator")
    values = requirement.get("values") or []
    problems = []
    if operator in ("In", "NotIn"):
        if not isinstance(values, list) or len(values) != 1:
            problems.append(
                required(
                    f"{path}.values",
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                )
            )
    else:
        problems.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    key = requirement.get("key")
    if key not in FIELD_KEYS:
        problems.append(invalid(f"{path}.key", key, "not a valid field selector key"))
    else:
        for position, value in _strings(values):
            problems.extend(invalid(f"{path}.values[{position}]", value, m) for m in dns1123_subdomain_problems(value))
    return problems


def _pod_affinity_problems(pod_affinity: Any, path: str) -> list[str]:
    if not isinstance(pod_affinity, Mapping):
        return []
    problems = []
    for position, term in _items(pod_affinity.get(REQUIRED)):
        problems.extend(pod_affinity_term_problems(term, f"{path}.{REQUIRED}[{position}]"))
    for position, weighted in _items(pod_affinity.get(PREFERRED)):
        at = f"{path}.{PREFERRED}[{position}]"
        problems.extend(_weight_problems(weighted, at))
        weighted_term = weighted.get("podAffinityTerm")
        if isinstance(weighted_term, Mapping):
            problems.extend(pod_affinity_term_problems(weighted_term, f"{at}.podAffinityTerm"))
    return problems


def pod_affinity_term_problems(term: Mapping[str, Any], path: str) -> list[str]:
    """A pod (anti-)affinity term: valid `labelSelector` and `namespaceSelector`, namespace names in
    `namespaces`, qualified names in `matchLabelKeys`/`mismatchLabelKeys` (none in both, none without a
    `labelSelector`), and a `topologyKey` that is a qualified name."""
    problems = label_selector_problems(term.get("labelSelector"), f"{path}.labelSelector")
    problems.extend(label_selector_problems(term.get("namespaceSelector"), f"{path}.namespaceSelector"))
    for position, namespace in _strings(term.get("namespaces")):
        problems.extend(
            invalid(f"{path}.namespaces[{position}]", namespace, m) for m in dns1123_label_problems(namespace)
        )
    problems.extend(_label_keys_problems(term, path))
    topology_key = term.get("topologyKey")
    if not topology_key:
        problems.append(required(f"{path}.topologyKey", "can not be empty"))
    elif isinstance(topology_key, str):
        problems.extend(_label_name_problems(topology_key, f"{path}.topologyKey"))
    return problems


def _label_keys_problems(term: Mapping[str, Any], path: str) -> list[str]:
    problems = []
    matched = _strings(term.get("matchLabelKeys"))
    mismatched = _strings(term.get("mismatchLabelKeys"))
    for name, keys in (("matchLabelKeys", matched), ("mismatchLabelKeys", mismatched)):
        if keys and term.get("labelSelector") is None:
            problems.append(forbidden(f"{path}.{name}", "must not be specified when labelSelector is not set"))
        for position, key in keys:
            problems.extend(_label_name_problems(key, f"{path}.{name}[{position}]"))
    both = {key for _, key in matched}
    for position, key in mismatched:
        if key in both:
            problems.append(
                invalid(
                    f"{path}.mismatchLabelKeys[{position}]", key, "exists in both matchLabelKeys and mismatchLabelKeys"
                )
            )
    return problems


# ------------------------------------------------------------------------------------------------- tolerations


def toleration_problems(tolerations: Any, path: str) -> list[str]:
    """`spec.tolerations`: a key, when set, is a qualified name; an empty key needs `Exists`; `tolerationSeconds`
    needs the `NoExecute` effect; `Equal` (or `""`) needs a label value, `Exists` no value; the operator and the
    effect (when set) are known ones.

    Where the API server names `operator` for a bad value, the problem names `value` (the field to change)."""
    problems = []
    for position, toleration in _items(tolerations):
        problems.extend(_toleration_problems(toleration, f"{path}[{position}]"))
    return problems


def _toleration_problems(toleration: Mapping[str, Any], path: str) -> list[str]:
    key = toleration.get("key") or ""
    operator = toleration.get("operator") or ""
    value = toleration.get("value") or ""
    effect = toleration.get("effect") or ""
    problems = []
    if isinstance(key, str) and key:
        problems.extend(_label_name_problems(key, f"{path}.key"))
    if not key and operator != _EXISTS:
        problems.append(
            invalid(
                f"{path}.operator",
                operator,
                'operator must be Exists when `key` is empty, which means "match all values and all keys"',
            )
        )
    if toleration.get("tolerationSeconds") is not None and effect != _NO_EXECUTE:
        problems.append(invalid(f"{path}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
    if operator in ("Equal", ""):
        if isinstance(value, str):
            reasons = label_value_problems(value)
            if reasons:
                problems.append(invalid(f"{path}.value", value, ";".join(reasons)))
    elif operator == _EXISTS:
        if value:
            problems.append(invalid(f"{path}.value", value, "value must be empty when `operator` is 'Exists'"))
    else:
        problems.append(unsupported(f"{path}.operator", operator, TOLERATION_OPERATORS))
    if effect and effect not in TAINT_EFFECTS:
        problems.append(unsupported(f"{path}.effect", effect, TAINT_EFFECTS))
    return problems
