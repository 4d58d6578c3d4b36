"""The base of every typed API model: camelCase on the wire, snake_case in Python, unknown fields kept from the
server (and, for a model `CLOSED_IN_CODE`, refused in code: docs/design.md, difference 72).

Also `CRDSchema`, the schema-only marker every other marker is made of (`ballast.runtime.crd.markers`),
the list and map markers server-side apply reads (`x-kubernetes-list-type`, `x-kubernetes-map-type`), and the
fixed-width integer types of the Kubernetes API (`Int32`, `Int64`, `IntOrString`).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Self, TypeVar, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ValidationInfo,
    model_validator,
)
from pydantic.config import JsonDict
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from ballast.runtime import objects

# Words spelled in capitals inside a camelCase name (`orphanTTL`, `maxCV`). A model wanting other spellings sets
# `Field(alias=...)` on the field, or its own `model_config = ConfigDict(alias_generator=...)`.
ACRONYMS: Mapping[str, str] = {"ttl": "TTL", "cv": "CV"}

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def wire_name(name: str) -> str:
    """The JSON field name for a Python attribute: `orphan_ttl` → `orphanTTL`, `api_version` → `apiVersion`.

    The first word stays lower case; later words are capitalised, or spelled as in `ACRONYMS`.
    """
    first, *rest = name.split("_")
    return first + "".join(ACRONYMS.get(word, word.capitalize()) for word in rest)


FROM_SERVER = "ballast.runtime.from_server"
"""The pydantic validation-context key that marks data as decoded from the API server (`WireModel.from_wire`)."""


def decoded_from_server(info: ValidationInfo) -> bool:
    """Whether the validation `info` belongs to `from_wire` (data the API server sent) rather than to code."""
    return isinstance(info.context, Mapping) and bool(info.context.get(FROM_SERVER))


def with_type_meta(data: dict[str, Any], api_version: str, kind: str) -> dict[str, Any]:
    """A copy of a kind's input with `apiVersion` and `kind` set to the kind's own (either spelling accepted, wire
    or Python); any other value is a `ValueError` naming the field."""
    data = dict(data)
    for wire, python, expected in (("apiVersion", "api_version", api_version), ("kind", "kind", kind)):
        value = data.pop(wire, data.pop(python, None))
        if value not in (None, "", expected):
            raise ValueError(f"{wire} must be {expected!r} for a {kind}, got {value!r}")
        data[wire] = expected
    return data


class WireModel(BaseModel):
    """A Kubernetes API object or part of one.

    Validation takes wire names (`minDataPoints`) or Python names (`min_data_points`) and is strict about types
    (a string is not an integer), so bad input fails with a `pydantic.ValidationError` whose location is the
    wire path of the field. Fields the model does not declare are kept as they came and written back, so a
    read-modify-write never drops what a newer schema added. `to_wire()` gives the JSON form.

    A model with `CLOSED_IN_CODE = True` (every generated built-in model) keeps unknown fields only from the
    server: `from_wire(data)` (what the client, the cache and the webhooks decode with) keeps them, while building
    it in code (`Model(...)`, `Model.model_validate(...)`) with a field it does not declare raises a
    ValidationError naming the field, and assigning one raises AttributeError — a typo is never sent.
    """

    CLOSED_IN_CODE: ClassVar[bool] = False
    """Refuse fields the model does not declare unless decoded from the server (docs/design.md, difference 72)."""

    model_config = ConfigDict(
        alias_generator=wire_name,
        populate_by_name=True,
        extra="allow",
        strict=True,
        use_attribute_docstrings=True,
    )

    @classmethod
    def from_wire(cls, data: Any) -> Self:
        """The model of `data` as the API server sent it: fields this model does not know are kept (and written
        back by `to_wire()`), even on a model closed in code."""
        return cls.model_validate(data, context={FROM_SERVER: True})

    def to_wire(self) -> dict[str, Any]:
        """The object as the API server would store it: wire names, unset (None) fields left out, JSON values."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Only a model closed in code pays for the check, a Python call for every instance validated (a tenth of
        # decoding a WorkloadProfile): put on each class that is closed when it is made, here, before pydantic
        # collects its validators. A subclass that opens again keeps it; the check reads the flag.
        if cls.CLOSED_IN_CODE:
            setattr(cls, _KNOWN_FIELDS_CHECK, model_validator(mode="after")(_known_fields_in_code))

    if not TYPE_CHECKING:  # hidden from mypy, which would otherwise accept any attribute name on every model

        def __setattr__(self, name: str, value: Any) -> None:
            if (
                self.CLOSED_IN_CODE
                and name not in type(self).model_fields
                and not name.startswith("_")
                and name not in (self.__pydantic_extra__ or {})
            ):
                raise AttributeError(f"{type(self).__name__} has no field {name!r}")
            super().__setattr__(name, value)


_KNOWN_FIELDS_CHECK = "_known_fields_in_code"
"""The class attribute that holds the check on a model closed in code (pydantic collects validators by attribute)."""


