"""The generated CRDs on the real kube-apiserver: every kind round-trips through the server and back into its
model, the server applies the CRD defaults the models have, and refuses what the schemas forbid."""

from __future__ import annotations

import copy
import datetime
import uuid
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import pytest
from pydantic import ValidationError

from ballast.api.balancer.v1alpha1 import Balancer
from ballast.api.ballast.v1 import (
    BallastConfig,
    ClusterResourcePolicy,
    MetricsSource,
    ResourcePolicy,
    WorkloadProfile,
    WorkloadProfileStatus,
)
from ballast.api.customresource import CustomResource
from ballast.api.kupid.v1alpha1 import ClusterPodSchedulingPolicy, PodSchedulingPolicy
from ballast.api.scheme import KINDS
from ballast.internal.manifests.ballast_crds import crd_name
from ballast.runtime import FakeClock
from ballast.runtime.conditions import set_status_condition
from ballast.runtime.envtest import Environment
from ballast.runtime.envtest.errors import APIError
from tests.paths import CRD_DIR
from tests.unit.api.samples import CONDITION, JSON, STATUSES, kind_id, sample


@pytest.fixture(scope="module")
def crds(envtest: Environment) -> list[str]:
    """Every committed CRD installed (and served) in the session's API server."""
    return envtest.install_crds([CRD_DIR])


@pytest.fixture
def server(envtest: Environment, crds: list[str], envtest_namespace: str) -> Iterator[Server]:
    created = Server(envtest, envtest_namespace)
    yield created
    created.cleanup()


class Server:
    """Creates objects of our kinds with unique names and deletes the cluster-scoped ones afterwards."""

    def __init__(self, envtest: Environment, namespace: str) -> None:
        self.rest = envtest.rest
        self.namespace = namespace
        self._cluster_objects: list[str] = []

    def body(self, kind: type[CustomResource]) -> JSON:
        return sample(kind, name=f"s-{uuid.uuid4().hex[:8]}", namespace=self.namespace)

    def create(self, kind: type[CustomResource], body: JSON) -> JSON:
        namespace = body["metadata"].get("namespace")
        answer = self.rest.create(kind.collection_path(namespace), body)
        if kind.SCOPE == "Cluster":
            self._cluster_objects.append(kind.object_path(body["metadata"]["name"]))
        return answer

    def cleanup(self) -> None:
        for path in self._cluster_objects:
            try:
                self.rest.delete(path)
            except APIError as exc:
                if exc.status != 404:  # already gone is fine; anything else is a real failure
                    raise


def test_every_kind_is_served_with_its_names_and_subresources(envtest: Environment, crds: list[str]) -> None:
    assert sorted(crds) == sorted(crd_name(kind) for kind in KINDS)
    for kind in KINDS:
        resources = {r["name"]: r for r in envtest.rest.get(f"/apis/{kind.GROUP}/{kind.VERSION}")["resources"]}
        resource = resources[kind.PLURAL]
        assert resource["kind"] == kind.KIND
        assert resource["namespaced"] == (kind.SCOPE == "Namespaced")
        assert resource.get("shortNames", []) == list(kind.SHORT_NAMES)
        assert (f"{kind.PLURAL}/status" in resources) == kind.STATUS_SUBRESOURCE
        assert (f"{kind.PLURAL}/scale" in resources) == (kind.SCALE_SUBRESOURCE is not None)


@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_object_round_trips_through_the_server(server: Server, kind: type[CustomResource]) -> None:
    sent = kind.model_validate(server.body(kind))

    answer = server.create(kind, sent.to_wire())

    received = kind.model_validate(answer)
    assert received.to_wire() == answer  # server-set metadata (uid, managedFields, ...) survives the model
    assert received.model_dump(exclude={"metadata"}) == sent.model_dump(exclude={"metadata"})
    assert received.metadata.labels == sent.metadata.labels
    assert received.metadata.uid
    assert received.metadata.creation_timestamp is not None
    fetched = kind.model_validate(server.rest.get(received.path))
    assert fetched == received


