"""The kind models: identity constants and API paths, wire round trips, defaults, validation errors naming the
field, unknown-field preservation, and the policy's resolve-time defaults (as the Go operator's)."""

from __future__ import annotations

import copy
from typing import Any, get_args

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from ballast.api.balancer.v1alpha1 import Balancer
from ballast.api.ballast.v1 import (
    BallastConfig,
    BallastConfigSpec,
    ClusterResourcePolicy,
    MetricsSource,
    ResourcePolicy,
    ResourcePolicySpec,
    WorkloadProfile,
)
from ballast.api.customresource import CustomResource
from ballast.api.kupid.v1alpha1 import ClusterPodSchedulingPolicy, PodSchedulingPolicy
from ballast.api.meta import ObjectMeta
from ballast.api.scheme import KINDS

from .samples import JSON, POLICY_SPEC, SPECS, STATUSES, kind_id, sample


@pytest.mark.parametrize(
    ("kind", "api_version", "plural", "scope", "short_names"),
    [
        (BallastConfig, "ballast.tightlinesoftware.com/v1", "ballastconfigs", "Cluster", ()),
        (MetricsSource, "ballast.tightlinesoftware.com/v1", "metricssources", "Cluster", ()),
        (ClusterResourcePolicy, "ballast.tightlinesoftware.com/v1", "clusterresourcepolicies", "Cluster", ("crp",)),
        (ResourcePolicy, "ballast.tightlinesoftware.com/v1", "resourcepolicies", "Namespaced", ("rp",)),
        (WorkloadProfile, "ballast.tightlinesoftware.com/v1", "workloadprofiles", "Cluster", ("wp",)),
        (PodSchedulingPolicy, "kupid.gardener.cloud/v1alpha1", "podschedulingpolicies", "Namespaced", ()),
        (ClusterPodSchedulingPolicy, "kupid.gardener.cloud/v1alpha1", "clusterpodschedulingpolicies", "Cluster", ()),
        (Balancer, "balancer.x-k8s.io/v1alpha1", "balancers", "Namespaced", ()),
    ],
    ids=kind_id,
)
def test_kind_identity(
    kind: type[CustomResource], api_version: str, plural: str, scope: str, short_names: tuple[str, ...]
) -> None:
    assert api_version == kind.API_VERSION
    assert plural == kind.PLURAL
    assert scope == kind.SCOPE
    assert short_names == kind.SHORT_NAMES
    assert kind.KIND.lower() == kind.SINGULAR
    assert f"{kind.KIND}List" == kind.LIST_KIND


def test_every_kind_is_registered_once() -> None:
    assert len({kind.KIND for kind in KINDS}) == len(KINDS) == 9


@pytest.mark.parametrize(
    ("kind", "name", "namespace", "collection", "path"),
    [
        (
            WorkloadProfile,
            "billing--api--nopolicy",
            None,
            "/apis/ballast.tightlinesoftware.com/v1/workloadprofiles",
            "/apis/ballast.tightlinesoftware.com/v1/workloadprofiles/billing--api--nopolicy",
        ),
        (
            ResourcePolicy,
            "local",
            "team-a",
            "/apis/ballast.tightlinesoftware.com/v1/namespaces/team-a/resourcepolicies",
            "/apis/ballast.tightlinesoftware.com/v1/namespaces/team-a/resourcepolicies/local",
        ),
        (
            Balancer,
            "web",
            "prod",
            "/apis/balancer.x-k8s.io/v1alpha1/namespaces/prod/balancers",
            "/apis/balancer.x-k8s.io/v1alpha1/namespaces/prod/balancers/web",
        ),
    ],
)
def test_api_paths(kind: type[CustomResource], name: str, namespace: str | None, collection: str, path: str) -> None:
    assert kind.collection_path(namespace) == collection
    assert kind.object_path(name, namespace) == path
    assert kind.model_validate(sample(kind, name, namespace)).path == path


