"""Which targets another controller also scales: an HPA naming the object, another Balancer's target, a second
target of the same Balancer; objects compared by group, kind and name, not the version."""

from __future__ import annotations

import copy
from typing import Any

from ballast.api.balancer.v1alpha1 import Balancer
from ballast.internal.balancer.conflicts import conflicts, hpa_target, targets_of
from tests.unit.api.balancer_samples import balancer


def typed(document: dict[str, Any], name: str = "nginx") -> Balancer:
    return Balancer.model_validate({**document, "metadata": {"name": name, "namespace": "shop"}})


def hpa(api_version: str, kind: str, name: str) -> dict[str, Any]:
    return {"spec": {"scaleTargetRef": {"apiVersion": api_version, "kind": kind, "name": name}}}


def test_owners_are_named_per_target_in_order() -> None:
    ours = typed(balancer("nginx-priority"))
    other = typed(balancer("nginx-priority"), "other")
    found = conflicts(ours, [("a", hpa("apps/v2", "Deployment", "nginx-1")), ("b", hpa("v1", "Deployment", "x"))],
                      [other])  # fmt: skip
    assert found == {
        "nginx-1": "HorizontalPodAutoscaler a, Balancer other (target nginx-1)",
        "nginx-2": "Balancer other (target nginx-2)",
    }
    assert conflicts(ours, [], []) == {}


def test_a_target_twice_in_one_balancer_and_an_invalid_reference() -> None:
    document = copy.deepcopy(balancer("nginx-priority"))
    document["spec"]["targets"][1]["scaleTargetRef"]["name"] = "nginx-1"
    assert conflicts(typed(document), [], []) == {
        "nginx-1": "target nginx-2 of this Balancer", "nginx-2": "target nginx-1 of this Balancer",
    }  # fmt: skip
    document["spec"]["targets"][0]["scaleTargetRef"]["apiVersion"] = "apps/"
    assert conflicts(typed(document), [], []) == {"nginx-2": "target nginx-1 of this Balancer"}


def test_keys_of_targets_and_hpas() -> None:
    assert targets_of(typed(balancer("nginx-priority"))) == [("apps", "Deployment", "nginx-1"),
                                                             ("apps", "Deployment", "nginx-2")]  # fmt: skip
    assert hpa_target(hpa("balancer.x-k8s.io/v1alpha1", "Balancer", "nginx")) == ("balancer.x-k8s.io", "Balancer",
                                                                                    "nginx")  # fmt: skip
    assert hpa_target({"spec": {}}) is None
