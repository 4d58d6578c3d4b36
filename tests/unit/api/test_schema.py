"""pydantic JSON Schema → structural OpenAPI v3: what the post-processing rewrites and what the checker refuses."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

import pytest
from pydantic import ConfigDict, Field

from ballast.api.schema import Schema, StructuralSchemaError, check_structural, openapi_schema
from ballast.api.wire import ATOMIC_LIST, ATOMIC_STRUCT, Int32, IntOrString, WireModel, list_map


class Leaf(WireModel):
    """Leaf class docstring."""

    model_config = ConfigDict(json_schema_extra=ATOMIC_STRUCT)

    key: str
    """The key."""


class Empty(WireModel):
    """Nothing inside."""


class Tree(WireModel):
    """Tree docstring."""

    required_leaf: Leaf
    """A leaf that must be there."""
    optional_leaf: Leaf | None = None
    leaves: Annotated[list[Leaf] | None, ATOMIC_LIST] = None
    keyed: Annotated[list[Leaf] | None, list_map("key")] = None
    count: Int32 | None = Field(default=None, ge=1, le=10)
    exclusive: int | None = Field(default=None, gt=0, lt=5)
    names: list[str] | None = Field(default=None, min_length=1, max_length=3)
    label: str | None = Field(default=None, min_length=2)
    weights: dict[str, int] | None = Field(default=None, min_length=2)
    port: IntOrString | None = None
    nullable_name: str | None = "x"
    empty: Empty | None = None


def schema() -> Schema:
    return openapi_schema(Tree)


def _keys(node: Any) -> set[str]:
    found: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            found.add(key)
            found |= _keys(value)
    elif isinstance(node, list):
        for value in node:
            found |= _keys(value)
    return found


def test_no_json_schema_only_keywords_remain() -> None:
    assert _keys(schema()) & {"$ref", "$defs", "title", "const", "allOf", "oneOf"} == set()
    check_structural(schema())


def test_definitions_are_inlined_with_the_field_description_winning() -> None:
    properties = schema()["properties"]

    assert properties["requiredLeaf"]["description"] == "A leaf that must be there."
    assert properties["optionalLeaf"]["description"] == "Leaf class docstring."
    assert properties["requiredLeaf"]["properties"] == {"key": {"type": "string", "description": "The key."}}
    assert properties["requiredLeaf"]["x-kubernetes-map-type"] == "atomic"
    assert schema()["required"] == ["requiredLeaf"]


def test_optional_fields_lose_the_null_branch_without_becoming_nullable() -> None:
    optional = schema()["properties"]["optionalLeaf"]

    assert "anyOf" not in optional
    assert "nullable" not in optional
    assert "default" not in optional
    assert optional["type"] == "object"


def test_null_that_differs_from_absent_is_nullable() -> None:
    assert schema()["properties"]["nullableName"] == {"type": "string", "default": "x", "nullable": True}


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("count", {"type": "integer", "format": "int32", "minimum": 1, "maximum": 10}),
        ("exclusive", {"type": "integer", "minimum": 0, "exclusiveMinimum": True,
                       "maximum": 5, "exclusiveMaximum": True}),
        ("names", {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3}),
        ("label", {"type": "string", "minLength": 2}),
        ("weights", {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 2}),
        ("port", {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}),
        ("empty", {"type": "object", "description": "Nothing inside."}),
    ],
)  # fmt: skip
def test_constraints_use_openapi_names(field: str, expected: Schema) -> None:
    assert schema()["properties"][field] == expected


def test_list_markers_are_kept() -> None:
    properties = schema()["properties"]

    assert properties["leaves"]["x-kubernetes-list-type"] == "atomic"
    assert properties["keyed"]["x-kubernetes-list-type"] == "map"
    assert properties["keyed"]["x-kubernetes-list-map-keys"] == ["key"]


class Node(WireModel):
    children: list[Node] | None = None


def test_a_recursive_model_is_refused() -> None:
    with pytest.raises(StructuralSchemaError, match="model Node refers to itself"):
        openapi_schema(Node)


STRING = {"type": "string"}
NULL = {"type": "null"}
OBJECT = {"type": "object"}


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ({"type": "object", "properties": {"a": {"$ref": "#/x"}}}, ".a: '$ref' is not allowed"),
        ({"type": "object", "properties": {"a": {"type": "string", "title": "A"}}}, ".a: 'title' is not allowed"),
        ({"type": "object", "properties": {"a": {"type": "integer", "ge": 1}}}, "'ge' is not an OpenAPI v3"),
        ({"type": "object", "properties": {"a": {"description": "x"}}}, ".a: no 'type'"),
        ({"type": "object", "properties": {"a": {"type": "null"}}}, "unknown type 'null'"),
        ({"type": "object", "properties": {"a": {"anyOf": [STRING, NULL]}}}, "only allowed as int-or-string"),
        ({"type": "object", "additionalProperties": True}, "must be a schema, not a boolean"),
        ({"type": "object", "properties": {}, "additionalProperties": STRING}, "mutually exclusive"),
        ({"type": "array"}, "<root>: an array needs an 'items' schema"),
        ({"type": "object", "x-kubernetes-list-type": "atomic"}, "'x-kubernetes-list-type' on a non-array"),
        ({"type": "array", "items": STRING, "x-kubernetes-map-type": "atomic"}, "on a non-object"),
        ({"type": "array", "items": OBJECT, "x-kubernetes-list-type": "map"}, "needs 'x-kubernetes-list-map-keys'"),
        (
            {"type": "array", "items": {"type": "object", "properties": {"k": STRING}},
             "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]},
            "list-map key 'type' is not an item property",
        ),
        (
            {"type": "array", "items": {"type": "object", "properties": {"k": STRING}},
             "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]},
            "list-map key 'k' must be required or defaulted",
        ),
        ({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "wat"}}}}, ".l[*]: unknown type"),
        ({"type": "object", "additionalProperties": {"type": "object", "properties": {"x": {}}}}, ".*.x: no 'type'"),
    ],
)  # fmt: skip
def test_check_structural_names_the_bad_node(bad: Schema, message: str) -> None:
    with pytest.raises(
        StructuralSchemaError, match=message.replace("[", r"\[").replace("*", r"\*").replace("$", r"\$")
    ):
        check_structural(bad)


@pytest.mark.parametrize(
    "good",
    [
        {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True},
        {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string", "default": "a"}}},
         "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]},
    ],
)  # fmt: skip
def test_check_structural_accepts_what_the_api_server_accepts(good: Schema) -> None:
    check_structural(good)
    assert good


class Templated(WireModel):
    """A kind that embeds free-form objects, as a CronJob embeds its job template."""

    template: dict[str, Any] | None = None
    mapping: Mapping[str, Any] | None = None
    objects: dict[str, object] | None = None
    anything: Any = None
    """Any JSON value."""
    templates: list[dict[str, Any]] | None = None
    values: list[Any] | None = None
    by_name: dict[str, dict[str, Any]] | None = None
    labels: dict[str, str] | None = None
    counts: dict[str, list[int]] | None = None


_FREE_FORM = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def test_a_free_form_map_keeps_its_contents_and_a_typed_map_stays_typed() -> None:
    properties = openapi_schema(Templated)["properties"]
    assert properties["template"] == _FREE_FORM
    assert properties["mapping"] == _FREE_FORM
    assert properties["objects"] == _FREE_FORM
    assert properties["templates"] == {"type": "array", "items": _FREE_FORM}
    assert properties["byName"] == {"type": "object", "additionalProperties": _FREE_FORM}
    assert properties["labels"] == {"type": "object", "additionalProperties": {"type": "string"}}
    assert properties["counts"] == {
        "type": "object",
        "additionalProperties": {"type": "array", "items": {"type": "integer"}},
    }
    assert "x-kubernetes-preserve-unknown-fields" not in openapi_schema(Empty)  # a model without fields
    check_structural(openapi_schema(Templated))


def test_an_untyped_value_keeps_whatever_it_holds_and_nothing_typed_is_marked() -> None:
    schema = openapi_schema(Templated)
    properties = schema["properties"]
    # no `type`: any JSON value, scalars included, is kept
    assert properties["anything"] == {"description": "Any JSON value.", "x-kubernetes-preserve-unknown-fields": True}
    assert properties["values"] == {"type": "array", "items": {"x-kubernetes-preserve-unknown-fields": True}}
    assert "x-kubernetes-preserve-unknown-fields" not in schema
    # a field's description is converted apart from its `$ref`ed model and must not mark the model free-form
    assert "x-kubernetes-preserve-unknown-fields" not in _keys(openapi_schema(Tree))