def test_namespaced_collection_without_namespace_lists_all_namespaces() -> None:
    assert ResourcePolicy.collection_path() == "/apis/ballast.tightlinesoftware.com/v1/resourcepolicies"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ResourcePolicy.object_path("local"), "ResourcePolicy 'local' is namespaced"),
        (lambda: WorkloadProfile.object_path("p", "team-a"), "WorkloadProfile is cluster-scoped"),
        (lambda: WorkloadProfile.collection_path("team-a"), "WorkloadProfile is cluster-scoped"),
        (lambda: Balancer.object_path("", "prod"), "a Balancer path needs a name"),
        (lambda: WorkloadProfile().path, "a WorkloadProfile path needs a name"),
    ],
)
def test_bad_api_paths_say_what_is_wrong(call: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_api_version_and_kind_are_filled_in(kind: type[CustomResource]) -> None:
    body = sample(kind)
    del body["apiVersion"], body["kind"]

    parsed = kind.model_validate(body)

    assert parsed.api_version == kind.API_VERSION
    assert parsed.kind == kind.KIND
    assert parsed.to_wire() == sample(kind)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"apiVersion": "ballast.tightlinesoftware.com/v2"}, "apiVersion must be 'ballast.tightlinesoftware.com/v1'"),
        ({"kind": "ResourcePolicy"}, "kind must be 'ClusterResourcePolicy' for a ClusterResourcePolicy"),
    ],
)
def test_wrong_api_version_or_kind_is_refused(changes: JSON, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ClusterResourcePolicy.model_validate({**sample(ClusterResourcePolicy), **changes})


@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_sample_round_trips_to_identical_wire_form(kind: type[CustomResource]) -> None:
    body = sample(kind)
    if kind in STATUSES:
        body["status"] = STATUSES[kind]

    parsed = kind.model_validate(body)

    assert parsed.to_wire() == body
    assert parsed.model_dump(by_alias=True, exclude_none=True) == body
    assert kind.model_validate(parsed.to_wire()) == parsed


def _declared(model: type[BaseModel], found: set[tuple[str, str]], seen: set[type[BaseModel]]) -> None:
    if model in seen or model is ObjectMeta:
        return
    seen.add(model)
    for name, field in model.model_fields.items():
        found.add((model.__qualname__, name))
        stack: list[Any] = [field.annotation]
        while stack:
            annotation = stack.pop()
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                _declared(annotation, found, seen)
            stack.extend(get_args(annotation))


def _used(value: Any, found: set[tuple[str, str]]) -> None:
    if isinstance(value, BaseModel):
        if isinstance(value, ObjectMeta):
            return
        found.update((type(value).__qualname__, name) for name in value.model_fields_set)
        for name in value.model_fields_set:
            _used(getattr(value, name), found)
    elif isinstance(value, list):
        for item in value:
            _used(item, found)
    elif isinstance(value, dict):
        for item in value.values():
            _used(item, found)


def test_samples_use_every_declared_field() -> None:
    # keeps the round-trip tests (here and against the API server) honest as models grow
    declared: set[tuple[str, str]] = set()
    used: set[tuple[str, str]] = set()
    seen: set[type[BaseModel]] = set()
    for kind in KINDS:
        _declared(kind, declared, seen)
        body = sample(kind)
        if kind in STATUSES:
            body["status"] = STATUSES[kind]
        _used(kind.model_validate(body), used)

    assert declared - used == set()


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
            {"type": "kubeletSummary"},
            {"type": "kubeletSummary", "config": {"pollInterval": "60s", "reservoirSize": 10000}},
        ),
        (
            MetricsSource,
            {"type": "kubeletSummary", "config": {"pollInterval": "15s"}},
            {"type": "kubeletSummary", "config": {"pollInterval": "15s", "reservoirSize": 10000}},
        ),
        (ClusterResourcePolicy, {}, {}),
        (
            ResourcePolicy,
            {"metrics": [{"resource": "cpu", "source": "m"}]},
            {"metrics": [{"resource": "cpu", "source": "m"}]},
        ),
        (PodSchedulingPolicy, {}, {}),
    ],
)
def test_defaults_are_the_crd_defaults(kind: type[CustomResource], spec: JSON, expected: JSON) -> None:
    assert kind.model_validate({**sample(kind), "spec": spec}).to_wire()["spec"] == expected


