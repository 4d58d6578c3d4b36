"""Typed CRDs: pydantic models for custom kinds, their schema markers, and their CustomResourceDefinitions.

- `wire`: `WireModel` (camelCase on the wire, strict, unknown fields kept), `WireEnum`, `Int32`, `Int64`,
  `IntOrString`, `CRDSchema` (the schema-only marker), `list_map`, `ATOMIC_LIST`, `ATOMIC_STRUCT`
- `meta`: `ObjectMeta`, `OwnerReference`, `LabelSelector`, `Condition`, `Conditions` (declared
  `conditions: Conditions = ConditionList()`), `Time`
- `builtin`: built-in types custom kinds embed — `PodTemplateSpec`, `JobTemplateSpec`, `ObjectReference`,
  `LocalObjectReference`, `ResourceRequirements` (their CRD schema recorded from the API server's OpenAPI v3)
- `customresource`: `CustomResource`, the base class of a kind (its class constants say its identity and CRD)
- `markers`: what kubebuilder users write as `+kubebuilder:` markers (its docstring lists each equivalent)
- `formats`: Go durations, qualified names, lists of unique strings
- `schema`: `openapi_schema(model)` (structural OpenAPI v3 from pydantic) and `check_structural`
- `generate`: `crd_for(kind)`, `rendered_crds(kinds)`, `write_crds(directory, kinds)`
- `cli`: `ballast-crdgen`, the console entry point (`crd` and `rbac`, like `controller-gen crd rbac`)

A kind:

    class WidgetSpec(WireModel):
        size: Literal["Small", "Large"] = "Small"
        replicas: Int32 = Field(default=1, ge=0)

    class Widget(CustomResource):
        \"\"\"A widget.\"\"\"

        GROUP, VERSION, KIND, PLURAL = "example.com", "v1", "Widget", "widgets"
        SCOPE: ClassVar[Scope] = "Namespaced"
        STATUS_SUBRESOURCE = True

        spec: WidgetSpec = Field(default_factory=WidgetSpec)

    write_crds("config/crd/bases", [Widget])   # or: ballast-crdgen crd mypkg.api:Widget -o config/crd/bases

The names below are re-exported here; every other name comes from its module.
"""

from __future__ import annotations

from ballast.runtime.crdgen import AGE, PrinterColumn, ScaleSubresource, Scope

from . import builtin
from .builtin import JobTemplateSpec, LocalObjectReference, ObjectReference, PodTemplateSpec, ResourceRequirements
from .customresource import CustomResource
from .generate import HEADER, crd_for, crd_schema, rendered_crds, write_crds
from .markers import (
    EMBEDDED_RESOURCE,
    LIST_ATOMIC,
    LIST_SET,
    MAP_ATOMIC,
    MAP_GRANULAR,
    PRESERVE_UNKNOWN_FIELDS,
    cel,
    default,
    enum,
    max_items,
    maximum,
    min_items,
    minimum,
    model_markers,
    pattern,
    schema_format,
)
from .meta import Condition, ConditionList, Conditions, LabelSelector, ObjectMeta, Time
from .schema import StructuralSchemaError, check_structural, openapi_schema
from .wire import CRDSchema, Int32, Int64, IntOrString, WireEnum, WireModel, list_map

__all__ = [
    "AGE",
    "EMBEDDED_RESOURCE",
    "HEADER",
    "LIST_ATOMIC",
    "LIST_SET",
    "MAP_ATOMIC",
    "MAP_GRANULAR",
    "PRESERVE_UNKNOWN_FIELDS",
    "CRDSchema",
    "Condition",
    "ConditionList",
    "Conditions",
    "CustomResource",
    "Int32",
    "Int64",
    "IntOrString",
    "JobTemplateSpec",
    "LabelSelector",
    "LocalObjectReference",
    "ObjectMeta",
    "ObjectReference",
    "PodTemplateSpec",
    "PrinterColumn",
    "ResourceRequirements",
    "ScaleSubresource",
    "Scope",
    "StructuralSchemaError",
    "Time",
    "WireEnum",
    "WireModel",
    "builtin",
    "cel",
    "check_structural",
    "crd_for",
    "crd_schema",
    "default",
    "enum",
    "list_map",
    "max_items",
    "maximum",
    "min_items",
    "minimum",
    "model_markers",
    "openapi_schema",
    "pattern",
    "rendered_crds",
    "schema_format",
    "write_crds",
]
