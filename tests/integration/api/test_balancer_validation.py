"""The Balancer's CRD on the real API server, without a webhook: upstream's examples (`nginx-priority`,
`nginx-proportional`, and the HPA scaling a Balancer) apply unchanged with kubectl; what upstream's controller
would trip over is refused when written, naming the field — a repeated target name, a single target,
`minReplicas` above `maxReplicas`, `minReplicas` adding up past int32, a negative proportion, a `targetOrder`
entry that is no target, a `policyName` without its block; a proportion naming no target is accepted (upstream
ignores it), and so are `replicas` beyond every maximum (an overflow, docs/design.md, difference 38); the
largest Balancer the bounds allow fits the CEL cost budget; `status.targets` round-trips through the status
subresource, merged by name."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest
import yaml

from ballast.api.balancer.v1alpha1 import MAX_TARGETS, TARGET_NAME_MAX_LENGTH, Balancer
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.errors import EnvtestError
from tests.paths import CRD_DIR
from tests.unit.api.balancer_samples import EXAMPLES, balancer, documents
from tests.unit.api.samples import STATUSES

JSON = dict[str, Any]


@pytest.fixture(scope="module")
def crds(envtest: Environment) -> list[str]:
    """Every committed CRD installed (and served) in the session's API server."""
    return envtest.install_crds([CRD_DIR])


def _apply(envtest: Environment, namespace: str, body: JSON | str) -> str:
    text = body if isinstance(body, str) else yaml.safe_dump(body)
    return envtest.kubectl("apply", "-n", namespace, "-f", "-", input_text=text)


def _refusal(envtest: Environment, namespace: str, body: JSON) -> str:
    with pytest.raises(EnvtestError) as refused:
        _apply(envtest, namespace, body)
    return str(refused.value)


@pytest.mark.parametrize("example", sorted(EXAMPLES))
def test_the_upstream_examples_apply_unchanged(
    envtest: Environment, crds: list[str], envtest_namespace: str, example: str
) -> None:
    out = _apply(envtest, envtest_namespace, EXAMPLES[example])

    assert "balancer.balancer.x-k8s.io/nginx created" in out
    stored = envtest.rest.get(Balancer.object_path("nginx", envtest_namespace))
    assert stored["spec"] == balancer(example)["spec"]
    kinds = {document["kind"] for document in documents(example)}
    if "HorizontalPodAutoscaler" in kinds:
        hpa = envtest.rest.get(f"/apis/autoscaling/v2/namespaces/{envtest_namespace}/horizontalpodautoscalers/nginx")
        assert hpa["spec"]["scaleTargetRef"] == {"apiVersion": "balancer.x-k8s.io/v1alpha1", "kind": "Balancer",
                                                 "name": "nginx"}  # fmt: skip


def _priority() -> JSON:
    return copy.deepcopy(balancer("nginx-priority"))


def _proportional() -> JSON:
    return copy.deepcopy(balancer("nginx-proportional"))


def _changed(base: Callable[[], JSON], change: Callable[[JSON], object]) -> Callable[[], JSON]:
    def build() -> JSON:
        body = base()
        change(body["spec"])
        return body

    return build


class Refusal(NamedTuple):
    """A Balancer the CRD refuses, and the error the API server gives (field path first)."""

    id: str
    body: Callable[[], JSON]
    error: str


def _duplicate(spec: JSON) -> None:
    spec["targets"][1]["name"] = "nginx-1"


def _one_target(spec: JSON) -> None:
    del spec["targets"][1]


def _min_above_max(spec: JSON) -> None:
    spec["targets"][0]["minReplicas"] = 8


def _unknown_order(spec: JSON) -> None:
    spec["policy"]["priorities"]["targetOrder"] = ["nginx-1", "nginx-3"]


def _no_priorities(spec: JSON) -> None:
    del spec["policy"]["priorities"]


def _no_proportions(spec: JSON) -> None:
    del spec["policy"]["proportions"]


def _minimums_past_int32(spec: JSON) -> None:  # docs/design.md, difference 59: the example of the difference
    spec["replicas"] = 0
    spec["targets"][0]["minReplicas"] = 2147483647
    spec["targets"][1]["minReplicas"] = 1
    for target in spec["targets"]:
        target.pop("maxReplicas", None)


def _negative_proportion(spec: JSON) -> None:
    spec["policy"]["proportions"]["targetProportions"]["nginx-2"] = -1


def _long_name(spec: JSON) -> None:
    spec["targets"][0]["name"] = "n" * (TARGET_NAME_MAX_LENGTH + 1)
    spec["policy"]["proportions"]["targetProportions"] = {spec["targets"][0]["name"]: 1, "nginx-2": 1}


REFUSALS = [
    Refusal("duplicate-target-name", _changed(_proportional, _duplicate),
            'spec.targets[1]: Duplicate value: {"name":"nginx-1"}'),
    Refusal("one-target", _changed(_proportional, _one_target),
            "spec.targets: Invalid value: 1: spec.targets in body should have at least 2 items"),
    Refusal("min-above-max", _changed(_priority, _min_above_max),
            'spec.targets[0]: Invalid value: minReplicas must not be greater than maxReplicas'),
    Refusal("unknown-target-order-entry", _changed(_priority, _unknown_order),
            'spec.policy.priorities.targetOrder: Invalid value: "nginx-3" is not the name of a target'),
    Refusal("priority-without-priorities", _changed(_priority, _no_priorities),
            'spec.policy.priorities: Required value: needed when policyName is "priority"'),
    Refusal("proportional-without-proportions", _changed(_proportional, _no_proportions),
            'spec.policy.proportions: Required value: needed when policyName is "proportional"'),
    Refusal("minimums-past-int32", _changed(_priority, _minimums_past_int32),
            "spec.targets: Invalid value: the targets' minReplicas must not add up to more than 2147483647"),
    Refusal("negative-proportion", _changed(_proportional, _negative_proportion),
            "spec.policy.proportions.targetProportions.nginx-2: Invalid value: -1: "
            "spec.policy.proportions.targetProportions.nginx-2 in body should be greater than or equal to 0"),
    Refusal("name-too-long", _changed(_proportional, _long_name),
            "spec.targets[0].name: Too long: may not be more than 63 bytes"),
]  # fmt: skip


