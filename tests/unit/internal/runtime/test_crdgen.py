"""A CRD from a kind's declaration: names, scope, columns, subresources, the schema's additions, and YAML that is
the same bytes every time (sorted keys, no anchors, literal blocks)."""

from __future__ import annotations

import copy
from typing import Any, ClassVar

import pytest
import yaml

from ballast.runtime.crdgen import (
    AGE,
    CRDNames,
    PrinterColumn,
    ScaleSubresource,
    Scope,
    crd_filename,
    crd_for,
    crd_name,
    crd_schema,
    render_crd,
)

Schema = dict[str, Any]


class Widget:
    """A widget of the example group.

    Only the first paragraph describes the CRD."""

    GROUP: ClassVar[str] = "example.com"
    VERSION: ClassVar[str] = "v1beta1"
    KIND: ClassVar[str] = "Widget"
    PLURAL: ClassVar[str] = "widgets"
    SINGULAR: ClassVar[str] = "widget"
    LIST_KIND: ClassVar[str] = "WidgetList"
    SCOPE: ClassVar[Scope] = "Namespaced"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ("wd",)
    PRINTER_COLUMNS: ClassVar[tuple[PrinterColumn, ...]] = (
        PrinterColumn("Size", "integer", ".spec.size", description="how big", priority=1, format="int32"),
        AGE,
    )
    STATUS_SUBRESOURCE: ClassVar[bool] = True
    SCALE_SUBRESOURCE: ClassVar[ScaleSubresource | None] = ScaleSubresource(".spec.replicas", ".status.replicas")


class Gadget:
    """A cluster-scoped kind with nothing optional."""

    GROUP: ClassVar[str] = "example.com"
    VERSION: ClassVar[str] = "v1"
    KIND: ClassVar[str] = "Gadget"
    PLURAL: ClassVar[str] = "gadgets"
    SINGULAR: ClassVar[str] = "gadget"
    LIST_KIND: ClassVar[str] = "GadgetList"
    SCOPE: ClassVar[Scope] = "Cluster"
    SHORT_NAMES: ClassVar[tuple[str, ...]] = ()
    PRINTER_COLUMNS: ClassVar[tuple[PrinterColumn, ...]] = ()
    STATUS_SUBRESOURCE: ClassVar[bool] = False
    SCALE_SUBRESOURCE: ClassVar[ScaleSubresource | None] = None


WIDGET, GADGET = CRDNames.of(Widget), CRDNames.of(Gadget)

MODEL_SCHEMA: Schema = {
    "type": "object",
    "description": "Widget model docstring, as the model library writes it.",
    "properties": {
        "apiVersion": {"type": "string", "default": "example.com/v1beta1"},
        "kind": {"type": "string", "default": "Widget", "description": "The kind."},
        "metadata": {"type": "object", "properties": {"name": {"type": "string"}}},
        "spec": {"type": "object", "properties": {"size": {"type": "integer", "default": 3}}},
    },
}


def test_names_scope_and_version_come_from_the_declaration() -> None:
    crd = crd_for(WIDGET, {"type": "object"})

    assert crd["apiVersion"] == "apiextensions.k8s.io/v1"
    assert crd["kind"] == "CustomResourceDefinition"
    assert crd["metadata"] == {"name": "widgets.example.com"} == {"name": crd_name(WIDGET)}
    assert crd["spec"]["group"] == "example.com"
    assert crd["spec"]["scope"] == "Namespaced"
    assert crd["spec"]["names"] == {
        "kind": "Widget",
        "listKind": "WidgetList",
        "plural": "widgets",
        "singular": "widget",
        "shortNames": ["wd"],
    }
    (version,) = crd["spec"]["versions"]
    assert (version["name"], version["served"], version["storage"]) == ("v1beta1", True, True)
    assert version["schema"] == {"openAPIV3Schema": {"type": "object"}}
    assert crd_filename(WIDGET) == "example.com_widgets.yaml"


def test_columns_and_subresources_are_written_only_when_declared() -> None:
    (widget,) = crd_for(WIDGET, {"type": "object"})["spec"]["versions"]
    gadget_crd = crd_for(GADGET, {"type": "object"})
    (gadget,) = gadget_crd["spec"]["versions"]

    assert widget["additionalPrinterColumns"] == [
        {"name": "Size", "type": "integer", "jsonPath": ".spec.size", "description": "how big", "priority": 1,
         "format": "int32"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
    ]  # fmt: skip
    assert widget["subresources"] == {
        "status": {},
        "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
    }
    assert gadget_crd["spec"]["scope"] == "Cluster"
    assert "shortNames" not in gadget_crd["spec"]["names"]
    assert set(gadget) == {"name", "served", "storage", "schema"}
    assert ScaleSubresource("a", "b", ".status.selector").to_wire()["labelSelectorPath"] == ".status.selector"


def test_the_crd_schema_adds_the_description_and_leaves_metadata_and_type_meta_to_the_server() -> None:
    original = copy.deepcopy(MODEL_SCHEMA)

    schema = crd_schema(WIDGET, MODEL_SCHEMA)

    assert schema["description"] == "A widget of the example group."
    assert schema["properties"]["apiVersion"] == {"type": "string"}
    assert schema["properties"]["kind"] == {"type": "string", "description": "The kind."}
    assert schema["properties"]["metadata"] == {"type": "object"}
    assert schema["properties"]["spec"] == MODEL_SCHEMA["properties"]["spec"]  # other defaults stay
    assert original == MODEL_SCHEMA  # the model's schema is not modified


def test_rendering_sorts_keys_and_writes_no_anchors_and_literal_blocks() -> None:
    shared = ["a", "b"]
    crd = crd_for(WIDGET, {"type": "object", "description": "line one\nline two é", "enum": shared, "x": shared})

    text = render_crd(crd, header="# generated\n")

    assert text.startswith("# generated\n---\napiVersion: apiextensions.k8s.io/v1\n")
    assert "&id" not in text
    assert "description: |-\n" in text
    assert "é" in text
    assert text.index("\nkind: CustomResourceDefinition") < text.index("\nmetadata:") < text.index("\nspec:")
    assert yaml.safe_load(text) == crd
    assert render_crd(crd, header="# generated\n") == text


def test_names_are_read_from_class_constants_with_derived_defaults() -> None:
    class Minimal:
        """A minimal kind.

        More text."""

        GROUP, VERSION, KIND, PLURAL, SCOPE = "example.com", "v1", "Minimal", "minimals", "Cluster"

    names = CRDNames.of(Minimal)
    assert (names.singular, names.list_kind, names.description) == ("minimal", "MinimalList", "A minimal kind.")
    assert (names.short_names, names.status_subresource, names.scale_subresource) == ((), False, None)


def test_a_kind_missing_a_constant_or_with_another_scope_is_refused_by_name() -> None:
    class Nameless:
        GROUP, VERSION = "example.com", "v1"

    class Everywhere:
        GROUP, VERSION, KIND, PLURAL, SCOPE = "example.com", "v1", "Everywhere", "everywheres", "Global"

    with pytest.raises(TypeError, match="Nameless does not declare KIND, PLURAL, SCOPE"):
        CRDNames.of(Nameless)
    with pytest.raises(TypeError, match=r"Everywhere\.SCOPE must be 'Cluster' or 'Namespaced', got 'Global'"):
        CRDNames.of(Everywhere)