def test_policy_spec_may_be_omitted_and_profile_state_defaults_to_accruing() -> None:
    policy = ClusterResourcePolicy.model_validate({"metadata": {"name": "default"}})
    profile = WorkloadProfile.model_validate({"metadata": {"name": "p"}, "status": {}})

    assert policy.spec == ResourcePolicySpec()
    assert profile.status is not None
    assert profile.status.state == "Accruing"
    assert WorkloadProfile.model_validate({"metadata": {"name": "p"}}).status is None


REMOVE = object()


def _loc(path: str) -> tuple[str | int, ...]:
    return tuple(int(part) if part.isdigit() else part for part in path.split("."))


def _with(kind: type[CustomResource], path: str, value: Any) -> JSON:
    """The kind's sample (with its sample status) with the value at `path` replaced, or removed for REMOVE."""
    body = copy.deepcopy({**sample(kind), **({"status": STATUSES[kind]} if kind in STATUSES else {})})
    *parents, last = _loc(path)
    node: Any = body
    for part in parents:
        node = node[part]
    if value is REMOVE:
        del node[last]
    else:
        node[last] = value
    return body


INVALID = [
    (ClusterResourcePolicy, "spec.metrics.0.aggregation", "p42", "'p50', 'p75', 'p90', 'p95', 'p99', 'max' or 'avg'"),
    (ResourcePolicy, "spec.metrics.0.field", "both", "'request' or 'limit'"),
    (ClusterResourcePolicy, "spec.readiness.minDataPoints", 0, "greater than or equal to 1"),
    (ClusterResourcePolicy, "spec.priority", 2**31, "does not fit in int32"),
    (ClusterResourcePolicy, "spec.metrics.0.source", "", "at least 1 character"),
    (ClusterResourcePolicy, "spec.metrics.0.resource", REMOVE, "Field required"),
    (ClusterResourcePolicy, "spec.metrics", {"cpu": {}}, "valid list"),
    (BallastConfig, "spec.identityLabels", [], "at least 1 item"),
    (BallastConfig, "spec.suspended", "yes", "valid boolean"),
    (BallastConfig, "spec", REMOVE, "Field required"),
    (MetricsSource, "spec.config.reservoirSize", 0, "greater than or equal to 1"),
    (Balancer, "spec.targets", [], "at least 2 items"),
    (Balancer, "spec.policy.proportions.targetProportions", {"a": 1}, "at least 2 items"),
    (Balancer, "spec.targets.0.minReplicas", -1, "greater than or equal to 0"),
    (Balancer, "status.conditions.0.reason", "not ok!", "should match pattern"),
    (PodSchedulingPolicy, "spec.tolerations.0.tolerationSeconds", "5m", "valid integer"),
    (WorkloadProfile, "status.policyRef.kind", "Policy", "'ClusterResourcePolicy' or 'ResourcePolicy'"),
    (WorkloadProfile, "status.state", "Done", "'Accruing' or 'Sufficient'"),
]


@pytest.mark.parametrize(
    ("kind", "path", "value", "message"), INVALID, ids=[f"{kind_id(c[0])}-{c[1]}" for c in INVALID]
)
def test_validation_error_names_the_wire_field(kind: type[CustomResource], path: str, value: Any, message: str) -> None:
    with pytest.raises(ValidationError) as invalid:
        kind.model_validate(_with(kind, path, value))

    errors = invalid.value.errors()
    assert errors[0]["loc"] == _loc(path)
    assert message in errors[0]["msg"]