@pytest.mark.parametrize("kind", list(STATUSES), ids=kind_id)
def test_status_round_trips_through_the_status_subresource(server: Server, kind: type[CustomResource]) -> None:
    created = kind.model_validate(server.create(kind, server.body(kind)))
    expected = kind.model_validate({**created.to_wire(), "status": STATUSES[kind]})

    answer = server.rest.patch_status(created.path, {"status": expected.to_wire()["status"]})

    received = kind.model_validate(answer)
    assert received.to_wire() == answer
    assert answer["status"] == STATUSES[kind]
    assert received.model_dump(exclude={"metadata"}) == expected.model_dump(exclude={"metadata"})


@pytest.mark.parametrize(
    ("kind", "spec", "expected"),
    [
        (
            BallastConfig,
            {"identityLabels": ["app"]},
            {"identityLabels": ["app"], "orphanTTL": "168h", "retentionWindow": "168h", "suspended": False},
        ),
        (
            MetricsSource,
            {"type": "kubeletSummary", "config": {}},
            {"type": "kubeletSummary", "config": {"pollInterval": "60s", "reservoirSize": 10000}},
        ),
        (ClusterResourcePolicy, {"metrics": [{"resource": "cpu", "source": "m"}]}, None),
    ],
    ids=["ballastconfig", "metricssource", "policy-has-no-defaults"],
)
def test_server_defaults_match_model_defaults(
    server: Server, kind: type[CustomResource], spec: JSON, expected: JSON | None
) -> None:
    body = {**server.body(kind), "spec": spec}

    answer = server.create(kind, body)

    assert answer["spec"] == (expected if expected is not None else spec)
    assert kind.model_validate(answer) == kind.model_validate({**answer, "spec": spec})


def test_profile_state_defaults_to_accruing_on_the_server(server: Server) -> None:
    created = WorkloadProfile.model_validate(server.create(WorkloadProfile, server.body(WorkloadProfile)))

    answer = server.rest.patch_status(created.path, {"status": {"activeWorkloads": 2}})

    assert answer["status"] == {"activeWorkloads": 2, "state": "Accruing"}
    profile = WorkloadProfile.model_validate(answer)
    assert profile.status is not None
    assert profile.status.state == "Accruing"


def _parent(body: JSON, path: str) -> tuple[Any, str]:
    *parents, last = path.split(".")
    node: Any = body
    for part in parents:
        node = node[int(part)] if part.isdigit() else node[part]
    return node, last


def _set(path: str, value: Any) -> Callable[[JSON], None]:
    """A change to a wire body: set the value at a dotted path (list indexes as numbers)."""

    def change(body: JSON) -> None:
        node, last = _parent(body, path)
        node[int(last) if last.isdigit() else last] = value

    return change


def _delete(path: str) -> Callable[[JSON], None]:
    """A change to a wire body: remove the field at a dotted path."""

    def change(body: JSON) -> None:
        node, last = _parent(body, path)
        del node[last]

    return change


@pytest.mark.parametrize(
    ("kind", "spec"),
    [
        (PodSchedulingPolicy, {"podSelector": {}}),
        (PodSchedulingPolicy, {"nodeName": "node-a"}),
        (ClusterPodSchedulingPolicy, {"podSelector": {}, "namespaceSelector": {}}),
        (ClusterPodSchedulingPolicy, {"podSelector": {"matchLabels": {"a": "b"}}}),
    ],
    ids=["psp-match-all", "psp-no-selector", "cpsp-match-all", "cpsp-inert"],
)
def test_empty_selector_and_absent_selector_stay_distinct(
    server: Server, kind: type[CustomResource], spec: JSON
) -> None:
    # kupid: an absent selector matches nothing, an empty one everything; the server and the model keep both.
    answer = server.create(kind, {**server.body(kind), "spec": spec})

    assert answer["spec"] == spec
    assert kind.model_validate(answer).to_wire()["spec"] == spec


class Rejection(NamedTuple):
    """A change that breaks the schema, the field the API server names, and a phrase of its message."""

    name: str
    kind: type[CustomResource]
    change: Callable[[JSON], None]
    field: str
    message: str