def _known_fields_in_code(model: WireModel, info: ValidationInfo) -> WireModel:
    """The after-validator of a model closed in code: fields it does not declare are refused unless from the server."""
    extra = model.__pydantic_extra__
    if model.CLOSED_IN_CODE and extra and not decoded_from_server(info):
        unknown = ", ".join(repr(name) for name in extra)
        plural = "s" if len(extra) > 1 else ""
        fields = type(model).model_fields.items()
        known = ", ".join(field.serialization_alias or field.alias or name for name, field in fields)
        raise ValueError(f"unknown field{plural} {unknown} for {type(model).__name__} (its fields: {known})")
    return model


def wire_path(location: Sequence[int | str], root: str = "") -> str:
    """A pydantic error location as a Kubernetes field path under `root`: `("config", "pollInterval")` under
    `spec` is `spec.config.pollInterval`, `("identityLabels", 2)` is `spec.identityLabels[2]`."""
    path = root
    for part in location:
        path += f"[{part}]" if isinstance(part, int) else f".{part}" if path else str(part)
    return path


@dataclass(frozen=True, slots=True, eq=False)  # hashed by identity: typing hashes Annotated metadata
class CRDSchema:
    """Extra OpenAPI keys for the generated CRD schema of the annotated type, e.g. `x-kubernetes-list-type`.

    Used as `Annotated[list[X] | None, CRDSchema({...})]`; it changes the schema only, never validation. Several
    may annotate one type: later keys win, except `x-kubernetes-validations`, whose rules add up in order.
    """

    markers: Mapping[str, Any] = field(default_factory=dict)

    def __get_pydantic_json_schema__(self, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        return merge_markers(handler(core_schema), self.markers)


VALIDATIONS = "x-kubernetes-validations"


def merge_markers(schema: Mapping[str, Any], markers: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` with `markers` added: a marker replaces the key it names, except that CEL rules
    (`x-kubernetes-validations`) are appended to those already there."""
    merged = {**schema, **markers}
    if VALIDATIONS in schema and VALIDATIONS in markers:
        merged[VALIDATIONS] = [*schema[VALIDATIONS], *markers[VALIDATIONS]]
    return merged


ATOMIC_LIST = CRDSchema({"x-kubernetes-list-type": "atomic"})
"""A list replaced as a whole by server-side apply (`+listType=atomic`)."""

ATOMIC_STRUCT: JsonDict = {"x-kubernetes-map-type": "atomic"}
"""Model-level marker (`json_schema_extra`) for an object replaced as a whole by server-side apply."""


def list_map(*keys: str) -> CRDSchema:
    """A list merged by server-side apply item by item, items identified by `keys` (`+listType=map`)."""
    return CRDSchema({"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": list(keys)})


def _in_range(low: int, high: int, width: str) -> AfterValidator:
    def check(value: int) -> int:
        if not low <= value <= high:
            raise ValueError(f"{value} does not fit in {width} ({low}..{high})")
        return value

    return AfterValidator(check)


Int32 = Annotated[int, _in_range(INT32_MIN, INT32_MAX, "int32"), CRDSchema({"format": "int32"})]
"""A Go `int32` field: an integer in the 32-bit range (larger values fail validation)."""

Int64 = Annotated[int, _in_range(INT64_MIN, INT64_MAX, "int64"), CRDSchema({"format": "int64"})]
"""A Go `int64` field: an integer in the 64-bit range."""

IntOrString = Annotated[int | str, CRDSchema({"x-kubernetes-int-or-string": True})]
"""A field that takes an integer or a string (`intstr.IntOrString`), e.g. `80` or `"50%"`."""


class WireEnum(enum.StrEnum):
    """A string enum for model fields: validated from its values (`"Ready"`) as well as its members, which a
    strict model (`WireModel`) otherwise refuses, and rendered as the schema's `enum` (the class docstring
    describes it)."""

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: GetCoreSchemaHandler) -> CoreSchema:
        return cast(CoreSchema, {**handler(source), "strict": False})


M = TypeVar("M", bound=BaseModel)


def as_model(model: type[M], obj: Any) -> M:
    """`obj` as an instance of `model`: returned as is when it already is one (cache and client reads of a
    registered kind), validated from its wire form otherwise (dicts, read-only views: unknown fields kept, as
    `WireModel.from_wire` keeps them). Raises pydantic's ValidationError for an object that does not fit."""
    if isinstance(obj, model):
        return obj
    return model.model_validate(objects.thaw(obj) if isinstance(obj, Mapping) else obj, context={FROM_SERVER: True})


__all__ = [
    "ACRONYMS",
    "ATOMIC_LIST",
    "ATOMIC_STRUCT",
    "FROM_SERVER",
    "VALIDATIONS",
    "CRDSchema",
    "Int32",
    "Int64",
    "IntOrString",
    "WireEnum",
    "WireModel",
    "as_model",
    "decoded_from_server",
    "list_map",
    "merge_markers",
    "wire_name",
    "wire_path",
]
