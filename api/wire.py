"""The base of every API model and the schema markers next to its fields: the framework's
(`ballast.runtime.crd.wire`), re-exported for the kinds of `ballast.api`.

camelCase on the wire, snake_case in Python, unknown fields kept; `CRDSchema` markers (`x-kubernetes-list-type`,
`x-kubernetes-map-type`, `format`) so the generated CRD schema carries them; the fixed-width integer types of the
Kubernetes API.
"""

from __future__ import annotations

from ballast.runtime.crd.wire import (
    ACRONYMS,
    ATOMIC_LIST,
    ATOMIC_STRUCT,
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    CRDSchema,
    Int32,
    Int64,
    IntOrString,
    WireEnum,
    WireModel,
    as_model,
    list_map,
    wire_name,
    wire_path,
)

__all__ = [
    "ACRONYMS",
    "ATOMIC_LIST",
    "ATOMIC_STRUCT",
    "INT32_MAX",
    "INT32_MIN",
    "INT64_MAX",
    "INT64_MIN",
    "CRDSchema",
    "Int32",
    "Int64",
    "IntOrString",
    "WireEnum",
    "WireModel",
    "as_model",
    "list_map",
    "wire_name",
    "wire_path",
]