AFFINITY_TERM = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution.0.topologyKey"
REJECTED_SPECS = [
    Rejection("aggregation-enum", ClusterResourcePolicy, _set("spec.metrics.0.aggregation", "p42"),
              "spec.metrics[0].aggregation", 'Unsupported value: "p42"'),
    Rejection("field-enum", ResourcePolicy, _set("spec.metrics.1.field", "both"),
              "spec.metrics[1].field", 'Unsupported value: "both"'),
    Rejection("min-data-points-minimum", ClusterResourcePolicy, _set("spec.readiness.minDataPoints", 0),
              "spec.readiness.minDataPoints", "greater than or equal to 1"),
    Rejection("metric-source-required", ClusterResourcePolicy, _delete("spec.metrics.0.source"),
              "spec.metrics[0].source", "Required value"),
    Rejection("metric-resource-min-length", ClusterResourcePolicy, _set("spec.metrics.0.resource", ""),
              "spec.metrics[0].resource", "at least 1 chars long"),
    Rejection("priority-type", ClusterResourcePolicy, _set("spec.priority", "high"),
              "spec.priority", "must be of type integer"),
    Rejection("identity-labels-min-items", BallastConfig, _set("spec.identityLabels", []),
              "spec.identityLabels", "at least 1 items"),
    Rejection("ballastconfig-spec-required", BallastConfig, _delete("spec"), "spec", "Required value"),
    Rejection("reservoir-size-minimum", MetricsSource, _set("spec.config.reservoirSize", 0),
              "spec.config.reservoirSize", "greater than or equal to 1"),
    Rejection("source-type-min-length", MetricsSource, _set("spec.type", ""), "spec.type", "at least 1 chars long"),
    Rejection("targets-min-items", Balancer, _set("spec.targets", []), "spec.targets", "at least 2 items"),
    Rejection("replicas-minimum", Balancer, _set("spec.replicas", -1), "spec.replicas", "greater than or equal to 0"),
    Rejection("selector-required", Balancer, _delete("spec.selector"), "spec.selector", "Required value"),
    Rejection("proportions-min-properties", Balancer, _set("spec.policy.proportions.targetProportions", {"a": 1}),
              "spec.policy.proportions.targetProportions", "at least 2 properties"),
    Rejection("startup-timeout-minimum", Balancer, _set("spec.policy.fallback.startupTimeoutSeconds", -5),
              "spec.policy.fallback.startupTimeoutSeconds", "greater than or equal to 0"),
    Rejection("toleration-seconds-type", PodSchedulingPolicy, _set("spec.tolerations.1.tolerationSeconds", "5m"),
              "spec.tolerations[1].tolerationSeconds", "must be of type integer"),
    Rejection("topology-key-required", ClusterPodSchedulingPolicy, _delete(AFFINITY_TERM),
              "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
              "Required value"),
]  # fmt: skip
REJECTED_STATUSES = [
    Rejection("state-enum", WorkloadProfile, _set("status.state", "Done"), "status.state", 'Unsupported value: "Done"'),
    Rejection("duplicate-condition-type", ClusterResourcePolicy, _set("status.conditions", [CONDITION, CONDITION]),
              "status.conditions[1]", "Duplicate value"),
    Rejection("condition-status-enum", ResourcePolicy, _set("status.conditions", [{**CONDITION, "status": "Maybe"}]),
              "status.conditions[0].status", 'Unsupported value: "Maybe"'),
    Rejection("condition-reason-pattern", Balancer, _set("status.conditions", [{**CONDITION, "reason": "not ok!"}]),
              "status.conditions[0].reason", "should match"),
]  # fmt: skip


def _wire_path(loc: tuple[int | str, ...]) -> str:
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")


def _assert_same_field(refused: APIError, invalid: ValidationError, rejection: Rejection) -> None:
    assert refused.status == 422
    assert refused.reason == "Invalid"
    assert rejection.field in refused.message
    assert rejection.message in refused.message
    # the model names the field the server names (or the list holding it, for a duplicate key)
    assert rejection.field.startswith(_wire_path(invalid.errors()[0]["loc"]))


