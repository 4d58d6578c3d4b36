"""Structural OpenAPI v3 schemas (what a CRD's `openAPIV3Schema` must be) from pydantic models.

pydantic writes JSON Schema: shared definitions behind `$ref`, optional fields as `anyOf [X, null]`, titles, and
`additionalProperties: true` for models that keep unknown fields. The API server wants a structural schema:
every node typed and self-contained. `openapi_schema` rewrites one into the other, keeping the markers models
declare (`x-kubernetes-*`, `format`); `check_structural` refuses anything the API server would refuse.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, NoDefault
from pydantic_core import core_schema

Schema = dict[str, Any]

DEFAULT_MARKER = "x-ballast-default"
"""Where the `default` marker keeps its value until the schema is converted: pydantic writes the field's own
Python default (often `None`) over a `default` key a type annotation sets."""

_NULL = {"type": "null"}
_FORBIDDEN = ("$ref", "$defs", "allOf", "oneOf", "not", "const", "title")
_TYPES = {"object", "array", "string", "integer", "number", "boolean"}
_KEYS = {
    "type", "format", "description", "nullable", "default", "enum", "example", "externalDocs",
    "properties", "required", "additionalProperties", "items", "anyOf",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
    "minLength", "maxLength", "pattern", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties",
}  # fmt: skip
# pydantic writes a constraint it could not attach to the inner type (Optional[Annotated[int, ...]]) by its
# Python name; OpenAPI spells it per type.
_BOUNDS = {"ge": ("minimum", False), "le": ("maximum", False), "gt": ("minimum", True), "lt": ("maximum", True)}
_LENGTHS = {
    "string": ("minLength", "maxLength"),
    "array": ("minItems", "maxItems"),
    "object": ("minProperties", "maxProperties"),
}


class StructuralSchemaError(ValueError):
    """A schema the API server would not accept as structural; the message names the JSON path of the node."""


def openapi_schema(model: type[BaseModel]) -> Schema:
    """The structural schema of `model`: definitions inlined, `null` branches dropped (`nullable: true` only
    where null is a value distinct from absence), titles and `additionalProperties: true` removed — a free-form
    map (`dict[str, Any]`, `Mapping[str, Any]`, `dict[str, object]`) keeps its contents with
    `x-kubernetes-preserve-unknown-fields: true`, and so does an untyped value (`Any`, `object`, the items of a
    `list[Any]`), which has no `type` at all. A `default` marker's value replaces the field's Python default.

    Raises StructuralSchemaError for a recursive model, which a CRD schema cannot express.
    """
    raw = model.model_json_schema(mode="validation", schema_generator=_Generator)
    definitions = raw.pop("$defs", {})
    schema = _convert(raw, definitions, ())
    _mark_untyped(schema)
    return schema


class _Generator(GenerateJsonSchema):
    def get_default_value(self, schema: core_schema.WithDefaultSchema) -> Any:
        default = super().get_default_value(schema)
        if isinstance(default, list) and type(default) is not list and not default:
            return NoDefault  # an empty typed list (`Conditions = ConditionList()`): Go's nil slice, no default
        return default


def _resolve(reference: str, definitions: Mapping[str, Schema], stack: tuple[str, ...]) -> tuple[str, Schema]:
    name = reference.rsplit("/", 1)[-1]
    if name in stack:
        raise StructuralSchemaError(f"model {name} refers to itself ({' -> '.join((*stack, name))})")
    return name, dict(definitions[name])


def _convert(node: Schema, definitions: Mapping[str, Schema], stack: tuple[str, ...]) -> Schema:
    node = dict(node)
    reference = node.pop("$ref", None)
    if reference is not None:
        name, target = _resolve(reference, definitions, stack)
        # the field's own docstring, when it has one, describes the use better than the class docstring
        return {**_convert(target, definitions, (*stack, name)), **_convert(node, definitions, stack)}
    branches = node.get("anyOf")
    if branches is not None and _NULL in branches:
        return _drop_null(node, branches, definitions, stack)
    _clean(node)
    if "properties" in node:
        node["properties"] = {name: _convert(child, definitions, stack) for name, child in node["properties"].items()}
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            node[key] = _convert(node[key], definitions, stack)
    if "anyOf" in node:
        node["anyOf"] = [_convert(branch, definitions, stack) for branch in node["anyOf"]]
    return node


def _drop_null(
    node: Schema, branches: list[Schema], definitions: Mapping[str, Schema], stack: tuple[str, ...]
) -> Schema:
    # `X | None = None`: null and absent mean the same, so the field is simply optional; otherwise null is a
    # value of its own and the field is nullable.
    node.pop("anyOf")
    rest = [branch for branch in branches if branch != _NULL]
    absent_is_null = "default" in node and node["default"] is None
    inner = _convert(rest[0] if len(rest) == 1 else {"anyOf": rest}, definitions, stack)
    merged = {**inner, **_convert(node, definitions, stack)}
    _rename_constraints(merged)
    if not absent_is_null:
        merged["nullable"] = True
    return merged


def _clean(node: Schema) -> None:
    node.pop("title", None)
    if "default" in node and node["default"] is None:
        del node["default"]
    elif isinstance(node.get("default"), dict | list):
        node["default"] = _without_nulls(node["default"])  # a model instance as default dumps its unset fields
    if DEFAULT_MARKER in node:
        node["default"] = node.pop(DEFAULT_MARKER)
    if node.get("additionalProperties") is True:
        del node["additionalProperties"]
        if "properties" not in node and node.get("type") == "object":
            # a free-form map (`dict[str, Any]`): without the marker the API server prunes everything under it
            node["x-kubernetes-preserve-unknown-fields"] = True
    if node.get("properties") == {}:
        del node["properties"]  # a model without fields (an empty status) is a plain object
    if "const" in node:
        node["enum"] = [node.pop("const")]
    if isinstance(node.get("description"), str):
        node["description"] = node["description"].strip()
    _rename_constraints(node)


def _without_nulls(value: Any) -> Any:
    # An optional field left unset is absent on the wire, never null: the default says what a client would send.
    if isinstance(value, dict):
        return {key: _without_nulls(item) for key, item in value.items() if item is not None}
    if isinstance(value, list):
        return [_without_nulls(item) for item in value]
    return value


def _mark_untyped(node: Schema) -> None:
    # An untyped node (pydantic's `{}` for `Any`) is not structural: the API server refuses the CRD.
    # Done on the finished tree: while converting, a node's own keys (its description, its default) are
    # converted apart from the schema they describe and would look untyped.
    if not ({"type", "anyOf", "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields"} & node.keys()):
        node["x-kubernetes-preserve-unknown-fields"] = True
    for child in node.get("properties", {}).values():
        _mark_untyped(child)
    for key in ("items", "additionalProperties"):
        if isinstance(node.get(key), dict):
            _mark_untyped(node[key])


def _rename_constraints(node: Schema) -> None:
    for python, (bound, exclusive) in _BOUNDS.items():
        if python in node:
            node[bound] = node.pop(python)
            if exclusive:
                node["exclusiveMinimum" if bound == "minimum" else "exclusiveMaximum"] = True
    for exclusive_key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        value = node.get(exclusive_key)
        if value is not None and not isinstance(value, bool):  # JSON Schema's number form; OpenAPI v3.0 wants a flag
            node[bound], node[exclusive_key] = value, True
    lengths = _LENGTHS.get(node.get("type", ""))
    for python, index in (("min_length", 0), ("max_length", 1)):
        if python in node and lengths is not None:
            node[lengths[index]] = node.pop(python)


def check_structural(schema: Schema, path: str = "") -> None:
    """Raise StructuralSchemaError naming the first node of `schema` that breaks the structural rules.

    Checked: only OpenAPI v3 keywords and `x-kubernetes-*` markers, no `$ref`/`allOf`/`oneOf`/`not`; every node
    has a known `type` (unless it is int-or-string or keeps unknown fields); `anyOf` only for int-or-string;
    objects have `properties` or `additionalProperties`, not both; arrays have `items`; list and map markers sit
    on arrays and objects; list-map keys are required (or defaulted) item properties.
    """
    where = path or "<root>"
    _check_keywords(schema, where)
    _check_type(schema, where)
    _check_markers(schema, where)
    for name, child in schema.get("properties", {}).items():
        check_structural(child, f"{path}.{name}")
    if isinstance(schema.get("items"), dict):
        check_structural(schema["items"], f"{path}[*]")
    if isinstance(schema.get("additionalProperties"), dict):
        check_structural(schema["additionalProperties"], f"{path}.*")


def _check_keywords(schema: Schema, where: str) -> None:
    for key in schema:
        if key in _FORBIDDEN:
            raise StructuralSchemaError(f"{where}: {key!r} is not allowed in a structural schema")
        if key not in _KEYS and not key.startswith("x-kubernetes-"):
            raise StructuralSchemaError(f"{where}: {key!r} is not an OpenAPI v3 schema keyword")


def _check_type(schema: Schema, where: str) -> None:
    int_or_string = schema.get("x-kubernetes-int-or-string") is True
    if "anyOf" in schema and not (int_or_string and schema["anyOf"] == [{"type": "integer"}, {"type": "string"}]):
        raise StructuralSchemaError(f"{where}: 'anyOf' is only allowed as int-or-string [integer, string]")
    kind = schema.get("type")
    if kind is None and not (int_or_string or schema.get("x-kubernetes-preserve-unknown-fields") is True):
        raise StructuralSchemaError(f"{where}: no 'type'")
    if kind is not None and kind not in _TYPES:
        raise StructuralSchemaError(f"{where}: unknown type {kind!r}")
    if "additionalProperties" in schema:
        if not isinstance(schema["additionalProperties"], dict):
            raise StructuralSchemaError(f"{where}: 'additionalProperties' must be a schema, not a boolean")
        if "properties" in schema:
            raise StructuralSchemaError(f"{where}: 'properties' and 'additionalProperties' are mutually exclusive")
    if kind == "array" and not isinstance(schema.get("items"), dict):
        raise StructuralSchemaError(f"{where}: an array needs an 'items' schema")


def _check_markers(schema: Schema, where: str) -> None:
    kind = schema.get("type")
    if "x-kubernetes-list-type" in schema and kind != "array":
        raise StructuralSchemaError(f"{where}: 'x-kubernetes-list-type' on a non-array")
    if "x-kubernetes-map-type" in schema and kind != "object":
        raise StructuralSchemaError(f"{where}: 'x-kubernetes-map-type' on a non-object")
    if schema.get("x-kubernetes-list-type") != "map":
        return
    items = schema["items"]
    keys = schema.get("x-kubernetes-list-map-keys") or []
    if not keys:
        raise StructuralSchemaError(f"{where}: a list-type map needs 'x-kubernetes-list-map-keys'")
    for key in keys:
        if key not in items.get("properties", {}):
            raise StructuralSchemaError(f"{where}: list-map key {key!r} is not an item property")
        if key not in items.get("required", []) and "default" not in items["properties"][key]:
            raise StructuralSchemaError(f"{where}: list-map key {key!r} must be required or defaulted")


__all__ = [
    "DEFAULT_MARKER",
    "Schema",
    "StructuralSchemaError",
    "check_structural",
    "openapi_schema",
]