@pytest.mark.parametrize("case", REFUSALS, ids=[case.id for case in REFUSALS])
def test_kubectl_is_refused_naming_the_field(
    envtest: Environment, crds: list[str], envtest_namespace: str, case: Refusal
) -> None:
    error = _refusal(envtest, envtest_namespace, case.body())

    assert 'The Balancer "nginx" is invalid: ' in error
    assert case.error in error


def _unknown_proportion(spec: JSON) -> None:
    spec["policy"]["proportions"]["targetProportions"]["nginx-3"] = 10


def _min_equals_max(spec: JSON) -> None:
    spec["targets"][0]["minReplicas"] = spec["targets"][0]["maxReplicas"]


def _both_blocks(spec: JSON) -> None:
    spec["policy"]["priorities"] = {"targetOrder": ["nginx-2", "nginx-1"]}


def _beyond_every_maximum(spec: JSON) -> None:  # difference 38: the overflow is a result, not a refusal
    spec["replicas"] = 2147483647


def _minimums_up_to_int32(spec: JSON) -> None:
    _minimums_past_int32(spec)
    spec["targets"][1]["minReplicas"] = 0


ACCEPTED = {
    "replicas-beyond-every-maximum": _changed(_priority, _beyond_every_maximum),
    "minimums-adding-up-to-int32": _changed(_priority, _minimums_up_to_int32),
    "unknown-proportion-name": _changed(_proportional, _unknown_proportion),
    "min-equals-max": _changed(_priority, _min_equals_max),
    "both-policy-blocks": _changed(_proportional, _both_blocks),
}


@pytest.mark.parametrize("case", sorted(ACCEPTED))
def test_what_upstream_handles_is_accepted(
    envtest: Environment, crds: list[str], envtest_namespace: str, case: str
) -> None:
    body = ACCEPTED[case]()

    _apply(envtest, envtest_namespace, body)

    assert envtest.rest.get(Balancer.object_path("nginx", envtest_namespace))["spec"] == body["spec"]


def test_the_largest_balancer_fits_the_cel_cost_budget(
    envtest: Environment, crds: list[str], envtest_namespace: str
) -> None:
    body = _priority()
    names = [f"{index:03d}".rjust(TARGET_NAME_MAX_LENGTH, "t") for index in range(MAX_TARGETS)]
    template = body["spec"]["targets"][1]
    body["spec"]["targets"] = [{**copy.deepcopy(template), "name": name} for name in names]
    body["spec"]["policy"]["priorities"]["targetOrder"] = list(reversed(names))
    body["spec"]["policy"]["proportions"] = {"targetProportions": dict.fromkeys(names, 1)}

    _apply(envtest, envtest_namespace, body)
    too_many = copy.deepcopy(body)
    too_many["metadata"]["name"] = "too-many"
    too_many["spec"]["targets"].append({**copy.deepcopy(template), "name": "one-more"})
    error = _refusal(envtest, envtest_namespace, too_many)

    stored = envtest.rest.get(Balancer.object_path("nginx", envtest_namespace))
    assert len(stored["spec"]["targets"]) == MAX_TARGETS
    assert "spec.targets: Too many: 101: must have at most 100 items" in error


def test_status_targets_round_trip_through_the_status_subresource(
    envtest: Environment, crds: list[str], envtest_namespace: str
) -> None:
    _apply(envtest, envtest_namespace, _priority())
    path = Balancer.object_path("nginx", envtest_namespace)
    targets = [
        {"name": "nginx-1", "desired": 4, "placed": 4, "running": 3, "notStarted": 1},
        {"name": "nginx-2", "desired": 1, "placed": 1, "running": 1, "notStarted": 0},
    ]
    status = {**STATUSES[Balancer], "targets": targets}

    answer = envtest.rest.patch_status(path, {"status": status})
    envtest.rest.request(
        "PATCH",
        path + "/status",
        {
            "apiVersion": Balancer.API_VERSION,
            "kind": "Balancer",
            "metadata": {"name": "nginx"},
            "status": {"targets": [{"name": "nginx-2", "running": 2}]},
        },
        content_type="application/apply-patch+yaml",
        params={"fieldManager": "balancer-tests", "force": "true"},
    )
    merged = Balancer.model_validate(envtest.rest.get(path))

    assert answer["status"] == status
    assert Balancer.model_validate(answer).to_wire() == answer
    assert merged.status is not None
    assert merged.status.targets is not None
    assert [t.to_wire() for t in merged.status.targets] == [targets[0], {**targets[1], "running": 2}]
    lines = envtest.kubectl("get", "balancers", "nginx", "-n", envtest_namespace).splitlines()
    assert " ".join(lines[0].split()) == "NAME REPLICAS POLICY BALANCING AGE"
    assert " ".join(lines[1].split()).startswith("nginx 5 priority True")