@pytest.mark.parametrize("rejection", REJECTED_SPECS, ids=[r.name for r in REJECTED_SPECS])
def test_server_and_model_refuse_a_schema_violation(server: Server, rejection: Rejection) -> None:
    body = copy.deepcopy(server.body(rejection.kind))
    rejection.change(body)

    with pytest.raises(APIError) as refused:
        server.create(rejection.kind, body)
    with pytest.raises(ValidationError) as invalid:
        rejection.kind.model_validate(body)

    _assert_same_field(refused.value, invalid.value, rejection)


@pytest.mark.parametrize("rejection", REJECTED_STATUSES, ids=[r.name for r in REJECTED_STATUSES])
def test_server_and_model_refuse_a_bad_status(server: Server, rejection: Rejection) -> None:
    created = rejection.kind.model_validate(server.create(rejection.kind, server.body(rejection.kind)))
    body: JSON = {"status": {}}
    rejection.change(body)

    with pytest.raises(APIError) as refused:
        server.rest.patch_status(created.path, body)
    with pytest.raises(ValidationError) as invalid:
        rejection.kind.model_validate({**created.to_wire(), **body})

    _assert_same_field(refused.value, invalid.value, rejection)


def test_a_condition_without_its_time_is_refused_by_the_server_and_filled_in_by_set_status_condition(
    server: Server,
) -> None:
    # The model lets lastTransitionTime be left out (as a Go metav1.Condition may be zero in memory) because
    # set_status_condition fills it; the CRD still requires it on the wire.
    created = WorkloadProfile.model_validate(server.create(WorkloadProfile, server.body(WorkloadProfile)))
    untimed = {key: value for key, value in CONDITION.items() if key != "lastTransitionTime"}

    with pytest.raises(APIError) as refused:
        server.rest.patch_status(created.path, {"status": {"conditions": [{**untimed, "lastTransitionTime": None}]}})
    status = WorkloadProfileStatus()
    set_status_condition(
        status.conditions, untimed, clock=FakeClock(datetime.datetime(2026, 12, 6, tzinfo=datetime.UTC))
    )
    server.rest.patch_status(created.path, {"status": status.to_wire()})

    assert "status.conditions[0].lastTransitionTime" in str(refused.value)
    assert "Required value" in str(refused.value)
    stored = server.rest.get(created.path)["status"]["conditions"]
    assert [(c["type"], c["lastTransitionTime"]) for c in stored] == [(CONDITION["type"], "2026-12-06T00:00:00Z")]


# Policy decimals outside the syntax and magnitude the CRD's patterns allow (docs/design.md, difference 25); the
# value ranges inside it are the webhook's (tests/integration/webhook/test_admission.py).
REFUSED_DECIMALS = [
    ("spec.metrics.0.headroom", "spec.metrics[0].headroom", "1e-400"),
    ("spec.metrics.2.headroom", "spec.metrics[2].headroom", "1e400"),
    ("spec.metrics.0.headroom", "spec.metrics[0].headroom", "1e26"),
    ("spec.metrics.0.headroom", "spec.metrics[0].headroom", "1.0000001"),
    ("spec.readiness.maxCV", "spec.readiness.maxCV", "1e3"),
    ("spec.readiness.cvMeanFloor.memory", "spec.readiness.cvMeanFloor.memory", "1e100"),
    ("spec.readiness.cvMeanFloor.cpu", "spec.readiness.cvMeanFloor.cpu", "-25m"),
    ("spec.behaviors.thresholds.default", "spec.behaviors.thresholds.default", "1e1%"),
    ("spec.behaviors.thresholds.resize.default", "spec.behaviors.thresholds.resize.default", "1000%"),
    ("spec.behaviors.thresholds.resize.resourceThresholds.cpu.limit",
     "spec.behaviors.thresholds.resize.resourceThresholds.cpu.limit", "-5%"),
    ("spec.behaviors.resize.maxChangePerCycle", "spec.behaviors.resize.maxChangePerCycle", "50 percent"),
]  # fmt: skip


