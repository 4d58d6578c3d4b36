"""A pod spec holding every PodSpec field of the recorded v1.37.2 schema (`internal/runtime/crd/builtin_core_v1.json`),
each filled from its schema down to its leaves: among them the fields kupid's k8s.io/api v0.24.3 types do not know
(`schedulingGates`, a pod-affinity term's `matchLabelKeys`, …; docs/design.md, difference 57)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ballast.runtime.crd import builtin

RECORDED = Path(builtin.__file__).with_name("builtin_core_v1.json")
SCHEMAS: dict[str, Any] = json.loads(RECORDED.read_text())["schemas"]
REF = "#/components/schemas/"
DEPTH = 8


def _resolved(schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:  # a definition the recording left out (an ObjectMeta): an empty object
        found: dict[str, Any] = SCHEMAS.get(schema["$ref"].removeprefix(REF), {"type": "object"})
        return found
    if len(schema.get("allOf") or ()) == 1:
        return {**_resolved(schema["allOf"][0]), **{k: v for k, v in schema.items() if k != "allOf"}}
    return schema


SCALARS: dict[str, Any] = {"integer": 1, "number": 1, "boolean": True}


def _object(schema: dict[str, Any], depth: int) -> dict[str, Any]:
    if depth >= DEPTH:
        return {}
    properties = schema.get("properties") or {}
    if properties:
        return {name: example(sub, depth + 1) for name, sub in properties.items()}
    values = schema.get("additionalProperties")
    return {"key": example(values, depth + 1)} if isinstance(values, dict) else {}


def example(schema: dict[str, Any], depth: int = 0) -> Any:
    """A value of `schema` with every property filled (down to `DEPTH`)."""
    schema = _resolved(schema)
    kind = schema.get("type")
    if schema.get("format") == "int-or-string" or "oneOf" in schema:
        value: Any = "1"
    elif kind == "array":
        item = example(schema.get("items") or {}, depth + 1) if depth < DEPTH else None
        value = [] if item is None else [item]
    elif kind == "object" or "properties" in schema:
        value = _object(schema, depth)
    elif kind == "string":
        value = str((schema.get("enum") or ["value"])[0])
    else:
        value = SCALARS.get(str(kind), "value")
    return value


def full_pod_spec() -> dict[str, Any]:
    """Every PodSpec field, filled."""
    spec: dict[str, Any] = example(SCHEMAS["io.k8s.api.core.v1.PodSpec"])
    return spec
