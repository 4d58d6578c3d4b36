"""Selector matching rules (docs/compatibility.md, docs/design.md, difference 9): kinds, namespaces, annotations,
label selectors, and the pod facts they read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from ballast.internal.enrollment import pod_projection
from ballast.internal.policy import PodFacts, compile_policy, controller_reference, owner_kinds

from .builders import crp

DEPLOYMENT_POD = ("ReplicaSet", "Deployment")


def matches(selector: dict[str, Any], pod: PodFacts) -> bool:
    compiled = compile_policy(crp("p", selector=selector))
    assert compiled.matchable, compiled.messages
    return compiled.matches(pod)


@pytest.mark.parametrize(
    ("kinds", "owners", "expected"),
    [
        ([], DEPLOYMENT_POD, True),
        ([], (), True),
        (["Deployment"], DEPLOYMENT_POD, True),  # the top-level owner (the Go operator only sees ReplicaSet)
        (["ReplicaSet"], DEPLOYMENT_POD, True),  # the direct controller, as in the Go operator
        (["StatefulSet"], DEPLOYMENT_POD, False),
        (["StatefulSet", "Deployment"], DEPLOYMENT_POD, True),
        (["StatefulSet"], ("StatefulSet",), True),
        (["Job"], ("Job", "CronJob"), True),
        (["CronJob"], ("Job", "CronJob"), True),
        (["deployment"], DEPLOYMENT_POD, False),  # kinds are case-sensitive
        (["Deployment"], (), False),  # a standalone pod has kind ""
        ([""], (), True),  # …which a literal "" matches, as in the Go operator
        # Only the ends of the chain count: an intermediate owner does not.
        (["Deployment"], ("ReplicaSet", "Deployment", "Rollout"), False),
        (["Rollout"], ("ReplicaSet", "Deployment", "Rollout"), True),
    ],
)
def test_kinds(kinds: list[str], owners: tuple[str, ...], expected: bool) -> None:
    assert matches({"kinds": kinds}, PodFacts("shop", owner_kinds=owners)) is expected


@pytest.mark.parametrize(
    ("include", "exclude", "namespace", "expected"),
    [
        ([], [], "anything", True),
        (["team-a"], [], "team-a", True),
        (["team-a"], [], "team-ab", False),
        (["team-a", "team-b"], [], "team-b", True),
        (["/team-.*/"], [], "team-x", True),
        (["/team-.*/"], [], "xteam-a", False),
        (["/team-[0-9]+/"], [], "team-12", True),
        (["/team-[0-9]+/"], [], "team-12a", False),
        ([], ["kube-system"], "kube-system", False),
        ([], ["kube-system"], "default", True),
        ([], ["/kube-.*/"], "kube-public", False),
        (["/team-.*/"], ["team-secret"], "team-secret", False),  # in both: exclude wins
        (["/team-.*/"], ["team-secret"], "team-open", True),
        (["team-*"], [], "team-a", False),  # not a regex without slashes: an exact (and impossible) name
    ],
)
def test_namespaces(include: list[str], exclude: list[str], namespace: str, expected: bool) -> None:
    selector = {"namespaces": {"include": include, "exclude": exclude}}
    assert matches(selector, PodFacts(namespace)) is expected


@pytest.mark.parametrize(
    ("wanted", "annotations", "expected"),
    [
        ({}, {}, True),
        ({"team": "payments"}, {"team": "payments"}, True),
        ({"team": "payments"}, {"team": "payments-eu"}, False),
        ({"team": "payments"}, {}, False),  # the key must be present
        ({"team": "payments"}, {"Team": "payments"}, False),
        ({"team": ""}, {"team": ""}, True),
        ({"team": ""}, {"team": "x"}, False),
        ({"team": "/pay.*/"}, {"team": "payments"}, True),
        ({"team": "/pay/"}, {"team": "payments"}, False),  # anchored
        ({"team": "/.*/"}, {}, False),  # even a match-all value needs the key
        ({"team": "/.*/"}, {"team": ""}, True),
        ({"team": "payments", "tier": "/web|api/"}, {"team": "payments", "tier": "api"}, True),
        ({"team": "payments", "tier": "/web|api/"}, {"team": "payments", "tier": "db"}, False),
    ],
)
def test_annotations(wanted: dict[str, str], annotations: dict[str, str], expected: bool) -> None:
    assert matches({"annotations": wanted}, PodFacts("shop", annotations=annotations)) is expected


def _expression(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, **({"values": list(values)} if values else {})}


@pytest.mark.parametrize(
    ("label_selector", "labels", "expected"),
    [
        ({}, {}, True),  # an empty label selector selects everything
        ({"matchLabels": {"app": "web"}}, {"app": "web", "tier": "x"}, True),
        ({"matchLabels": {"app": "web"}}, {"app": "api"}, False),
        ({"matchLabels": {"app": "web"}}, {}, False),
        ({"matchLabels": {"app": "web", "tier": "front"}}, {"app": "web"}, False),
        ({"matchExpressions": [_expression("env", "In", "prod", "stage")]}, {"env": "stage"}, True),
        ({"matchExpressions": [_expression("env", "In", "prod")]}, {"env": "dev"}, False),
        ({"matchExpressions": [_expression("env", "In", "prod")]}, {}, False),
        ({"matchExpressions": [_expression("env", "NotIn", "prod")]}, {"env": "dev"}, True),
        ({"matchExpressions": [_expression("env", "NotIn", "prod")]}, {"env": "prod"}, False),
        ({"matchExpressions": [_expression("env", "NotIn", "prod")]}, {}, True),  # absent is not in
        ({"matchExpressions": [_expression("canary", "Exists")]}, {"canary": ""}, True),
        ({"matchExpressions": [_expression("canary", "Exists")]}, {}, False),
        ({"matchExpressions": [_expression("legacy", "DoesNotExist")]}, {}, True),
        ({"matchExpressions": [_expression("legacy", "DoesNotExist")]}, {"legacy": "1"}, False),
        (
            {"matchLabels": {"app": "web"}, "matchExpressions": [_expression("env", "In", "prod")]},
            {"app": "web", "env": "dev"},
            False,  # matchLabels and matchExpressions are ANDed
        ),
        (
            {"matchLabels": {"app": "web"}, "matchExpressions": [_expression("env", "In", "prod")]},
            {"app": "web", "env": "prod"},
            True,
        ),
    ],
)
def test_label_selector(label_selector: dict[str, Any], labels: dict[str, str], expected: bool) -> None:
    assert matches({"labelSelector": label_selector}, PodFacts("shop", labels=labels)) is expected


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        ("kinds", False),
        ("namespaces", False),
        ("annotations", False),
        ("labelSelector", False),
        (None, True),
    ],
)
def test_every_part_must_pass(part: str | None, expected: bool) -> None:
    selector: dict[str, Any] = {
        "kinds": ["Deployment"],
        "namespaces": {"include": ["/team-.*/"]},
        "annotations": {"team": "payments"},
        "labelSelector": {"matchLabels": {"app": "web"}},
    }
    failing = {
        "kinds": ["StatefulSet"],
        "namespaces": {"include": ["other"]},
        "annotations": {"team": "search"},
        "labelSelector": {"matchLabels": {"app": "api"}},
    }
    if part is not None:
        selector[part] = failing[part]
    pod = PodFacts("team-a", {"app": "web"}, {"team": "payments"}, DEPLOYMENT_POD)
    assert matches(selector, pod) is expected


def test_empty_selector_matches_every_pod() -> None:
    compiled = compile_policy(crp("all"))
    assert compiled.matches(PodFacts("x"))
    assert compiled.matches(PodFacts("y", {"a": "b"}, {"c": "d"}, DEPLOYMENT_POD))


# Owner chains, as the webhook and the watcher build them from the cache.


def _object(kind: str, name: str, owner: tuple[str, str] | None, *, controller: bool = True) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name, "namespace": "shop", "uid": f"{kind}-{name}"}
    if owner is not None:
        owner_kind, owner_name = owner
        metadata["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": owner_kind,
                "name": owner_name,
                "uid": f"{owner_kind}-{owner_name}",
                "controller": controller,
            }
        ]
    return {"kind": kind, "metadata": metadata}


def _lookup(objects: list[dict[str, Any]]) -> Any:
    by_uid = {obj["metadata"]["uid"]: obj for obj in objects}
    seen: list[tuple[str, str]] = []

    def lookup(namespace: str, reference: Mapping[str, Any]) -> Mapping[str, Any] | None:
        seen.append((namespace, reference["kind"]))
        return by_uid.get(reference["uid"])

    lookup.seen = seen  # type: ignore[attr-defined]
    return lookup


POD = _object("Pod", "web-abc", ("ReplicaSet", "web-7f"))
REPLICASET = _object("ReplicaSet", "web-7f", ("Deployment", "web"))
DEPLOYMENT = _object("Deployment", "web", None)


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        ([REPLICASET, DEPLOYMENT], ("ReplicaSet", "Deployment")),
        ([REPLICASET], ("ReplicaSet", "Deployment")),  # the top kind comes from the reference
        ([], ("ReplicaSet",)),  # the ReplicaSet is not in the cache: the chain stops there
        ([_object("ReplicaSet", "web-7f", None)], ("ReplicaSet",)),  # an orphaned ReplicaSet
        ([_object("ReplicaSet", "web-7f", ("Deployment", "web"), controller=False)], ("ReplicaSet",)),
    ],
)
def test_owner_kinds_follow_controller_references(objects: list[dict[str, Any]], expected: tuple[str, ...]) -> None:
    assert owner_kinds(POD, _lookup(objects)) == expected


def test_owner_kinds_without_lookup_is_the_direct_controller() -> None:
    assert owner_kinds(POD) == ("ReplicaSet",)
    assert owner_kinds(DEPLOYMENT) == ()


def test_owner_kinds_pass_the_namespace_to_the_lookup() -> None:
    lookup = _lookup([REPLICASET, DEPLOYMENT])
    owner_kinds(POD, lookup, namespace="admitted-ns")
    assert lookup.seen == [("admitted-ns", "ReplicaSet"), ("admitted-ns", "Deployment")]


def test_owner_kinds_stop_at_a_reference_cycle() -> None:
    first = _object("Widget", "a", ("Gadget", "b"))
    second = _object("Gadget", "b", ("Widget", "a"))
    pod = _object("Pod", "p", ("Widget", "a"))
    assert owner_kinds(pod, _lookup([first, second])) == ("Widget", "Gadget")


def test_owner_kinds_stop_at_max_depth() -> None:
    chain = [_object("Level", str(level), ("Level", str(level + 1))) for level in range(20)]
    pod = _object("Pod", "p", ("Level", "0"))
    assert owner_kinds(pod, _lookup(chain), max_depth=3) == ("Level", "Level", "Level")


def test_non_controller_owner_references_are_ignored() -> None:
    pod = _object("Pod", "p", ("ConfigMap", "c"), controller=False)
    assert controller_reference(pod) is None
    assert owner_kinds(pod) == ()


def test_controller_reference_without_kind_is_an_error() -> None:
    pod = {"metadata": {"ownerReferences": [{"name": "x", "uid": "u", "controller": True}]}}
    with pytest.raises(ValueError, match="has no kind"):
        controller_reference(pod)


def test_pod_facts_from_pod() -> None:
    pod = {
        "metadata": {
            "namespace": "shop",
            "labels": {"app": "web"},
            "annotations": {"team": "payments"},
            "ownerReferences": POD["metadata"]["ownerReferences"],
        }
    }
    facts = PodFacts.from_pod(pod_projection(pod), lookup=_lookup([REPLICASET]))
    assert facts == PodFacts("shop", {"app": "web"}, {"team": "payments"}, ("ReplicaSet", "Deployment"))
    assert (facts.direct_owner_kind, facts.top_owner_kind) == ("ReplicaSet", "Deployment")


def test_pod_facts_from_admission_pod_takes_the_request_namespace() -> None:
    facts = PodFacts.from_pod(pod_projection({"metadata": {"generateName": "web-"}}), namespace="team-a")
    assert facts == PodFacts("team-a")
    assert (facts.direct_owner_kind, facts.top_owner_kind) == ("", "")


def test_pod_facts_are_read_only_copies() -> None:
    labels = {"app": "web"}
    facts = PodFacts("shop", labels=labels)
    labels["app"] = "api"
    assert facts.labels == {"app": "web"}
    with pytest.raises(TypeError):
        facts.labels["app"] = "x"  # type: ignore[index]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"namespace": None}, "pod namespace must be a str"),
        ({"namespace": "x", "labels": {"a": 1}}, "pod labels must map strings to strings"),
        ({"namespace": "x", "annotations": ["a"]}, "pod annotations must be a mapping"),
        ({"namespace": "x", "owner_kinds": "Deployment"}, "owner_kinds must be a tuple of kind names"),
    ],
)
def test_pod_facts_refuse_wrong_types(arguments: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError, match=message):
        PodFacts(**arguments)
