"""Small builders for policies, terms and requirements as wire dicts."""

from __future__ import annotations

from typing import Any

REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def req(key: str, operator: str = "In", *values: str) -> dict[str, Any]:
    """A node selector requirement; `req("a")` is `a In [A]` (the value is the key in capitals)."""
    requirement: dict[str, Any] = {"key": key, "operator": operator}
    if operator in ("In", "NotIn", "Gt", "Lt"):
        requirement["values"] = list(values) or [key.upper()]
    return requirement


def term(*expressions: dict[str, Any], fields: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    """A node selector term of these requirements (and `fields`)."""
    result: dict[str, Any] = {}
    if expressions:
        result["matchExpressions"] = list(expressions)
    if fields:
        result["matchFields"] = list(fields)
    return result


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    """An affinity whose node affinity requires these terms."""
    return {"nodeAffinity": {REQUIRED: {"nodeSelectorTerms": list(terms)}}}


def terms_of(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """The required node-affinity terms of a pod spec."""
    terms: list[dict[str, Any]] = spec["affinity"]["nodeAffinity"][REQUIRED]["nodeSelectorTerms"]
    return terms


def keys_of(terms: list[dict[str, Any]]) -> list[list[str]]:
    """Each term's expression keys, in order (`[["d", "a", "b"], …]`)."""
    return [[r["key"] for r in t.get("matchExpressions", [])] for t in terms]


def cluster(name: str, **spec: Any) -> dict[str, Any]:
    """A ClusterPodSchedulingPolicy wire dict."""
    return {
        "apiVersion": "kupid.gardener.cloud/v1alpha1",
        "kind": "ClusterPodSchedulingPolicy",
        "metadata": {"name": name},
        "spec": spec,
    }


def namespaced(namespace: str, name: str, **spec: Any) -> dict[str, Any]:
    """A PodSchedulingPolicy wire dict."""
    return {
        "apiVersion": "kupid.gardener.cloud/v1alpha1",
        "kind": "PodSchedulingPolicy",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }
