"""The generated CRDs: the committed YAML is what the models generate, and each CRD carries exactly the names,
columns, subresources, enums, minimums, defaults and markers of the anchors (and docs/design.md, differences 14, 18,
25).
Writing and checking the files is `hack/gen-manifests`'s (test_generate.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from ballast.api.balancer.v1alpha1 import Balancer
from ballast.api.ballast.v1 import BallastConfig, ClusterResourcePolicy, MetricsSource, ResourcePolicy, WorkloadProfile
from ballast.api.ballast.v1.policyspec import DECIMAL_PATTERN, PERCENT_PATTERN, QUANTITY_PATTERN
from ballast.api.customresource import CustomResource
from ballast.api.formats import DURATION_PATTERN, QUALIFIED_NAME_PATTERN, UNSIGNED_DURATION_PATTERN
from ballast.api.kupid.v1alpha1 import ClusterPodSchedulingPolicy, PodSchedulingPolicy
from ballast.api.schema import check_structural
from ballast.api.scheme import KINDS
from ballast.internal.manifests import ballast_crds as crds
from ballast.internal.manifests.ballast_crds import all_crds, crd_filename, crd_for, rendered_files
from tests.paths import REPOSITORY
from tests.unit.api.samples import kind_id

Schema = dict[str, Any]


def test_committed_crds_are_what_the_models_generate() -> None:
    stale = [
        path.relative_to(REPOSITORY)
        for path, text in crds.rendered(REPOSITORY).items()
        if not path.is_file() or path.read_text(encoding="utf-8") != text
    ]

    assert stale == [], f"out of date: {stale}: run hack/gen-manifests and commit the result"


def test_rendering_is_deterministic_and_round_trips_through_yaml() -> None:
    first, second = rendered_files(), rendered_files()

    assert first == second
    for kind in KINDS:
        text = first[crd_filename(kind)]
        assert "&id" not in text  # no YAML anchors
        assert yaml.safe_load(text) == crd_for(kind)


def test_one_file_per_crd_named_like_kubebuilder() -> None:
    assert sorted(rendered_files()) == [
        "balancer.x-k8s.io_balancers.yaml",
        "ballast.tightlinesoftware.com_ballastconfigs.yaml",
        "ballast.tightlinesoftware.com_clusterresourcepolicies.yaml",
        "ballast.tightlinesoftware.com_consolidationreports.yaml",
        "ballast.tightlinesoftware.com_metricssources.yaml",
        "ballast.tightlinesoftware.com_resourcepolicies.yaml",
        "ballast.tightlinesoftware.com_workloadprofiles.yaml",
        "kupid.gardener.cloud_clusterpodschedulingpolicies.yaml",
        "kupid.gardener.cloud_podschedulingpolicies.yaml",
    ]


def _version(kind: type[CustomResource]) -> Schema:
    versions: list[Schema] = crd_for(kind)["spec"]["versions"]
    assert len(versions) == 1
    return versions[0]


def _schema(kind: type[CustomResource]) -> Schema:
    schema: Schema = _version(kind)["schema"]["openAPIV3Schema"]
    return schema


def at(schema: Schema, path: str) -> Schema:
    """The node at a dotted path; `[]` steps into array items, `*` into map values."""
    node = schema
    for part in path.split("."):
        if part == "[]":
            node = node["items"]
        elif part == "*":
            node = node["additionalProperties"]
        else:
            node = node["properties"][part]
    return node


def collect(node: Schema, key: str, path: str = "") -> dict[str, Any]:
    """Every occurrence of `key` in the schema, by dotted path."""
    found: dict[str, Any] = {}
    if key in node:
        found[path] = node[key]
    for name, child in node.get("properties", {}).items():
        found |= collect(child, key, f"{path}.{name}".lstrip("."))
    if isinstance(node.get("items"), dict):
        found |= collect(node["items"], key, f"{path}.[]".lstrip("."))
    if isinstance(node.get("additionalProperties"), dict):
        found |= collect(node["additionalProperties"], key, f"{path}.*".lstrip("."))
    return found


@pytest.mark.parametrize(
    ("kind", "name", "scope", "short_names", "subresources"),
    [
        (BallastConfig, "ballastconfigs.ballast.tightlinesoftware.com", "Cluster", None, {"status": {}}),
        (MetricsSource, "metricssources.ballast.tightlinesoftware.com", "Cluster", None, {"status": {}}),
        (ClusterResourcePolicy, "clusterresourcepolicies.ballast.tightlinesoftware.com", "Cluster", ["crp"],
         {"status": {}}),
        (ResourcePolicy, "resourcepolicies.ballast.tightlinesoftware.com", "Namespaced", ["rp"], {"status": {}}),
        (WorkloadProfile, "workloadprofiles.ballast.tightlinesoftware.com", "Cluster", ["wp"], {"status": {}}),
        (PodSchedulingPolicy, "podschedulingpolicies.kupid.gardener.cloud", "Namespaced", None, None),
        (ClusterPodSchedulingPolicy, "clusterpodschedulingpolicies.kupid.gardener.cloud", "Cluster", None, None),
        (
            Balancer,
            "balancers.balancer.x-k8s.io",
            "Namespaced",
            None,
            {
                "status": {},
                "scale": {
                    "specReplicasPath": ".spec.replicas",
                    "statusReplicasPath": ".status.replicas",
                    "labelSelectorPath": ".status.selector",
                },
            },
        ),
    ],
    ids=kind_id,
)  # fmt: skip
def test_names_scope_and_subresources(
    kind: type[CustomResource], name: str, scope: str, short_names: list[str] | None, subresources: Schema | None
) -> None:
    crd = crd_for(kind)

    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert crd["metadata"] == {"name": name}
    assert crd["spec"]["scope"] == scope
    assert crd["spec"]["names"].get("shortNames") == short_names
    assert crd["spec"]["names"]["listKind"] == f"{kind.KIND}List"
    assert _version(kind).get("subresources") == subresources
    assert _version(kind)["served"] is True
    assert _version(kind)["storage"] is True


AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
POLICY_COLUMNS = [
    {"name": "Priority", "type": "integer", "jsonPath": ".spec.priority"},
    {"name": "Discriminator", "type": "string", "jsonPath": ".status.profileDiscriminator"},
    AGE,
]


@pytest.mark.parametrize(
    ("kind", "columns"),
    [
        (BallastConfig, [{"name": "Suspended", "type": "boolean", "jsonPath": ".spec.suspended"}, AGE]),
        (
            MetricsSource,
            [
                {"name": "Type", "type": "string", "jsonPath": ".spec.type"},
                {"name": "PollInterval", "type": "string", "jsonPath": ".spec.config.pollInterval"},
                AGE,
            ],
        ),
        (ClusterResourcePolicy, POLICY_COLUMNS),
        (ResourcePolicy, POLICY_COLUMNS),
        (
            WorkloadProfile,
            [
                {"name": "ActiveWorkloads", "type": "integer", "jsonPath": ".status.activeWorkloads"},
                {"name": "Policy", "type": "string", "jsonPath": ".status.policyRef.name"},
                {"name": "State", "type": "string", "jsonPath": ".status.state"},
                {"name": "Orphaned", "type": "string", "jsonPath": ".status.conditions[?(@.type=='Orphaned')].status"},
                AGE,
            ],
        ),
        (PodSchedulingPolicy, None),
        (ClusterPodSchedulingPolicy, None),
        (
            Balancer,
            [
                {"name": "Replicas", "type": "integer", "jsonPath": ".status.replicas"},
                {"name": "Policy", "type": "string", "jsonPath": ".spec.policy.policyName"},
                {
                    "name": "Balancing",
                    "type": "string",
                    "jsonPath": '.status.conditions[?(@.type=="Balancing")].status',
                },
                AGE,
            ],
        ),
    ],
    ids=kind_id,
)
def test_printer_columns(kind: type[CustomResource], columns: list[Schema] | None) -> None:
    assert _version(kind).get("additionalPrinterColumns") == columns


@pytest.mark.parametrize(
    ("kind", "defaults"),
    [
        (
            BallastConfig,
            {"spec.orphanTTL": "168h", "spec.retentionWindow": "168h", "spec.suspended": False},
        ),
        (MetricsSource, {"spec.config.pollInterval": "60s", "spec.config.reservoirSize": 10000}),
        (WorkloadProfile, {"status.state": "Accruing"}),
        (ClusterResourcePolicy, {}),
        (ResourcePolicy, {}),
        (PodSchedulingPolicy, {}),
        (ClusterPodSchedulingPolicy, {}),
        (Balancer, {}),
    ],
    ids=kind_id,
)
def test_schema_defaults_are_exactly_the_anchors(kind: type[CustomResource], defaults: Schema) -> None:
    # policies carry no schema defaults: they are applied at resolve time (as the Go operator does)
    assert collect(_schema(kind), "default") == defaults


@pytest.mark.parametrize(
    ("kind", "path", "values"),
    [
        (ClusterResourcePolicy, "spec.metrics.[].aggregation", ["p50", "p75", "p90", "p95", "p99", "max", "avg"]),
        (ResourcePolicy, "spec.metrics.[].aggregation", ["p50", "p75", "p90", "p95", "p99", "max", "avg"]),
        (ClusterResourcePolicy, "spec.metrics.[].field", ["request", "limit"]),
        (ResourcePolicy, "spec.metrics.[].field", ["request", "limit"]),
        (WorkloadProfile, "status.state", ["Accruing", "Sufficient"]),
        (WorkloadProfile, "status.policyRef.kind", ["ClusterResourcePolicy", "ResourcePolicy"]),
        (WorkloadProfile, "status.conditions.[].status", ["True", "False", "Unknown"]),
        (MetricsSource, "spec.type", ["kubernetesMetrics", "kubeletSummary"]),
    ],
)
def test_enums(kind: type[CustomResource], path: str, values: list[str]) -> None:
    assert at(_schema(kind), path)["enum"] == values


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        (
            ClusterResourcePolicy,
            {
                "spec.readiness.minDataPoints": 1,
                "spec.behaviors.oom.maxKills": 1,
                "status.conditions.[].observedGeneration": 0,
            },
        ),
        (MetricsSource, {"spec.config.reservoirSize": 1, "status.conditions.[].observedGeneration": 0}),
        (
            Balancer,
            {
                "spec.targets.[].minReplicas": 0,
                "spec.targets.[].maxReplicas": 0,
                "spec.replicas": 0,
                "spec.policy.fallback.startupTimeoutSeconds": 0,
                "spec.policy.proportions.targetProportions.*": 0,
                "status.conditions.[].observedGeneration": 0,
            },
        ),
        (BallastConfig, {"status.conditions.[].observedGeneration": 0}),
    ],
    ids=kind_id,
)
def test_minimums(kind: type[CustomResource], expected: Schema) -> None:
    assert collect(_schema(kind), "minimum") == expected


@pytest.mark.parametrize(
    ("kind", "key", "expected"),
    [
        (BallastConfig, "minItems", {"spec.identityLabels": 1}),
        (BallastConfig, "maxItems", {"spec.identityLabels": 32}),
        (BallastConfig, "maxLength", {
            "spec.identityLabels.[]": 317, "spec.orphanTTL": 64, "spec.retentionWindow": 64,
            "status.conditions.[].type": 316, "status.conditions.[].reason": 1024,
            "status.conditions.[].message": 32768,
        }),
        (MetricsSource, "minLength", {"spec.type": 1, "status.conditions.[].reason": 1}),
        (ClusterResourcePolicy, "minLength",
         {"spec.metrics.[].resource": 1, "spec.metrics.[].source": 1, "status.conditions.[].reason": 1}),
        (Balancer, "minItems", {"spec.targets": 2, "spec.policy.priorities.targetOrder": 2}),
        (Balancer, "minProperties", {"spec.policy.proportions.targetProportions": 2}),
        (Balancer, "minLength", {"spec.targets.[].name": 1, "status.conditions.[].reason": 1}),
    ],
)  # fmt: skip
def test_length_limits(kind: type[CustomResource], key: str, expected: Schema) -> None:
    assert collect(_schema(kind), key) == expected


POLICY_DECIMALS = {
    "spec.metrics.[].headroom": DECIMAL_PATTERN,
    "spec.readiness.maxCV": DECIMAL_PATTERN,
    "spec.readiness.cvMeanFloor.*": QUANTITY_PATTERN,
    "spec.behaviors.thresholds.default": PERCENT_PATTERN,
    "spec.behaviors.thresholds.resize.default": PERCENT_PATTERN,
    "spec.behaviors.thresholds.resize.resourceThresholds.*.request": PERCENT_PATTERN,
    "spec.behaviors.thresholds.resize.resourceThresholds.*.limit": PERCENT_PATTERN,
    "spec.behaviors.resize.maxChangePerCycle": PERCENT_PATTERN,
    "spec.behaviors.oom.bumpRatio": DECIMAL_PATTERN,
    "spec.behaviors.oom.minBump": QUANTITY_PATTERN,
    "spec.behaviors.oom.maxLimit": QUANTITY_PATTERN,
}


@pytest.mark.parametrize("kind", [ClusterResourcePolicy, ResourcePolicy], ids=kind_id)
def test_every_policy_decimal_carries_its_pattern(kind: type[CustomResource]) -> None:
    patterns = {path: pattern for path, pattern in collect(_schema(kind), "pattern").items() if path.startswith("spec")}
    assert patterns == POLICY_DECIMALS  # docs/design.md, difference 25


@pytest.mark.parametrize(
    ("pattern", "accepted", "refused"),
    [
        (DECIMAL_PATTERN, ["", "0", "1.25", "100", "999.999999", "0.000001"],
         ["1e-400", "1e400", "1e26", "1000", "1.0000001", "-1", "+1", " 1.2", "1.", ".5", "1,5", "NaN", "1.2\n"]),
        (PERCENT_PATTERN, ["", "10%", "10", "12.5%", "100.000000%"], ["%", "10%%", "1e1%", "10 %", "1000%", "-5%"]),
        (QUANTITY_PATTERN, ["0", "25m", "25Mi", "1e6", "1.5", ".5", "1E-3", "99999999999999999999"],
         ["", "-1Mi", "+1", "1e100", "25 m", "25MI", "lots", "Ki"]),
    ],
)  # fmt: skip
def test_the_patterns_accept_the_syntax_and_bound_the_magnitude(
    pattern: str, accepted: list[str], refused: list[str]
) -> None:
    compiled = re.compile(pattern)  # RE2 too (no look-around); fullmatch: RE2 has no `$` before a final newline
    assert [value for value in accepted if not compiled.fullmatch(value)] == []
    assert [value for value in refused if compiled.fullmatch(value)] == []


@pytest.mark.parametrize(
    ("kind", "path", "required"),
    [
        (BallastConfig, "", ["spec"]),
        (BallastConfig, "spec", ["identityLabels"]),
        (MetricsSource, "spec", ["type"]),
        (ClusterResourcePolicy, "spec.metrics.[]", ["resource", "source"]),
        (WorkloadProfile, "status.policyRef", ["kind", "name"]),
        (WorkloadProfile, "status.containers.[]", ["name"]),
        (Balancer, "", ["spec"]),
        (Balancer, "spec", ["targets", "replicas", "selector", "policy"]),
        (Balancer, "spec.targets.[]", ["name", "scaleTargetRef"]),
        (Balancer, "spec.targets.[].scaleTargetRef", ["kind", "name"]),
        (Balancer, "spec.policy", ["policyName"]),
        (Balancer, "spec.policy.fallback", ["startupTimeoutSeconds"]),
        (ClusterResourcePolicy, "status.conditions.[]", ["type", "status", "lastTransitionTime", "reason", "message"]),
    ],
)
def test_required_fields(kind: type[CustomResource], path: str, required: list[str]) -> None:
    node = at(_schema(kind), path) if path else _schema(kind)
    assert node["required"] == required


@pytest.mark.parametrize(
    ("kind", "paths"),
    [
        (ClusterResourcePolicy, ["spec.selector.labelSelector"]),
        (ResourcePolicy, ["spec.selector.labelSelector"]),
        (Balancer, ["spec.selector"]),
        (PodSchedulingPolicy, [
            "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution.[].preference",
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution",
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms.[]",
            "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution.[].podAffinityTerm.labelSelector",
            "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution.[].podAffinityTerm.namespaceSelector",
            "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution.[].labelSelector",
            "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution.[].namespaceSelector",
            "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.[].podAffinityTerm.labelSelector",
            "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution.[].podAffinityTerm.namespaceSelector",
            "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution.[].labelSelector",
            "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution.[].namespaceSelector",
            "spec.podSelector",
        ]),
    ],
    ids=kind_id,
)  # fmt: skip
def test_label_selectors_and_node_selectors_are_atomic_maps(kind: type[CustomResource], paths: list[str]) -> None:
    assert collect(_schema(kind), "x-kubernetes-map-type") == dict.fromkeys(paths, "atomic")


def test_cluster_pod_scheduling_policy_adds_only_an_atomic_namespace_selector() -> None:
    cluster = _schema(ClusterPodSchedulingPolicy)
    namespaced = _schema(PodSchedulingPolicy)

    assert set(at(cluster, "spec")["properties"]) - set(at(namespaced, "spec")["properties"]) == {"namespaceSelector"}
    assert at(cluster, "spec.namespaceSelector")["x-kubernetes-map-type"] == "atomic"
    assert "namespaceSelector" not in at(namespaced, "spec")["properties"]


@pytest.mark.parametrize("kind", [ClusterResourcePolicy, ResourcePolicy], ids=kind_id)
def test_policy_metrics_are_an_atomic_list(kind: type[CustomResource]) -> None:
    assert at(_schema(kind), "spec.metrics")["x-kubernetes-list-type"] == "atomic"


@pytest.mark.parametrize(
    "kind",
    [ClusterResourcePolicy, ResourcePolicy, WorkloadProfile, Balancer, BallastConfig, MetricsSource],
    ids=kind_id,
)
def test_status_conditions_are_a_list_map_keyed_by_type(kind: type[CustomResource]) -> None:
    conditions = at(_schema(kind), "status.conditions")

    assert conditions["x-kubernetes-list-type"] == "map"
    assert conditions["x-kubernetes-list-map-keys"] == ["type"]
    assert set(conditions["items"]["properties"]) == {
        "type", "status", "observedGeneration", "lastTransitionTime", "reason", "message",
    }  # fmt: skip
    assert conditions["items"]["properties"]["lastTransitionTime"] == {
        "type": "string",
        "format": "date-time",
        "description": "When the status last changed.",
    }


@pytest.mark.parametrize("kind", [ClusterResourcePolicy, ResourcePolicy], ids=kind_id)
def test_policies_publish_discriminator_and_valid_condition_in_status(kind: type[CustomResource]) -> None:
    status = at(_schema(kind), "status")

    assert set(status["properties"]) == {"profileDiscriminator", "conditions"}
    assert status["properties"]["profileDiscriminator"]["type"] == "string"


@pytest.mark.parametrize(
    ("kind", "path", "format_"),
    [
        (ClusterResourcePolicy, "spec.priority", "int32"),
        (ClusterResourcePolicy, "spec.readiness.minDataPoints", "int64"),
        (MetricsSource, "spec.config.reservoirSize", "int64"),
        (WorkloadProfile, "status.activeWorkloads", "int32"),
        (WorkloadProfile, "status.containers.[].usageStats.[].samples", "int64"),
        (WorkloadProfile, "status.containers.[].usageStats.[].lastUpdated", "date-time"),
        (Balancer, "spec.policy.proportions.targetProportions.*", "int32"),
        (PodSchedulingPolicy, "spec.tolerations.[].tolerationSeconds", "int64"),
    ],
)
def test_integer_and_time_formats(kind: type[CustomResource], path: str, format_: str) -> None:
    assert at(_schema(kind), path)["format"] == format_


@pytest.mark.parametrize("crd", all_crds(), ids=lambda c: c["metadata"]["name"])
def test_every_schema_is_structural_and_preserves_no_unknown_fields(crd: Schema) -> None:
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]

    check_structural(schema)
    assert collect(schema, "x-kubernetes-preserve-unknown-fields") == {}
    assert collect(schema, "nullable") == {}
    assert schema["properties"]["metadata"] == {"type": "object"}
    assert set(schema["properties"]) <= {"apiVersion", "kind", "metadata", "spec", "status"}
    assert schema["description"]


@pytest.mark.parametrize(
    ("kind", "path", "expected_type"),
    [
        (WorkloadProfile, "status.recommendations", None),
        (WorkloadProfile, "status.containers.[].recommendations.*.request", "string"),
        (ClusterResourcePolicy, "spec.readiness.cvMeanFloor.*", "string"),
        (ClusterResourcePolicy, "spec.metrics.[].headroom", "string"),
        (ClusterResourcePolicy, "spec.behaviors.thresholds.resize.resourceThresholds.*.limit", "string"),
    ],
)
def test_wire_names_of_nested_fields(kind: type[CustomResource], path: str, expected_type: str | None) -> None:
    if expected_type is None:
        with pytest.raises(KeyError):
            at(_schema(kind), path)
    else:
        assert at(_schema(kind), path)["type"] == expected_type


@pytest.mark.parametrize(("kind", "conditions"), [(BallastConfig, "Valid"), (MetricsSource, "Valid")], ids=kind_id)
def test_configuration_kinds_publish_only_their_valid_condition_in_status(
    kind: type[CustomResource], conditions: str
) -> None:
    assert set(at(_schema(kind), "status")["properties"]) == {"conditions"}
    assert conditions in at(_schema(kind), "status.conditions")["description"]


def test_configuration_fields_are_checked_by_pattern_and_cel_on_the_server() -> None:
    # docs/design.md, difference 26: what the API server refuses before any webhook is called
    poll = at(_schema(MetricsSource), "spec.config.pollInterval")
    assert poll["pattern"] == UNSIGNED_DURATION_PATTERN
    assert poll["x-kubernetes-validations"] == [{
        "rule": f"!self.matches(r'{UNSIGNED_DURATION_PATTERN}') || self.matches('[1-9]')",
        "message": 'must be a Go duration longer than 0, such as "60s"',
    }]  # fmt: skip
    config = _schema(BallastConfig)
    for path in ("spec.orphanTTL", "spec.retentionWindow"):
        assert at(config, path)["pattern"] == DURATION_PATTERN
        assert "x-kubernetes-validations" not in at(config, path)
    assert at(config, "spec.identityLabels.[]")["pattern"] == QUALIFIED_NAME_PATTERN
    (unique,) = at(config, "spec.identityLabels")["x-kubernetes-validations"]
    assert unique["rule"] == "self.all(k, self.exists_one(x, x == k))"
    assert "x-kubernetes-list-type" not in at(config, "spec.identityLabels")  # atomic: the order is the identity