@pytest.mark.parametrize("kind", KINDS, ids=kind_id)
def test_unknown_fields_survive_a_read_modify_write(kind: type[CustomResource]) -> None:
    body = sample(kind)
    body["metadata"]["managedFields"] = [{"manager": "kubectl", "operation": "Update"}]
    body["futureTopLevel"] = {"x": 1}
    if "spec" in body:
        body["spec"] = {**body["spec"], "futureSpecField": ["a"]}

    parsed = kind.model_validate(body)
    parsed.metadata.labels = {"edited": "yes"}
    written = parsed.to_wire()

    assert written["metadata"]["managedFields"] == body["metadata"]["managedFields"]
    assert written["futureTopLevel"] == {"x": 1}
    assert written.get("spec", {}).get("futureSpecField") == body.get("spec", {}).get("futureSpecField")
    assert written["metadata"]["labels"] == {"edited": "yes"}


def test_unknown_fields_survive_inside_lists_and_maps() -> None:
    spec = copy.deepcopy(POLICY_SPEC)
    spec["metrics"][0]["window"] = "5m"
    spec["behaviors"]["thresholds"]["resize"]["resourceThresholds"]["cpu"]["burst"] = "1"

    assert ResourcePolicySpec.model_validate(spec).to_wire() == spec


def test_cluster_and_namespaced_policies_share_one_spec_type() -> None:
    assert ClusterResourcePolicy.model_fields["spec"].annotation is ResourcePolicySpec
    assert ResourcePolicy.model_fields["spec"].annotation is ResourcePolicySpec
    assert SPECS[ClusterResourcePolicy] == SPECS[ResourcePolicy]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        (
            {},
            {
                "readiness": {
                    "minDataPoints": 500,
                    "minTimeSpan": "24h",
                    "maxCV": "1.5",
                    "cvMeanFloor": {"cpu": "25m", "memory": "25Mi", "ephemeral-storage": "2Mi"},
                },
                "behaviors": {
                    "thresholds": {"default": "10%"},
                    "resize": {"maxChangePerCycle": "50%", "interval": "15m"},
                    "oom": {"enabled": True, "bumpRatio": "1.2", "minBump": "100Mi", "window": "24h", "maxKills": 3},
                },
            },
        ),
        (
            {
                "priority": 3,
                "metrics": [{"resource": "cpu", "source": "m", "aggregation": "p95"}],
                "readiness": {"minDataPoints": 5, "minTimeSpan": "1m", "maxCV": "2.0", "cvMeanFloor": {}},
                "behaviors": {
                    "thresholds": {"default": "5%", "resize": {"resourceThresholds": {"cpu": {"request": "1%"}}}},
                    "resize": {"maxChangePerCycle": "25%", "interval": "30s"},
                },
            },
            {
                "priority": 3,
                "metrics": [{"resource": "cpu", "source": "m", "aggregation": "p95"}],
                "readiness": {"minDataPoints": 5, "minTimeSpan": "1m", "maxCV": "2.0", "cvMeanFloor": {}},
                "behaviors": {
                    "thresholds": {"default": "5%", "resize": {"resourceThresholds": {"cpu": {"request": "1%"}}}},
                    "resize": {"maxChangePerCycle": "25%", "interval": "30s"},
                    "oom": {"enabled": True, "bumpRatio": "1.2", "minBump": "100Mi", "window": "24h", "maxKills": 3},
                },
            },
        ),
        (
            {"readiness": {"minTimeSpan": ""}, "behaviors": {"thresholds": {"default": "", "resize": {}}}},
            {
                "readiness": {
                    "minDataPoints": 500,
                    "minTimeSpan": "24h",
                    "maxCV": "1.5",
                    "cvMeanFloor": {"cpu": "25m", "memory": "25Mi", "ephemeral-storage": "2Mi"},
                },
                "behaviors": {
                    "thresholds": {"default": "10%", "resize": {}},
                    "resize": {"maxChangePerCycle": "50%", "interval": "15m"},
                    "oom": {"enabled": True, "bumpRatio": "1.2", "minBump": "100Mi", "window": "24h", "maxKills": 3},
                },
            },
        ),
    ],
    ids=["empty", "explicit-values-kept", "blanks-defaulted"],
)
def test_with_defaults_fills_what_the_resolver_defaults(spec: JSON, expected: JSON) -> None:
    original = ResourcePolicySpec.model_validate(spec)

    defaulted = original.with_defaults()

    assert defaulted.to_wire() == expected
    assert original.to_wire() == spec  # the spec itself is not changed


