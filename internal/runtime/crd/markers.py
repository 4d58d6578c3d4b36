"""Schema markers: what a kubebuilder user writes as `// +kubebuilder:...` comments, written next to the field as
`Annotated[...]` metadata (a `CRDSchema`), or on the model as `model_config = ConfigDict(json_schema_extra=
model_markers(...))`. They change the generated CRD schema only; pydantic's own constraints (`Field(ge=...)`,
`Literal`) change both the schema and validation in Python.

Each kubebuilder marker and its equivalent here:

- enum: `Literal["A", "B"]`, or a `WireEnum` subclass, or `enum("A", "B")`    — `+kubebuilder:validation:Enum=A;B`
- minimum/maximum: `Field(ge=1, le=10)` (`gt`/`lt`: exclusive), or `minimum(1)`, `maximum(10)`
  — `+kubebuilder:validation:Minimum=1`, `+kubebuilder:validation:Maximum=10`, `ExclusiveMinimum=true`
- length and size: `Field(min_length=1, max_length=63)` (strings and lists), `min_items(1)`, `max_items(8)`
  — `+kubebuilder:validation:MinLength=1`, `MaxLength=63`, `MinItems=1`, `MaxItems=8`
- patterns: `Field(pattern=r"^[a-z]+$")`, or `pattern(r"^[a-z]+$")`   — `+kubebuilder:validation:Pattern=^[a-z]+$`
- formats: `schema_format("date-time")`                                    — `+kubebuilder:validation:Format=date-time`
- defaults: a field default (`replicas: Int32 = 1`), or `default({...})` for a value Python does not hold
  — `+kubebuilder:default=1`
- CEL rules with messages: `cel("self.min <= self.max", "min must not exceed max")` on a field, or in
  `model_markers(...)` on a model                     — `+kubebuilder:validation:XValidation:rule=...,message=...`
- list types: `LIST_ATOMIC`, `LIST_SET`, `list_map("name")`       — `+listType=atomic`, `+listType=set`,
  `+listType=map` with `+listMapKey=name`
- map types: `MAP_ATOMIC`, `MAP_GRANULAR` (fields), `model_markers(MAP_ATOMIC)` (a struct)
  — `+mapType=atomic`, `+mapType=granular`, `+structType=atomic`
- preserve-unknown-fields: `PRESERVE_UNKNOWN_FIELDS` (a `dict[str, Any]` or `Any` gets it without asking)
  — `+kubebuilder:pruning:PreserveUnknownFields`
- embedded objects: `EMBEDDED_RESOURCE`                       — `+kubebuilder:validation:EmbeddedResource`
- int-or-string: `IntOrString` (`ballast.runtime.crd.wire`)  — `intstr.IntOrString`
- nullable: `X | None` without a `None` default                      — `+nullable`
- printer columns: `PRINTER_COLUMNS = (PrinterColumn("Ready", "string", ".status.ready"), AGE)` on the kind
  — `+kubebuilder:printcolumn:name=Ready,type=string,JSONPath=.status.ready`
- short names: `SHORT_NAMES = ("wd",)` on the kind           — `+kubebuilder:resource:shortName=wd`
- scope: `SCOPE = "Namespaced"` or `"Cluster"` on the kind        — `+kubebuilder:resource:scope=Cluster`
- status subresource: `STATUS_SUBRESOURCE = True` on the kind        — `+kubebuilder:subresource:status`
- scale subresource: `SCALE_SUBRESOURCE = ScaleSubresource(".spec.replicas", ".status.replicas")`
  — `+kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas`

For example:

    class WidgetSpec(WireModel):
        model_config = ConfigDict(json_schema_extra=model_markers(cel("self.min <= self.max", "min > max")))

        size: Literal["Small", "Large"] = "Small"
        min: Int32 = Field(default=0, ge=0)
        max: Int32 = 10
        owner: Annotated[str, pattern(r"^[a-z]+$")]
        ports: Annotated[list[Port], list_map("name")] = Field(default_factory=list)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pydantic.config import JsonDict

from .schema import DEFAULT_MARKER
from .wire import ATOMIC_LIST, CRDSchema, list_map, merge_markers

LIST_ATOMIC = ATOMIC_LIST
"""A list replaced as a whole by server-side apply (`+listType=atomic`)."""

LIST_SET = CRDSchema({"x-kubernetes-list-type": "set"})
"""A list of unique scalars merged item by item by server-side apply (`+listType=set`)."""

MAP_ATOMIC = CRDSchema({"x-kubernetes-map-type": "atomic"})
"""An object or map replaced as a whole by server-side apply (`+mapType=atomic`, `+structType=atomic`)."""

MAP_GRANULAR = CRDSchema({"x-kubernetes-map-type": "granular"})
"""An object or map merged key by key by server-side apply (the default; `+mapType=granular`)."""

PRESERVE_UNKNOWN_FIELDS = CRDSchema({"x-kubernetes-preserve-unknown-fields": True})
"""Fields the schema does not name are kept, not pruned (`+kubebuilder:pruning:PreserveUnknownFields`)."""

EMBEDDED_RESOURCE = CRDSchema({"x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True})
"""A whole Kubernetes object (apiVersion, kind, metadata) held in a field (`+kubebuilder:validation:EmbeddedResource`);
its contents are kept as they come."""


def enum(*values: Any) -> CRDSchema:
    """One of `values` (`+kubebuilder:validation:Enum`); schema only — `Literal[...]` also validates in Python."""
    return CRDSchema({"enum": list(values)})


def minimum(value: float, *, exclusive: bool = False) -> CRDSchema:
    """At least `value`, or more than it when `exclusive` (`+kubebuilder:validation:Minimum`)."""
    return CRDSchema({"minimum": value, "exclusiveMinimum": True} if exclusive else {"minimum": value})


def maximum(value: float, *, exclusive: bool = False) -> CRDSchema:
    """At most `value`, or less than it when `exclusive` (`+kubebuilder:validation:Maximum`)."""
    return CRDSchema({"maximum": value, "exclusiveMaximum": True} if exclusive else {"maximum": value})


def pattern(regex: str) -> CRDSchema:
    """A string matching `regex`, an ECMA-262 regular expression (`+kubebuilder:validation:Pattern`)."""
    return CRDSchema({"pattern": regex})


def min_items(count: int) -> CRDSchema:
    """A list of at least `count` items (`+kubebuilder:validation:MinItems`)."""
    return CRDSchema({"minItems": count})


def max_items(count: int) -> CRDSchema:
    """A list of at most `count` items (`+kubebuilder:validation:MaxItems`); bounds the cost of CEL rules."""
    return CRDSchema({"maxItems": count})


def schema_format(name: str) -> CRDSchema:
    """An OpenAPI format the API server checks, e.g. `date-time`, `uri`, `int32` (`+kubebuilder:validation:Format`)."""
    return CRDSchema({"format": name})


def default(value: Any) -> CRDSchema:
    """The API server fills in `value` when the field is absent (`+kubebuilder:default`). A field's Python default
    is rendered by itself; this is for a default the model does not hold (`X | None = None` whose absence the API
    server fills in), and it wins over the Python default in the schema."""
    return CRDSchema({DEFAULT_MARKER: value})


def cel(
    rule: str,
    message: str | None = None,
    *,
    message_expression: str | None = None,
    reason: str | None = None,
    field_path: str | None = None,
    optional_old_self: bool | None = None,
) -> CRDSchema:
    """A CEL validation rule the API server checks (`x-kubernetes-validations`,
    `+kubebuilder:validation:XValidation:rule=...,message=...`): `self` is the annotated value, `oldSelf` its value
    before an update (a transition rule). `message` is what a refusal says (default: the rule);
    `message_expression` a CEL string expression for it; `reason` one of `FieldValueInvalid`,
    `FieldValueForbidden`, `FieldValueRequired`, `FieldValueDuplicate`; `field_path` the JSON path it points at.
    Several rules on one node add up."""
    validation: dict[str, Any] = {"rule": rule}
    if message is not None:
        validation["message"] = message
    if message_expression is not None:
        validation["messageExpression"] = message_expression
    if reason is not None:
        validation["reason"] = reason
    if field_path is not None:
        validation["fieldPath"] = field_path
    if optional_old_self is not None:
        validation["optionalOldSelf"] = optional_old_self
    return CRDSchema({"x-kubernetes-validations": [validation]})


def model_markers(*markers: CRDSchema | Mapping[str, Any]) -> JsonDict:
    """Markers for a whole model, for `model_config = ConfigDict(json_schema_extra=model_markers(...))`: CEL rules
    across fields (`cel("self.min <= self.max", ...)`), `MAP_ATOMIC`, `PRESERVE_UNKNOWN_FIELDS`. Merged in order as
    on a field (rules add up)."""
    merged: dict[str, Any] = {}
    for marker in markers:
        merged = merge_markers(merged, marker.markers if isinstance(marker, CRDSchema) else marker)
    return cast(JsonDict, merged)


__all__ = [
    "EMBEDDED_RESOURCE",
    "LIST_ATOMIC",
    "LIST_SET",
    "MAP_ATOMIC",
    "MAP_GRANULAR",
    "PRESERVE_UNKNOWN_FIELDS",
    "cel",
    "default",
    "enum",
    "list_map",
    "max_items",
    "maximum",
    "min_items",
    "minimum",
    "model_markers",
    "pattern",
    "schema_format",
]