@pytest.mark.parametrize(("path", "field", "value"), REFUSED_DECIMALS, ids=[f"{f}={v}" for _, f, v in REFUSED_DECIMALS])
@pytest.mark.parametrize("kind", [ClusterResourcePolicy, ResourcePolicy], ids=kind_id)
def test_the_schema_refuses_a_policy_decimal_outside_its_pattern(
    server: Server, kind: type[CustomResource], path: str, field: str, value: str
) -> None:
    body = copy.deepcopy(server.body(kind))
    _set(path, value)(body)

    with pytest.raises(APIError) as refused:
        server.create(kind, body)

    assert (refused.value.status, refused.value.reason) == (422, "Invalid")
    assert f'{field}: Invalid value: "{value}": {field} in body should match' in refused.value.message
    kind.model_validate(body)  # the model still reads it: a policy stored before the pattern is reported, not lost


def test_the_schema_accepts_the_bounds_of_every_policy_decimal(server: Server) -> None:
    body = copy.deepcopy(server.body(ClusterResourcePolicy))
    for path, value in [
        ("spec.metrics.0.headroom", "100"),
        ("spec.metrics.2.headroom", "0.000001"),
        ("spec.readiness.maxCV", "0"),
        ("spec.readiness.cvMeanFloor.memory", "1e6"),
        ("spec.behaviors.thresholds.default", "100%"),
        ("spec.behaviors.resize.maxChangePerCycle", "0.000001"),
    ]:
        _set(path, value)(body)

    created = server.create(ClusterResourcePolicy, body)

    assert created["spec"]["metrics"][0]["headroom"] == "100"
    assert created["spec"]["behaviors"]["resize"]["maxChangePerCycle"] == "0.000001"


def test_balancer_scale_subresource_reads_and_writes_replicas(server: Server) -> None:
    balancer = Balancer.model_validate(server.create(Balancer, server.body(Balancer)))
    server.rest.patch_status(balancer.path, {"status": {"replicas": 4, "selector": "app=web"}})

    scale = server.rest.get(balancer.path + "/scale")
    server.rest.request(
        "PATCH", balancer.path + "/scale", {"spec": {"replicas": 7}}, content_type="application/merge-patch+json"
    )
    updated = Balancer.model_validate(server.rest.get(balancer.path))

    assert scale["kind"] == "Scale"
    assert scale["spec"] == {"replicas": 5}
    assert scale["status"] == {"replicas": 4, "selector": "app=web"}
    assert updated.spec.replicas == 7


class Columns(NamedTuple):
    """What `kubectl get <resource> <name>` prints for a sample object (with `status` written first)."""

    resource: str
    kind: type[CustomResource]
    status: JSON | None
    header: str
    row: str


COLUMNS = [
    Columns(
        "wp",
        WorkloadProfile,
        STATUSES[WorkloadProfile],
        "ACTIVEWORKLOADS POLICY STATE ORPHANED AGE",
        "3 local Sufficient False",
    ),
    Columns(
        "crp", ClusterResourcePolicy, STATUSES[ClusterResourcePolicy], "PRIORITY DISCRIMINATOR AGE", "10 fleet-9aa5ac7c"
    ),
    Columns("rp", ResourcePolicy, STATUSES[ResourcePolicy], "PRIORITY DISCRIMINATOR AGE", "10 local-84fadaa0"),
    Columns("ballastconfigs", BallastConfig, None, "SUSPENDED AGE", "true"),
    Columns("metricssources", MetricsSource, None, "TYPE POLLINTERVAL AGE", "kubernetesMetrics 300s"),
    Columns("balancers", Balancer, STATUSES[Balancer], "REPLICAS POLICY BALANCING AGE", "5 proportional True"),
    Columns("podschedulingpolicies", PodSchedulingPolicy, None, "AGE", ""),
]


@pytest.mark.parametrize("case", COLUMNS, ids=[c.resource for c in COLUMNS])
def test_kubectl_shows_short_names_and_printer_columns(envtest: Environment, server: Server, case: Columns) -> None:
    created = case.kind.model_validate(server.create(case.kind, server.body(case.kind)))
    if case.status is not None:
        server.rest.patch_status(created.path, {"status": case.status})
    namespace = ["-n", server.namespace] if case.kind.SCOPE == "Namespaced" else []

    lines = envtest.kubectl("get", case.resource, created.metadata.name or "", *namespace).splitlines()

    assert " ".join(lines[0].split()) == f"NAME {case.header}"
    assert " ".join(lines[1].split()).startswith(f"{created.metadata.name} {case.row}".strip())