def test_with_defaults_treats_a_non_positive_min_data_points_as_unset() -> None:
    spec = ResourcePolicySpec.model_validate({"readiness": {"minDataPoints": 1}})
    assert spec.readiness is not None
    spec.readiness.min_data_points = 0  # assignment is not validated; the resolver must still cope

    defaulted = spec.with_defaults()

    assert defaulted.readiness is not None
    assert defaulted.readiness.min_data_points == 500


def test_with_defaults_leaves_headroom_and_resize_threshold_default_empty() -> None:
    defaulted = ResourcePolicySpec.model_validate(POLICY_SPEC | {"behaviors": {}}).with_defaults()

    assert defaulted.metrics is not None
    assert [m.headroom for m in defaulted.metrics] == ["1.25", None, "1.2", None]
    assert defaulted.behaviors is not None
    assert defaulted.behaviors.thresholds is not None
    assert defaulted.behaviors.thresholds.resize is None


names = st.text("abcdefghijklmnopqrstuvwxyz-", min_size=1, max_size=12)
name_lists = st.lists(names, max_size=3)
quantities = st.sampled_from(["25m", "1", "192Mi", "2Gi", "0"])
metric = st.fixed_dictionaries(
    {"resource": st.sampled_from(["cpu", "memory", "ephemeral-storage"]), "source": names},
    optional={
        "field": st.sampled_from(["request", "limit"]),
        "aggregation": st.sampled_from(["p50", "p75", "p90", "p95", "p99", "max", "avg"]),
        "headroom": st.sampled_from(["1.0", "1.2", ""]),
    },
)
policy_specs = st.fixed_dictionaries(
    {},
    optional={
        "priority": st.integers(-(2**31), 2**31 - 1),
        "selector": st.fixed_dictionaries(
            {},
            optional={
                "kinds": st.lists(st.sampled_from(["Deployment", "ReplicaSet", "StatefulSet"])),
                "namespaces": st.fixed_dictionaries({}, optional={"include": name_lists, "exclude": name_lists}),
                "annotations": st.dictionaries(names, names, max_size=3),
                "labelSelector": st.fixed_dictionaries({}, optional={"matchLabels": st.dictionaries(names, names)}),
            },
        ),
        "metrics": st.lists(metric, max_size=4),
        "readiness": st.fixed_dictionaries(
            {},
            optional={
                "minDataPoints": st.integers(1, 2**63 - 1),
                "minTimeSpan": st.sampled_from(["24h", "1m", ""]),
                "maxCV": st.sampled_from(["1.5", "2.0"]),
                "cvMeanFloor": st.dictionaries(st.sampled_from(["cpu", "memory"]), quantities),
            },
        ),
    },
)  # fmt: skip


@given(policy_specs)
def test_any_valid_policy_spec_round_trips(spec: JSON) -> None:
    parsed = ResourcePolicySpec.model_validate(spec)

    assert parsed.to_wire() == spec
    assert ClusterResourcePolicy(spec=parsed).to_wire()["spec"] == spec


@given(policy_specs)
def test_with_defaults_is_idempotent_and_keeps_what_was_set(spec: JSON) -> None:
    defaulted = ResourcePolicySpec.model_validate(spec).with_defaults()

    assert defaulted.with_defaults() == defaulted
    assert defaulted.readiness is not None
    assert defaulted.readiness.min_data_points == spec.get("readiness", {}).get("minDataPoints", 500)
    assert defaulted.to_wire().get("metrics") == spec.get("metrics")


def test_spec_models_build_from_python_names() -> None:
    spec = BallastConfigSpec(identity_labels=["app"], orphan_ttl="1h")

    assert BallastConfig(metadata=ObjectMeta(name="ballast"), spec=spec).to_wire() == {
        "apiVersion": "ballast.tightlinesoftware.com/v1",
        "kind": "BallastConfig",
        "metadata": {"name": "ballast"},
        "spec": {"identityLabels": ["app"], "orphanTTL": "1h", "retentionWindow": "168h", "suspended": False},
    }
