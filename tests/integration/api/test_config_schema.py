"""The CRD schemas of MetricsSource and BallastConfig on the real kube-apiserver refuse what the operator could not
use — `pollInterval: banana`, `-5s`, `0s`, `type: bogus`, identity label keys that are not label keys, repeated
keys, `orphanTTL`/`retentionWindow: banana` — naming the field, before any webhook is called; and the domain's
validator names the same field (docs/design.md, difference 26). The values the tests and presets use pass."""

from __future__ import annotations

import copy
import uuid
from collections.abc import Iterator
from typing import Any, NamedTuple

import pytest

from ballast.internal.enrollment.config import validate_ballast_config
from ballast.internal.metricsources import validate_metrics_source
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.errors import APIError
from tests.paths import CRD_DIR

GROUP_PATH = "/apis/ballast.tightlinesoftware.com/v1"
API_VERSION = "ballast.tightlinesoftware.com/v1"
SOURCE = {"type": "kubernetesMetrics", "config": {"pollInterval": "5s", "reservoirSize": 100}}
CONFIG = {"identityLabels": ["app.kubernetes.io/name", "app.kubernetes.io/component"], "orphanTTL": "2s",
          "retentionWindow": "336h"}  # fmt: skip


class Objects:
    """Creates MetricsSources and BallastConfigs with unique names and deletes them afterwards."""

    def __init__(self, envtest: Environment) -> None:
        self.rest = envtest.rest
        self.created: list[str] = []

    def create(self, kind: str, spec: dict[str, Any]) -> dict[str, Any]:
        plural = kind.lower() + "s"
        name = f"v-{uuid.uuid4().hex[:8]}"
        body = {"apiVersion": API_VERSION, "kind": kind, "metadata": {"name": name}, "spec": spec}
        answer: dict[str, Any] = self.rest.create(f"{GROUP_PATH}/{plural}", body)
        self.created.append(f"{GROUP_PATH}/{plural}/{name}")
        return answer

    def cleanup(self) -> None:
        for path in self.created:
            try:
                self.rest.delete(path)
            except APIError as exc:
                if exc.status != 404:
                    raise


@pytest.fixture
def objects(envtest: Environment) -> Iterator[Objects]:
    envtest.install_crds([CRD_DIR])
    made = Objects(envtest)
    yield made
    made.cleanup()


class Refused(NamedTuple):
    name: str
    kind: str
    path: tuple[str | int, ...]
    value: Any
    field: str
    phrase: str


REFUSED = [
    Refused("poll-banana", "MetricsSource", ("config", "pollInterval"), "banana", "spec.config.pollInterval",
            "should match"),
    Refused("poll-negative", "MetricsSource", ("config", "pollInterval"), "-5s", "spec.config.pollInterval",
            "should match"),
    Refused("poll-zero", "MetricsSource", ("config", "pollInterval"), "0s", "spec.config.pollInterval",
            'must be a Go duration longer than 0, such as "60s"'),
    Refused("type-bogus", "MetricsSource", ("type",), "bogus", "spec.type", 'Unsupported value: "bogus"'),
    Refused("identity-not-a-label", "BallastConfig", ("identityLabels", 1), "not a label!!",
            "spec.identityLabels[1]", "should match"),
    Refused("identity-prefix-case", "BallastConfig", ("identityLabels", 0), "Example.com/app",
            "spec.identityLabels[0]", "should match"),
    Refused("identity-repeated", "BallastConfig", ("identityLabels",), ["app", "tier", "app"], "spec.identityLabels",
            'label key "app" appears more than once'),
    Refused("orphan-ttl-banana", "BallastConfig", ("orphanTTL",), "banana", "spec.orphanTTL", "should match"),
    Refused("retention-banana", "BallastConfig", ("retentionWindow",), "banana", "spec.retentionWindow",
            "should match"),
]  # fmt: skip


def _with(spec: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(spec)
    node: Any = changed
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return changed


@pytest.mark.parametrize("refused", REFUSED, ids=[r.name for r in REFUSED])
def test_the_server_refuses_what_the_operator_could_not_use_naming_the_field(
    objects: Objects, refused: Refused
) -> None:
    spec = _with(SOURCE if refused.kind == "MetricsSource" else CONFIG, refused.path, refused.value)

    with pytest.raises(APIError) as error:
        objects.create(refused.kind, spec)

    assert (error.value.status, error.value.reason) == (422, "Invalid")
    assert f"{refused.field}: Invalid value" in error.value.message or f"{refused.field}: Unsupported value" in (
        error.value.message
    )
    assert refused.phrase in error.value.message
    validate = validate_metrics_source if refused.kind == "MetricsSource" else validate_ballast_config
    (problem,) = validate(spec)  # the domain names the same field (the repeated entry's position, for a list)
    assert problem.startswith(refused.field)


@pytest.mark.parametrize(
    ("kind", "spec"),
    [
        ("MetricsSource", SOURCE),
        ("MetricsSource", {"type": "kubeletSummary", "config": {"pollInterval": "1m30s"}}),
        ("MetricsSource", {"type": "kubeletSummary"}),
        ("BallastConfig", CONFIG),
        (
            "BallastConfig",
            {"identityLabels": ["app", "example.com/Tier_1"], "orphanTTL": "0", "retentionWindow": "-1h"},
        ),
    ],
    ids=["source", "kubelet-source", "source-defaults", "config", "config-edge-values"],
)
def test_what_the_operator_can_use_is_accepted(objects: Objects, kind: str, spec: dict[str, Any]) -> None:
    answer = objects.create(kind, spec)

    validate = validate_metrics_source if kind == "MetricsSource" else validate_ballast_config
    assert validate(answer["spec"]) == []
    assert "status" not in answer  # the status subresource: written by the operator only


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("999999999h", 'spec.config.pollInterval: invalid duration "999999999h": out of range (at most 2562047h)'),
        (
            "1ns",
            'spec.config.pollInterval: invalid duration "1ns": must be at least 1s (the collector polls a source '
            "at most once a second)",
        ),
    ],
    ids=["beyond-range", "below-a-second"],
)
def test_a_poll_interval_the_schema_cannot_judge_is_left_to_the_webhook_with_a_message_naming_it(
    objects: Objects, value: str, problem: str
) -> None:
    # The CEL rule reads the text (CEL's duration() fails beyond its range, shown as `Invalid value: "string"`);
    # the range and the 1 s floor are the validating webhook's and the Valid condition's (docs/design.md,
    # difference 70).
    spec = _with(SOURCE, ("config", "pollInterval"), value)
    objects.create("MetricsSource", spec)
    assert validate_metrics_source(spec) == [problem]
