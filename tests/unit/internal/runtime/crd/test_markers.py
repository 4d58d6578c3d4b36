"""Each schema marker (the kubebuilder equivalents of `ballast.runtime.crd.markers`) as it lands in the
rendered CRD schema, which stays structural; pydantic's own constraints next to them; `WireEnum` validation."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

import pytest
from pydantic import ConfigDict, Field, ValidationError

from ballast.runtime.crd import (
    AGE,
    EMBEDDED_RESOURCE,
    LIST_ATOMIC,
    LIST_SET,
    MAP_ATOMIC,
    MAP_GRANULAR,
    PRESERVE_UNKNOWN_FIELDS,
    CustomResource,
    Int32,
    PrinterColumn,
    ScaleSubresource,
    Scope,
    WireEnum,
    WireModel,
    cel,
    check_structural,
    crd_for,
    crd_schema,
    default,
    enum,
    list_map,
    max_items,
    maximum,
    min_items,
    minimum,
    model_markers,
    openapi_schema,
    pattern,
    schema_format,
)

Schema = dict[str, Any]


class Colour(WireEnum):
    """A colour of the rainbow."""

    RED = "Red"
    BLUE = "Blue"


class Port(WireModel):
    name: str
    port: Int32 = Field(ge=1, le=65535)


class GadgetSpec(WireModel):
    """What a gadget should be."""

    model_config = ConfigDict(
        json_schema_extra=model_markers(cel("self.min <= self.max", "min must not exceed max"), MAP_ATOMIC)
    )

    size: Literal["Small", "Large"] = "Small"
    colour: Colour = Colour.RED
    mode: Annotated[str, enum("A", "B")] = "A"
    min: Int32 = Field(default=0, ge=0)
    max: Int32 = Field(default=10, lt=100)
    ratio: Annotated[float, minimum(0, exclusive=True), maximum(1)] = 0.5
    level: Annotated[int | None, minimum(1), maximum(5, exclusive=True)] = None
    owner: str = Field(default="nobody", pattern=r"^[a-z]+$")
    team: Annotated[str | None, pattern(r"^[a-z-]+$")] = None
    name: Annotated[
        str | None, cel("self != 'root'", "must not be root", reason="FieldValueForbidden"), cel("size(self) > 1")
    ] = None
    when: Annotated[str | None, schema_format("date-time")] = None
    tags: Annotated[list[str], LIST_SET, min_items(1), max_items(4)] = Field(default_factory=lambda: ["a"])
    ports: Annotated[list[Port] | None, list_map("name")] = None
    args: Annotated[list[str] | None, LIST_ATOMIC] = None
    labels: Annotated[dict[str, str] | None, MAP_ATOMIC] = None
    annotations: Annotated[dict[str, str] | None, MAP_GRANULAR] = None
    extra: Annotated[dict[str, Any] | None, PRESERVE_UNKNOWN_FIELDS] = None
    template: Annotated[dict[str, Any] | None, EMBEDDED_RESOURCE] = None
    fallback: Annotated[Port | None, default({"name": "http", "port": 80})] = None
    replicas: Annotated[Int32, default(3)] = 1


class GadgetStatus(WireModel):
    replicas: Int32 = 0


class Gadget(CustomResource):
    """A gadget of the example group.

    Only the first paragraph describes the CRD."""

    GROUP: ClassVar[str] = "example.com"
    VERSION: ClassVar[str] = "v1alpha1"
    KIND: ClassVar[str] = "Gadget"
    PLURAL: ClassVar[str] = "gadgets"
    SCOPE: ClassVar[Scope] = "Namespaced"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("gd", "gdg")
    PRINTER_COLUMNS: ClassVar[tuple[PrinterColumn, ...]] = (
        PrinterColumn("Size", "string", ".spec.size", description="How big"),
        AGE,
    )
    STATUS_SUBRESOURCE: ClassVar[bool] = True
    SCALE_SUBRESOURCE: ClassVar[ScaleSubresource | None] = ScaleSubresource(".spec.replicas", ".status.replicas")

    spec: GadgetSpec = Field(default_factory=GadgetSpec)
    status: GadgetStatus | None = None


def spec(name: str) -> Schema:
    schema: Schema = crd_schema(Gadget)["properties"]["spec"]["properties"][name]
    return schema


def test_the_rendered_schema_is_structural() -> None:
    check_structural(crd_schema(Gadget))


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("size", {"type": "string", "enum": ["Small", "Large"], "default": "Small"}),
        ("colour", {"type": "string", "enum": ["Red", "Blue"], "default": "Red"}),
        ("mode", {"type": "string", "enum": ["A", "B"], "default": "A"}),
    ],
)
def test_enums_from_literal_wire_enum_and_the_marker(field: str, expected: Schema) -> None:
    assert {key: spec(field)[key] for key in expected} == expected


def test_an_enum_class_docstring_describes_the_field() -> None:
    assert spec("colour")["description"] == "A colour of the rainbow."


@pytest.mark.parametrize(
    ("field", "expected"),
    [
        ("min", {"minimum": 0}),
        ("max", {"maximum": 100, "exclusiveMaximum": True}),
        ("ratio", {"minimum": 0, "exclusiveMinimum": True, "maximum": 1}),
        ("level", {"minimum": 1, "maximum": 5, "exclusiveMaximum": True}),
    ],
)
def test_minimum_and_maximum(field: str, expected: Schema) -> None:
    schema = spec(field)
    assert {key: schema.get(key) for key in expected} == expected
    assert ("exclusiveMinimum" in schema) == ("exclusiveMinimum" in expected)


def test_patterns_from_field_and_marker() -> None:
    assert spec("owner")["pattern"] == "^[a-z]+$"
    assert spec("team") == {"type": "string", "pattern": "^[a-z-]+$"}


def test_formats() -> None:
    assert spec("when") == {"type": "string", "format": "date-time"}


def test_python_defaults_are_rendered_and_the_default_marker_wins() -> None:
    assert spec("owner")["default"] == "nobody"
    assert spec("tags").get("default") is None  # a default_factory is not a schema default
    assert spec("fallback")["default"] == {"name": "http", "port": 80}
    assert spec("replicas")["default"] == 3


class Probe(WireModel):
    path: str = "/healthz"
    timeout_seconds: Int32 | None = None


class Checked(WireModel):
    probe: Probe = Probe()  # a model instance as the default (not a default_factory)


def test_a_model_instance_default_lists_only_its_set_fields_not_nulls() -> None:
    schema = openapi_schema(Checked)
    assert schema["properties"]["probe"]["default"] == {"path": "/healthz"}
    check_structural(schema)


def test_cel_rules_on_a_field_add_up_with_their_messages() -> None:
    assert spec("name")["x-kubernetes-validations"] == [
        {"rule": "self != 'root'", "message": "must not be root", "reason": "FieldValueForbidden"},
        {"rule": "size(self) > 1"},
    ]


def test_cel_rules_and_map_type_on_a_model() -> None:
    schema = crd_schema(Gadget)["properties"]["spec"]
    assert schema["x-kubernetes-validations"] == [
        {"rule": "self.min <= self.max", "message": "min must not exceed max"}
    ]
    assert schema["x-kubernetes-map-type"] == "atomic"


def test_cel_takes_every_option() -> None:
    marker = cel("self == oldSelf", message_expression="'was ' + oldSelf", field_path=".x", optional_old_self=True)
    assert marker.markers == {
        "x-kubernetes-validations": [
            {
                "rule": "self == oldSelf",
                "messageExpression": "'was ' + oldSelf",
                "fieldPath": ".x",
                "optionalOldSelf": True,
            }
        ]
    }


def test_list_types() -> None:
    assert spec("tags")["x-kubernetes-list-type"] == "set"
    assert (spec("tags")["minItems"], spec("tags")["maxItems"]) == (1, 4)
    assert spec("ports")["x-kubernetes-list-type"] == "map"
    assert spec("ports")["x-kubernetes-list-map-keys"] == ["name"]
    assert spec("args")["x-kubernetes-list-type"] == "atomic"


def test_map_types() -> None:
    assert spec("labels")["x-kubernetes-map-type"] == "atomic"
    assert spec("annotations")["x-kubernetes-map-type"] == "granular"


def test_preserve_unknown_fields_and_embedded_resources() -> None:
    assert spec("extra") == {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    assert spec("template") == {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "x-kubernetes-embedded-resource": True,
    }


def test_short_names_printer_columns_and_subresources() -> None:
    crd = crd_for(Gadget)
    assert crd["spec"]["names"]["shortNames"] == ["gd", "gdg"]
    (version,) = crd["spec"]["versions"]
    assert version["additionalPrinterColumns"] == [
        {"name": "Size", "type": "string", "jsonPath": ".spec.size", "description": "How big"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]
    assert version["subresources"] == {
        "status": {},
        "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
    }
    assert version["schema"]["openAPIV3Schema"]["description"] == "A gadget of the example group."
    assert crd["metadata"]["name"] == "gadgets.example.com"
    assert crd["spec"]["scope"] == "Namespaced"


def test_markers_change_the_schema_only() -> None:
    gadget = Gadget.model_validate({"spec": {"team": "NOT LOWER", "name": "root", "tags": []}})
    assert gadget.spec.team == "NOT LOWER"
    assert gadget.spec.replicas == 1  # the CRD's default is the API server's to apply


def test_a_wire_enum_takes_its_values_and_refuses_others() -> None:
    assert GadgetSpec.model_validate({"colour": "Blue"}).colour is Colour.BLUE
    assert GadgetSpec(colour=Colour.BLUE).to_wire()["colour"] == "Blue"
    with pytest.raises(ValidationError, match="colour"):
        GadgetSpec.model_validate({"colour": "Green"})


def test_pydantic_constraints_also_validate() -> None:
    with pytest.raises(ValidationError, match="size"):
        GadgetSpec.model_validate({"size": "Huge"})
    with pytest.raises(ValidationError, match="min"):
        GadgetSpec.model_validate({"min": -1})
