"""The bases of the generated built-in models (`core_v1`, `apps_v1`, `batch_v1`, written by
`hack/gen-builtin-models` from the recorded OpenAPI): `BuiltinModel` for every type, `BuiltinKind` for a top-level
kind (a Deployment, a Secret), and `Quantity`.

Both are closed in code and open on the wire (`WireModel.CLOSED_IN_CODE`; docs/design.md, difference 72):
`DeploymentSpec(replcias=2)` raises, `Deployment.from_wire(body)` keeps a newer server's fields.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import ConfigDict, GetJsonSchemaHandler, model_validator
from pydantic.json_schema import JsonSchemaValue
from pydantic_core import CoreSchema

from ballast.runtime.crd.wire import WireModel, with_type_meta
from ballast.runtime.gvk import GroupVersionKind

Quantity = int | str
"""A `resource.Quantity` on the wire: `"500m"`, `"1Gi"`, `2`."""


class BuiltinModel(WireModel):
    """A built-in type: every field of the recorded schema typed, unknown fields refused in code and kept from the
    server; its CRD schema (when a custom kind embeds it) is the recorded one of `OPENAPI_NAME`."""

    # Importing some 200 generated models must stay cheap: pydantic builds a model's validator on its first use
    # (`defer_build`), and does not parse the modules for the field docstrings (the schema is the recorded one).
    model_config = ConfigDict(defer_build=True, use_attribute_docstrings=False)

    CLOSED_IN_CODE: ClassVar[bool] = True
    OPENAPI_NAME: ClassVar[str] = ""

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler, /) -> JsonSchemaValue:
        if not cls.OPENAPI_NAME:
            return super().__get_pydantic_json_schema__(core_schema, handler)
        from ballast.runtime.crd.builtin import structural_schema  # noqa: PLC0415 - it imports the generated models

        return structural_schema(cls.OPENAPI_NAME)


class BuiltinKind(BuiltinModel):
    """A built-in kind: its identity (`GROUP`, `VERSION`, `KIND`, `PLURAL`, `SCOPE`; `API_VERSION` derived) lets
    every scheme and client know it without registration, as client-go's scheme is in every manager. `apiVersion`
    and `kind` are filled in; a different value fails validation naming the field."""

    BUILTIN_KIND: ClassVar[bool] = True
    GROUP: ClassVar[str]
    VERSION: ClassVar[str]
    KIND: ClassVar[str]
    PLURAL: ClassVar[str]
    SCOPE: ClassVar[Literal["Namespaced", "Cluster"]]
    API_VERSION: ClassVar[str]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        if "KIND" in cls.__dict__:
            cls.API_VERSION = f"{cls.GROUP}/{cls.VERSION}" if cls.GROUP else cls.VERSION

    @classmethod
    def gvk(cls) -> GroupVersionKind:
        """This kind's GroupVersionKind."""
        return GroupVersionKind(cls.GROUP, cls.VERSION, cls.KIND)

    @model_validator(mode="before")
    @classmethod
    def _type_meta(cls, data: Any) -> Any:
        if not isinstance(data, dict) or "KIND" not in cls.__dict__:
            return data
        return with_type_meta(data, cls.API_VERSION, cls.KIND)


__all__ = ["BuiltinKind", "BuiltinModel", "Quantity"]
