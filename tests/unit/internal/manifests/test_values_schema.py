"""The chart's values.schema.json (`ballast.internal.manifests.values_schema`): it describes exactly the keys of
values.yaml, closes what the chart owns, and takes the policy objects' fields from their CRDs."""

from __future__ import annotations

import json
from typing import Any

import yaml

from ballast.api.ballast.v1 import BallastConfig
from ballast.internal.manifests import generate, values_schema
from ballast.internal.manifests.ballast_crds import crd_schema
from tests.paths import REPOSITORY

CHART = REPOSITORY / "config" / "helm" / "ballast"


def _undeclared(values: Any, schema: dict[str, Any], path: str = "") -> list[str]:
    """Keys of `values` that `schema` does not declare, wherever the schema is closed."""
    if not isinstance(values, dict):
        return []
    missing = []
    for key, value in values.items():
        declared = schema.get("properties", {})
        if key in declared:
            missing += _undeclared(value, declared[key], f"{path}.{key}")
        elif schema.get("additionalProperties") is False:
            missing.append(f"{path}.{key}")
    return missing


def test_every_key_of_values_yaml_is_declared_and_every_declared_top_level_key_is_in_it() -> None:
    schema = values_schema.values_schema()
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert _undeclared(values, schema) == []
    assert set(schema["properties"]) - set(values) == {"global"}
    assert schema["additionalProperties"] is False


def test_the_committed_schema_is_generated() -> None:
    assert CHART / "values.schema.json" in generate.generated(REPOSITORY)
    committed = json.loads((CHART / "values.schema.json").read_text())
    assert committed == values_schema.values_schema()


def test_crd_fields_are_closed_without_kubernetes_extensions() -> None:
    spec = values_schema.crd_values(BallastConfig)
    crd = crd_schema(BallastConfig)["properties"]["spec"]
    assert set(spec["properties"]) == set(crd["properties"])
    assert spec["additionalProperties"] is False
    text = json.dumps(spec)
    assert "x-kubernetes-" not in text
    assert '"default"' not in text
    assert spec["properties"]["orphanTTL"]["pattern"] == crd["properties"]["orphanTTL"]["pattern"]


def test_preserved_and_mapped_objects_stay_open() -> None:
    schema = {
        "type": "object",
        "properties": {
            "free": {
                "type": "object",
                "properties": {"a": {"type": "string"}},
                "x-kubernetes-preserve-unknown-fields": True,
            },
            "map": {"type": "object", "additionalProperties": {"type": "string"}},
            "maybe": {"type": "string", "nullable": True},
        },
    }
    converted = values_schema._json_schema(schema)
    assert converted["additionalProperties"] is False
    assert "additionalProperties" not in converted["properties"]["free"]
    assert converted["properties"]["map"]["additionalProperties"] == {"type": "string"}
    assert converted["properties"]["maybe"] == {"type": ["string", "null"]}
