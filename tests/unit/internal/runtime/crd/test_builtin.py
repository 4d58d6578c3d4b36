"""Built-in types in custom kinds: the CRD schema made from the API server's recorded OpenAPI v3, and models that
type what a controller reads and keep the rest."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from pydantic import ValidationError

from ballast.runtime.crd import (
    Condition,
    JobTemplateSpec,
    StructuralSchemaError,
    builtin,
    check_structural,
    crd_schema,
)

from .crontab import CronTab


def _at(schema: dict[str, Any], path: str) -> dict[str, Any]:
    node = schema
    for part in path.split("."):
        node = node["items"] if part == "[*]" else node["properties"][part]
    return node


def _keys(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node) | {key for value in node.values() for key in _keys(value)}
    if isinstance(node, list):
        return {key for value in node for key in _keys(value)}
    return set()


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return crd_schema(CronTab)


def test_the_cronjob_like_schema_is_structural(schema: dict[str, Any]) -> None:
    check_structural(schema)

    assert _at(schema, "spec")["required"] == ["schedule", "jobTemplate"]
    assert _at(schema, "spec.schedule")["type"] == "string"


def test_containers_are_a_list_map_keyed_by_name(schema: dict[str, Any]) -> None:
    containers = _at(schema, "spec.jobTemplate.spec.template.spec.containers")

    assert containers["type"] == "array"
    assert containers["x-kubernetes-list-type"] == "map"
    assert containers["x-kubernetes-list-map-keys"] == ["name"]
    assert containers["items"]["required"] == ["name"]
    assert "default" not in containers["items"]["properties"]["name"]  # else a missing name would be ""
    assert {"image", "env", "resources", "volumeMounts"} <= containers["items"]["properties"].keys()


def test_references_are_inlined_and_what_crds_refuse_is_gone(schema: dict[str, Any]) -> None:
    keys = _keys(schema)

    for refused in ("$ref", "allOf", "oneOf", "x-kubernetes-patch-strategy", "x-kubernetes-patch-merge-key", "enum"):
        assert refused not in keys
    assert '"format": "int-or-string"' not in json.dumps(schema)


def test_quantities_and_int_or_strings_become_int_or_string(schema: dict[str, Any]) -> None:
    pod = "spec.jobTemplate.spec.template.spec"
    limits = _at(schema, f"{pod}.containers.[*].resources.limits")["additionalProperties"]
    port = _at(schema, f"{pod}.containers.[*].livenessProbe.httpGet.port")

    for node in (limits, port):
        assert node["x-kubernetes-int-or-string"] is True
        assert node["anyOf"] == [{"type": "integer"}, {"type": "string"}]
        assert "type" not in node
        assert "format" not in node


def test_a_template_metadata_is_an_object_that_keeps_labels(schema: dict[str, Any]) -> None:
    for path in ("spec.jobTemplate.metadata", "spec.jobTemplate.spec.template.metadata"):
        metadata = _at(schema, path)

        assert metadata["type"] == "object"
        assert metadata["properties"]["labels"] == {"type": "object", "additionalProperties": {"type": "string"}}
        assert "managedFields" not in metadata["properties"]


def test_list_markers_and_real_defaults_are_kept_zero_defaults_dropped(schema: dict[str, Any]) -> None:
    pod = "spec.jobTemplate.spec.template.spec"

    assert _at(schema, f"{pod}.containers.[*].env")["x-kubernetes-list-map-keys"] == ["name"]
    assert _at(schema, f"{pod}.containers.[*].ports")["x-kubernetes-list-map-keys"] == ["containerPort", "protocol"]
    assert _at(schema, f"{pod}.containers.[*].ports.[*].protocol")["default"] == "TCP"
    assert _at(schema, f"{pod}.imagePullSecrets.[*].name")["default"] == ""  # a list-map key, not required
    assert "default" not in _at(schema, f"{pod}.containers.[*].resources")  # openapi-gen's `{}`
    assert _at(schema, f"{pod}.imagePullSecrets.[*]")["x-kubernetes-map-type"] == "atomic"


def test_status_active_is_a_list_of_object_references(schema: dict[str, Any]) -> None:
    item = _at(schema, "status.active.[*]")

    assert item["type"] == "object"
    assert {"apiVersion", "kind", "name", "namespace", "uid"} <= item["properties"].keys()
    assert item["x-kubernetes-map-type"] == "atomic"


def _definitions(**schemas: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f"x.{name}": schema for name, schema in schemas.items()}


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/x.{name}"}


def test_a_recursive_definition_is_refused() -> None:
    definitions = _definitions(
        Props={"type": "object", "properties": {"items": {"type": "array", "items": {"allOf": [_ref("Props")]}}}}
    )

    with pytest.raises(StructuralSchemaError, match=r"x\.Props refers to itself \(x\.Props -> x\.Props\)"):
        builtin.structural_schema("x.Props", definitions)


def test_a_definition_used_twice_side_by_side_is_not_recursion() -> None:
    definitions = _definitions(
        Pair={"type": "object", "properties": {"a": _ref("Leaf"), "b": {"allOf": [_ref("Leaf")], "description": "B"}}},
        Leaf={"type": "object", "description": "a leaf", "properties": {"v": {"type": "string", "default": ""}}},
    )

    converted = builtin.structural_schema("x.Pair", definitions)

    assert converted["properties"]["a"] == {
        "type": "object",
        "description": "a leaf",
        "properties": {"v": {"type": "string"}},
    }
    assert converted["properties"]["b"]["description"] == "B"


def test_additional_properties_beside_properties_is_dropped() -> None:
    definitions = _definitions(
        Both={"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "string"}}
    )

    assert builtin.structural_schema("x.Both", definitions) == {
        "type": "object",
        "properties": {"a": {"type": "string"}},
    }


def test_an_unrecorded_reference_names_the_script() -> None:
    with pytest.raises(StructuralSchemaError, match=r"x\.Missing is not a recorded definition"):
        builtin.structural_schema("x.Top", _definitions(Top={"type": "object", "properties": {"m": _ref("Missing")}}))


# A Job template as users write them: containers with resources, env (a value and a valueFrom), ports, probes,
# volume mounts; volumes of two sources; affinity; tolerations; labels — every field typed in the models.
FULL_TEMPLATE: dict[str, Any] = {
    "metadata": {"labels": {"app": "report"}, "annotations": {"team": "data"}},
    "spec": {
        "backoffLimit": 2,
        "ttlSecondsAfterFinished": 600,
        "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]},
        "template": {
            "metadata": {"labels": {"app": "report", "tier": "batch"}},
            "spec": {
                "restartPolicy": "OnFailure",
                "serviceAccountName": "reporter",
                "imagePullSecrets": [{"name": "registry"}],
                "containers": [
                    {
                        "name": "report",
                        "image": "registry.example.com/report:1.2",
                        "command": ["/bin/report"],
                        "args": ["--since", "24h"],
                        "env": [
                            {"name": "MODE", "value": "daily"},
                            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "report", "key": "token"}}},
                        ],
                        "ports": [{"name": "metrics", "containerPort": 9090, "protocol": "TCP"}],
                        "resources": {
                            "limits": {"cpu": "500m", "memory": "256Mi"},
                            "requests": {"cpu": 1, "memory": "128Mi", "ephemeral-storage": "1Gi"},
                        },
                        "volumeMounts": [
                            {"name": "config", "mountPath": "/etc/report", "readOnly": True},
                            {"name": "scratch", "mountPath": "/tmp"},
                        ],
                        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "metrics"}, "periodSeconds": 10},
                        "securityContext": {"runAsNonRoot": True, "capabilities": {"drop": ["ALL"]}},
                    }
                ],
                "volumes": [
                    {"name": "config", "configMap": {"name": "report-config", "defaultMode": 420}},
                    {"name": "scratch", "emptyDir": {"sizeLimit": "1Gi"}},
                ],
                "affinity": {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}
                            ]
                        }
                    },
                    "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 50,
                                "podAffinityTerm": {
                                    "labelSelector": {"matchLabels": {"app": "report"}},
                                    "topologyKey": "kubernetes.io/hostname",
                                },
                            }
                        ]
                    },
                },
                "tolerations": [{"key": "batch", "operator": "Exists", "effect": "NoSchedule"}],
            },
        },
    },
}


def test_a_full_job_template_round_trips_unchanged() -> None:
    wire = copy.deepcopy(FULL_TEMPLATE)

    template = JobTemplateSpec.model_validate(wire)

    assert template.to_wire() == FULL_TEMPLATE
    assert json.dumps(template.to_wire(), sort_keys=True) == json.dumps(FULL_TEMPLATE, sort_keys=True)


def test_what_a_controller_reads_is_typed() -> None:
    template = JobTemplateSpec.model_validate(FULL_TEMPLATE)

    assert template.spec is not None
    assert template.spec.backoff_limit == 2
    pod = template.spec.template.spec
    assert pod is not None
    (container,) = pod.containers
    assert container.name == "report"
    assert container.resources is not None
    assert container.resources.limits == {"cpu": "500m", "memory": "256Mi"}
    assert container.resources.requests is not None
    assert container.resources.requests["cpu"] == 1
    assert [mount.mount_path for mount in container.volume_mounts or ()] == ["/etc/report", "/tmp"]
    assert [(env.name, env.value) for env in container.env or ()] == [("MODE", "daily"), ("TOKEN", None)]
    assert pod.affinity is not None
    assert pod.affinity.pod_anti_affinity is not None
    preferred = pod.affinity.pod_anti_affinity.preferred_during_scheduling_ignored_during_execution
    assert [term.pod_affinity_term.topology_key for term in preferred or ()] == ["kubernetes.io/hostname"]
    assert pod.volumes is not None
    assert pod.volumes[0].config_map is not None
    assert pod.volumes[0].config_map.default_mode == 420
    assert pod.model_extra == {}  # nothing left untyped
    assert template.metadata is not None
    assert template.metadata.labels == {"app": "report"}


def test_a_container_without_a_name_fails_validation() -> None:
    broken = copy.deepcopy(FULL_TEMPLATE)
    del broken["spec"]["template"]["spec"]["containers"][0]["name"]

    with pytest.raises(ValidationError, match="name"):
        JobTemplateSpec.model_validate(broken)


def test_a_modified_template_keeps_every_other_field() -> None:
    template = JobTemplateSpec.model_validate(FULL_TEMPLATE)
    assert template.spec is not None
    assert template.spec.template.spec is not None

    template.spec.template.spec.containers[0].image = "registry.example.com/report:1.3"

    wire = template.to_wire()
    assert wire["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.example.com/report:1.3"
    assert wire["spec"]["template"]["spec"]["affinity"] == FULL_TEMPLATE["spec"]["template"]["spec"]["affinity"]
    assert wire["spec"]["podFailurePolicy"] == FULL_TEMPLATE["spec"]["podFailurePolicy"]


def test_the_recorded_files_are_what_record_writes() -> None:
    # reachability and layout: recording again from the recorded definitions gives the committed files
    definitions = builtin.recorded_definitions()
    documents = {group_version: {"components": {"schemas": definitions}} for group_version in builtin.DOCUMENTS}

    for name, text in builtin.record(documents).items():
        assert (builtin.data_file("core/v1").parent / name).read_text() == text
    assert builtin.OBJECT_META not in definitions  # replaced by the embedded form, never read
    assert "io.k8s.api.core.v1.PodSpec" in definitions
    assert "io.k8s.api.core.v1.Pod" not in definitions  # not reachable from the roots


def test_the_meta_condition_model_matches_the_recorded_condition() -> None:
    recorded = builtin.structural_schema("io.k8s.apimachinery.pkg.apis.meta.v1.Condition")
    ours = Condition.model_json_schema(by_alias=True)

    assert set(ours["properties"]) == set(recorded["properties"])
    assert set(ours["required"]) == set(recorded["required"])
    assert recorded["properties"]["lastTransitionTime"]["format"] == "date-time"
